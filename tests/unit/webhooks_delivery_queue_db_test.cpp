// DeliveryQueue against a real MariaDB: a round records the finished batch and claims the next
// one in one transaction, so a round that fails (a crash before its commit) leaves neither its
// attempts nor its new leases behind, and the deliveries it held are claimed again with the same
// webhook-id; the outcomes of a mixed batch land with one statement per kind, each row once and
// with its own delay however long the batch; a claim leaves out exactly the webhooks it is told
// to; a recovery walks its window in small batches and queues exactly the failed deliveries in
// it; an event goes to its organizer's own webhooks and to its event type's, one delivery each,
// routed by the members read from its text.
#include <algorithm>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "delivery_queue.hpp"
#include "delivery_sender.hpp"
#include "eventually.hpp"
#include "loopback_http_server.hpp"
#include "rendezvous/time.hpp"
#include "storage/migrator.hpp"
#include "storage/mysql_database.hpp"
#include "storage/outbox_service.hpp"
#include "storage_test_util.hpp"
#include "webhook_migrations.hpp"
#include "webhook_store.hpp"

namespace rendezvous::testing {
namespace {

using webhooks::Attempt;
using webhooks::ClaimedDelivery;
using webhooks::DeliveryQueue;
using webhooks::DeliverySender;
using webhooks::Outcome;
using webhooks::RecordedAttempt;
using webhooks::WebhookStore;

constexpr int64_t kLease = 3600;

class WebhooksDeliveryQueueDb : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::make_unique<core::MysqlDatabase>(OptionsFor(scratch_, 4), registry_, QuietLogger());
    core::Migrator m(*db_, QuietLogger());
    m.Add("outbox", core::OutboxService::Migrations());
    m.Add("webhooks", webhooks::WebhookMigrations());
    m.Apply();
    store_ = std::make_unique<WebhookStore>(*db_, "");
    queue_ = std::make_unique<DeliveryQueue>(*store_);
    scratch_.Exec(
        "INSERT INTO webhooks (user_id, subscriber_url, url_hash, active, triggers, created_at, updated_at)"
        " VALUES (3, 'http://127.0.0.1:9/hook', SHA2('http://127.0.0.1:9/hook', 256), 1,"
        " '[\"BOOKING_CREATED\"]', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
    webhook_id_ = std::stoll(scratch_.QueryValue("SELECT MAX(id) FROM webhooks"));
  }

  // `n` BOOKING_CREATED events of organizer 3 turned into deliveries by the outbox handler, one
  // per event and webhook of organizer 3.
  void Enqueue(int n, int webhooks = 1) {
    const std::vector<OutboxEvent> batch = Events(1, n);
    const size_t created = db_->Transaction([&](DbConnection& tx) { return queue_->Enqueue(tx, batch); });
    ASSERT_EQ(created, static_cast<size_t>(n * webhooks));
  }

  // BOOKING_CREATED events of organizer 3 with ids from..to.
  static std::vector<OutboxEvent> Events(int from, int to) {
    std::vector<OutboxEvent> batch;
    for (int i = from; i <= to; ++i) {
      OutboxEvent e;
      e.id = i;
      e.topic = "bookings";
      e.type = "BOOKING_CREATED";
      e.payload = std::make_shared<const nlohmann::json>(
          nlohmann::json{{"triggerEvent", "BOOKING_CREATED"},
                         {"createdAt", "2030-01-01T09:00:00.000Z"},
                         {"payload", {{"uid", "b" + std::to_string(i)}, {"organizer", {{"id", 3}}}}}});
      e.created_at = std::chrono::system_clock::now();
      batch.push_back(std::move(e));
    }
    return batch;
  }

  // Events of these texts in the outbox's table, handed as the outbox hands them to a consumer of
  // texts (payload_text as stored, no parsed payload).
  std::vector<OutboxEvent> StoredEvents(const std::vector<std::string>& texts) {
    std::vector<OutboxEvent> batch;
    for (const std::string& text : texts) {
      OutboxEvent e;
      e.id = db_->Run([&](DbConnection& conn) {
        conn.Exec(
            "INSERT INTO outbox_events (topic, type, payload, created_at)"
            " VALUES ('bookings', 'BOOKING_CREATED', ?, UTC_TIMESTAMP(3))",
            {text});
        return conn.LastInsertId();
      });
      e.topic = "bookings";
      e.type = "BOOKING_CREATED";
      e.payload_text = text;
      e.created_at = std::chrono::system_clock::now();
      batch.push_back(std::move(e));
    }
    return batch;
  }

  static std::vector<RecordedAttempt> Outcomes(const std::vector<ClaimedDelivery>& claimed,
                                               const std::vector<Outcome>& outcomes) {
    std::vector<RecordedAttempt> out;
    for (size_t i = 0; i < claimed.size(); ++i) {
      Attempt a;
      a.at_ms = time::Now();
      a.status_code = outcomes[i].kind == Outcome::kSucceeded ? 200 : 503;
      a.duration_ms = 1;
      if (a.status_code != 200) a.error = "HTTP 503";
      a.response = "ok";
      out.push_back(RecordedAttempt{&claimed[i], a, outcomes[i]});
    }
    return out;
  }

  int64_t Count(const std::string& sql) const { return std::stoll("0" + scratch_.QueryValue(sql)); }
  int64_t Leased() const {
    return Count(
        "SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending' AND leased_until > "
        "UTC_TIMESTAMP(3)");
  }

