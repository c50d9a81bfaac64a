#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "eventually.hpp"
#include "recording_database.hpp"
#include "storage/migrator.hpp"
#include "storage/mysql_database.hpp"
#include "storage/outbox_service.hpp"
#include "storage_test_util.hpp"

namespace rendezvous::testing {
namespace {

using core::MysqlDatabase;
using core::OutboxOptions;
using core::OutboxService;
using std::chrono::steady_clock;

// Collects what a consumer was handed, in order.
struct Sink {
  std::mutex mu;
  std::vector<OutboxEvent> events;
  OutboxHandler Handler() {
    return [this](DbConnection&, const std::vector<OutboxEvent>& batch) {
      std::lock_guard<std::mutex> lk(mu);
      events.insert(events.end(), batch.begin(), batch.end());
    };
  }
  std::vector<int64_t> Ids() {
    std::lock_guard<std::mutex> lk(mu);
    std::vector<int64_t> ids;
    for (const auto& e : events) ids.push_back(e.id);
    return ids;
  }
  size_t Size() {
    std::lock_guard<std::mutex> lk(mu);
    return events.size();
  }
};

// The outbox tests poll every 10 ms, for 20 s at most.
const Patience kPolling{std::chrono::seconds(20), std::chrono::milliseconds(10)};

class OutboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::make_unique<MysqlDatabase>(OptionsFor(scratch_, 8), registry_, QuietLogger());
    core::Migrator m(*db_, QuietLogger());
    m.Add("outbox", OutboxService::Migrations());
    m.Apply();
  }

  int64_t PublishOne(OutboxService& outbox, const std::string& topic, int n) {
    return db_->Transaction([&](DbConnection& tx) {
      return outbox.Publish(tx, topic, "THING_HAPPENED", {{"n", n}});
    });
  }

  // Polls `consumer` until `sink` holds `n` events; a failure naming them when they do not come.
  static ::testing::AssertionResult PolledUntilHanded(OutboxService& outbox, const std::string& consumer,
                                                      Sink& sink, size_t n) {
    return Eventually(std::to_string(n) + " events handed to " + consumer, kPolling, [&] {
      outbox.PollOnce(consumer);
      return sink.Size() == n;
    });
  }

  // Subscribes `sink` as consumer "c" of "things", publishes one event and polls until c has it
  // (the test fails if it does not come); returns its id.
  int64_t SubscribeAndHandOverOne(OutboxService& outbox, Sink& sink) {
    outbox.Subscribe("c", {"things"}, sink.Handler());
    const int64_t id = PublishOne(outbox, "things", 1);
    EXPECT_TRUE(Eventually("the first event handed to c", kPolling, [&] {
      outbox.PollOnce("c");
      return sink.Size() == 1;
    }));
    return id;
  }

  ScratchDatabase scratch_;
  prometheus::Registry registry_;
  std::unique_ptr<MysqlDatabase> db_;
};

TEST_F(OutboxTest, RolledBackPublishIsNeverDelivered) {
  OutboxService outbox(*db_, registry_, QuietLogger());
  Sink sink;
  outbox.Subscribe("c", {"things"}, sink.Handler());
  EXPECT_THROW(db_->Transaction([&](DbConnection& tx) {
    outbox.Publish(tx, "things", "THING_HAPPENED", {{"n", 1}});
    throw std::runtime_error("abort");
  }),
               std::runtime_error);
  const int64_t id = PublishOne(outbox, "things", 2);

  ASSERT_TRUE(Eventually("the event handed to c", kPolling, [&] {
    outbox.PollOnce("c");
    return sink.Size() >= 1;
  }));
  EXPECT_EQ(outbox.PollOnce("c"), 0u);
  ASSERT_EQ(sink.Size(), 1u);
  EXPECT_EQ(sink.events[0].id, id);
  EXPECT_EQ(*sink.events[0].payload, (nlohmann::json{{"n", 2}}));
  EXPECT_EQ(sink.events[0].type, "THING_HAPPENED");
  EXPECT_EQ(sink.events[0].topic, "things");
  EXPECT_LT(std::chrono::system_clock::now() - sink.events[0].created_at, std::chrono::minutes(1));
  EXPECT_EQ(MetricValue(registry_, "outbox_consumed_total", {{"consumer", "c"}}), 1);
}

