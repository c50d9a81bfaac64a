#include "google_api.hpp"

#include <algorithm>
#include <iterator>
#include <thread>

#include "rendezvous/text.hpp"

namespace rendezvous::calendar {
namespace {

constexpr size_t kMaxGoogleResponse = 2 << 20;
constexpr size_t kMaxMessage = 200;
// Retries of a momentary failure: the pauses before the second and the third attempt.
constexpr std::chrono::milliseconds kRetryPauses[] = {std::chrono::milliseconds(100), std::chrono::milliseconds(300)};
constexpr std::chrono::milliseconds kMinAttemptTime{500};

// A refused connection or Google's 500/502/503/504: usually over a moment later. Timeouts are not
// retried (they spent the call's time), nor 429 (Google asks for a longer pause than a request has).
bool Momentary(const GoogleCall& call) {
  if (call.transport == FetchOutcome::kConnectFailed) return true;
  return call.transport == FetchOutcome::kOk &&
         (call.status == 500 || call.status == 502 || call.status == 503 || call.status == 504);
}

std::string Clean(const std::string& message) {
  std::string s = text::TruncateUtf8(message, kMaxMessage);
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return s;
}

}  // namespace

Status GoogleFailure(const GoogleCall& call, const std::string& what) {
  if (call.transport == FetchOutcome::kTimeout)
    return Status(ErrorCode::kUpstreamTimeout, "Google did not answer in time (" + what + ")");
  if (call.transport != FetchOutcome::kOk)
    return Status(ErrorCode::kUpstreamFailed, "Google could not be reached (" + what + "): " + call.GoogleMessage());
  if (call.status >= 200 && call.status < 300)
    return Status(ErrorCode::kUpstreamFailed, "Google answered " + what + " with an unexpected body");
  return Status(ErrorCode::kUpstreamFailed,
                "Google answered " + what + " with HTTP " + std::to_string(call.status) + ": " + call.GoogleMessage());
}

std::string GoogleCall::GoogleMessage() const {
  if (transport != FetchOutcome::kOk) return Clean(transport_error);
  if (body.is_object()) {
    const auto& e = body.contains("error") ? body["error"] : nlohmann::json();
    if (e.is_string()) {
      std::string m = e.get<std::string>();
      if (body.contains("error_description") && body["error_description"].is_string())
        m += ": " + body["error_description"].get<std::string>();
      return Clean(m);
    }
    if (e.is_object() && e.contains("message") && e["message"].is_string())
      return Clean(e["message"].get<std::string>());
  }
  return "HTTP " + std::to_string(status);
}

GoogleApi::GoogleApi(GoogleConfig config, CalendarMetrics& metrics)
    : config_(std::move(config)), metrics_(metrics) {}

std::string GoogleApi::AuthUrl(const std::string& redirect_uri, const std::string& state) const {
  return net::AppendQuery(config_.auth_url, {{"client_id", config_.client_id},
                                             {"redirect_uri", redirect_uri},
                                             {"response_type", "code"},
                                             {"access_type", "offline"},
                                             {"prompt", "consent"},
                                             {"include_granted_scopes", "true"},
                                             {"scope", kScope},
                                             {"state", state}});
}

GoogleCall GoogleApi::Call(const std::string& endpoint, FetchRequest request, bool retry) const {
  request.max_response_bytes = kMaxGoogleResponse;
  request.headers.push_back("Accept: application/json");
  const auto deadline = std::chrono::steady_clock::now() + request.timeout;
  for (size_t attempt = 0;; ++attempt) {
    GoogleCall call = CallOnce(endpoint, request);
    if (!retry || attempt >= std::size(kRetryPauses) || !Momentary(call)) return call;
    const std::chrono::milliseconds pause = kRetryPauses[attempt];
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now() - pause);
    if (left < kMinAttemptTime) return call;
    std::this_thread::sleep_for(pause);
    request.timeout = std::min(request.timeout, left);
  }
}

GoogleCall GoogleApi::CallOnce(const std::string& endpoint, const FetchRequest& request) const {
  FetchResult r = Fetch(request);
  GoogleCall call;
  call.transport = r.outcome;
  call.status = r.status;
  call.transport_error = r.error;
  if (r.ok()) call.body = nlohmann::json::parse(r.body, nullptr, false);
  if (call.body.is_discarded()) call.body = nullptr;
  std::string outcome;
  if (!r.ok())
    outcome = OutcomeLabel(r.outcome);
  else if (r.status >= 200 && r.status < 300)
    outcome = call.body.is_object() || r.status == 204 ? "ok" : "bad_body";
  else if (r.status == 401)
    outcome = "unauthorized";
  else if (r.status == 404 || r.status == 410)
    outcome = "not_found";
  else if (r.status < 500)
    outcome = "client_error";
  else
    outcome = "server_error";
  metrics_.GoogleCalled(endpoint, outcome);
  return call;
}

