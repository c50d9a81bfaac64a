// The metrics the dashboards and alerts read, on the real server's /metrics: series whose labels
// are known in advance are there at zero from start-up, and the counters added for the dashboards
// move when their event happens — OAuth grants, refusals and active grants; bookings created,
// changed, refused for an overlap and slot timings; Google connections that need a reconnect.
#include <cmath>

#include "operations_fixture.hpp"

namespace rendezvous::testing {
namespace {

using OperationsMetrics = OperationsTest;

TEST_F(OperationsMetrics, SeriesWithKnownLabelsAreExportedAtZeroFromStartUp) {
  for (const char* series : {
           "oauth_token_grants_total{grant_type=\"authorization_code\",outcome=\"issued\"}",
           "oauth_token_grants_total{grant_type=\"refresh_token\",outcome=\"failed\"}",
           "oauth_token_errors_total{error=\"invalid_grant\"}",
           "oauth_active_grants{kind=\"oauth\"}",
           "oauth_active_grants{kind=\"managed\"}",
           "bookings_created_total{status=\"pending\"}",
           "bookings_transitions_total{action=\"reopen\"}",
           "bookings_overlaps_refused_total{action=\"reschedule\"}",
           "bookings_slots_duration_seconds_count",
           "webhooks_delivery_attempts_total{outcome=\"gone\",trigger=\"BOOKING_NO_SHOW\"}",
           "webhooks_disabled_total{reason=\"failing\"}",
           "webhooks_delivery_latency_seconds_count",
           "calendar_google_requests_total{endpoint=\"events_patch\",outcome=\"timeout\"}",
           "calendar_busy_source_failures_total{code=\"reconnect_required\",source=\"google_calendar\"}",
           "calendar_reconnects_required_total",
           "calendar_sync_jobs_total{action=\"move\",outcome=\"failed\"}",
           "calendar_ics_fetches_total{outcome=\"not_calendar\"}",
           "outbox_published_total{topic=\"bookings\"}",
           "lua_errors_total{kind=\"budget\",script=\"webhooks.render\"}",
       }) {
    EXPECT_EQ(Sample(series), 0) << series;
  }
}

TEST_F(OperationsMetrics, TokenGrantsAndRefusalsAreCountedByTypeOutcomeAndCode) {
  OAuthGrant grant = GrantOAuthToken(*server_, db_, user_, user_, {"BOOKING_READ"}, {"BOOKING_READ"});
  ASSERT_FALSE(grant.refresh_token.empty());
  EXPECT_EQ(Sample("oauth_token_grants_total{grant_type=\"authorization_code\",outcome=\"issued\"}"), 1);

  ASSERT_EQ(RefreshGrant(grant, grant.refresh_token).status, 200);
  EXPECT_EQ(Sample("oauth_token_grants_total{grant_type=\"refresh_token\",outcome=\"issued\"}"), 1);
  ASSERT_EQ(RefreshGrant(grant, grant.refresh_token).status, 400);  // a rotated token again
  EXPECT_EQ(Sample("oauth_token_grants_total{grant_type=\"refresh_token\",outcome=\"refused\"}"), 1);
  EXPECT_EQ(Sample("oauth_token_errors_total{error=\"invalid_grant\"}"), 1);

  ASSERT_EQ(Token("grant_type=password&client_id=x").status, 400);
  EXPECT_EQ(Sample("oauth_token_grants_total{grant_type=\"unknown\",outcome=\"refused\"}"), 1);
  EXPECT_EQ(Sample("oauth_token_errors_total{error=\"invalid_request\"}"), 1);
  ASSERT_EQ(Token("grant_type=refresh_token&refresh_token=rdvrt_x&client_id=nobody").status, 401);
  EXPECT_EQ(Sample("oauth_token_errors_total{error=\"invalid_client\"}"), 1);
  EXPECT_EQ(Sample("oauth_token_grants_total{grant_type=\"authorization_code\",outcome=\"refused\"}"), 0);
}

TEST_F(OperationsMetrics, ActiveGrantsAreMeasuredAtStartUp) {
  EXPECT_EQ(Sample("oauth_active_grants{kind=\"oauth\"}"), 0);
  OAuthGrant live = GrantOAuthToken(*server_, db_, user_, user_, {"BOOKING_READ"}, {"BOOKING_READ"});
  OAuthGrant reused = GrantOAuthToken(*server_, db_, user_, user_, {"BOOKING_READ"}, {"BOOKING_READ"});
  ASSERT_EQ(RefreshGrant(reused, reused.refresh_token).status, 200);
  ASSERT_EQ(RefreshGrant(reused, reused.refresh_token).status, 400);  // reuse revokes that grant
  CliResult managed = server_->Cli({"admin", "managed-user", "create", "--client-id", live.client_id, "--email",
                                    "managed@example.com", "--name", "Managed"});
  ASSERT_EQ(managed.exit_code, 0) << managed.err;

  ASSERT_EQ(server_->Stop(), 0);
  std::string why;
  ASSERT_TRUE(server_->Start(&why)) << why;
  EXPECT_TRUE(AwaitSample("oauth_active_grants{kind=\"oauth\"}", 1));
  EXPECT_EQ(Sample("oauth_active_grants{kind=\"oauth\"}"), 1);
  EXPECT_EQ(Sample("oauth_active_grants{kind=\"managed\"}"), 1);
}

TEST_F(OperationsMetrics, BookingsCreatedChangedRefusedAndSlotTimingsAreCounted) {
  const int64_t et = EventType("metrics");
  const std::string start = NextMonday("11:00");
  ASSERT_EQ(Slots(et, start.substr(0, 10)).status, 200);
  EXPECT_EQ(Sample("bookings_slots_duration_seconds_count"), 1);

  HttpResult booked = Book(et, start);
  ASSERT_EQ(booked.status, 201) << booked.body;
  EXPECT_EQ(Sample("bookings_created_total{status=\"accepted\"}"), 1);
  ASSERT_EQ(Book(et, start).status, 409);
  EXPECT_EQ(Sample("bookings_overlaps_refused_total{action=\"create\"}"), 1);
  EXPECT_EQ(Sample("bookings_created_total{status=\"accepted\"}"), 1);

  const std::string uid = booked.Json()["data"].value("uid", "");
  HttpResult moved = Send("POST", "/v2/bookings/" + uid + "/reschedule", {{"start", NextMonday("12:00")}}, "");
  ASSERT_EQ(moved.status, 201) << moved.body;
  EXPECT_EQ(Sample("bookings_transitions_total{action=\"reschedule\"}"), 1);
  const std::string new_uid = moved.Json()["data"].value("uid", "");
  ASSERT_EQ(Send("POST", "/v2/bookings/" + new_uid + "/cancel", json::object(), "").status, 200);
  EXPECT_EQ(Sample("bookings_transitions_total{action=\"cancel\"}"), 1);

  // Another booking takes the cancelled one's time: reopening it is an overlap.
  ASSERT_EQ(Book(et, NextMonday("12:00")).status, 201);
  HttpResult reopened = Send("POST", "/v2/bookings/" + new_uid + "/reopen", json::object(), key_);
  EXPECT_EQ(reopened.status, 409) << reopened.body;
  EXPECT_EQ(Sample("bookings_overlaps_refused_total{action=\"reopen\"}"), 1);
  EXPECT_EQ(Sample("bookings_transitions_total{action=\"reopen\"}"), 0);
  EXPECT_EQ(Sample("bookings_created_total{status=\"accepted\"}"), 2);
}

TEST_F(OperationsMetrics, GoogleRefusingTheRefreshCountsOneReconnectRequired) {
  AddStandardCalendars();
  ASSERT_EQ(ConnectAndSave().status, 200);
  EXPECT_EQ(Sample("calendar_reconnects_required_total"), 0);
  google_.ExpireAccessTokens();
  google_.RevokeRefreshTokens();
  db_.Exec("UPDATE calendar_google_credentials SET access_expires_at = 1");
  for (int i = 0; i < 2; ++i) {
    HttpResult r = Get("/v2/calendars/google/check", key_);
    EXPECT_EQ(r.Json()["data"].value("reconnectRequired", false), true) << r.body;
  }
  // Marked once; later calls find the credential already invalid.
  EXPECT_EQ(Sample("calendar_reconnects_required_total"), 1);
  EXPECT_EQ(Sample("calendar_google_requests_total{endpoint=\"refresh\",outcome=\"client_error\"}"), 1);
}

}  // namespace
}  // namespace rendezvous::testing