TEST_F(OutboxTest, EachConsumerGetsItsTopicsInOrderExactlyOnce) {
  OutboxOptions options;
  options.batch_size = 7;
  OutboxService outbox(*db_, registry_, QuietLogger(), options);
  Sink a, b;
  outbox.Subscribe("a", {"things"}, a.Handler());
  outbox.Subscribe("b", {"things", "other"}, b.Handler());

  std::vector<int64_t> things, all;
  for (int i = 0; i < 30; ++i) {
    const bool other = i % 3 == 0;
    const int64_t id = PublishOne(outbox, other ? "other" : "things", i);
    all.push_back(id);
    if (!other) things.push_back(id);
  }
  EXPECT_EQ(MetricValue(registry_, "outbox_published_total", {{"topic", "things"}}), 20);

  EXPECT_EQ(outbox.PollOnce("b"), 7u);
  EXPECT_EQ(MetricValue(registry_, "outbox_consumer_lag", {{"consumer", "b"}}), 23);
  ASSERT_TRUE(Eventually("every event handed to a and b", kPolling, [&] {
    outbox.PollOnce("a");
    outbox.PollOnce("b");
    return a.Size() >= things.size() && b.Size() >= all.size();
  }));
  EXPECT_EQ(outbox.PollOnce("a") + outbox.PollOnce("b"), 0u);
  EXPECT_EQ(a.Ids(), things);
  EXPECT_EQ(b.Ids(), all);
  EXPECT_EQ(MetricValue(registry_, "outbox_consumer_lag", {{"consumer", "b"}}), 0);
  EXPECT_EQ(scratch_.QueryValue("SELECT position FROM outbox_consumers WHERE consumer = 'b'"),
            std::to_string(all.back()));
}

