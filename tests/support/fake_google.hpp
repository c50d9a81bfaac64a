// A fake Google (OAuth token endpoint, Calendar API calendarList / freeBusy / events get, insert,
// patch and delete, with Meet conferences for `conferenceData.createRequest`) and a
// static file host (ICS feeds) on one LoopbackHttpServer, for integration tests of the calendar
// plugin. Tokens it issues are opaque counters; `ExpireAccessTokens` makes every access token
// issued so far answer 401 (to exercise refresh). Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "loopback_http_server.hpp"

namespace rendezvous::testing {

class FakeGoogle {
 public:
  FakeGoogle();

  std::string url() const { return server_.url(); }
  int port() const { return server_.port(); }
  std::string auth_url() const { return url() + "/o/oauth2/auth"; }
  std::string token_url() const { return url() + "/token"; }
  std::string api_base_url() const { return url() + "/calendar/v3"; }
  // YAML for TestServerOptions::plugins: the calendar plugin pointed at this fake.
  std::string PluginConfig(bool allow_private_ics = true) const;

  // A code Google would hand to the redirect for `account`; valid once. Tokens issued for it see
  // that account's calendars only (events of other accounts' calendars answer 404).
  std::string IssueCode(const std::string& account = "default");
  // An access token for `account`, as a code exchange would give one (to call the fake directly).
  std::string IssueAccessToken(const std::string& account = "default");
  void AddCalendar(const nlohmann::json& calendar_list_entry, const std::string& account = "default");
  void AddEvent(const std::string& calendar_id, const nlohmann::json& event);
  void AddBusy(const std::string& calendar_id, const std::string& start, const std::string& end);
  // Serves `body` at GET /ics/<name> (url: IcsUrl(name)).
  void SetIcs(const std::string& name, const std::string& body,
              const std::string& content_type = "text/calendar");
  std::string IcsUrl(const std::string& name) const { return url() + "/ics/" + name; }

  // The stored event (null when none); a deleted event stays with status "cancelled", as in Google.
  nlohmann::json Event(const std::string& calendar_id, const std::string& event_id) const;
  // Google no longer has the event (a deleted event disappears after a while): reads answer 404.
  void ForgetEvent(const std::string& calendar_id, const std::string& event_id);
  // Events of the calendar that are not deleted.
  size_t LiveEventCount(const std::string& calendar_id) const;
  // Event writes (insert, patch, delete) answer `status` with Google's error body (0: normal), e.g.
  // 503 for an outage of the Calendar API while OAuth and freeBusy keep working.
  void SetEventWriteFailStatus(int status);

  void ExpireAccessTokens();
  // Every request answers this status (0: normal behaviour).
  void SetFailStatus(int status);
  void SetDelay(std::chrono::milliseconds delay);
  // Refresh grants are refused (invalid_grant).
  void RevokeRefreshTokens();
  // The next `count` Calendar API calls answer `status` whatever their token (401: Google refusing
  // a token that looked valid).
  void FailNextApiCalls(int status, int count);
  // Tokens revoked at POST /revoke (RFC 7009 form `token=`); a revoked refresh token is refused
  // afterwards and its account's access tokens answer 401.
  std::vector<std::string> RevokedTokens() const;
  std::string revoke_url() const { return url() + "/revoke"; }

  int exchanges() const;
  int refreshes() const;
  // Access tokens and refresh tokens issued so far (to check they are not stored in clear).
  std::vector<std::string> IssuedTokens() const;
  std::vector<PeerRequest> Requests() const { return server_.Requests(); }
  // Requests whose path starts with `prefix`.
  std::vector<PeerRequest> RequestsTo(const std::string& prefix) const;
  // Waits (bounded) until `count` requests to `prefix` arrived.
  bool AwaitRequestsTo(const std::string& prefix, size_t count,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

 private:
  PeerResponse Handle(const PeerRequest& req);
  PeerResponse Token(const std::map<std::string, std::string>& form);
  // A new access token for `account` (mu_ held).
  std::string MintAccessToken(const std::string& account);
  PeerResponse Revoke(const std::map<std::string, std::string>& form);
  // events insert (seg.size() == 5), patch and delete (seg.size() == 6) on an owned calendar.
  PeerResponse EventWrite(const PeerRequest& req, const std::vector<std::string>& seg);
  // The account of the request's access token ("" when not authorized).
  std::string Account(const PeerRequest& req) const;

  mutable std::mutex mu_;
  int counter_ = 0;
  int exchanges_ = 0;
  int refreshes_ = 0;
  int fail_status_ = 0;
  int event_write_fail_status_ = 0;
  bool refresh_revoked_ = false;
  int fail_next_status_ = 0;
  int fail_next_count_ = 0;
  std::vector<std::string> revoked_;
  std::chrono::milliseconds delay_{0};
  std::map<std::string, std::string> codes_;           // code -> account
  std::map<std::string, std::string> access_tokens_;   // token -> account
  std::map<std::string, std::string> refresh_tokens_;  // token -> account
  std::vector<std::string> issued_;
  std::map<std::string, nlohmann::json> calendars_;  // account -> calendarList items
  std::map<std::string, std::map<std::string, nlohmann::json>> events_;
  std::map<std::string, nlohmann::json> busy_;
  std::map<std::string, std::pair<std::string, std::string>> ics_;
  LoopbackHttpServer server_;  // last: stops before the state above goes away
};

}  // namespace rendezvous::testing