  ScratchDatabase scratch_;
  prometheus::Registry registry_;
  std::unique_ptr<core::MysqlDatabase> db_;
  std::unique_ptr<WebhookStore> store_;
  std::unique_ptr<DeliveryQueue> queue_;
  int64_t webhook_id_ = 0;
};

TEST_F(WebhooksDeliveryQueueDb, RoundRecordsTheFinishedBatchAndClaimsTheNext) {
  Enqueue(10);
  const std::vector<ClaimedDelivery> first = queue_->RecordAndClaim(*db_, {}, 60, {}, 4, kLease).claimed;
  ASSERT_EQ(first.size(), 4u);
  ASSERT_NE(first[0].webhook, nullptr);
  EXPECT_EQ(first[0].webhook->id, webhook_id_);
  EXPECT_EQ(Leased(), 4);

  const std::vector<ClaimedDelivery> second =
      queue_->RecordAndClaim(*db_, Outcomes(first, std::vector<Outcome>(4, Outcome{Outcome::kSucceeded})), 60, {}, 4,
                             kLease)
          .claimed;
  ASSERT_EQ(second.size(), 4u);
  for (const ClaimedDelivery& d : second) {
    EXPECT_TRUE(std::none_of(first.begin(), first.end(), [&](const ClaimedDelivery& f) { return f.id == d.id; }))
        << d.id << " was claimed while its first attempt was being recorded";
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'succeeded' AND delivered_at > "
                  "'1970-01-01'"),
            4);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_delivery_attempts WHERE status_code = 200"), 4);
  EXPECT_EQ(Leased(), 4);  // the second batch; the first is finished
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= "
                  "UTC_TIMESTAMP(3)"
                  " AND leased_until = '1970-01-01'"),
            2);
}

TEST_F(WebhooksDeliveryQueueDb, FailedRoundLeavesNeitherItsAttemptsNorItsLeases) {
  Enqueue(6);
  const std::vector<ClaimedDelivery> held = queue_->RecordAndClaim(*db_, {}, 60, {}, 3, kLease).claimed;
  ASSERT_EQ(held.size(), 3u);

  // The round's last statement (the new leases) fails, as a crash before the commit would end it.
  scratch_.Exec("CREATE TABLE refuse_leases (x INT)");
  scratch_.Exec("INSERT INTO refuse_leases VALUES (1)");
  scratch_.Exec(
      "CREATE TRIGGER refuse_lease BEFORE UPDATE ON webhook_deliveries FOR EACH ROW"
      " IF NEW.round_attempts = OLD.round_attempts AND NEW.status = 'pending'"
      " AND EXISTS (SELECT 1 FROM refuse_leases) THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'lease refused'; END IF");
  EXPECT_THROW(queue_->RecordAndClaim(*db_, Outcomes(held, std::vector<Outcome>(3, Outcome{Outcome::kSucceeded})), 60,
                                      {}, 3, kLease),
               DatabaseError);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_delivery_attempts"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status <> 'pending' OR round_attempts <> 0"), 0);
  EXPECT_EQ(Leased(), 3) << "only the first batch holds a lease";
  scratch_.Exec("DELETE FROM refuse_leases");

  // The leases run out: every delivery is claimed again, the held ones with their webhook-ids.
  scratch_.Exec(
      "UPDATE webhook_deliveries SET leased_until = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE leased_until "
      "> "
      "UTC_TIMESTAMP(3)");
  const std::vector<ClaimedDelivery> again = queue_->RecordAndClaim(*db_, {}, 60, {}, 10, kLease).claimed;
  ASSERT_EQ(again.size(), 6u);
  for (const ClaimedDelivery& h : held) {
    auto it = std::find_if(again.begin(), again.end(), [&](const ClaimedDelivery& d) { return d.id == h.id; });
    ASSERT_NE(it, again.end()) << h.id;
    EXPECT_EQ(it->message_id, h.message_id);
    EXPECT_EQ(it->body, h.body);
  }
}

TEST_F(WebhooksDeliveryQueueDb, MixedOutcomesLandEachWithItsNextState) {
  Enqueue(13);  // 13 attempt rows: inserted in several multi-row statements
  const std::vector<ClaimedDelivery> claimed = queue_->RecordAndClaim(*db_, {}, 60, {}, 13, kLease).claimed;
  ASSERT_EQ(claimed.size(), 13u);
  std::vector<Outcome> outcomes(13, Outcome{Outcome::kSucceeded});
  outcomes[1] = Outcome{Outcome::kFailed};
  outcomes[2] = Outcome{Outcome::kRetryLater, int64_t{3600} * 1000};
  outcomes[3] = Outcome{Outcome::kRetryLater, int64_t{36000} * 1000};
  const auto result = queue_->RecordAndClaim(*db_, Outcomes(claimed, outcomes), 60, {}, 0, kLease);
  EXPECT_TRUE(result.claimed.empty());
  EXPECT_TRUE(result.disabled.empty());

  const auto status = [&](size_t i) {
    return scratch_.QueryValue("SELECT status FROM webhook_deliveries WHERE id = " + std::to_string(claimed[i].id));
  };
  EXPECT_EQ(status(0), "succeeded");
  EXPECT_EQ(status(1), "failed");
  EXPECT_EQ(status(2), "pending");
  EXPECT_EQ(status(3), "pending");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'succeeded'"), 10);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE round_attempts = 1"), 13);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_delivery_attempts"), 13);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_delivery_attempts WHERE error = 'HTTP 503' AND status_code = 503"), 3);
  // Each retry is due after its own delay (an hour, ten hours).
  const auto due_in = [&](size_t i) {
    return Count("SELECT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(3), next_attempt_at) + 100000 FROM webhook_deliveries"
                 " WHERE id = " + std::to_string(claimed[i].id)) - 100000;
  };
  EXPECT_LE(due_in(2), 3600);
  EXPECT_GT(due_in(2), 0);
  EXPECT_GT(due_in(3), 5 * 3600);
  // A failed attempt marks its webhook as failing, successes beside it in the batch or not.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhooks WHERE failing_since IS NOT NULL"), 1);
}

