// The connect flow's `redir` check: only the app or API origin, never an open redirect.
#include <gtest/gtest.h>

#include "calendar_metrics.hpp"
#include "google_api.hpp"
#include "http_fetch.hpp"
#include "metrics/metrics_registry.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "url_policy.hpp"

namespace rendezvous::calendar {
namespace {

bool Allowed(const std::string& url) {
  return IsAllowedRedirect(url, "http://127.0.0.1:8080", "https://app.example.com");
}

TEST(CalendarRedirect, AppAndApiOriginsOnly) {
  EXPECT_TRUE(Allowed("https://app.example.com"));
  EXPECT_TRUE(Allowed("https://app.example.com/settings/calendars?done=1"));
  EXPECT_TRUE(Allowed("https://APP.example.com/x"));
  EXPECT_TRUE(Allowed("http://127.0.0.1:8080/v2/me"));
  EXPECT_FALSE(Allowed("https://app.example.com.evil.com/"));
  EXPECT_FALSE(Allowed("https://app.example.com@evil.com/"));
  EXPECT_FALSE(Allowed("http://app.example.com/"));       // other scheme
  EXPECT_FALSE(Allowed("https://app.example.com:444/"));  // other port
  EXPECT_FALSE(Allowed("http://127.0.0.1:8081/"));
  EXPECT_FALSE(Allowed("//evil.com/"));
  EXPECT_FALSE(Allowed("/relative"));
  EXPECT_FALSE(Allowed("javascript:alert(1)"));
  EXPECT_FALSE(Allowed("https://evil.com/https://app.example.com"));
  EXPECT_FALSE(Allowed("https://app.example.com\\@evil.com"));
  EXPECT_FALSE(Allowed("https://app.example.com/ x"));
  EXPECT_FALSE(Allowed(""));
}

TEST(CalendarGoogleApi, AuthUrlCarriesTheConnectParameters) {
  core::MetricsRegistry registry;
  core::PrometheusMetrics facade{registry};
  CalendarMetrics metrics{facade};
  GoogleApi api({"cid 1", "secret", "https://accounts.example.com/o/oauth2/auth", "", "", ""}, metrics);
  const std::string url = api.AuthUrl("http://127.0.0.1:8080/v2/calendars/google/save", "st_ate");
  EXPECT_EQ(url.rfind("https://accounts.example.com/o/oauth2/auth?", 0), 0u) << url;
  for (const char* part :
       {"client_id=cid%201", "redirect_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fv2%2Fcalendars%2Fgoogle%2Fsave",
        "response_type=code", "access_type=offline", "prompt=consent",
        "scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fcalendar", "state=st_ate"}) {
    EXPECT_NE(url.find(part), std::string::npos) << part << " in " << url;
  }
}

TEST(CalendarHttpFetch, RefusesBlockedAndBadUrls) {
  FetchRequest req;
  req.url = "http://127.0.0.1:1/x";
  req.block_private_networks = true;
  req.timeout = std::chrono::milliseconds(2000);
  FetchResult r = Fetch(req);
  EXPECT_EQ(r.outcome, FetchOutcome::kBlocked) << r.error;
  req.url = "file:///etc/passwd";
  req.block_private_networks = false;
  r = Fetch(req);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.body.empty());
}

// Feeds are fetched only from public addresses: the check is on the socket curl opens, so names
// and numeric forms that reach an internal address are refused before any connection.
TEST(CalendarFeedAddress, NonPublicAddressesAreRefusedAtFetch) {
  for (const auto& [url, why] : std::vector<std::pair<std::string, std::string>>{
           {"https://[64:ff9b::a9fe:a9fe]/feed.ics", "NAT64 of 169.254.169.254: cloud metadata"},
           {"https://[2002:a00:1::1]/feed.ics", "6to4 of 10.0.0.1: private"},
           {"https://198.18.0.1/feed.ics", "benchmarking"},
           {"https://localhost:1/feed.ics", "loopback"},
           {"https://2130706433:1/feed.ics", "loopback"}}) {
    FetchRequest request;
    request.url = url;
    request.block_private_networks = true;
    request.connect_timeout = std::chrono::milliseconds(1000);
    request.timeout = std::chrono::milliseconds(2000);
    const FetchResult result = Fetch(request);
    EXPECT_EQ(result.outcome, FetchOutcome::kBlocked) << url << ": " << result.error;
    EXPECT_NE(result.error.find(why), std::string::npos) << url << ": " << result.error;
  }
  EXPECT_EQ(NonPublicLiteral("64:ff9b::a9fe:a9fe"), "NAT64 of 169.254.169.254: cloud metadata");
  EXPECT_EQ(NonPublicLiteral("calendar.example.com"), "");
  EXPECT_TRUE(IsLoopbackHost("127.0.0.2"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("127.example.com"));
}

}  // namespace
}  // namespace rendezvous::calendar
