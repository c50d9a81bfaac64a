// The calendar plugin's logic classes (calendar_parts.hpp) without the host: a real MariaDB with
// the plugin's tables, a fake Google and ICS host on loopback, and the metrics they count on a
// real registry. Each class is driven through its own calls: the connect flow and the connection,
// the credential's refresh and invalidation, the calendar list and destination, ICS feeds and busy
// times, and the event writer and lookup.
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "calendar_metrics.hpp"
#include "calendar_migrations.hpp"
#include "calendar_parts.hpp"
#include "fake_google.hpp"
#include "metrics/metrics_registry.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "rendezvous/crypto.hpp"
#include "storage/migrator.hpp"
#include "storage/mysql_database.hpp"
#include "storage/outbox_service.hpp"
#include "storage_test_util.hpp"
#include "sync_jobs.hpp"

namespace rendezvous::testing {
namespace {

using calendar::CalendarMetrics;
using calendar::CalendarOptions;
using calendar::CalendarParts;
using calendar::GoogleApi;
using calendar::GoogleConfig;
using nlohmann::json;

constexpr int64_t kAda = 7;
constexpr int64_t kBob = 8;

const char* kIcs =
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nX-WR-CALNAME:Club\r\n"
    "BEGIN:VEVENT\r\nUID:a@x\r\nDTSTART:20300501T060000Z\r\nDTEND:20300501T070000Z\r\nEND:VEVENT\r\n"
    "END:VCALENDAR\r\n";

class CalendarPartsDb : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::make_unique<core::MysqlDatabase>(OptionsFor(scratch_, 4), db_registry_, QuietLogger());
    core::Migrator m(*db_, QuietLogger());
    m.Add("outbox", core::OutboxService::Migrations());
    m.Add("calendar", calendar::CalendarMigrations());
    m.Apply();
    metrics_ = std::make_unique<CalendarMetrics>(facade_);
    GoogleConfig g;
    g.client_id = "fake-client-id";
    g.client_secret = "fake-client-secret";
    g.auth_url = google_.auth_url();
    g.token_url = google_.token_url();
    g.api_base_url = google_.api_base_url();
    g.revoke_url = google_.revoke_url();
    api_ = std::make_unique<GoogleApi>(g, *metrics_);
    CalendarOptions o;
    o.base_url = "http://127.0.0.1:8080";
    o.app_url = "https://app.example.com";
    o.encryption_key = std::string(32, 'k');
    o.ics_allow_private_networks = true;
    parts_ = std::make_unique<CalendarParts>(*db_, QuietLogger(), *api_, o, *metrics_);
  }

  double Metric(const std::string& name, const std::map<std::string, std::string>& labels = {}) {
    return MetricValue(metrics_registry_, name, labels);
  }

  // The outbox consumer's work on `batch` in a transaction of its own (QueueBookingSyncJobs):
  // whether it queued a job, into `queued`; returns the SELECTs it ran.
  int64_t QueueJobs(const std::vector<OutboxEvent>& batch, bool* queued) {
    return db_->Transaction([&](DbConnection& tx) {
      const auto statements = [&] {
        return tx.QueryOne("SHOW SESSION STATUS LIKE 'Com_select'")->Int("Value");
      };
      const int64_t before = statements();
      *queued = calendar::QueueBookingSyncJobs(tx, batch, time::Now());
      return statements() - before;
    });
  }

  // Ada's Google account connected through the whole flow (the calendar list stored).
  void ConnectAda() {
    google_.AddCalendar(
        {{"id", "ada@example.com"}, {"summary", "Ada"}, {"primary", true}, {"accessRole", "owner"}});
    google_.AddCalendar({{"id", "team@group"}, {"summary", "Team"}, {"accessRole", "writer"}});
    google_.AddCalendar({{"id", "holidays@group"}, {"summary", "Holidays"}, {"accessRole", "reader"}});
    auto url = parts_->connect.Connect(kAda, std::nullopt);
    ASSERT_TRUE(url.ok()) << url.status().message();
    const std::string state = QueryParameter(*url, "state");
    auto started = parts_->connect.StartConnect(kAda, state);
    ASSERT_TRUE(started.ok()) << started.status().message();
    auto saved = parts_->connect.Save(google_.IssueCode(), state, "", started->cookie_value);
    ASSERT_TRUE(saved.ok()) << saved.status().message();
  }

  ScratchDatabase scratch_;
  prometheus::Registry db_registry_;
  std::unique_ptr<core::MysqlDatabase> db_;
  core::MetricsRegistry metrics_registry_;
  core::PrometheusMetrics facade_{metrics_registry_};
  std::unique_ptr<CalendarMetrics> metrics_;
  FakeGoogle google_;
  std::unique_ptr<GoogleApi> api_;
  std::unique_ptr<CalendarParts> parts_;
};