// The ids of a round go to prepared statements of a few lengths, a long list in several of them:
// every claimed row is leased, and every outcome lands once, with its own retry delay, whatever
// the cut.
TEST_F(WebhooksDeliveryQueueDb, LongBatchesAreLeasedAndRecordedEachRowOnce) {
  constexpr int kRows =
      700;  // 280 successes, 350 retries, 70 failures: longer lists than one statement takes
  Enqueue(kRows);
  const std::vector<ClaimedDelivery> claimed =
      queue_->RecordAndClaim(*db_, {}, 60, {}, kRows, kLease).claimed;
  ASSERT_EQ(claimed.size(), static_cast<size_t>(kRows));
  EXPECT_EQ(Leased(), kRows);
  std::vector<Outcome> outcomes;
  std::map<int64_t, int64_t> delay_s;  // delivery id -> its retry delay
  for (int i = 0; i < kRows; ++i) {
    if (i % 10 == 4) {
      outcomes.push_back(Outcome{Outcome::kFailed});
    } else if (i % 2 == 1) {
      outcomes.push_back(Outcome{Outcome::kRetryLater, int64_t{1000 + i} * 1000});
      delay_s[claimed[i].id] = 1000 + i;
    } else {
      outcomes.push_back(Outcome{Outcome::kSucceeded});
    }
  }
  ASSERT_EQ(delay_s.size(), 350u);
  queue_->RecordAndClaim(*db_, Outcomes(claimed, outcomes), 60, {}, 0, kLease);

  EXPECT_EQ(
      Count(
          "SELECT COUNT(*) FROM webhook_deliveries WHERE round_attempts = 1 AND leased_until = '1970-01-01'"),
      kRows);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_delivery_attempts"), kRows);
  EXPECT_EQ(Count("SELECT COUNT(DISTINCT delivery_id) FROM webhook_delivery_attempts"), kRows);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'succeeded' AND delivered_at > "
                  "'1970-01-01'"),
            280);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE delivered_at > '1970-01-01'"), 280);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'failed'"), 70);
  std::map<int64_t, int64_t> due;
  db_->Run([&](DbConnection& conn) {
    for (const DbRow& row : conn.Query("SELECT id, TIMESTAMPDIFF(SECOND, updated_at, next_attempt_at) AS s"
                                       " FROM webhook_deliveries WHERE status = 'pending'")) {
      due[row.Int("id")] = row.Int("s");
    }
  });
  EXPECT_EQ(due, delay_s) << "each retry due after its own delay";
}

