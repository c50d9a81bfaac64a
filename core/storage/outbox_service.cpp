#include "storage/outbox_service.hpp"

#include <pthread.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "storage/outbox_internal.hpp"
#include "storage/outbox_retention.hpp"
#include "storage/outbox_writer.hpp"

namespace rendezvous::core {
namespace {

// The topics each thread published since its last Notify(), by outbox. A publish and its Notify()
// run on the caller's thread (its transaction, then the wake-up): a Notify() wakes the consumers
// of what its own thread published however many threads publish at once, and one after no
// publish of its thread wakes every consumer. At most the distinct topic names the code
// publishes, per thread.
thread_local std::vector<std::pair<const void*, std::string>> t_published;

void PublishedHere(const void* outbox, const std::string& topic) {
  const auto it = std::find_if(t_published.begin(), t_published.end(),
                               [&](const auto& p) { return p.first == outbox && p.second == topic; });
  if (it == t_published.end()) t_published.emplace_back(outbox, topic);
}

prometheus::Family<prometheus::Counter>& CounterFamily(prometheus::Registry& registry, const char* name,
                                                       const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

}  // namespace

using outbox_internal::Backoff;
using outbox_internal::BringForward;
using outbox_internal::CheckName;
using outbox_internal::kFirstHeldBackWait;
using outbox_internal::kMaxBatchSize;
using outbox_internal::kMaxConsumerLength;
using outbox_internal::kMaxTopicLength;
using outbox_internal::kMaxTopicsPerConsumer;

OutboxService::OutboxService(Database& db, prometheus::Registry& registry, Logger& logger,
                             OutboxOptions options)
    : db_(db),
      logger_(logger),
      options_(options),
      parking_(db, logger, options.max_attempts, options.first_retry_delay, options.max_retry_delay),
      published_(CounterFamily(registry, "outbox_published_total",
                               "Outbox events written (rolled-back transactions included)")),
      consumed_(CounterFamily(registry, "outbox_consumed_total",
                              "Outbox events handled and committed by a consumer")),
      lag_(prometheus::BuildGauge()
               .Name("outbox_consumer_lag")
               .Help("Outbox events of a consumer's topics past its position")
               .Register(registry)),
      handler_errors_(CounterFamily(registry, "outbox_handler_errors_total",
                                    "Outbox batches and single events whose handler threw (rolled back)")),
      parked_total_(CounterFamily(registry, "outbox_events_parked_total",
                                  "Outbox events a consumer failed max_attempts times and set aside")),
      parked_now_(prometheus::BuildGauge()
                      .Name("outbox_parked_events")
                      .Help("Outbox events parked for a consumer now (until replayed or dropped)")
                      .Register(registry)) {
  if (options_.batch_size < 1 || options_.batch_size > kMaxBatchSize) {
    throw std::invalid_argument("outbox batch_size must be between 1 and 10000");
  }
  if (options_.max_attempts < 1) throw std::invalid_argument("outbox max_attempts must be at least 1");
}

OutboxService::~OutboxService() {
  Stop();
}

std::vector<Migration> OutboxService::Migrations() {
  return OutboxMigrations();
}

int64_t OutboxService::Publish(DbConnection& tx, const std::string& topic, const std::string& type,
                               const nlohmann::json& payload) {
  CheckName("topic", topic, kMaxTopicLength);
  CheckName("type", type, kMaxTopicLength);
  PublishedHere(this, topic);
  const int64_t id = WriteOutboxEvent(tx, topic, type, payload);
  published_.Add({{"topic", topic}}).Increment();
  return id;
}

void OutboxService::KeepEvents(const std::string& topic, std::chrono::seconds at_least) {
  CheckName("topic", topic, kMaxTopicLength);
  std::lock_guard<std::mutex> lk(mu_);
  std::chrono::seconds& keep = kept_[topic];
  keep = std::max(keep, at_least);
}

void OutboxService::Subscribe(const std::string& consumer, const std::vector<std::string>& topics,
                              OutboxHandler handler, OutboxCommitted committed, OutboxPayload payload,
                              std::chrono::milliseconds gather) {
  CheckName("consumer", consumer, kMaxConsumerLength);
  if (topics.empty() || topics.size() > kMaxTopicsPerConsumer) {
    throw std::invalid_argument("outbox consumer '" + consumer + "' needs 1 to 64 topics");
  }
  for (const auto& t : topics) CheckName("topic", t, kMaxTopicLength);
  if (!handler) throw std::invalid_argument("outbox consumer '" + consumer + "' has no handler");
  auto c = std::make_unique<Consumer>();
  c->name = consumer;
  std::set<std::string> unique(topics.begin(), topics.end());
  c->topics.assign(unique.begin(), unique.end());
  c->handler = std::move(handler);
  c->committed = std::move(committed);
  c->texts = payload == OutboxPayload::kText || payload == OutboxPayload::kNone;
  c->no_payloads = payload == OutboxPayload::kNone;
  c->gather = std::clamp(gather, std::chrono::milliseconds{0}, options_.poll_interval);
  c->consumed = &consumed_.Add({{"consumer", consumer}});
  c->handler_errors = &handler_errors_.Add({{"consumer", consumer}});
  c->lag = &lag_.Add({{"consumer", consumer}});
  c->parked_total = &parked_total_.Add({{"consumer", consumer}});
  c->parked_now = &parked_now_.Add({{"consumer", consumer}});
  // A consumed topic is exported at zero from start-up, before anything is published to it.
  for (const std::string& topic : c->topics) published_.Add({{"topic", topic}});
  std::lock_guard<std::mutex> lk(mu_);
  if (consumers_.count(consumer)) {
    throw std::invalid_argument("outbox consumer '" + consumer + "' subscribed twice");
  }
  Consumer* raw = c.get();
  {
    std::lock_guard<std::mutex> shared_lk(shared_mu_);
    for (const std::string& topic : raw->topics) topic_consumers_[topic].push_back(raw);
  }
  consumers_.emplace(consumer, std::move(c));
  if (running_ && !stopping_) StartLoopLocked(raw);
}

void OutboxService::Notify() noexcept {
  const auto mine = [this](const std::pair<const void*, std::string>& p) { return p.first == this; };
  const bool published = std::any_of(t_published.begin(), t_published.end(), mine);
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& entry : consumers_) {
      Consumer& c = *entry.second;
      c.woken =
          c.woken || !published || std::any_of(t_published.begin(), t_published.end(), [&](const auto& p) {
            return mine(p) && std::find(c.topics.begin(), c.topics.end(), p.second) != c.topics.end();
          });
    }
  }
  // Nothing allocates here: a Notify() cannot fail.
  t_published.erase(std::remove_if(t_published.begin(), t_published.end(), mine), t_published.end());
  cv_.notify_all();
}

