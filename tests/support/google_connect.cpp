#include "google_connect.hpp"

#include <utility>
#include <vector>

#include "loopback_http_server.hpp"
#include "oauth_support.hpp"

namespace rendezvous::testing {
namespace {

// The text between `marker` and the next double quote in `page` ("" when there is no marker).
std::string Attribute(const std::string& page, const std::string& marker) {
  const size_t at = page.find(marker);
  if (at == std::string::npos) return "";
  const size_t from = at + marker.size();
  return page.substr(from, page.find('"', from) - from);
}

}  // namespace

std::string SignInBrowser(HttpClient& http, const std::string& app, const std::string& email,
                          const std::string& password, std::string* why) {
  HttpResult page = http.Get(app + "/auth/login");
  const std::string csrf = Attribute(page.body, "name=\"csrf_token\" value=\"");
  if (csrf.empty()) {
    if (why) *why = "no CSRF token on the login page: " + page.body;
    return "";
  }
  std::string cookies;
  for (auto [it, end] = page.headers.equal_range("set-cookie"); it != end; ++it)
    cookies += it->second.substr(0, it->second.find(';')) + "; ";
  HttpResult in = http.Request(
      "POST", app + "/auth/login",
      "email=" + FormEncode(email) + "&password=" + FormEncode(password) + "&csrf_token=" + FormEncode(csrf),
      {"Content-Type: application/x-www-form-urlencoded", "Cookie: " + cookies});
  if (in.status != 302) {
    if (why) *why = "sign-in answered " + std::to_string(in.status) + ": " + in.body;
    return "";
  }
  for (auto [it, end] = in.headers.equal_range("set-cookie"); it != end; ++it) {
    if (it->second.rfind("rdv_session=", 0) == 0) return it->second.substr(0, it->second.find(';'));
  }
  if (why) *why = "no session cookie after signing in";
  return "";
}

ConnectStartPage OpenConnectStartPage(HttpClient& http, const std::string& app, const std::string& auth_url,
                                      const std::string& session_cookie) {
  ConnectStartPage out;
  std::vector<std::string> h;
  if (!session_cookie.empty()) h.push_back("Cookie: " + session_cookie);
  const size_t path = auth_url.find('/', auth_url.find("://") + 3);
  out.page = http.Get(app + (path == std::string::npos ? "" : auth_url.substr(path)), h);
  std::string href = Attribute(out.page.body, "id=\"continue\" class=\"button\" href=\"");
  static const std::pair<std::string, std::string> kEntities[] = {
      {"&amp;", "&"}, {"&#x2F;", "/"}, {"&#47;", "/"}, {"&#x3D;", "="}, {"&#61;", "="}};
  for (const auto& [entity, plain] : kEntities) {
    for (size_t at = href.find(entity); at != std::string::npos; at = href.find(entity, at + 1))
      href.replace(at, entity.size(), plain);
  }
  out.google_url = href;
  for (auto [it, end] = out.page.headers.equal_range("set-cookie"); it != end; ++it) {
    if (it->second.rfind("rdv_gcal_", 0) == 0) {
      out.set_cookie = it->second;
      out.binding_cookie = it->second.substr(0, it->second.find(';'));
    }
  }
  return out;
}

HttpResult ConnectGoogleCalendar(HttpClient& http, const std::string& api, const std::string& app,
                                 const std::string& api_key, const std::string& session_cookie,
                                 const std::string& code) {
  HttpResult failed;
  HttpResult connect = http.Get(api + "/v2/calendars/google/connect", {"Authorization: Bearer " + api_key});
  const std::string auth_url = connect.status == 200 ? connect.Json()["data"].value("authUrl", "") : "";
  const std::string state = QueryParameter(auth_url, "state");
  if (state.empty()) {
    failed.error = "connect answered " + std::to_string(connect.status) + ": " + connect.body;
    return failed;
  }
  ConnectStartPage start = OpenConnectStartPage(http, app, auth_url, session_cookie);
  if (start.binding_cookie.empty()) {
    failed.error =
        "the start page answered " + std::to_string(start.page.status) + " without a binding cookie";
    return failed;
  }
  return http.Get(api + "/v2/calendars/google/save?code=" + FormEncode(code) + "&state=" + FormEncode(state),
                  {"Cookie: " + start.binding_cookie});
}

}  // namespace rendezvous::testing