// The webhooks of busy destinations are left out of a claim, however many (the list is padded to
// its statement's length), and only those.
TEST_F(WebhooksDeliveryQueueDb, ClaimLeavesOutTheSkippedWebhooksOnly) {
  scratch_.Exec(
      "INSERT INTO webhooks (user_id, subscriber_url, url_hash, active, triggers, created_at, updated_at)"
      " VALUES (3, 'http://127.0.0.1:9/other', SHA2('http://127.0.0.1:9/other', 256), 1,"
      " '[\"BOOKING_CREATED\"]', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
  const int64_t other = std::stoll(scratch_.QueryValue("SELECT MAX(id) FROM webhooks"));
  Enqueue(3, 2);  // 3 deliveries to each webhook
  const std::vector<ClaimedDelivery> first =
      queue_
          ->RecordAndClaim(*db_, {}, 60, {}, 10, kLease, {other + 1, other + 2, other, other + 3, other + 4})
          .claimed;
  ASSERT_EQ(first.size(), 3u);
  for (const ClaimedDelivery& d : first) EXPECT_EQ(d.webhook->id, webhook_id_) << d.id;
  const std::vector<ClaimedDelivery> second =
      queue_->RecordAndClaim(*db_, {}, 60, {}, 10, kLease, {webhook_id_}).claimed;
  ASSERT_EQ(second.size(), 3u);
  for (const ClaimedDelivery& d : second) EXPECT_EQ(d.webhook->id, other) << d.id;
}

// A claim shares itself among the webhooks' owners: each gets at most its room (the share less
// what it holds), the rows past an owner's room stay due (passed over, for a later claim), and an
// owner whose share is full is left out by the walk itself, so another owner's rows behind a long
// run of its rows are claimed.
TEST_F(WebhooksDeliveryQueueDb, ClaimGivesEachOwnerItsShareAndPassesOverFullOnes) {
  scratch_.Exec(
      "INSERT INTO webhooks (user_id, subscriber_url, url_hash, active, triggers, created_at, updated_at)"
      " VALUES (4, 'http://127.0.0.1:9/four', SHA2('http://127.0.0.1:9/four', 256), 1,"
      " '[\"BOOKING_CREATED\"]', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
  const int64_t fours = std::stoll(scratch_.QueryValue("SELECT MAX(id) FROM webhooks"));
  Enqueue(6);  // owner 3's six, due first
  std::vector<std::string> texts = {
      R"({"triggerEvent":"BOOKING_CREATED","payload":{"uid":"f1","organizer":{"id":4}}})",
      R"({"triggerEvent":"BOOKING_CREATED","payload":{"uid":"f2","organizer":{"id":4}}})"};
  const std::vector<OutboxEvent> later = StoredEvents(texts);
  ASSERT_EQ(db_->Transaction([&](DbConnection& tx) { return queue_->Enqueue(tx, later); }), 2u);

  webhooks::ClaimShares shares;
  shares.per_owner = 3;
  shares.held = {{3, 1}};  // owner 3 holds one already: room for two more
  const webhooks::RecordAndClaimResult first =
      queue_->RecordAndClaim(*db_, {}, 60, {}, 10, kLease, {}, {}, &shares);
  std::map<int64_t, int> per_owner;
  for (const ClaimedDelivery& d : first.claimed) ++per_owner[d.webhook->user_id];
  EXPECT_EQ(per_owner[3], 2);
  EXPECT_EQ(per_owner[4], 2);
  EXPECT_TRUE(first.passed_over);
  EXPECT_EQ(Leased(), 4) << "only what was taken is leased";

  // Owner 3 full: a claim of one row walks past its four left and finds nothing of anyone else.
  scratch_.Exec("UPDATE webhook_deliveries SET leased_until = '1970-01-01 00:00:00' WHERE webhook_id = " +
                std::to_string(fours));
  webhooks::ClaimShares full;
  full.per_owner = 3;
  full.held = {{3, 3}};
  full.skip_owners = {3};
  const webhooks::RecordAndClaimResult second =
      queue_->RecordAndClaim(*db_, {}, 60, {}, 1, kLease, {}, {}, &full);
  ASSERT_EQ(second.claimed.size(), 1u);
  EXPECT_EQ(second.claimed[0].webhook->user_id, 4) << "owner 4's row behind owner 3's";
  EXPECT_FALSE(second.passed_over);

  const std::vector<ClaimedDelivery> rest = queue_->RecordAndClaim(*db_, {}, 60, {}, 10, kLease).claimed;
  per_owner.clear();
  for (const ClaimedDelivery& d : rest) ++per_owner[d.webhook->user_id];
  EXPECT_EQ(per_owner[3], 4) << "the rows passed over stayed due";
  EXPECT_EQ(per_owner[4], 1);
}

// What one event's deliveries store is bounded: rows past max_event_bytes (kDeliveryRowBytes each,
// no body: they refer to the event) are not created, and nothing is rendered at enqueue.
TEST_F(WebhooksDeliveryQueueDb, AnEventsDeliveriesStayWithinItsCap) {
  for (int i = 0; i < 2; ++i) {
    const std::string url = "http://127.0.0.1:9/cap" + std::to_string(i);
    scratch_.Exec(
        "INSERT INTO webhooks (user_id, subscriber_url, url_hash, active, triggers, payload_template, "
        "created_at,"
        " updated_at) VALUES (3, '" +
        url + "', SHA2('" + url +
        "', 256), 1, '[\"BOOKING_CREATED\"]',"
        " '{{payload.uid}}', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
  }
  webhooks::QueueOptions options;
  options.max_event_bytes = 2 * webhooks::kDeliveryRowBytes + 1;
  DeliveryQueue capped(*store_, {}, options);
  const std::vector<OutboxEvent> batch =
      StoredEvents({R"({"triggerEvent":"BOOKING_CREATED","payload":{"uid":"c1","organizer":{"id":3}}})",
                    R"({"triggerEvent":"BOOKING_CREATED","payload":{"uid":"c2","organizer":{"id":3}}})"});
  EXPECT_EQ(db_->Transaction([&](DbConnection& tx) { return capped.Enqueue(tx, batch); }), 4u)
      << "two of each event's three webhooks";
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE body IS NOT NULL"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE content_type = 'event'"), 4);
}

// A delivery that awaits the filter script (kFilterAtSend) is no delivery for its owner yet: the
// log leaves it out and a retry does not find it. One the filter turns down is deleted with no
// attempt and no effect on its webhook; one it lets through is recorded as any other and is in
// the log from then on, as a delivery rendered when sent.
TEST_F(WebhooksDeliveryQueueDb, ADeliveryAwaitingItsFilterIsOutOfTheLogAndOneTurnedDownIsDeleted) {
  Enqueue(3);
  scratch_.Exec(std::string("UPDATE webhook_deliveries SET content_type = '") + webhooks::kFilterAtSend +
                "'");
  auto listed = queue_->List(*db_, 3, webhook_id_, 0, 10);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->second, 0);
  EXPECT_TRUE(listed->first.empty()) << listed->first.dump();
  const int64_t first = Count("SELECT MIN(id) FROM webhook_deliveries");
  EXPECT_EQ(queue_->Retry(*db_, 3, webhook_id_, first).status().code(), ErrorCode::kNotFound);

  const std::vector<ClaimedDelivery> claimed = queue_->RecordAndClaim(*db_, {}, 60, {}, 10, kLease).claimed;
  ASSERT_EQ(claimed.size(), 3u);
  for (const ClaimedDelivery& d : claimed) {
    EXPECT_TRUE(d.filter) << d.id;
    EXPECT_TRUE(d.render) << d.id;
  }
  queue_->RecordAndClaim(*db_,
                         Outcomes(claimed, {Outcome{Outcome::kFilteredOut}, Outcome{Outcome::kSucceeded},
                                            Outcome{Outcome::kFilteredOut}}),
                         60, {}, 0, kLease);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_delivery_attempts"), 1);
  EXPECT_EQ(
      Count("SELECT COUNT(*) FROM webhook_deliveries WHERE content_type = 'event' AND status = 'succeeded'"
            " AND id = " +
            std::to_string(claimed[1].id)),
      1);
  listed = queue_->List(*db_, 3, webhook_id_, 0, 10);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->second, 1);
  ASSERT_EQ(listed->first.size(), 1u);
  EXPECT_EQ(listed->first[0]["id"], claimed[1].id);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhooks WHERE failing_since IS NOT NULL"), 0);
}

// plugins.webhooks.max_rendered_bytes: a rendering longer than the configured value is cut on a
// UTF-8 character boundary (a two-byte character that does not fit whole is left out).
TEST_F(WebhooksDeliveryQueueDb, TheConfiguredMaxRenderedBytesCutsARenderingOnACharacterBoundary) {
  std::string name;
  for (int i = 0; i < 600; ++i) name += "\xC3\xA9";  // é: 1,200 bytes
  const nlohmann::json event = {{"triggerEvent", "BOOKING_CREATED"},
                                {"createdAt", "2030-01-01T09:00:00.000Z"},
                                {"payload", {{"name", name}, {"organizer", {{"id", 3}}}}}};
  webhooks::Webhook w;
  w.id = webhook_id_;
  w.user_id = 3;
  w.payload_template = "x{{name}}";
  webhooks::QueueOptions options;
  options.max_rendered_bytes = 1024;
  const DeliveryQueue small(*store_, {}, options);
  const webhooks::RenderedBody cut = small.RenderForSend(w, event.dump(), &event);
  std::string expected = "x";
  for (int i = 0; i < 511; ++i) expected += "\xC3\xA9";
  EXPECT_EQ(cut.body.size(), 1023u);
  EXPECT_EQ(cut.body, expected);
  EXPECT_EQ(cut.content_type, "text/plain");
  EXPECT_EQ(queue_->RenderForSend(w, event.dump(), &event).body, "x" + name) << "the default is 1 MiB";
  // Without a template or script the event's text goes as it is, whatever its size.
  w.payload_template.reset();
  EXPECT_EQ(small.RenderForSend(w, event.dump(), &event).body, event.dump());
}