TEST_F(OutboxTest, AnOpenTransactionHoldsBackLaterEventsUntilItCommits) {
  OutboxService outbox(*db_, registry_, QuietLogger());
  Sink sink;
  outbox.Subscribe("c", {"things"}, sink.Handler());

  // Transaction A takes the lower id and stays open while B commits a higher one.
  std::promise<void> a_published, a_may_commit;
  std::future<int64_t> a_id = std::async(std::launch::async, [&] {
    return db_->Transaction([&](DbConnection& tx) {
      const int64_t id = outbox.Publish(tx, "things", "A", {{"n", 1}});
      a_published.set_value();
      a_may_commit.get_future().wait();
      return id;
    });
  });
  a_published.get_future().wait();
  const int64_t b_id = PublishOne(outbox, "things", 2);

  auto poll = std::async(std::launch::async, [&] { return outbox.PollOnce("c"); });
  // While A is open the round must not hand out B alone.
  EXPECT_EQ(poll.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  EXPECT_EQ(sink.Size(), 0u);
  // Waiting for A, the round holds no lock on the consumer's row (a Galera applier updating that
  // row for another node must not queue behind a transaction that is itself waiting).
  EXPECT_EQ(scratch_.QueryValue(
                "SELECT COUNT(*) FROM outbox_consumers WHERE consumer = 'c' FOR UPDATE SKIP LOCKED"),
            "1");
  a_may_commit.set_value();
  const int64_t first = a_id.get();
  ASSERT_LT(first, b_id);
  poll.get();
  ASSERT_TRUE(Eventually("both events handed to c", kPolling, [&] {
    outbox.PollOnce("c");
    return sink.Size() >= 2;
  }));
  EXPECT_EQ(sink.Ids(), (std::vector<int64_t>{first, b_id}));
}

TEST_F(OutboxTest, EventsBehindAnIdHoleWaitForTheSettleWindow) {
  OutboxOptions options;
  options.settle_window = std::chrono::milliseconds(1500);
  OutboxService outbox(*db_, registry_, QuietLogger(), options);
  Sink sink;
  const int64_t first = SubscribeAndHandOverOne(outbox, sink);
  EXPECT_EQ(sink.Ids(), std::vector<int64_t>{first});
  // A rolled-back insert leaves a hole (an id that will never appear).
  EXPECT_THROW(db_->Transaction([&](DbConnection& tx) {
    outbox.Publish(tx, "elsewhere", "X", {});
    throw std::runtime_error("abort");
  }),
               std::runtime_error);
  const auto published = steady_clock::now();
  const int64_t after = PublishOne(outbox, "things", 2);
  const size_t handed = outbox.PollOnce("c");
  if (steady_clock::now() - published < std::chrono::milliseconds(1000)) {
    EXPECT_EQ(handed, 0u);  // young and behind a hole: held back
  }
  ASSERT_TRUE(Eventually("the event after the hole handed to c", kPolling, [&] {
    outbox.PollOnce("c");
    return sink.Size() == 2;
  }));
  EXPECT_GE(steady_clock::now() - published, std::chrono::milliseconds(1000));
  EXPECT_EQ(sink.Ids(), (std::vector<int64_t>{first, after}));
}

// Rounds that each hand events and stop at a new hole (the one before filled meanwhile, as a busy
// writer's inserts commit) do not wait longer and longer: each such round is followed by the
// short wait, not one doubled from the rounds before. Fifteen rounds, each creating the next hole
// and filling the last one from the committed callback (on the consumer's thread, before its next
// round): done in well under a second, where waits doubled from 2 ms would take over a minute.
TEST_F(OutboxTest, RoundsThatMeetFreshHolesDoNotWaitLongerEachTime) {
  OutboxOptions options;
  options.poll_interval = std::chrono::seconds(120);  // only the held-back waits run the rounds
  options.settle_window = std::chrono::seconds(120);  // a hole never settles during the test
  OutboxService outbox(*db_, registry_, QuietLogger(), options);
  const auto insert = [&](int64_t id) {
    db_->Transaction([&](DbConnection& tx) {
      tx.Exec(
          "INSERT INTO outbox_events (id, topic, type, payload, created_at)"
          " VALUES (?, 'things', 'THING_HAPPENED', '{}', UTC_TIMESTAMP(3))",
          {id});
    });
  };
  constexpr int kRounds = 15;
  Sink sink;
  std::atomic<int> commits{0};
  outbox.Subscribe("c", {"things"}, sink.Handler(), [&] {
    // After round r (1-based): ids up to 2r - 1 are handed, 2r is missing and 2r + 1 held back.
    const int r = ++commits;
    if (r < kRounds) insert(2 * r + 3);  // the next hole: 2r + 2
    insert(2 * r);
  });
  insert(1);
  insert(3);
  outbox.Start();
  const size_t total = 2 * kRounds + 1;
  EXPECT_TRUE(
      Eventually(std::to_string(total) + " events handed", kPolling, [&] { return sink.Size() == total; }));
  outbox.Stop();
  std::vector<int64_t> expected;
  for (int64_t id = 1; id <= static_cast<int64_t>(total); ++id) expected.push_back(id);
  EXPECT_EQ(sink.Ids(), expected);
  EXPECT_GE(commits.load(), kRounds);
}

// An event whose insert races a round's read of its candidates (not among them, but committed
// by the time the round scans the ids after them) is not passed over: the round stops before it
// and the next one takes it, in order.
TEST_F(OutboxTest, AnEventCommittedBetweenTheRoundsTwoReadsIsNotPassedOver) {
  OutboxOptions options;
  options.settle_window = std::chrono::seconds(60);  // nothing settles during the test
  RecordingDatabase wrapped(*db_);
  OutboxService outbox(wrapped, registry_, QuietLogger(), options);
  Sink sink;
  const int64_t first = SubscribeAndHandOverOne(outbox, sink);
  // A rolled-back publish leaves its id free; the event after it is young, so it waits behind it.
  int64_t free_id = 0;
  EXPECT_THROW(db_->Transaction([&](DbConnection& tx) {
    free_id = outbox.Publish(tx, "things", "ROLLED_BACK", {});
    throw std::runtime_error("abort");
  }),
               std::runtime_error);
  const int64_t after = PublishOne(outbox, "things", 2);
  ASSERT_LT(free_id, after);
  // Right after the next round's read of its candidates, an event of the topic takes the free id
  // and commits, from another connection.
  std::atomic<bool> inserted{false};
  wrapped.AfterStatement([&](std::string_view sql) {
    if (sql.find("LOCK IN SHARE MODE") == std::string_view::npos || inserted.exchange(true)) return;
    db_->Run([&](DbConnection& conn) {
      conn.Exec(
          "INSERT INTO outbox_events (id, topic, type, payload, created_at)"
          " VALUES (?, 'things', 'LATE', '{}', UTC_TIMESTAMP(3))",
          {free_id});
    });
  });
  outbox.PollOnce("c");
  ASSERT_TRUE(inserted.load());
  ASSERT_TRUE(Eventually("the late event and the one after it handed to c", kPolling, [&] {
    outbox.PollOnce("c");
    return sink.Size() == 3;
  }));
  EXPECT_EQ(sink.Ids(), (std::vector<int64_t>{first, free_id, after}));
}

TEST_F(OutboxTest, HandlerFailureRollsBackItsWritesAndTheEventsComeAgainOneByOne) {
  scratch_.Exec("CREATE TABLE work (event_id BIGINT PRIMARY KEY)");
  OutboxService outbox(*db_, registry_, QuietLogger());
  std::vector<size_t> calls;
  outbox.Subscribe("c", {"things"}, [&](DbConnection& tx, const std::vector<OutboxEvent>& batch) {
    calls.push_back(batch.size());
    for (const auto& e : batch) {
      tx.Exec("INSERT INTO work (event_id) VALUES (?)", {e.id});
    }
    if (calls.size() == 1) throw std::runtime_error("handler broke");
  });
  PublishOne(outbox, "things", 1);
  PublishOne(outbox, "things", 2);
  ASSERT_TRUE(Eventually("2 events handed to c", kPolling, [&] { return outbox.PollOnce("c") == 2; }));
  // The batch's writes were rolled back (else the primary key would refuse the second inserts).
  EXPECT_EQ(calls, (std::vector<size_t>{2, 1, 1}));
  EXPECT_EQ(MetricValue(registry_, "outbox_handler_errors_total", {{"consumer", "c"}}), 1);
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM work"), "2");
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM outbox_retries"), "0");
  EXPECT_EQ(outbox.PollOnce("c"), 0u);
}

TEST_F(OutboxTest, CommittedCallbackRunsAfterTheHandlersWritesCommitted) {
  scratch_.Exec("CREATE TABLE work (event_id BIGINT PRIMARY KEY)");
  OutboxService outbox(*db_, registry_, QuietLogger());
  int calls = 0;
  std::vector<std::string> seen;  // rows of `work` another connection sees at each callback
  outbox.Subscribe(
      "c", {"things"},
      [&](DbConnection& tx, const std::vector<OutboxEvent>& batch) {
        ++calls;
        for (const auto& e : batch) tx.Exec("INSERT INTO work (event_id) VALUES (?)", {e.id});
        if (calls == 2) throw std::runtime_error("handler broke");
      },
      [&] { seen.push_back(scratch_.QueryValue("SELECT COUNT(*) FROM work")); });
  EXPECT_EQ(outbox.PollOnce("c"), 0u);
  EXPECT_TRUE(seen.empty());  // nothing handed, no callback

  PublishOne(outbox, "things", 1);
  ASSERT_TRUE(Eventually("1 event handed to c", kPolling, [&] { return outbox.PollOnce("c") == 1; }));
  EXPECT_EQ(seen, (std::vector<std::string>{"1"}));
  // A batch that fails is handled again one event at a time: one callback, after those commits.
  PublishOne(outbox, "things", 2);
  PublishOne(outbox, "things", 3);
  ASSERT_TRUE(Eventually("2 more events handed to c", kPolling, [&] { return outbox.PollOnce("c") == 2; }));
  EXPECT_EQ(seen, (std::vector<std::string>{"1", "3"}));
}

TEST_F(OutboxTest, ConsumersOfATopicShareOneParsedPayloadUnlessItsTextChanged) {
  OutboxService outbox(*db_, registry_, QuietLogger());
  Sink a;
  Sink b;
  Sink other;
  outbox.Subscribe("a", {"things"}, a.Handler());
  outbox.Subscribe("b", {"things"}, b.Handler());
  // Rewrites event 3's text (as the mail consumer blanks what it sent) before c reads it.
  outbox.Subscribe("c", {"things"}, [&](DbConnection& tx, const std::vector<OutboxEvent>& batch) {
    other.Handler()(tx, batch);
    for (const auto& e : batch) {
      if (e.payload->value("n", 0) == 3)
        tx.Exec("UPDATE outbox_events SET payload = '{\"n\":30}' WHERE id = ?", {e.id});
    }
  });
  for (int n = 1; n <= 3; ++n) PublishOne(outbox, "things", n);
  ASSERT_TRUE(PolledUntilHanded(outbox, "a", a, 3));
  ASSERT_TRUE(PolledUntilHanded(outbox, "c", other, 3));
  ASSERT_EQ(outbox.PollOnce("b"), 3u);
  ASSERT_EQ(b.Size(), 3u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a.events[i].payload.get(), b.events[i].payload.get()) << i;
    EXPECT_EQ(a.events[i].payload.get(), other.events[i].payload.get()) << i;
    EXPECT_EQ(b.events[i].payload_text, a.events[i].payload_text) << i;
  }
  EXPECT_EQ(*a.events[2].payload, (nlohmann::json{{"n", 3}}));
  EXPECT_EQ(*b.events[2].payload, (nlohmann::json{{"n", 30}}));  // parsed again from the new text
  EXPECT_EQ(b.events[2].payload_text, "{\"n\":30}");
}

