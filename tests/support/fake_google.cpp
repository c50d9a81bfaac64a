#include "fake_google.hpp"

#include <thread>

namespace rendezvous::testing {
namespace {

using nlohmann::json;

PeerResponse JsonAnswer(int status, const json& body) {
  PeerResponse r;
  r.status = status;
  r.body = body.dump();
  return r;
}

PeerResponse ApiError(int status, const std::string& message) {
  return JsonAnswer(status, {{"error", {{"code", status}, {"message", message}}}});
}

std::map<std::string, std::string> ParseForm(const std::string& body) {
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t amp = body.find('&', pos);
    std::string pair = body.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    size_t eq = pair.find('=');
    if (!pair.empty())
      out[UrlDecode(pair.substr(0, eq))] = eq == std::string::npos ? "" : UrlDecode(pair.substr(eq + 1));
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return out;
}

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  size_t pos = 1;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    out.push_back(UrlDecode(path.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos)));
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  return out;
}

}  // namespace

FakeGoogle::FakeGoogle() : server_([this](const PeerRequest& req) { return Handle(req); }) {}

std::string FakeGoogle::PluginConfig(bool allow_private_ics) const {
  std::string y =
      "calendar:\n  google:\n    client_id: \"fake-client-id\"\n    client_secret: \"fake-client-secret\"\n";
  y += "    auth_url: \"" + auth_url() + "\"\n    token_url: \"" + token_url() + "\"\n";
  y += "    api_base_url: \"" + api_base_url() + "\"\n";
  if (allow_private_ics) y += "  ics_allow_private_networks: true\n";
  return y;
}

std::string FakeGoogle::IssueCode(const std::string& account) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string code = "4/fake-code-" + std::to_string(++counter_);
  codes_[code] = account;
  return code;
}

std::string FakeGoogle::IssueAccessToken(const std::string& account) {
  std::lock_guard<std::mutex> lock(mu_);
  return MintAccessToken(account);
}

std::string FakeGoogle::MintAccessToken(const std::string& account) {
  const std::string access = "ya29.fake-access-" + std::to_string(++counter_);
  access_tokens_[access] = account;
  issued_.push_back(access);
  return access;
}

void FakeGoogle::AddCalendar(const json& entry, const std::string& account) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!calendars_.count(account)) calendars_[account] = json::array();
  calendars_[account].push_back(entry);
}

void FakeGoogle::AddEvent(const std::string& calendar_id, const json& event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_[calendar_id][event.value("id", "")] = event;
}

void FakeGoogle::AddBusy(const std::string& calendar_id, const std::string& start, const std::string& end) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!busy_.count(calendar_id)) busy_[calendar_id] = json::array();
  busy_[calendar_id].push_back({{"start", start}, {"end", end}});
}

void FakeGoogle::SetIcs(const std::string& name, const std::string& body, const std::string& content_type) {
  std::lock_guard<std::mutex> lock(mu_);
  ics_[name] = {body, content_type};
}

json FakeGoogle::Event(const std::string& calendar_id, const std::string& event_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto cal = events_.find(calendar_id);
  if (cal == events_.end()) return nullptr;
  auto ev = cal->second.find(event_id);
  return ev == cal->second.end() ? json(nullptr) : ev->second;
}

void FakeGoogle::ForgetEvent(const std::string& calendar_id, const std::string& event_id) {
  std::lock_guard<std::mutex> lock(mu_);
  events_[calendar_id].erase(event_id);
}

size_t FakeGoogle::LiveEventCount(const std::string& calendar_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto cal = events_.find(calendar_id);
  if (cal == events_.end()) return 0;
  size_t n = 0;
  for (const auto& [id, ev] : cal->second) {
    if (ev.value("status", "") != "cancelled") ++n;
  }
  return n;
}

void FakeGoogle::SetEventWriteFailStatus(int status) {
  std::lock_guard<std::mutex> lock(mu_);
  event_write_fail_status_ = status;
}