// The enqueue picks webhooks and renders bodies, which needs no secret: none is decrypted for it.
// The claim, whose deliveries are signed, reads the secret.
TEST_F(WebhooksDeliveryQueueDb, EnqueueReadsNoSecretTheClaimReadsIt) {
  WebhookStore keyed(*db_, std::string(32, 'k'));
  webhooks::WebhookFields fields;
  fields.active = true;
  fields.subscriber_url = "http://127.0.0.1:9/signed";
  fields.triggers = std::vector<std::string>{"BOOKING_CREATED"};
  fields.secret = std::optional<std::string>("whsec-enqueue-test");
  Result<webhooks::Webhook> created = keyed.Create(3, WebhookStore::Level{}, fields);
  ASSERT_TRUE(created.ok()) << created.status().message();
  db_->Run([&](DbConnection& conn) {
    const std::vector<webhooks::Webhook> active = keyed.Active(conn, 3);
    ASSERT_EQ(active.size(), 2u);
    for (const webhooks::Webhook& w : active) {
      EXPECT_FALSE(w.secret.has_value()) << w.id;
      EXPECT_FALSE(w.secret_unreadable) << w.id;
    }
    std::optional<webhooks::Webhook> loaded = keyed.Load(conn, created->id);
    ASSERT_TRUE(loaded.has_value());
    EXPECT_EQ(loaded->secret, "whsec-enqueue-test");
  });
}

TEST_F(WebhooksDeliveryQueueDb, RecoverQueuesTheWindowsFailedDeliveriesInBatches) {
  Enqueue(7);
  std::vector<std::string> ids;
  for (int i = 1; i <= 7; ++i) {
    ids.push_back(scratch_.QueryValue("SELECT id FROM webhook_deliveries ORDER BY id LIMIT 1 OFFSET " + std::to_string(i - 1)));
  }
  // d1 before the window, d7 at its end (excluded), d2..d6 at one instant (ties for the walk);
  // all failed but d5.
  scratch_.Exec("UPDATE webhook_deliveries SET status = 'failed', created_at = '2030-01-01 10:00:00.000'");
  scratch_.Exec("UPDATE webhook_deliveries SET created_at = '2030-01-01 09:59:59.999' WHERE id = " + ids[0]);
  scratch_.Exec("UPDATE webhook_deliveries SET created_at = '2030-01-01 11:00:00.000' WHERE id = " + ids[6]);
  scratch_.Exec("UPDATE webhook_deliveries SET status = 'succeeded' WHERE id = " + ids[4]);
  const int64_t since = *time::ParseIso("2030-01-01T10:00:00Z");
  const int64_t until = *time::ParseIso("2030-01-01T11:00:00Z");

  EXPECT_EQ(queue_->Recover(*db_, 4, webhook_id_, since, until, 2).status().code(), ErrorCode::kNotFound);
  Result<int64_t> queued = queue_->Recover(*db_, 3, webhook_id_, since, until, 2);
  ASSERT_TRUE(queued.ok()) << queued.status().message();
  EXPECT_EQ(*queued, 4);
  EXPECT_EQ(scratch_.QueryValue("SELECT GROUP_CONCAT(id ORDER BY id) FROM webhook_deliveries WHERE status = 'pending'"),
            ids[1] + "," + ids[2] + "," + ids[3] + "," + ids[5]);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending' AND"
                  " (round_attempts <> 0 OR next_attempt_at > UTC_TIMESTAMP(3))"), 0);
  // Nothing left to queue in the window.
  EXPECT_EQ(*queue_->Recover(*db_, 3, webhook_id_, since, until, 2), 0);
}