// A consumer of texts is handed each payload as stored, well-formed or not, never parsed; a
// consumer of parsed payloads beside it gets them parsed as before.
TEST_F(OutboxTest, AConsumerOfTextsIsHandedTheStoredTextsUnparsed) {
  OutboxService outbox(*db_, registry_, QuietLogger());
  Sink texts;
  Sink parsed;
  Sink none;
  outbox.Subscribe("t", {"things"}, texts.Handler(), {}, OutboxPayload::kText);
  outbox.Subscribe("p", {"things"}, parsed.Handler());
  outbox.Subscribe("n", {"things"}, none.Handler(), {}, OutboxPayload::kNone);
  PublishOne(outbox, "things", 1);
  db_->Transaction([&](DbConnection& tx) {
    tx.Exec(
        "INSERT INTO outbox_events (topic, type, payload, created_at)"
        " VALUES ('things', 'THING_HAPPENED', 'not json', UTC_TIMESTAMP(3))");
  });
  ASSERT_TRUE(PolledUntilHanded(outbox, "t", texts, 2));
  ASSERT_TRUE(PolledUntilHanded(outbox, "p", parsed, 2));
  EXPECT_EQ(texts.events[0].payload, nullptr);
  EXPECT_EQ(texts.events[0].payload_text, "{\"n\":1}");
  EXPECT_EQ(texts.events[1].payload, nullptr);
  EXPECT_EQ(texts.events[1].payload_text, "not json");
  EXPECT_EQ(texts.events[1].type, "THING_HAPPENED");
  EXPECT_GT(texts.events[1].created_at.time_since_epoch().count(), 0);
  ASSERT_NE(parsed.events[0].payload, nullptr);
  EXPECT_EQ(*parsed.events[0].payload, (nlohmann::json{{"n", 1}}));
  ASSERT_NE(parsed.events[1].payload, nullptr);
  EXPECT_EQ(*parsed.events[1].payload, "not json");  // unparseable: the text as a string, as before
  EXPECT_EQ(parsed.events[1].payload_text, "");
  // A consumer of neither gets the events without their texts, and reads them by id.
  ASSERT_TRUE(PolledUntilHanded(outbox, "n", none, 2));
  std::vector<int64_t> ids;
  for (const OutboxEvent& e : none.events) {
    EXPECT_EQ(e.payload, nullptr);
    EXPECT_EQ(e.payload_text, "");
    EXPECT_EQ(e.type, "THING_HAPPENED");
    EXPECT_GT(e.created_at.time_since_epoch().count(), 0);
    ids.push_back(e.id);
  }
  const std::unordered_map<int64_t, std::string> read =
      db_->Run([&](DbConnection& conn) { return OutboxPayloads(conn, ids); });
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read.at(ids[0]), "{\"n\":1}");
  EXPECT_EQ(read.at(ids[1]), "not json");
}

