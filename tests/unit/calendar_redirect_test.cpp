// The connect flow's `redir` check: only the app or API origin, never an open redirect.
#include <gtest/gtest.h>

#include "google_api.hpp"
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
  GoogleApi api({"cid 1", "secret", "https://accounts.example.com/o/oauth2/auth", "", ""}, nullptr);
  const std::string url = api.AuthUrl("http://127.0.0.1:8080/v2/calendars/google/save", "st_ate");
  EXPECT_EQ(url.rfind("https://accounts.example.com/o/oauth2/auth?", 0), 0u) << url;
  for (const char* part :
       {"client_id=cid%201", "redirect_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fv2%2Fcalendars%2Fgoogle%2Fsave",
        "response_type=code", "access_type=offline", "prompt=consent",
        "scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fcalendar", "state=st_ate"}) {
    EXPECT_NE(url.find(part), std::string::npos) << part << " in " << url;
  }
}

TEST(CalendarHttpFetch, PrivateAddresses) {
  for (const char* a : {"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0",
                        "::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "100.64.0.1"}) {
    EXPECT_TRUE(IsPrivateAddress(a)) << a;
  }
  for (const char* a : {"8.8.8.8", "172.32.0.1", "2001:4860:4860::8888", "example.com"}) {
    EXPECT_FALSE(IsPrivateAddress(a)) << a;
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

}  // namespace
}  // namespace rendezvous::calendar
