// Google's OAuth and Calendar endpoints as the calendar plugin calls them. URLs come from config
// (DESIGN §7/§8) so tests point them at a local fake. Every attempt is counted in CalendarMetrics
// (endpoint, outcome); momentary failures are tried again (GoogleApi::Call). Knows nothing of the
// database or of our HTTP layer. Thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "calendar_metrics.hpp"
#include "http_fetch.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::calendar {

struct GoogleConfig {
  std::string client_id;
  std::string client_secret;
  std::string auth_url;
  std::string token_url;
  std::string api_base_url;
  std::string revoke_url;  // RFC 7009 revocation; the plugin derives it from token_url (…/revoke)
};

// The names GoogleApi counts its requests by (CalendarMetrics exports each pair at zero from
// start-up): the endpoint called, and what came of it: "ok", "bad_body" (a 2xx answer that is not
// a JSON object), "unauthorized" (401), "not_found" (404, 410), "client_error" (other 4xx),
// "server_error" (5xx) or the transport's failure (OutcomeLabel).
constexpr const char* kGoogleEndpoints[] = {"token",         "refresh",      "revoke",
                                            "calendar_list", "free_busy",    "events_get",
                                            "events_insert", "events_patch", "events_delete"};
constexpr const char* kGoogleOutcomes[] = {"ok",           "unauthorized", "not_found", "client_error",
                                           "server_error", "bad_body",     "timeout",   "connect_failed",
                                           "too_large",    "error"};

// One answer from Google: the transport outcome, the HTTP status and the JSON body (null when the
// body is not JSON).
struct GoogleCall {
  FetchOutcome transport = FetchOutcome::kError;
  long status = 0;
  nlohmann::json body;
  std::string transport_error;

  bool ok() const {
    return transport == FetchOutcome::kOk && status >= 200 && status < 300 && body.is_object();
  }
  bool unauthorized() const { return transport == FetchOutcome::kOk && status == 401; }
  bool not_found() const { return transport == FetchOutcome::kOk && (status == 404 || status == 410); }
  // Google's own words about a failure ("invalid_grant: Bad Request", "Not Found"), bounded.
  std::string GoogleMessage() const;
};

// The failure of a Google call that was not ok(): kUpstreamTimeout (504) when Google did not
// answer in time, else kUpstreamFailed (502), with Google's own words. `what` names the call.
Status GoogleFailure(const GoogleCall& call, const std::string& what);

// RFC 3986 percent-encoding of everything but unreserved characters (rendezvous/url.hpp).
using net::PercentEncode;

class GoogleApi {
 public:
  // `metrics` must outlive it.
  GoogleApi(GoogleConfig config, CalendarMetrics& metrics);

  const GoogleConfig& config() const { return config_; }
  // The consent URL the user is sent to (access_type=offline, prompt=consent, calendar scope).
  std::string AuthUrl(const std::string& redirect_uri, const std::string& state) const;

  GoogleCall ExchangeCode(const std::string& code, const std::string& redirect_uri) const;
  GoogleCall Refresh(const std::string& refresh_token) const;
  GoogleCall CalendarList(const std::string& access_token) const;
  // Within `timeout` (at most the usual 10 s).
  GoogleCall FreeBusy(const std::string& access_token, const nlohmann::json& body,
                      std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;
  // Revokes `token` (and the grant behind it). Google answers 200 with an empty body.
  GoogleCall Revoke(const std::string& token) const;
  GoogleCall GetEvent(const std::string& access_token, const std::string& calendar_id,
                      const std::string& event_id) const;
  // events.insert with `conferenceDataVersion=1` (so a `conferenceData.createRequest` in `event`
  // makes a Meet); `event` carries our own `id`, so a repeated insert answers 409.
  GoogleCall InsertEvent(const std::string& access_token, const std::string& calendar_id,
                         const nlohmann::json& event) const;
  // events.patch with `conferenceDataVersion=1`: only the members of `patch` change.
  GoogleCall PatchEvent(const std::string& access_token, const std::string& calendar_id,
                        const std::string& event_id, const nlohmann::json& patch) const;
  // events.delete (Google answers 204; 410 when the event is already deleted).
  GoogleCall DeleteEvent(const std::string& access_token, const std::string& calendar_id,
                         const std::string& event_id) const;

  static constexpr const char* kScope = "https://www.googleapis.com/auth/calendar";

 private:
  // One call, tried again (at most twice, within its timeout) after a momentary failure — a
  // refused connection or a 500/502/503/504 — unless `retry` is false. Every attempt is counted.
  GoogleCall Call(const std::string& endpoint, FetchRequest request, bool retry = true) const;
  GoogleCall CallOnce(const std::string& endpoint, const FetchRequest& request) const;
  std::string EventsUrl(const std::string& calendar_id) const;
  // POSTs the form-encoded `form` to the token endpoint; `endpoint` names the call in metrics.
  GoogleCall PostToTokenEndpoint(const std::string& endpoint, bool retry, std::string form) const;

  GoogleConfig config_;
  CalendarMetrics& metrics_;
};

}  // namespace rendezvous::calendar