// Handles every event but those whose "n" is in `poisoned`, which throw; counts the calls per n.
struct PickyHandler {
  std::mutex mu;
  std::set<int> poisoned;
  std::map<int, int> calls;
  std::string message = "poisoned event";
  OutboxHandler Handler() {
    return [this](DbConnection&, const std::vector<OutboxEvent>& batch) {
      std::lock_guard<std::mutex> lk(mu);
      for (const auto& e : batch) {
        const int n = e.payload->value("n", 0);
        ++calls[n];
        if (poisoned.count(n)) throw std::runtime_error(message);
      }
    };
  }
  int Calls(int n) {
    std::lock_guard<std::mutex> lk(mu);
    return calls[n];
  }
};

OutboxOptions FastRetries(int max_attempts) {
  OutboxOptions options;
  options.max_attempts = max_attempts;
  options.first_retry_delay = std::chrono::milliseconds(200);
  options.max_retry_delay = std::chrono::milliseconds(200);
  return options;
}

TEST_F(OutboxTest, PoisonedEventIsParkedAfterMaxAttemptsWithoutHoldingUpTheOthers) {
  PickyHandler picky;
  picky.poisoned = {2};
  int64_t poisoned_id = 0;
  {
    OutboxService first(*db_, registry_, QuietLogger(), FastRetries(3));
    first.Subscribe("c", {"things"}, picky.Handler());
    EXPECT_EQ(MetricValue(registry_, "outbox_parked_events", {{"consumer", "c"}}), 0);
    EXPECT_EQ(MetricValue(registry_, "outbox_events_parked_total", {{"consumer", "c"}}), 0);
    PublishOne(first, "things", 1);
    poisoned_id = PublishOne(first, "things", 2);
    PublishOne(first, "things", 3);
    // One round: the batch fails, 1 and 3 are handled alone, 2 waits for its retry.
    EXPECT_EQ(first.PollOnce("c"), 2u);
    EXPECT_EQ(picky.Calls(3), 1);
    EXPECT_EQ(scratch_.QueryValue("SELECT attempts FROM outbox_retries WHERE consumer = 'c'"), "1");
  }
  // Attempts are counted in the database: another instance (or a restart) goes on from there.
  prometheus::Registry registry2;
  OutboxService second(*db_, registry2, QuietLogger(), FastRetries(3));
  second.Subscribe("c", {"things"}, picky.Handler());
  ASSERT_TRUE(Eventually("one parked event", kPolling, [&] {
    second.PollOnce("c");
    return scratch_.QueryValue("SELECT COUNT(*) FROM outbox_parked") == "1";
  }));
  EXPECT_EQ(picky.Calls(2), 4);  // once in the batch, three times alone
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM outbox_retries"), "0");
  const std::vector<core::ParkedEvent> parked = second.ListParked("c");
  ASSERT_EQ(parked.size(), 1u);
  EXPECT_EQ(parked[0].event_id, poisoned_id);
  EXPECT_EQ(parked[0].consumer, "c");
  EXPECT_EQ(parked[0].topic, "things");
  EXPECT_EQ(parked[0].type, "THING_HAPPENED");
  EXPECT_EQ(parked[0].attempts, 3);
  EXPECT_EQ(parked[0].last_error, "poisoned event");
  EXPECT_EQ(parked[0].parked_at.size(), 24u) << parked[0].parked_at;
  EXPECT_TRUE(second.ListParked("other").empty());
  EXPECT_EQ(MetricValue(registry2, "outbox_events_parked_total", {{"consumer", "c"}}), 1);
  EXPECT_EQ(MetricValue(registry2, "outbox_parked_events", {{"consumer", "c"}}), 1);

  // Later events flow; the parked one is not tried again.
  PublishOne(second, "things", 4);
  EXPECT_EQ(second.PollOnce("c"), 1u);
  EXPECT_EQ(picky.Calls(2), 4);

  // Replayed: attempts start again, the consumer takes it up and, fixed, handles it.
  {
    std::lock_guard<std::mutex> lk(picky.mu);
    picky.poisoned.clear();
  }
  EXPECT_FALSE(second.Replay(parked[0].id + 1000));
  EXPECT_TRUE(second.Replay(parked[0].id));
  EXPECT_FALSE(second.Replay(parked[0].id));
  EXPECT_EQ(second.PollOnce("c"), 1u);
  EXPECT_EQ(picky.Calls(2), 5);
  EXPECT_TRUE(second.ListParked().empty());
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM outbox_retries"), "0");
}