PeerResponse FakeGoogle::EventWrite(const PeerRequest& req, const std::vector<std::string>& seg) {
  if (event_write_fail_status_ != 0) return ApiError(event_write_fail_status_, "Backend Error");
  const std::string& calendar = seg[3];
  auto& events = events_[calendar];
  json body = req.method == "DELETE" ? json::object() : json::parse(req.body, nullptr, false);
  if (!body.is_object()) return ApiError(400, "Parse Error");
  // Google makes one conference per requestId; the Meet code here is derived from it.
  auto conference = [&](json& event) {
    if (req.Query("conferenceDataVersion") != "1" || !body.contains("conferenceData")) return;
    const json create = body["conferenceData"].value("createRequest", json::object());
    const std::string request_id = create.value("requestId", "");
    if (request_id.empty()) {
      event.erase("conferenceData");
      return;
    }
    std::string code;
    for (size_t i = 0; code.size() < 12; ++i) {
      const unsigned char c = i < request_id.size() ? static_cast<unsigned char>(request_id[i]) : 'x';
      code += static_cast<char>('a' + (c * 7 + i) % 26);
      if (code.size() == 3 || code.size() == 8) code += '-';
    }
    const std::string uri = "https://meet.google.com/" + code;
    event["hangoutLink"] = uri;
    event["conferenceData"] = {
        {"createRequest", {{"requestId", request_id},
                           {"conferenceSolutionKey", create.value("conferenceSolutionKey", json::object())},
                           {"status", {{"statusCode", "success"}}}}},
        {"entryPoints", {{{"entryPointType", "video"}, {"uri", uri}, {"label", uri.substr(8)}}}},
        {"conferenceSolution", {{"key", {{"type", "hangoutsMeet"}}}, {"name", "Google Meet"}}},
        {"conferenceId", code}};
  };
  if (req.method == "POST") {
    std::string id = body.value("id", "");
    if (id.empty()) id = "fakeevent" + std::to_string(++counter_);
    if (events.count(id))
      return JsonAnswer(409, {{"error", {{"code", 409},
                                         {"message", "The requested identifier already exists."},
                                         {"errors", {{{"domain", "global"}, {"reason", "duplicate"}}}}}}});
    json event = body;
    event["kind"] = "calendar#event";
    event["id"] = id;
    if (!event.contains("status")) event["status"] = "confirmed";
    event["organizer"] = {{"email", calendar}, {"self", true}};
    event["creator"] = {{"email", calendar}, {"self", true}};
    conference(event);
    events[id] = event;
    return JsonAnswer(200, event);
  }
  auto it = events.find(seg[5]);
  if (it == events.end()) return ApiError(404, "Not Found");
  if (req.method == "DELETE") {
    if (it->second.value("status", "") == "cancelled") return ApiError(410, "Resource has been deleted");
    it->second["status"] = "cancelled";
    PeerResponse r;
    r.status = 204;
    return r;
  }
  json patched = it->second;
  for (auto m = body.begin(); m != body.end(); ++m) {
    if (m.key() != "conferenceData" && m.key() != "id") patched[m.key()] = m.value();
  }
  conference(patched);
  it->second = patched;
  return JsonAnswer(200, patched);
}

void FakeGoogle::ExpireAccessTokens() {
  std::lock_guard<std::mutex> lock(mu_);
  access_tokens_.clear();
}

void FakeGoogle::SetFailStatus(int status) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_status_ = status;
}

void FakeGoogle::SetDelay(std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> lock(mu_);
  delay_ = delay;
}

void FakeGoogle::RevokeRefreshTokens() {
  std::lock_guard<std::mutex> lock(mu_);
  refresh_revoked_ = true;
}

void FakeGoogle::FailNextApiCalls(int status, int count) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_next_status_ = status;
  fail_next_count_ = count;
}

std::vector<std::string> FakeGoogle::RevokedTokens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return revoked_;
}

PeerResponse FakeGoogle::Revoke(const std::map<std::string, std::string>& form) {
  auto token = form.find("token");
  if (token == form.end()) return JsonAnswer(400, {{"error", "invalid_request"}});
  std::string account;
  if (auto r = refresh_tokens_.find(token->second); r != refresh_tokens_.end()) {
    account = r->second;
    refresh_tokens_.erase(r);
  } else if (auto a = access_tokens_.find(token->second); a != access_tokens_.end()) {
    account = a->second;
  } else {
    return JsonAnswer(400, {{"error", "invalid_token"}, {"error_description", "Token expired or revoked"}});
  }
  revoked_.push_back(token->second);
  for (auto it = access_tokens_.begin(); it != access_tokens_.end();)
    it = it->second == account ? access_tokens_.erase(it) : std::next(it);
  PeerResponse res;
  res.body = "";
  return res;
}

int FakeGoogle::exchanges() const {
  std::lock_guard<std::mutex> lock(mu_);
  return exchanges_;
}

int FakeGoogle::refreshes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refreshes_;
}

std::vector<std::string> FakeGoogle::IssuedTokens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return issued_;
}

std::vector<PeerRequest> FakeGoogle::RequestsTo(const std::string& prefix) const {
  std::vector<PeerRequest> out;
  for (PeerRequest& r : server_.Requests()) {
    if (r.path.rfind(prefix, 0) == 0) out.push_back(std::move(r));
  }
  return out;
}