// A BOOKING_CREATED event's text, of booking `id` hosted by `host`.
std::string BookingText(int64_t id, int64_t host) {
  return json{{"triggerEvent", "BOOKING_CREATED"},
              {"payload",
               {{"uid", "b" + std::to_string(id)},
                {"status", "accepted"},
                {"start", "2030-05-01T09:00:00.000Z"},
                {"end", "2030-05-01T09:30:00.000Z"},
                {"title", "Call"},
                {"organizer", {{"id", host}, {"email", "h@example.com"}, {"name", "H"}, {"timeZone", "UTC"}}},
                {"attendees", json::array()}}}}
      .dump();
}

// The outbox consumer's work (QueueBookingSyncJobs): with no calendar connected anywhere, one
// statement a batch and no job (the events are not read); with one connected, the batch's hosts
// are looked up and only the connected host's booking gets a sync job.
TEST_F(CalendarPartsDb, OnlyAConnectedHostsBookingQueuesASyncJob) {
  const auto event = [](int64_t id, int64_t host) {
    OutboxEvent e;
    e.id = id;
    e.topic = "bookings";
    e.type = "BOOKING_CREATED";
    e.payload_text = BookingText(id, host);
    return e;
  };
  const std::vector<OutboxEvent> batch = {event(1, kBob), event(2, kAda), event(3, kBob)};
  bool queued = true;
  EXPECT_EQ(QueueJobs(batch, &queued), 1);
  EXPECT_FALSE(queued);
  ConnectAda();
  EXPECT_GT(QueueJobs(batch, &queued), 1);
  EXPECT_TRUE(queued);
  EXPECT_EQ(std::stoll(scratch_.QueryValue("SELECT COUNT(*) FROM calendar_sync_jobs")), 1);
}

// The consumer is handed no texts (OutboxPayload::kNone): with no calendar connected the events
// are never read; with one connected their texts are read by id, and the connected host's
// booking gets its job as when the texts are handed.
TEST_F(CalendarPartsDb, EventsHandedWithoutTheirTextsAreReadOnlyOnceACalendarIsConnected) {
  std::vector<OutboxEvent> batch;
  for (const int64_t host : {kBob, kAda, kBob}) {
    OutboxEvent e;
    e.topic = "bookings";
    e.type = "BOOKING_CREATED";
    e.id = db_->Run([&](DbConnection& conn) {
      conn.Exec(
          "INSERT INTO outbox_events (topic, type, payload, created_at)"
          " VALUES ('bookings', 'BOOKING_CREATED', ?, UTC_TIMESTAMP(3))",
          {BookingText(static_cast<int64_t>(batch.size()) + 1, host)});
      return conn.LastInsertId();
    });
    batch.push_back(e);
  }
  bool queued = true;
  EXPECT_EQ(QueueJobs(batch, &queued), 1);
  EXPECT_FALSE(queued);
  ConnectAda();
  EXPECT_GT(QueueJobs(batch, &queued), 2);  // the credentials, the texts, the hosts' credentials
  EXPECT_TRUE(queued);
  EXPECT_EQ(scratch_.QueryValue("SELECT GROUP_CONCAT(booking_uid) FROM calendar_sync_jobs"), "b2");
}

TEST_F(CalendarPartsDb, MetricsAreExportedAtZeroFromTheStart) {
  EXPECT_EQ(Metric("calendar_google_requests_total", {{"endpoint", "events_patch"}, {"outcome", "bad_body"}}),
            0);
  EXPECT_EQ(Metric("calendar_ics_fetches_total", {{"outcome", "not_modified"}}), 0);
  EXPECT_EQ(
      Metric("calendar_busy_source_failures_total", {{"source", "ics_feed"}, {"code", "not_configured"}}), 0);
  EXPECT_EQ(Metric("calendar_reconnects_required_total"), 0);
  EXPECT_EQ(Metric("calendar_sync_jobs_total", {{"action", "move"}, {"outcome", "retry"}}), 0);
  EXPECT_EQ(Metric("calendar_sync_jobs_pending"), 0);
  metrics_->SyncAttempted("delete", "failed");
  metrics_->SetSyncPending(3);
  EXPECT_EQ(Metric("calendar_sync_jobs_total", {{"action", "delete"}, {"outcome", "failed"}}), 1);
  EXPECT_EQ(Metric("calendar_sync_jobs_pending"), 3);
}

