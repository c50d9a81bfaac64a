#include "oauth_support.hpp"

#include <curl/curl.h>
#include <openssl/evp.h>

#include <unistd.h>

#include <atomic>
#include <new>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "http_client.hpp"

namespace rendezvous::testing {

using nlohmann::json;

std::string Sha256Raw(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(digest), len);
}

std::string HexEncode(const std::string& raw) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::string Base64Encode(const std::string& raw) {
  std::string out(4 * ((raw.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(raw.data()), static_cast<int>(raw.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string S256Challenge(const std::string& verifier) {
  std::string b = Base64Encode(Sha256Raw(verifier));
  while (!b.empty() && b.back() == '=') b.pop_back();
  for (char& c : b) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return b;
}

std::string FormEncode(const std::string& s) {
  // libcurl keeps exactly the RFC 3986 unreserved characters; it needs no handle since 7.82.
  char* escaped = curl_easy_escape(nullptr, s.data(), static_cast<int>(s.size()));
  if (escaped == nullptr) throw std::bad_alloc();
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

std::string InsertAuthorizationCode(const ScratchDatabase& db, const std::string& client_id, int64_t user_id,
                                    const std::vector<std::string>& scopes, bool all_scopes,
                                    const std::string& challenge, int expires_in) {
  static std::atomic<int> counter{0};
  const std::string code = "test-code-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  db.Exec("INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, scopes, all_scopes,"
          " code_challenge, created_at, expires_at) VALUES ('" + HexEncode(Sha256Raw(code)) + "', '" + client_id +
          "', " + std::to_string(user_id) + ", '" + kTestRedirectUri + "', '" + json(scopes).dump() + "', " +
          (all_scopes ? "1" : "0") + ", '" + challenge + "', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL " +
          std::to_string(expires_in) + " SECOND)");
  return code;
}

OAuthGrant IssueOAuthTokens(const TestServer& server, const ScratchDatabase& db, const std::string& client_id,
                            const std::string& client_secret, int64_t user_id, const std::vector<std::string>& scopes,
                            bool all_scopes) {
  OAuthGrant g;
  g.client_id = client_id;
  g.client_secret = client_secret;
  const std::string code = InsertAuthorizationCode(db, client_id, user_id, scopes, all_scopes);
  HttpClient http;
  HttpResult r = http.PostJson(server.api() + "/v2/auth/oauth2/token",
                               {{"grant_type", "authorization_code"},
                                {"client_id", client_id},
                                {"client_secret", client_secret},
                                {"code", code},
                                {"redirect_uri", kTestRedirectUri}});
  if (r.status != 200) {
    ADD_FAILURE() << "token exchange: " << r.status << " " << r.body;
    return g;
  }
  json t = r.Json();
  g.access_token = t.value("access_token", "");
  g.refresh_token = t.value("refresh_token", "");
  g.scope = t.value("scope", "");
  return g;
}

OAuthGrant GrantOAuthToken(const TestServer& server, const ScratchDatabase& db, int64_t owner_id, int64_t user_id,
                           const std::vector<std::string>& client_scopes, const std::vector<std::string>& scopes) {
  OAuthGrant g;
  std::vector<std::string> args = {"admin", "oauth-client", "create", "--owner-id", std::to_string(owner_id),
                                   "--name", "Test App", "--redirect-uri", kTestRedirectUri};
  for (const auto& s : client_scopes) args.insert(args.end(), {"--scope", s});
  CliResult created = server.Cli(args);
  if (created.exit_code != 0) {
    ADD_FAILURE() << "oauth-client create: " << created.err;
    return g;
  }
  json c = created.Json();
  g.client_id = c.value("client_id", "");
  g.client_secret = c.value("client_secret", "");
  CliResult reviewed = server.Cli({"admin", "oauth-client", "review", g.client_id, "--accept"});
  if (reviewed.exit_code != 0) {
    ADD_FAILURE() << "oauth-client review: " << reviewed.err;
    return g;
  }
  const bool all_scopes = client_scopes.empty() && scopes.empty();
  OAuthGrant t = IssueOAuthTokens(server, db, g.client_id, g.client_secret, user_id, scopes, all_scopes);
  g.access_token = t.access_token;
  g.refresh_token = t.refresh_token;
  g.scope = t.scope;
  return g;
}

}  // namespace rendezvous::testing