TEST_F(WebhooksDeliveryQueueDb, EventGoesToTheOrganizersAndItsEventTypesWebhooksOnceEach) {
  // Beside organizer 3's own webhook: one on event type 7 (the same URL: another level), one on
  // event type 8, an inactive one on 7, and another organizer's own.
  scratch_.Exec(
      "INSERT INTO webhooks (user_id, event_type_id, subscriber_url, url_hash, active, triggers, created_at, "
      "updated_at)"
      " VALUES (3, 7, 'http://127.0.0.1:9/hook', SHA2('http://127.0.0.1:9/hook', 256), 1, "
      "'[\"BOOKING_CREATED\"]',"
      "   UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)),"
      " (3, 8, 'http://127.0.0.1:9/eight', SHA2('http://127.0.0.1:9/eight', 256), 1, '[\"BOOKING_CREATED\"]',"
      "   UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)),"
      " (3, 7, 'http://127.0.0.1:9/off', SHA2('http://127.0.0.1:9/off', 256), 0, '[\"BOOKING_CREATED\"]',"
      "   UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)),"
      " (4, NULL, 'http://127.0.0.1:9/hook', SHA2('http://127.0.0.1:9/hook', 256), 1, "
      "'[\"BOOKING_CREATED\"]',"
      "   UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
  const std::string on_seven =
      scratch_.QueryValue("SELECT id FROM webhooks WHERE event_type_id = 7 AND active = 1");
  const std::string on_eight = scratch_.QueryValue("SELECT id FROM webhooks WHERE event_type_id = 8");
  auto event = [](int64_t id, std::optional<int64_t> event_type) {
    OutboxEvent e;
    e.id = id;
    e.topic = "bookings";
    e.type = "BOOKING_CREATED";
    webhooks::Json payload = {{"uid", "b" + std::to_string(id)}, {"organizer", {{"id", 3}}}};
    if (event_type) payload["eventTypeId"] = *event_type;
    e.payload =
        std::make_shared<const nlohmann::json>(nlohmann::json{{"triggerEvent", "BOOKING_CREATED"},
                                                              {"createdAt", "2030-01-01T09:00:00.000Z"},
                                                              {"payload", payload}});
    e.created_at = std::chrono::system_clock::now();
    return e;
  };
  // Two events of event type 7 and one without an event type, in one batch.
  const std::vector<OutboxEvent> batch = {event(1, 7), event(2, std::nullopt), event(3, 7)};
  EXPECT_EQ(db_->Transaction([&](DbConnection& tx) { return queue_->Enqueue(tx, batch); }), 5u);
  auto webhooks_of = [&](int event_id) {
    return scratch_.QueryValue(
        "SELECT GROUP_CONCAT(webhook_id ORDER BY webhook_id) FROM webhook_deliveries WHERE event_id = " +
        std::to_string(event_id));
  };
  EXPECT_EQ(webhooks_of(1), std::to_string(webhook_id_) + "," + on_seven);
  EXPECT_EQ(webhooks_of(2), std::to_string(webhook_id_));
  EXPECT_EQ(webhooks_of(3), std::to_string(webhook_id_) + "," + on_seven);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = " + on_eight), 0);
}

// A booking's webhooks of both levels come in id order from one query that needs no temporary
// table (MariaDB sorts a UNION in one, on disk for TEXT columns: a file per booking event).
TEST_F(WebhooksDeliveryQueueDb, BothLevelsComeInIdOrderWithoutATemporaryTable) {
  scratch_.Exec(
      "INSERT INTO webhooks (user_id, event_type_id, subscriber_url, url_hash, active, triggers, created_at,"
      " updated_at) VALUES"
      " (3, 7, 'http://127.0.0.1:9/seven', SHA2('http://127.0.0.1:9/seven', 256), 1, '[\"BOOKING_CREATED\"]',"
      "   UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)),"
      " (3, NULL, 'http://127.0.0.1:9/own', SHA2('http://127.0.0.1:9/own', 256), 1, '[\"BOOKING_CREATED\"]',"
      "   UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
  const auto [ids, temporary_tables] = db_->Run([&](DbConnection& conn) {
    const auto created = [&] {
      return conn.QueryOne("SHOW SESSION STATUS LIKE 'Created_tmp_tables'")->String("Value");
    };
    const std::string before = created();
    std::vector<int64_t> got;
    for (const webhooks::Webhook& w : store_->Active(conn, 3, 7)) got.push_back(w.id);
    return std::make_pair(got, std::stoll(created()) - std::stoll(before));
  });
  const int64_t first = webhook_id_;
  EXPECT_EQ(ids, (std::vector<int64_t>{first, first + 1, first + 2}));
  EXPECT_EQ(temporary_tables, 0);
}

// The consumer takes the events' texts: each is routed by the members read from its text (the
// organizer, else the first host; the trigger) and sent as stored; a text that is not well-formed
// JSON, another organizer's event and a trigger the webhook does not take create nothing.
TEST_F(WebhooksDeliveryQueueDb, AnEventHandedAsTextIsRoutedByItsMembersAndSentAsStored) {
  const std::vector<std::string> texts = {
      R"({"triggerEvent":"BOOKING_CREATED","createdAt":"2030-01-01T09:00:00.000Z",)"
      R"("payload":{"uid":"t1","organizer":{"name":"no id"},"hosts":[{"id":3}],"title":"Caf\u00e9 \"x\""}})",
      R"({"triggerEvent":"BOOKING_CREATED","payload":{"uid":"t2","organizer":{"id":4}}})",
      R"({"triggerEvent":"BOOKING_CANCELLED","payload":{"uid":"t3","organizer":{"id":3}}})",
      R"({"triggerEvent":"BOOKING_CREATED","payload":{"uid":"t4","organizer":{"id":3}})",
      "not json",
  };
  const std::vector<OutboxEvent> batch = StoredEvents(texts);
  EXPECT_EQ(db_->Transaction([&](DbConnection& tx) { return queue_->Enqueue(tx, batch); }), 1u);
  EXPECT_EQ(scratch_.QueryValue("SELECT CONCAT(event_id, ' ', webhook_id) FROM webhook_deliveries"),
            std::to_string(batch[0].id) + " " + std::to_string(webhook_id_));
  const std::vector<ClaimedDelivery> claimed = queue_->RecordAndClaim(*db_, {}, 60, {}, 10, kLease).claimed;
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].body, texts[0]);
  EXPECT_EQ(claimed[0].content_type, webhooks::kRenderAtSend);
  EXPECT_TRUE(claimed[0].render) << "rendered for its webhook when sent";
}

