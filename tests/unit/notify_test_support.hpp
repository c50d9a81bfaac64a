// What the mail and SMS unit tests share: an outbox that records what is published (the
// services' delivery is driven by calling the recorded consumer), a service built over it, a
// temporary folder, the JSON-line log reader and the sent-counter look-up.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <prometheus/registry.h>

#include "log/logger.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/outbox.hpp"
#include "temp_dir.hpp"

namespace rendezvous::core::mail_test {

// A connection that reads nothing and records the statements run on it (the consumer's
// transaction: what a handler writes with it).
class NullConnection final : public DbConnection {
 public:
  int64_t LastInsertId() override { return 0; }
  std::vector<std::string> statements;

 protected:
  uint64_t Run(std::string_view sql, DbParams, Mode, std::vector<DbRow>* rows, size_t) override {
    if (rows != nullptr) throw std::logic_error("no database to read from");
    statements.emplace_back(sql);
    return 1;
  }
};

class FakeOutbox final : public Outbox {
 public:
  int64_t Publish(DbConnection&, const std::string& topic, const std::string& type,
                  const nlohmann::json& payload) override {
    OutboxEvent e;
    e.id = static_cast<int64_t>(events.size()) + 1;
    e.topic = topic;
    e.type = type;
    e.payload = std::make_shared<const nlohmann::json>(payload);
    events.push_back(e);
    return e.id;
  }
  void Subscribe(const std::string& consumer, const std::vector<std::string>& topics, OutboxHandler h,
                 OutboxCommitted = {}, OutboxPayload = OutboxPayload::kParsed,
                 std::chrono::milliseconds = std::chrono::milliseconds{0}) override {
    this->consumer = consumer;
    this->topics = topics;
    handler = std::move(h);
  }
  void Notify() noexcept override {}
  void KeepEvents(const std::string&, std::chrono::seconds) override {}

  std::vector<OutboxEvent> events;
  std::string consumer;
  std::vector<std::string> topics;
  OutboxHandler handler;
};

// A MailService or SmsService over the recording outbox, with a registry and a quiet logger.
template <typename Service>
struct ServiceUnderTest {
  template <typename Options>
  explicit ServiceUnderTest(Options options) : service(std::move(options), outbox, registry, logger) {}

  prometheus::Registry registry;
  StderrLogger logger{LogLevel::kError, true};
  FakeOutbox outbox;
  Service service;
};

// The value of `metric`{result=`result`} (mail_sent_total, sms_sent_total); -1 when not there.
inline double SentCount(prometheus::Registry& registry, const std::string& metric,
                        const std::string& result) {
  for (const auto& family : registry.Collect()) {
    if (family.name != metric) continue;
    for (const auto& m : family.metric) {
      if (m.label[0].value == result) return m.counter.value;
    }
  }
  return -1;
}

using rdv_test::TempDir;

std::vector<nlohmann::json> ReadJsonLines(const std::string& file) {
  std::vector<nlohmann::json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace rendezvous::core::mail_test