OutboxService::Consumer* OutboxService::Find(const std::string& consumer) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = consumers_.find(consumer);
  return it == consumers_.end() ? nullptr : it->second.get();
}

size_t OutboxService::PollOnce(const std::string& consumer) {
  Consumer* c = Find(consumer);
  if (!c) throw std::invalid_argument("unknown outbox consumer '" + consumer + "'");
  return RunRound(*c).handed;
}

std::vector<ParkedEvent> OutboxService::ListParked(const std::string& consumer, size_t limit) {
  return parking_.List(consumer, limit);
}

bool OutboxService::Replay(int64_t parked_id) {
  const std::optional<std::string> consumer = parking_.Replay(parked_id);
  if (!consumer) return false;
  if (Consumer* c = Find(*consumer)) BringForward(c->retries_due_at, 0);
  Notify();
  return true;
}

bool OutboxService::Drop(int64_t parked_id) {
  return parking_.Drop(parked_id);
}

bool OutboxService::WaitFor(std::chrono::milliseconds d, const bool* woken) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait_for(lk, d, [&] { return stopping_ || (woken != nullptr && *woken); });
  return !stopping_;
}

void OutboxService::ConsumerLoop(Consumer* c) {
  // "rdv-ob-" and the consumer's name, as much as a thread name holds (15 bytes): for top -H and perf.
  pthread_setname_np(pthread_self(), ("rdv-ob-" + c->name).substr(0, 15).c_str());
  // Events held back behind an id hole: looked at again soon, since most holes are an insert
  // about to commit (a busy writer), waiting longer each time the same hole is still there, up to
  // the poll interval (a hole that stays is a rolled-back insert: its events go once the settle
  // window has passed). A round that handed events met a hole past the last one: the wait starts
  // short again, so a steady stream whose rounds keep meeting fresh holes never waits long.
  std::chrono::milliseconds held_back_wait = kFirstHeldBackWait;
  for (;;) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (stopping_) return;
      c->woken = false;  // a Notify() from here on finds the round's events, or wakes the next one
    }
    Round round;
    bool failed = false;
    try {
      round = RunRound(*c);  // a failing event is retried on its own schedule, never the whole consumer
    } catch (const DatabaseUnavailable& e) {
      failed = true;
      if (c->failures == 0) {
        logger_.Warn("outbox consumer: database unavailable", {{"consumer", c->name}, {"error", e.what()}});
      }
    } catch (const std::exception& e) {
      failed = true;
      logger_.Error("outbox consumer round failed", {{"consumer", c->name}, {"error", e.what()}});
    }
    if (failed) {
      ++c->failures;
      if (!WaitFor(Backoff(c->failures), nullptr)) return;
      continue;
    }
    c->failures = 0;
    if (round.handed == static_cast<size_t>(options_.batch_size)) continue;  // more is waiting
    if (round.held_back) {
      if (round.handed > 0) held_back_wait = kFirstHeldBackWait;
      if (!WaitFor(std::min(held_back_wait, options_.poll_interval), nullptr)) return;
      held_back_wait *= 2;
      continue;
    }
    held_back_wait = kFirstHeldBackWait;
    // What arrives meanwhile waits for the next round, handed with the rest (the events are
    // committed: a round finds them whenever it runs).
    if (round.handed > 0 && c->gather.count() > 0 && !WaitFor(c->gather, nullptr)) return;
    if (!WaitFor(options_.poll_interval, &c->woken)) return;
  }
}