TEST_F(CalendarPartsDb, ConnectFlowStoresTheCredentialAndTheCalendarList) {
  auto url = parts_->connect.Connect(kAda, std::nullopt);
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->rfind("https://app.example.com/settings/calendars/google/start?state=", 0), 0u) << *url;
  const std::string state = QueryParameter(*url, "state");
  // The state is Ada's: another account, or a state never issued, cannot start it.
  EXPECT_EQ(parts_->connect.StartConnect(kBob, state).status().reason(), "wrong_account");
  EXPECT_EQ(parts_->connect.StartConnect(kAda, "unknown").status().reason(), "invalid_state");
  auto started = parts_->connect.StartConnect(kAda, state);
  ASSERT_TRUE(started.ok());
  EXPECT_EQ(started->cookie_name, calendar::GoogleConnection::BindingCookieName(state));
  // Finished in a browser without the binding cookie: refused, and the state stays usable.
  google_.AddCalendar(
      {{"id", "ada@example.com"}, {"summary", "Ada"}, {"primary", true}, {"accessRole", "owner"}});
  EXPECT_EQ(parts_->connect.Save(google_.IssueCode(), state, "", std::nullopt).status().reason(),
            "connect_browser_mismatch");
  auto saved = parts_->connect.Save(google_.IssueCode(), state, "", started->cookie_value);
  ASSERT_TRUE(saved.ok()) << saved.status().message();
  ASSERT_EQ(saved->calendars["calendars"].size(), 1u);
  EXPECT_EQ(saved->calendars["calendars"][0]["externalId"], "ada@example.com");
  // Used up.
  EXPECT_EQ(parts_->connect.Save(google_.IssueCode(), state, "", started->cookie_value).status().reason(),
            "invalid_state");
  // Stored encrypted: no token Google issued is in the row.
  const std::string row = scratch_.QueryValue(
      "SELECT CONCAT(access_token_enc, refresh_token_enc) FROM calendar_google_credentials WHERE user_id = "
      "7");
  ASSERT_FALSE(row.empty());
  for (const std::string& token : google_.IssuedTokens()) EXPECT_EQ(row.find(token), std::string::npos);
  EXPECT_EQ(Metric("calendar_google_requests_total", {{"endpoint", "token"}, {"outcome", "ok"}}), 1);
}

TEST_F(CalendarPartsDb, CheckAndDisconnect) {
  EXPECT_EQ(*parts_->connect.Check(kAda),
            (json{{"connected", false}, {"valid", false}, {"reconnectRequired", false}}));
  ConnectAda();
  EXPECT_EQ(*parts_->connect.Check(kAda),
            (json{{"connected", true}, {"valid", true}, {"reconnectRequired", false}}));
  const int64_t credential =
      std::stoll(scratch_.QueryValue("SELECT id FROM calendar_google_credentials WHERE user_id = 7"));
  // Another credential id than the user's: nothing happens.
  EXPECT_EQ(parts_->connect.Disconnect(kAda, credential + 1).status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(google_.RevokedTokens().empty());
  auto gone = parts_->connect.Disconnect(kAda, credential);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(*gone, (json{{"id", credential},
                         {"type", "google_calendar"},
                         {"userId", kAda},
                         {"teamId", nullptr},
                         {"appId", "google-calendar"},
                         {"invalid", false},
                         {"disconnected", true},
                         {"revoked", true}}));
  EXPECT_EQ(google_.RevokedTokens().size(), 1u);
  EXPECT_EQ(scratch_.QueryValue("SELECT COUNT(*) FROM calendar_google_calendars WHERE user_id = 7"), "0");
  EXPECT_EQ((*parts_->connect.Disconnect(kAda))["disconnected"], false);
  EXPECT_EQ(parts_->connect.Disconnect(kAda, credential).status().code(), ErrorCode::kNotFound);
}

TEST_F(CalendarPartsDb, ACredentialGoogleRefusesIsMarkedInvalidAndCounted) {
  ConnectAda();
  auto loaded = parts_->credentials.Load(kAda);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  calendar::GoogleCredential cred = **loaded;
  // An access token Google stopped accepting is refreshed once, and the new one stored.
  google_.ExpireAccessTokens();
  auto call = parts_->credentials.WithGoogle(
      cred, [&](const std::string& token) { return api_->CalendarList(token); });
  ASSERT_TRUE(call.ok());
  EXPECT_TRUE(call->ok());
  EXPECT_EQ(google_.refreshes(), 1);
  // Then Google refuses the refresh token itself: only connecting again helps.
  google_.ExpireAccessTokens();
  google_.RevokeRefreshTokens();
  call = parts_->credentials.WithGoogle(cred,
                                        [&](const std::string& token) { return api_->CalendarList(token); });
  EXPECT_EQ(call.status().reason(), "reconnect_required");
  EXPECT_EQ(Metric("calendar_reconnects_required_total"), 1);
  EXPECT_EQ(parts_->credentials.Load(kAda).status().reason(), "reconnect_required");
  EXPECT_EQ(*parts_->connect.Check(kAda),
            (json{{"connected", true}, {"valid", false}, {"reconnectRequired", true}}));
  // Marking the same credential again counts nothing more.
  parts_->credentials.MarkInvalid(cred, "again");
  EXPECT_EQ(Metric("calendar_reconnects_required_total"), 1);
}

TEST_F(CalendarPartsDb, CalendarListAndDestination) {
  ConnectAda();
  EXPECT_EQ(parts_->calendars.TargetCalendar(kAda), "ada@example.com");  // the primary one
  EXPECT_EQ(parts_->calendars
                .SetDestination(kAda, {{"integration", "google_calendar"}, {"externalId", "holidays@group"}})
                .status()
                .code(),
            ErrorCode::kInvalid);
  EXPECT_EQ(
      parts_->calendars.SetDestination(kAda, {{"integration", "google_calendar"}, {"externalId", "nope"}})
          .status()
          .code(),
      ErrorCode::kNotFound);
  auto set = parts_->calendars.SetDestination(
      kAda, {{"integration", "google_calendar"}, {"externalId", "team@group"}});
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(parts_->calendars.TargetCalendar(kAda), "team@group");
  auto listed = parts_->calendars.ListCalendars(kAda);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)["calendars"].size(), 3u);
  EXPECT_EQ((*listed)["destinationCalendar"]["externalId"], "team@group");
  EXPECT_EQ(parts_->calendars.TargetCalendar(kBob), "primary");
}