TEST_F(OutboxTest, ParkedEventsOutliveRetentionUntilDroppedAndKeepTheirErrorWellFormed) {
  PickyHandler picky;
  picky.poisoned = {1};
  picky.message.clear();
  for (int i = 0; i < 300; ++i) picky.message += "\xC3\xA9";  // 600 bytes
  picky.message += "\xFF";
  OutboxService outbox(*db_, registry_, QuietLogger(), FastRetries(1));
  outbox.Subscribe("c", {"things"}, picky.Handler());
  const int64_t poisoned = PublishOne(outbox, "things", 1);
  const int64_t fine = PublishOne(outbox, "things", 2);
  EXPECT_EQ(outbox.PollOnce("c"), 1u);
  const std::vector<core::ParkedEvent> parked = outbox.ListParked();
  ASSERT_EQ(parked.size(), 1u);
  EXPECT_EQ(parked[0].attempts, 1);
  // Cut to 512 bytes on a character boundary.
  EXPECT_EQ(parked[0].last_error, picky.message.substr(0, 512));
  EXPECT_EQ(MetricValue(registry_, "outbox_events_parked_total", {{"consumer", "c"}}), 1);

  scratch_.Exec("UPDATE outbox_events SET created_at = UTC_TIMESTAMP(3) - INTERVAL 30 DAY");
  EXPECT_EQ(outbox.PurgeOnce(), 1u);  // the handled one; the parked one stays for a replay
  EXPECT_EQ(scratch_.QueryValue("SELECT GROUP_CONCAT(id) FROM outbox_events"), std::to_string(poisoned));
  EXPECT_FALSE(outbox.Drop(parked[0].id + 1000));
  EXPECT_TRUE(outbox.Drop(parked[0].id));
  EXPECT_FALSE(outbox.Drop(parked[0].id));
  EXPECT_TRUE(outbox.ListParked().empty());
  EXPECT_EQ(outbox.PurgeOnce(), 1u);
  EXPECT_EQ(picky.Calls(1), 2);  // in the batch, then alone: never again once dropped
  EXPECT_EQ(outbox.PollOnce("c"), 0u);
  EXPECT_EQ(picky.Calls(1), 2);
  (void)fine;
}

TEST_F(OutboxTest, TwoInstancesShareOneConsumerWithoutDuplicates) {
  OutboxOptions options;
  options.batch_size = 5;
  options.poll_interval = std::chrono::milliseconds(50);
  prometheus::Registry registry2;
  MysqlDatabase db2(OptionsFor(scratch_, 8), registry2, QuietLogger());
  OutboxService one(*db_, registry_, QuietLogger(), options);
  OutboxService two(db2, registry2, QuietLogger(), options);

  std::mutex mu;
  std::map<int64_t, int> deliveries;
  std::vector<int64_t> order;
  std::atomic<int> by_one{0}, by_two{0};
  auto handler = [&](std::atomic<int>& counter) {
    return [&](DbConnection&, const std::vector<OutboxEvent>& batch) {
      std::lock_guard<std::mutex> lk(mu);
      for (const auto& e : batch) {
        ++deliveries[e.id];
        order.push_back(e.id);
      }
      counter += static_cast<int>(batch.size());
    };
  };
  one.Subscribe("shared", {"things"}, handler(by_one));
  two.Subscribe("shared", {"things"}, handler(by_two));
  one.Start();
  two.Start();

  // Publishers in parallel, so ids also commit out of order.
  constexpr int kThreads = 4, kPerThread = 50;
  std::vector<std::thread> publishers;
  for (int t = 0; t < kThreads; ++t) {
    publishers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        db_->Transaction([&](DbConnection& tx) {
          (t % 2 ? one : two).Publish(tx, "things", "T", {{"t", t}, {"i", i}});
        });
        (t % 2 ? one : two).Notify();
      }
    });
  }
  for (auto& p : publishers) p.join();
  const bool all = Eventually("every published event consumed", kPolling, [&] {
    std::lock_guard<std::mutex> lk(mu);
    return order.size() >= static_cast<size_t>(kThreads * kPerThread);
  });
  one.Stop();
  two.Stop();
  ASSERT_TRUE(all);

  std::lock_guard<std::mutex> lk(mu);
  EXPECT_EQ(order.size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(deliveries.size(), static_cast<size_t>(kThreads * kPerThread));
  for (const auto& [id, n] : deliveries) EXPECT_EQ(n, 1) << "event " << id;
  for (size_t i = 1; i < order.size(); ++i) EXPECT_LT(order[i - 1], order[i]);
  EXPECT_EQ(by_one + by_two, kThreads * kPerThread);
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM outbox_events"),
            std::to_string(kThreads * kPerThread));
}