// The built-in body of an event read from the outbox is not copied into its deliveries: each row
// refers to its event (a NULL body) and a claim reads the text from the outbox. A delivery queued
// again by a manual retry takes a copy of the text, and is sent with it after the outbox has let
// the event go; one queued again after that is claimed without a body, marked so, and the sender
// fails it with that reason rather than send an empty body.
TEST_F(WebhooksDeliveryQueueDb, DeliveriesOfTheBuiltInBodyReferToTheirEventsInTheOutbox) {
  const std::vector<std::string> texts = {
      R"({"triggerEvent":"BOOKING_CREATED","payload":{"uid":"r1","organizer":{"id":3}}})",
      R"({"triggerEvent":"BOOKING_CREATED","payload":{"uid":"r2","organizer":{"id":3},"title":"\u00e9"}})",
  };
  const std::vector<OutboxEvent> batch = StoredEvents(texts);
  ASSERT_EQ(db_->Transaction([&](DbConnection& tx) { return queue_->Enqueue(tx, batch); }), 2u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE body IS NULL"), 2);

  const std::vector<ClaimedDelivery> claimed = queue_->RecordAndClaim(*db_, {}, 60, {}, 10, kLease).claimed;
  ASSERT_EQ(claimed.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(claimed[i].body, texts[i]);
    EXPECT_FALSE(claimed[i].body_gone);
  }
  queue_->RecordAndClaim(*db_, Outcomes(claimed, {Outcome{Outcome::kFailed}, Outcome{Outcome::kFailed}}), 60,
                         {}, 0, kLease);
  ASSERT_TRUE(queue_->Retry(*db_, 3, webhook_id_, claimed[0].id).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE body IS NULL"), 1)
      << "the retried one copied";
  scratch_.Exec("DELETE FROM outbox_events");
  ASSERT_TRUE(queue_->Retry(*db_, 3, webhook_id_, claimed[1].id).ok());

  std::vector<ClaimedDelivery> again = queue_->RecordAndClaim(*db_, {}, 60, {}, 10, kLease).claimed;
  ASSERT_EQ(again.size(), 2u);
  std::sort(again.begin(), again.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  EXPECT_EQ(again[0].body, texts[0]);
  EXPECT_FALSE(again[0].body_gone);
  EXPECT_EQ(again[1].body, "");
  EXPECT_TRUE(again[1].body_gone);

  // The sender's attempt at the one without a body.
  scratch_.Exec("UPDATE webhook_deliveries SET leased_until = '1970-01-01 00:00:00' WHERE id = " +
                std::to_string(again[1].id));
  scratch_.Exec("UPDATE webhook_deliveries SET status = 'succeeded' WHERE id = " +
                std::to_string(again[0].id));
  webhooks::SenderOptions options;
  options.allow_private_networks = true;
  DeliverySender sender(*db_, *queue_, QuietLogger(), options);
  sender.Start();
  EXPECT_TRUE(Eventually("the delivery without its event failed", Patience{}, [&] {
    return Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'failed' AND id = " +
                 std::to_string(again[1].id)) == 1;
  }));
  sender.Stop();
  EXPECT_EQ(scratch_.QueryValue("SELECT error FROM webhook_delivery_attempts WHERE delivery_id = " +
                                std::to_string(again[1].id) + " ORDER BY id DESC LIMIT 1"),
            "the event this delivery carries is no longer kept (the outbox's retention)");
}

// A recovery queues its window's failed deliveries with a copy of their events' texts, so they are
// sent with their bodies even once the outbox has let the events go.
TEST_F(WebhooksDeliveryQueueDb, ARecoveryCopiesTheTextsOfTheEventsItsDeliveriesReferTo) {
  const std::vector<std::string> texts = {
      R"({"triggerEvent":"BOOKING_CREATED","payload":{"uid":"v1","organizer":{"id":3}}})",
      R"({"triggerEvent":"BOOKING_CREATED","payload":{"uid":"v2","organizer":{"id":3}}})",
      R"({"triggerEvent":"BOOKING_CREATED","payload":{"uid":"v3","organizer":{"id":3}}})",
  };
  const std::vector<OutboxEvent> batch = StoredEvents(texts);
  ASSERT_EQ(db_->Transaction([&](DbConnection& tx) { return queue_->Enqueue(tx, batch); }), 3u);
  const std::vector<ClaimedDelivery> claimed = queue_->RecordAndClaim(*db_, {}, 60, {}, 10, kLease).claimed;
  ASSERT_EQ(claimed.size(), 3u);
  queue_->RecordAndClaim(*db_, Outcomes(claimed, std::vector<Outcome>(3, Outcome{Outcome::kFailed})), 60, {},
                         0, kLease);
  const int64_t now = time::Now();
  const Result<int64_t> queued = queue_->Recover(*db_, 3, webhook_id_, now - 3600000, now + 3600000, 2);
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(*queued, 3);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE body IS NULL"), 0);
  scratch_.Exec("DELETE FROM outbox_events");
  std::vector<ClaimedDelivery> again = queue_->RecordAndClaim(*db_, {}, 60, {}, 10, kLease).claimed;
  ASSERT_EQ(again.size(), 3u);
  std::sort(again.begin(), again.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(again[i].body, texts[i]);
    EXPECT_FALSE(again[i].body_gone);
  }
}

// A claim skips the rows another transaction holds locked (SKIP LOCKED: a consumer's rows still
// committing) and may take later ones: the place where its next claim starts is then past the
// skipped rows. The sender told from when new deliveries are due (WakeFrom, as the outbox consumer
// does after each commit) claims them at once; with full claims (from the start of the index) an
// hour apart, nothing else would find them within the test. (The lock is taken on the row by its
// key, as a claim's would be: a lock left by an uncommitted insert would also hold up the sender's
// purge, whose range ends at the row.)
TEST_F(WebhooksDeliveryQueueDb, TheSenderFindsDeliveriesItsLastClaimPassedOverWhenToldWhereTheyStart) {
  LoopbackHttpServer receiver([](const PeerRequest&) {
    PeerResponse ok;
    ok.body = "ok";
    return ok;
  });
  scratch_.Exec("UPDATE webhooks SET subscriber_url = '" + receiver.url() +
                "/hook' WHERE id = " + std::to_string(webhook_id_));
  const int64_t before_ms = time::Now();
  Enqueue(2);  // event 1's delivery, then event 2's: a later id, due no earlier
  const std::string first = scratch_.QueryValue("SELECT MIN(id) FROM webhook_deliveries");

  webhooks::SenderOptions options;
  options.allow_private_networks = true;
  options.poll_interval = std::chrono::seconds(3600);
  options.full_claim_interval = std::chrono::seconds(3600);
  DeliverySender sender(*db_, *queue_, QuietLogger(), options);
  std::promise<void> locked, release;
  std::thread holder([&] {
    db_->Transaction([&](DbConnection& tx) {
      tx.QueryOne("SELECT id FROM webhook_deliveries WHERE id = " + first + " FOR UPDATE");
      locked.set_value();
      release.get_future().wait();
    });
  });
  locked.get_future().wait();
  sender.Start();
  // Event 2's, claimed past the locked row (the bound is generous: the suite's fuzzers share the cores).
  const bool second_sent = receiver.AwaitRequests(1, std::chrono::seconds(60));
  release.set_value();
  holder.join();
  ASSERT_TRUE(second_sent);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE id = " + first + " AND status = 'pending'"),
            1);

  sender.WakeFrom(before_ms);
  EXPECT_TRUE(
      Eventually("event 1's delivery sent", Patience{}, [&] { return receiver.Requests().size() == 2; }));
  sender.Stop();
  EXPECT_EQ(Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'"), 0);
}

// The sender's columns keep their size (the status a CHAR, no lease and never delivered a time long
// past rather than NULL: its writes rewrite rows in place), and rows written before that are claimed
// and recorded as before: an unleased row is claimed, a leased one is not, a success delivered
// before keeps its first delivery time through a manual retry.
TEST(WebhooksDeliveryQueueUpgrade, RowsWrittenBeforeTheFixedSizeColumnsAreClaimedAndRecordedAsBefore) {
  ScratchDatabase scratch;
  prometheus::Registry registry;
  auto db = std::make_unique<core::MysqlDatabase>(OptionsFor(scratch, 2), registry, QuietLogger());
  const std::vector<Migration> all = webhooks::WebhookMigrations();
  const std::vector<Migration> before(all.begin(), all.begin() + 9);
  ASSERT_EQ(before.back().version, 9);
  {
    core::Migrator m(*db, QuietLogger());
    m.Add("webhooks", before);
    m.Apply();
  }
  scratch.Exec(
      "INSERT INTO webhooks (user_id, subscriber_url, url_hash, active, triggers, created_at, updated_at)"
      " VALUES (3, 'http://127.0.0.1:9/hook', SHA2('http://127.0.0.1:9/hook', 256), 1,"
      " '[\"BOOKING_CREATED\"]', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
  const std::string webhook = scratch.QueryValue("SELECT MAX(id) FROM webhooks");
  const auto insert = [&](int event, const std::string& status, const std::string& leased_until,
                          const std::string& delivered_at) {
    scratch.Exec(
        "INSERT INTO webhook_deliveries (webhook_id, event_id, trigger_event, message_id, body, "
        "content_type, status,"
        " round_attempts, next_attempt_at, created_at, updated_at, leased_until, delivered_at) VALUES (" +
        webhook + ", " + std::to_string(event) + ", 'BOOKING_CREATED', 'msg_" + std::to_string(event) +
        "', '{}', 'application/json', '" + status +
        "', 1, UTC_TIMESTAMP(3) - INTERVAL 1 SECOND, UTC_TIMESTAMP(3),"
        " UTC_TIMESTAMP(3), " +
        leased_until + ", " + delivered_at + ")");
    return std::stoll(scratch.QueryValue("SELECT MAX(id) FROM webhook_deliveries"));
  };
  const int64_t unleased = insert(1, "pending", "NULL", "NULL");
  const int64_t leased = insert(2, "pending", "UTC_TIMESTAMP(3) + INTERVAL 1 HOUR", "NULL");
  const int64_t delivered = insert(3, "succeeded", "NULL", "'2030-01-01 09:00:00.120'");
  {
    core::Migrator m(*db, QuietLogger());
    m.Add("webhooks", all);
    m.Apply();
  }
  EXPECT_EQ(scratch.QueryValue(
                "SELECT GROUP_CONCAT(CONCAT(column_name, ' ', column_type, ' ', is_nullable)"
                " ORDER BY column_name) FROM information_schema.columns WHERE table_schema = DATABASE()"
                " AND table_name = 'webhook_deliveries'"
                " AND column_name IN ('status', 'leased_until', 'delivered_at')"),
            "delivered_at datetime(3) NO,leased_until datetime(3) NO,status char(9) NO");

  WebhookStore store(*db, "");
  DeliveryQueue queue(store);
  const std::vector<ClaimedDelivery> first = queue.RecordAndClaim(*db, {}, 60, {}, 10, kLease).claimed;
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].id, unleased);
  EXPECT_FALSE(first[0].delivered_before);
  ASSERT_TRUE(queue.Retry(*db, 3, std::stoll(webhook), delivered).ok());
  const std::vector<ClaimedDelivery> second = queue.RecordAndClaim(*db, {}, 60, {}, 10, kLease).claimed;
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].id, delivered);
  EXPECT_TRUE(second[0].delivered_before);

  Attempt ok;
  ok.at_ms = time::Now();
  ok.status_code = 200;
  ok.duration_ms = 1;
  queue.RecordAndClaim(*db,
                       {RecordedAttempt{&first[0], ok, Outcome{Outcome::kSucceeded}},
                        RecordedAttempt{&second[0], ok, Outcome{Outcome::kSucceeded}}},
                       60, {}, 0, kLease);
  const auto row = [&](int64_t id) {
    return scratch.QueryValue(
        "SELECT CONCAT(status, ' ', leased_until <= UTC_TIMESTAMP(3), ' ', delivered_at > '1970-01-01', ' ',"
        " delivered_at = '2030-01-01 09:00:00.120') FROM webhook_deliveries WHERE id = " +
        std::to_string(id));
  };
  EXPECT_EQ(row(unleased), "succeeded 1 1 0");
  EXPECT_EQ(row(delivered), "succeeded 1 1 1") << "the first delivery's time is kept";
  EXPECT_EQ(row(leased), "pending 0 0 0") << "still leased, never delivered";
}

}  // namespace
}  // namespace rendezvous::testing