// Destinations chosen before they had an id are numbered in place by the migration that adds it;
// the listing then names them with that id.
TEST(CalendarMigrationsDb, ExistingDestinationsGetAnId) {
  ScratchDatabase scratch;
  prometheus::Registry registry;
  core::MysqlDatabase db(OptionsFor(scratch, 2), registry, QuietLogger());
  std::vector<Migration> before = calendar::CalendarMigrations();
  ASSERT_EQ(before.back().version, 5);
  before.pop_back();
  {
    core::Migrator m(db, QuietLogger());
    m.Add("calendar", before);
    m.Apply();
  }
  scratch.Exec(
      "INSERT INTO calendar_destinations (user_id, integration, external_id, updated_at) VALUES"
      " (7, 'google_calendar', 'team@group', UTC_TIMESTAMP(3)),"
      " (8, 'google_calendar', 'bob@example.com', UTC_TIMESTAMP(3))");
  core::Migrator m(db, QuietLogger());
  m.Add("calendar", calendar::CalendarMigrations());
  m.Apply();
  EXPECT_EQ(scratch.QueryValue("SELECT COUNT(DISTINCT id) FROM calendar_destinations WHERE id > 0"), "2");
  EXPECT_EQ(scratch.QueryValue("SELECT external_id FROM calendar_destinations WHERE user_id = 7"),
            "team@group");
  // A new destination gets a fresh id.
  scratch.Exec(
      "INSERT INTO calendar_destinations (user_id, integration, external_id, updated_at) VALUES"
      " (9, 'google_calendar', 'x@example.com', UTC_TIMESTAMP(3))");
  EXPECT_EQ(scratch.QueryValue("SELECT COUNT(DISTINCT id) FROM calendar_destinations"), "3");
}