size_t OutboxService::PurgeOnce() {
  std::map<std::string, std::vector<std::string>> topic_consumers;
  std::map<std::string, std::chrono::seconds> kept;
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& [name, c] : consumers_) {
      for (const auto& t : c->topics) topic_consumers[t].push_back(name);
    }
    kept = kept_;
  }
  return PurgeOutboxEvents(db_, logger_, options_.retention, std::move(topic_consumers), kept);
}

void OutboxService::PurgeLoop() {
  for (;;) {
    try {
      PurgeOnce();
    } catch (const std::exception& e) {
      logger_.Warn("outbox retention failed", {{"error", e.what()}});
    }
    if (!WaitFor(std::chrono::duration_cast<std::chrono::milliseconds>(options_.purge_interval), nullptr)) {
      return;
    }
  }
}

void OutboxService::StartLoopLocked(Consumer* c) {
  c->thread = std::thread([this, c] { ConsumerLoop(c); });
}

void OutboxService::Start() {
  std::lock_guard<std::mutex> lk(mu_);
  if (running_) return;
  running_ = true;
  stopping_ = false;
  for (auto& [name, c] : consumers_) StartLoopLocked(c.get());
  purge_thread_ = std::thread([this] { PurgeLoop(); });
}

void OutboxService::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!running_) return;
    stopping_ = true;
    for (auto& [name, c] : consumers_) {
      if (c->thread.joinable()) threads.push_back(std::move(c->thread));
    }
    if (purge_thread_.joinable()) threads.push_back(std::move(purge_thread_));
  }
  cv_.notify_all();
  for (auto& t : threads) t.join();
  std::lock_guard<std::mutex> lk(mu_);
  running_ = false;
  stopping_ = false;
}

}  // namespace rendezvous::core