TEST_F(OutboxTest, NotifyWakesOnlyTheConsumersOfTheTopicsPublished) {
  // A long poll: after its first round, a consumer runs another only when a Notify() wakes it.
  OutboxOptions options;
  options.poll_interval = std::chrono::seconds(60);
  OutboxService outbox(*db_, registry_, QuietLogger(), options);
  OutboxService elsewhere(*db_, registry_, QuietLogger());  // another instance: notifies nobody here
  Sink things, mail;
  outbox.Subscribe("things-consumer", {"things"}, things.Handler());
  outbox.Subscribe("mail-consumer", {"mail"}, mail.Handler());
  PublishOne(elsewhere, "mail", 1);
  outbox.Start();
  ASSERT_TRUE(Eventually("the first mail event handed", kPolling, [&] { return mail.Size() == 1; }));

  // Another mail event committed elsewhere, then a "things" event published and notified here:
  // the things consumer is woken, the mail consumer is not.
  PublishOne(elsewhere, "mail", 2);
  PublishOne(outbox, "things", 3);
  outbox.Notify();
  ASSERT_TRUE(Eventually("the things event handed", kPolling, [&] { return things.Size() == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // what a wrongly woken round would take
  EXPECT_EQ(mail.Size(), 1u);

  // Two threads publish "things", then each notifies: the second Notify() finds its own thread's
  // topic (the first one's wake-up covered it) and wakes no other consumer either.
  std::promise<void> a_published, b_published, a_go, b_go;
  std::thread a([&] {
    PublishOne(outbox, "things", 4);
    a_published.set_value();
    a_go.get_future().wait();
    outbox.Notify();
  });
  std::thread b([&] {
    PublishOne(outbox, "things", 5);
    b_published.set_value();
    b_go.get_future().wait();
    outbox.Notify();
  });
  a_published.get_future().wait();
  b_published.get_future().wait();
  a_go.set_value();
  a.join();
  b_go.set_value();
  b.join();
  ASSERT_TRUE(Eventually("both things events handed", kPolling, [&] { return things.Size() == 3; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // what a wrongly woken round would take
  EXPECT_EQ(mail.Size(), 1u) << "a Notify() woke the consumer of a topic its thread did not publish";

  // A Notify() after no publish here wakes every consumer: the second mail event is handed.
  outbox.Notify();
  EXPECT_TRUE(Eventually("the second mail event handed", kPolling, [&] { return mail.Size() == 2; }));
  outbox.Stop();
}

// A consumer that gathers waits after a round that handed events, so what arrives meanwhile comes
// in one round: three events published and notified one by one after the first was handed come
// as one batch. A consumer that does not gather takes a round per notified event.
TEST_F(OutboxTest, AGatheringConsumerHandsWhatArrivedMeanwhileInOneRound) {
  OutboxOptions options;
  options.poll_interval = std::chrono::seconds(60);
  OutboxService outbox(*db_, registry_, QuietLogger(), options);
  std::mutex mu;
  std::vector<size_t> gathered, prompt;
  const auto batches = [&](std::vector<size_t>& sizes) -> OutboxHandler {
    return [&](DbConnection&, const std::vector<OutboxEvent>& batch) {
      std::lock_guard<std::mutex> lk(mu);
      sizes.push_back(batch.size());
    };
  };
  const auto handed = [&](const std::vector<size_t>& sizes) {
    std::lock_guard<std::mutex> lk(mu);
    return std::accumulate(sizes.begin(), sizes.end(), size_t{0});
  };
  outbox.Subscribe("gathered", {"things"}, batches(gathered), {}, OutboxPayload::kParsed,
                   std::chrono::milliseconds(1500));
  outbox.Subscribe("prompt", {"things"}, batches(prompt));
  outbox.Start();
  PublishOne(outbox, "things", 1);
  outbox.Notify();
  ASSERT_TRUE(Eventually("the first event handed", kPolling, [&] { return handed(gathered) == 1; }));
  for (int n = 2; n <= 4; ++n) {
    PublishOne(outbox, "things", n);
    outbox.Notify();
    ASSERT_TRUE(Eventually("the prompt consumer's round", kPolling,
                           [&] { return handed(prompt) == static_cast<size_t>(n); }));
  }
  ASSERT_TRUE(Eventually("every event handed", kPolling, [&] { return handed(gathered) == 4; }));
  outbox.Stop();
  std::lock_guard<std::mutex> lk(mu);
  EXPECT_EQ(gathered, (std::vector<size_t>{1, 3}));
  EXPECT_EQ(prompt.size(), 4u);
}

TEST_F(OutboxTest, RetentionDeletesOnlyOldEventsEveryConsumerPassed) {
  OutboxService outbox(*db_, registry_, QuietLogger());
  Sink a, b;
  outbox.Subscribe("a", {"things"}, a.Handler());
  outbox.Subscribe("b", {"things"}, b.Handler());
  const int64_t e1 = PublishOne(outbox, "things", 1);
  const int64_t e2 = PublishOne(outbox, "things", 2);
  const int64_t orphan = PublishOne(outbox, "nobody-listens", 3);
  const int64_t recent = PublishOne(outbox, "things", 4);
  // "a" passes e1 and e2; "b" only e1.
  scratch_.Exec("INSERT INTO outbox_consumers VALUES ('a', " + std::to_string(e2) +
                ", UTC_TIMESTAMP(3)), ('b', " + std::to_string(e1) + ", UTC_TIMESTAMP(3))");
  scratch_.Exec("UPDATE outbox_events SET created_at = UTC_TIMESTAMP(3) - INTERVAL 30 DAY WHERE id <> " +
                std::to_string(recent));

  EXPECT_EQ(outbox.PurgeOnce(), 2u);  // e1 (passed by both) and the orphan
  EXPECT_EQ(scratch_.QueryValue("SELECT GROUP_CONCAT(id ORDER BY id) FROM outbox_events"),
            std::to_string(e2) + "," + std::to_string(recent));
  (void)orphan;
}

// A topic kept longer (a consumer's rows refer to its events) outlives the retention by that
// much, passed or not, whether anybody here subscribes to it or not; the texts of kept events are
// read back by id, and one no longer kept is absent.
TEST_F(OutboxTest, KeptTopicsOutliveTheRetentionAndTheirTextsAreReadBackById) {
  OutboxService outbox(*db_, registry_, QuietLogger());
  Sink a;
  outbox.Subscribe("a", {"things", "other"}, a.Handler());
  outbox.KeepEvents("things", std::chrono::hours(24 * 40));
  outbox.KeepEvents("things", std::chrono::hours(24));  // the longest holds
  outbox.KeepEvents("kept-unheard", std::chrono::hours(24 * 40));
  const int64_t month = PublishOne(outbox, "things", 1);
  const int64_t old = PublishOne(outbox, "things", 2);
  const int64_t other = PublishOne(outbox, "other", 3);
  const int64_t unheard = PublishOne(outbox, "kept-unheard", 4);
  scratch_.Exec("INSERT INTO outbox_consumers VALUES ('a', " + std::to_string(unheard) +
                ", UTC_TIMESTAMP(3))");
  scratch_.Exec("UPDATE outbox_events SET created_at = UTC_TIMESTAMP(3) - INTERVAL 30 DAY");
  scratch_.Exec("UPDATE outbox_events SET created_at = UTC_TIMESTAMP(3) - INTERVAL 41 DAY WHERE id = " +
                std::to_string(old));

  EXPECT_EQ(outbox.PurgeOnce(), 2u);  // the 41 days old one and the other topic's
  EXPECT_EQ(scratch_.QueryValue("SELECT GROUP_CONCAT(id ORDER BY id) FROM outbox_events"),
            std::to_string(month) + "," + std::to_string(unheard));
  const std::unordered_map<int64_t, std::string> texts = db_->Run([&](DbConnection& conn) {
    return OutboxPayloads(conn, {month, old, other, unheard});
  });
  ASSERT_EQ(texts.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(texts.at(month)),
            nlohmann::json::parse(scratch_.QueryValue("SELECT payload FROM outbox_events WHERE id = " +
                                                      std::to_string(month))));
  EXPECT_TRUE(texts.count(unheard));
  EXPECT_THROW(outbox.KeepEvents("", std::chrono::hours(1)), std::invalid_argument);
}

TEST_F(OutboxTest, RejectsBadNames) {
  OutboxService outbox(*db_, registry_, QuietLogger());
  Sink s;
  EXPECT_THROW(outbox.Subscribe("", {"t"}, s.Handler()), std::invalid_argument);
  EXPECT_THROW(outbox.Subscribe("c", {}, s.Handler()), std::invalid_argument);
  EXPECT_THROW(outbox.Subscribe("c", {std::string(65, 'x')}, s.Handler()), std::invalid_argument);
  outbox.Subscribe("c", {"t"}, s.Handler());
  EXPECT_THROW(outbox.Subscribe("c", {"t"}, s.Handler()), std::invalid_argument);
  EXPECT_THROW(outbox.PollOnce("unknown"), std::invalid_argument);
  EXPECT_THROW(db_->Transaction([&](DbConnection& tx) { outbox.Publish(tx, "", "T", {}); }),
               std::invalid_argument);
}

}  // namespace
}  // namespace rendezvous::testing