TEST_F(CalendarPartsDb, IcsFeedsAreSavedAndReadForBusyTimes) {
  google_.SetIcs("club.ics", kIcs);
  google_.SetIcs("page.html", "<html>not a calendar</html>", "text/html");
  EXPECT_EQ(parts_->feeds.Save(kAda, {{"urls", {"ftp://example.com/x.ics"}}}).status().code(),
            ErrorCode::kInvalid);
  EXPECT_EQ(parts_->feeds.Save(kAda, {{"urls", {google_.IcsUrl("page.html")}}}).status().code(),
            ErrorCode::kInvalid);
  EXPECT_EQ(Metric("calendar_ics_fetches_total", {{"outcome", "not_calendar"}}), 1);
  auto saved = parts_->feeds.Save(kAda, {{"urls", {google_.IcsUrl("club.ics")}}});
  ASSERT_TRUE(saved.ok()) << saved.status().message();
  EXPECT_EQ((*saved)["type"], "ics-feed_calendar");
  EXPECT_EQ((*saved)["userId"], kAda);
  ASSERT_EQ((*saved)["calendars"].size(), 1u);
  EXPECT_EQ((*saved)["calendars"][0]["name"], "Club");
  EXPECT_EQ((*saved)["calendars"][0]["externalId"], google_.IcsUrl("club.ics"));
  EXPECT_EQ((*saved)["id"], (*saved)["calendars"][0]["credentialId"]);

  auto busy = parts_->busy.Answer(kAda, "2030-05-01", "2030-05-01", "UTC");
  ASSERT_TRUE(busy.ok()) << busy.status().message();
  const json answer = json::parse(*busy);
  ASSERT_EQ(answer["data"].size(), 1u) << *busy;
  EXPECT_EQ(answer["data"][0]["start"], "2030-05-01T06:00:00Z");
  EXPECT_EQ(answer["data"][0]["source"], "ics_feed");
  EXPECT_EQ(Metric("calendar_ics_fetches_total", {{"outcome", "ok"}}), 2);

  // A feed that stops being a calendar is named, logged and counted.
  google_.SetIcs("club.ics", "<html>gone</html>", "text/html");
  busy = parts_->busy.Answer(kAda, "2030-05-01", "2030-05-01", "UTC");
  EXPECT_EQ(busy.status().code(), ErrorCode::kUpstreamFailed);
  EXPECT_EQ(Metric("calendar_busy_source_failures_total", {{"source", "ics_feed"}, {"code", "bad_gateway"}}),
            1);
}

TEST_F(CalendarPartsDb, BusyTimesRefuseBadRanges) {
  EXPECT_EQ(parts_->busy.Answer(kAda, "2030-05-01", "2030-05-02", "Mars/Olympus").status().code(),
            ErrorCode::kInvalid);
  EXPECT_EQ(parts_->busy.Answer(kAda, std::nullopt, "2030-05-02", std::nullopt).status().code(),
            ErrorCode::kInvalid);
  EXPECT_EQ(parts_->busy.Answer(kAda, "2030-05-02", "2030-05-01", std::nullopt).status().code(),
            ErrorCode::kInvalid);
  EXPECT_EQ(parts_->busy.Answer(kAda, "2030-01-01", "2030-06-01", std::nullopt).status().code(),
            ErrorCode::kInvalid);
  // No source at all: an empty answer.
  auto none = parts_->busy.Answer(kAda, "2030-05-01", "2030-05-02", std::nullopt);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(json::parse(*none)["data"], json::array());
}

TEST_F(CalendarPartsDb, EventWriterWritesAndTheLookupFindsTheEvent) {
  ConnectAda();
  calendar::SyncJob job;
  job.event_id = "rdvevent0001";
  job.booking_uid = "booking-1";
  job.user_id = kAda;
  job.action = calendar::SyncAction::kCreate;
  job.event = {{"summary", "Call"},
               {"start", {{"dateTime", "2030-05-01T09:00:00Z"}}},
               {"end", {{"dateTime", "2030-05-01T09:30:00Z"}}}};
  calendar::SyncWrite w = parts_->writer.Write(job);
  ASSERT_EQ(w.outcome, calendar::SyncWrite::Outcome::kDone) << w.error;
  EXPECT_EQ(w.calendar_id, "ada@example.com");
  EXPECT_TRUE(w.event_exists);
  EXPECT_EQ(google_.Event("ada@example.com", "rdvevent0001")["summary"], "Call");
  // Written again (a lost answer): the same event, not a second one.
  EXPECT_EQ(parts_->writer.Write(job).outcome, calendar::SyncWrite::Outcome::kDone);
  EXPECT_EQ(google_.LiveEventCount("ada@example.com"), 1u);

  auto found = parts_->events.GetEvent(kAda, "google", "rdvevent0001");
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(parts_->events.GetEvent(kAda, "google", "missing").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(parts_->events.GetEvent(kAda, "outlook", "rdvevent0001").status().code(), ErrorCode::kInvalid);

  job.action = calendar::SyncAction::kDelete;
  job.calendar_id = w.calendar_id;
  EXPECT_EQ(parts_->writer.Write(job).outcome, calendar::SyncWrite::Outcome::kDone);
  EXPECT_EQ(google_.LiveEventCount("ada@example.com"), 0u);
  // A host without a Google connection has nothing to write to.
  job.user_id = kBob;
  job.action = calendar::SyncAction::kCreate;
  calendar::SyncWrite none = parts_->writer.Write(job);
  EXPECT_EQ(none.outcome, calendar::SyncWrite::Outcome::kDone);
  EXPECT_FALSE(none.event_exists);
}

}  // namespace
}  // namespace rendezvous::testing
