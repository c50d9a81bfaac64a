#include "browser_session.hpp"

#include "oauth_support.hpp"

namespace rendezvous::testing {

std::string CsrfFieldOf(const std::string& page) {
  const std::string marker = "name=\"csrf_token\" value=\"";
  const size_t at = page.find(marker);
  if (at == std::string::npos) return "";
  const size_t start = at + marker.size();
  return page.substr(start, page.find('"', start) - start);
}

std::string SignInSession(HttpClient& http, const std::string& app_url, const std::string& email,
                          const std::string& password) {
  HttpResult page = http.Get(app_url + "/auth/login");
  const std::string csrf = CsrfFieldOf(page.body);
  if (csrf.empty()) return "";
  std::string cookies;
  for (auto [it, end] = page.headers.equal_range("set-cookie"); it != end; ++it)
    cookies += it->second.substr(0, it->second.find(';')) + "; ";
  HttpResult in = http.Request("POST", app_url + "/auth/login",
                               "email=" + FormEncode(email) + "&password=" + FormEncode(password) +
                                   "&csrf_token=" + FormEncode(csrf),
                               {"Content-Type: application/x-www-form-urlencoded", "Cookie: " + cookies});
  if (in.status != 302) return "";
  for (auto [it, end] = in.headers.equal_range("set-cookie"); it != end; ++it) {
    if (it->second.rfind("rdv_session=", 0) == 0) return it->second.substr(0, it->second.find(';'));
  }
  return "";
}

}  // namespace rendezvous::testing
