// What the mail and SMS unit tests share: an outbox that records what is published (the
// services' delivery is driven by calling the recorded consumer), a temporary folder, and the
// JSON-line log reader.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/database.hpp"
#include "rendezvous/outbox.hpp"

namespace rendezvous::core::mail_test {

namespace fs = std::filesystem;

class NullConnection final : public DbConnection {
 public:
  int64_t LastInsertId() override { return 0; }

 protected:
  uint64_t Run(std::string_view, DbParams, Mode, std::vector<DbRow>*, size_t) override {
    throw std::logic_error("no database");
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
    e.payload = payload;
    events.push_back(e);
    return e.id;
  }
  void Subscribe(const std::string& consumer, const std::vector<std::string>& topics,
                 OutboxHandler h) override {
    this->consumer = consumer;
    this->topics = topics;
    handler = std::move(h);
  }
  void Notify() noexcept override {}

  std::vector<OutboxEvent> events;
  std::string consumer;
  std::vector<std::string> topics;
  OutboxHandler handler;
};

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/rdv-mail-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<nlohmann::json> ReadJsonLines(const std::string& file) {
  std::vector<nlohmann::json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace rendezvous::core::mail_test