bool FakeGoogle::AwaitRequestsTo(const std::string& prefix, size_t count,
                                 std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (RequestsTo(prefix).size() < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::string FakeGoogle::Account(const PeerRequest& req) const {
  const std::string h = req.Header("authorization");
  if (h.rfind("Bearer ", 0) != 0) return "";
  auto it = access_tokens_.find(h.substr(7));
  return it == access_tokens_.end() ? "" : it->second;
}

PeerResponse FakeGoogle::Token(const std::map<std::string, std::string>& form) {
  auto get = [&](const char* k) {
    auto it = form.find(k);
    return it == form.end() ? std::string() : it->second;
  };
  if (get("client_id") != "fake-client-id" || get("client_secret") != "fake-client-secret")
    return JsonAnswer(401, {{"error", "invalid_client"}, {"error_description", "Unauthorized"}});
  if (get("grant_type") == "authorization_code") {
    auto code = codes_.find(get("code"));
    if (code == codes_.end())
      return JsonAnswer(400, {{"error", "invalid_grant"}, {"error_description", "Bad Request"}});
    const std::string account = code->second;
    codes_.erase(code);
    ++exchanges_;
    const std::string access = MintAccessToken(account);
    const std::string refresh = "1//fake-refresh-" + std::to_string(++counter_);
    refresh_tokens_[refresh] = account;
    issued_.push_back(refresh);
    return JsonAnswer(200, {{"access_token", access},
                            {"expires_in", 3599},
                            {"refresh_token", refresh},
                            {"scope", "https://www.googleapis.com/auth/calendar"},
                            {"token_type", "Bearer"}});
  }
  if (get("grant_type") == "refresh_token") {
    auto refresh = refresh_tokens_.find(get("refresh_token"));
    if (refresh_revoked_ || refresh == refresh_tokens_.end())
      return JsonAnswer(
          400, {{"error", "invalid_grant"}, {"error_description", "Token has been expired or revoked."}});
    ++refreshes_;
    return JsonAnswer(
        200,
        {{"access_token", MintAccessToken(refresh->second)}, {"expires_in", 3599}, {"token_type", "Bearer"}});
  }
  return JsonAnswer(400, {{"error", "unsupported_grant_type"}});
}

PeerResponse FakeGoogle::Handle(const PeerRequest& req) {
  std::lock_guard<std::mutex> lock(mu_);
  PeerResponse res;
  const auto seg = Segments(req.path);
  if (fail_status_ != 0) {
    res = ApiError(fail_status_, "Backend Error");
  } else if (req.method == "POST" && req.path == "/token") {
    res = Token(ParseForm(req.body));
  } else if (req.method == "POST" && req.path == "/revoke") {
    res = Revoke(ParseForm(req.body));
  } else if (seg.size() >= 2 && seg[0] == "calendar" && seg[1] == "v3" && fail_next_count_ > 0) {
    --fail_next_count_;
    res = ApiError(fail_next_status_, fail_next_status_ == 401 ? "Invalid Credentials" : "Backend Error");
  } else if (seg.size() >= 2 && seg[0] == "ics" && req.method == "GET") {
    auto it = ics_.find(seg[1]);
    if (it == ics_.end()) {
      res.status = 404;
      res.content_type = "text/plain";
      res.body = "not found";
    } else {
      res.content_type = it->second.second;
      res.body = it->second.first;
    }
  } else if (seg.size() >= 2 && seg[0] == "calendar" && seg[1] == "v3") {
    const std::string account = Account(req);
    const json own = calendars_.count(account) ? calendars_[account] : json::array();
    auto owns = [&](const std::string& id) {
      for (const json& c : own) {
        if (c.value("id", "") == id) return true;
      }
      return false;
    };
    if (account.empty()) {
      res = ApiError(401, "Invalid Credentials");
    } else if (req.method == "GET" && seg.size() == 5 && seg[2] == "users" && seg[3] == "me" &&
               seg[4] == "calendarList") {
      res = JsonAnswer(200, {{"kind", "calendar#calendarList"}, {"items", own}});
    } else if (req.method == "POST" && seg.size() == 3 && seg[2] == "freeBusy") {
      json body = json::parse(req.body, nullptr, false);
      json cals = json::object();
      if (body.is_object() && body.contains("items")) {
        for (const json& item : body["items"]) {
          const std::string id = item.value("id", "");
          if (owns(id))
            cals[id] = {{"busy", busy_.count(id) ? busy_[id] : json::array()}};
          else
            cals[id] = {{"errors", {{{"domain", "global"}, {"reason", "notFound"}}}}};
        }
      }
      res = JsonAnswer(200, {{"kind", "calendar#freeBusy"},
                             {"timeMin", body.value("timeMin", "")},
                             {"timeMax", body.value("timeMax", "")},
                             {"calendars", cals}});
    } else if (seg.size() >= 5 && seg[2] == "calendars" && seg[4] == "events" &&
               ((req.method == "POST" && seg.size() == 5) ||
                ((req.method == "PATCH" || req.method == "DELETE") && seg.size() == 6))) {
      res = !owns(seg[3]) ? ApiError(404, "Not Found") : EventWrite(req, seg);
    } else if (req.method == "GET" && seg.size() == 6 && seg[2] == "calendars" && seg[4] == "events") {
      auto cal = events_.find(seg[3]);
      if (!owns(seg[3]) || cal == events_.end() || !cal->second.count(seg[5]))
        res = ApiError(404, "Not Found");
      else
        res = JsonAnswer(200, cal->second[seg[5]]);
    } else {
      res = ApiError(404, "Not Found");
    }
  } else {
    res = ApiError(404, "Not Found");
  }
  res.delay = delay_;
  return res;
}

}  // namespace rendezvous::testing