GoogleCall GoogleApi::PostToTokenEndpoint(const std::string& endpoint, bool retry, std::string form) const {
  FetchRequest req;
  req.method = "POST";
  req.url = config_.token_url;
  req.headers = {"Content-Type: application/x-www-form-urlencoded"};
  req.body = std::move(form);
  return Call(endpoint, std::move(req), retry);
}

GoogleCall GoogleApi::ExchangeCode(const std::string& code, const std::string& redirect_uri) const {
  // Not retried: a code is single-use, a repeat after a lost answer could only fail.
  return PostToTokenEndpoint("token", /*retry=*/false, net::FormEncode({{"grant_type", "authorization_code"},
                                            {"code", code},
                                            {"client_id", config_.client_id},
                                            {"client_secret", config_.client_secret},
                                            {"redirect_uri", redirect_uri}}));
}

GoogleCall GoogleApi::Refresh(const std::string& refresh_token) const {
  return PostToTokenEndpoint("refresh", /*retry=*/true, net::FormEncode({{"grant_type", "refresh_token"},
                                              {"refresh_token", refresh_token},
                                              {"client_id", config_.client_id},
                                              {"client_secret", config_.client_secret}}));
}

GoogleCall GoogleApi::Revoke(const std::string& token) const {
  FetchRequest req;
  req.method = "POST";
  req.url = config_.revoke_url;
  req.headers = {"Content-Type: application/x-www-form-urlencoded"};
  req.body = net::FormEncode({{"token", token}});
  return Call("revoke", std::move(req));
}

GoogleCall GoogleApi::CalendarList(const std::string& access_token) const {
  FetchRequest req;
  req.url = config_.api_base_url + "/users/me/calendarList?maxResults=250";
  req.headers = {"Authorization: Bearer " + access_token};
  return Call("calendar_list", std::move(req));
}

GoogleCall GoogleApi::FreeBusy(const std::string& access_token, const nlohmann::json& body,
                               std::chrono::milliseconds timeout) const {
  FetchRequest req;
  req.timeout = std::min(req.timeout, timeout);
  req.connect_timeout = std::min(req.connect_timeout, timeout);
  req.method = "POST";
  req.url = config_.api_base_url + "/freeBusy";
  req.headers = {"Authorization: Bearer " + access_token, "Content-Type: application/json"};
  req.body = body.dump();
  return Call("free_busy", std::move(req));
}

GoogleCall GoogleApi::GetEvent(const std::string& access_token, const std::string& calendar_id,
                               const std::string& event_id) const {
  FetchRequest req;
  req.url = config_.api_base_url + "/calendars/" + PercentEncode(calendar_id) + "/events/" +
            PercentEncode(event_id);
  req.headers = {"Authorization: Bearer " + access_token};
  return Call("events_get", std::move(req));
}

std::string GoogleApi::EventsUrl(const std::string& calendar_id) const {
  return config_.api_base_url + "/calendars/" + PercentEncode(calendar_id) + "/events";
}

GoogleCall GoogleApi::InsertEvent(const std::string& access_token, const std::string& calendar_id,
                                  const nlohmann::json& event) const {
  FetchRequest req;
  req.method = "POST";
  req.url = EventsUrl(calendar_id) + "?conferenceDataVersion=1&sendUpdates=none";
  req.headers = {"Authorization: Bearer " + access_token, "Content-Type: application/json"};
  req.body = event.dump();
  return Call("events_insert", std::move(req));
}

GoogleCall GoogleApi::PatchEvent(const std::string& access_token, const std::string& calendar_id,
                                 const std::string& event_id, const nlohmann::json& patch) const {
  FetchRequest req;
  req.method = "PATCH";
  req.url = EventsUrl(calendar_id) + "/" + PercentEncode(event_id) + "?conferenceDataVersion=1&sendUpdates=none";
  req.headers = {"Authorization: Bearer " + access_token, "Content-Type: application/json"};
  req.body = patch.dump();
  return Call("events_patch", std::move(req));
}

GoogleCall GoogleApi::DeleteEvent(const std::string& access_token, const std::string& calendar_id,
                                  const std::string& event_id) const {
  FetchRequest req;
  req.method = "DELETE";
  req.url = EventsUrl(calendar_id) + "/" + PercentEncode(event_id) + "?sendUpdates=none";
  req.headers = {"Authorization: Bearer " + access_token};
  return Call("events_delete", std::move(req));
}

}  // namespace rendezvous::calendar
