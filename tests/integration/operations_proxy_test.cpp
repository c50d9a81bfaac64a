// The shipped nginx example (etc/nginx/rendezvous.conf, only its EDIT values replaced) run by a
// real nginx on loopback in front of two real instances sharing one database: TLS ends at nginx
// with a certificate made here; requests reach both instances; the OAuth authorization code flow
// works end to end through it; the instances see the address nginx saw, not a forged one;
// /metrics and oversized bodies stop at nginx; with one instance killed the other answers.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "browser_session.hpp"
#include "child_process.hpp"
#include "eventually.hpp"
#include "http_client.hpp"
#include "nginx_server.hpp"
#include "oauth_support.hpp"
#include "scratch_db.hpp"
#include "temp_dir.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

using json = nlohmann::json;

constexpr const char* kHost = "rendezvous.example.com";
constexpr const char* kPublicUrl = "https://rendezvous.example.com";  // base_url and app_url
constexpr const char* kPassword = "correct horse battery";
constexpr const char* kRedirect = "https://client.example.com/callback";
constexpr size_t kMaxBodyBytes = 1048576;  // server.max_body_bytes, the default

std::string Url(const std::string& path) { return kPublicUrl + path; }

// Replaces every `from` in `text`; fails the test when there is none (the shipped file changed).
void ReplaceAll(std::string& text, const std::string& from, const std::string& to) {
  size_t count = 0;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    ++count;
  }
  EXPECT_GT(count, 0u) << "etc/nginx/rendezvous.conf no longer holds: " << from;
}

std::string CookieOf(const HttpResult& r, const std::string& name) {
  for (auto [it, end] = r.headers.equal_range("set-cookie"); it != end; ++it)
    if (it->second.rfind(name + "=", 0) == 0) return it->second;
  return "";
}

std::string CookiePair(const std::string& set_cookie) { return set_cookie.substr(0, set_cookie.find(';')); }

// Established TCP connections whose local end is 127.0.0.1:`port` (/proc/net/tcp).
int EstablishedTo(int port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // the header
  int n = 0;
  char local[64];
  char state[8];
  while (std::getline(in, line)) {
    if (std::sscanf(line.c_str(), "%*s %63s %*s %7s", local, state) != 2) continue;
    const std::string l = local;
    if (l.rfind("0100007F:", 0) == 0 && std::stoi(l.substr(9), nullptr, 16) == port && std::string(state) == "01") ++n;
  }
  return n;
}

class OperationsProxy : public ::testing::Test {
 protected:
  void SetUp() override {
    MakeCertificate();
    if (HasFatalFailure()) return;
    TestServerOptions options;
    options.base_url = kPublicUrl;
    options.app_url = kPublicUrl;
    options.server_extra = "trusted_proxies: [\"127.0.0.1\"]\n";
    options.top_extra = "security: { login_failures_per_ip: 2 }\n";
    for (int i = 0; i < 2; ++i) instances_.push_back(std::make_unique<TestServer>(db_.name(), options));
    instances_[0]->Migrate();
    for (auto& instance : instances_) {
      std::string why;
      ASSERT_TRUE(instance->Start(&why)) << why;
    }
    user_ = instances_[0]->CreateUser("ada@example.com", "Ada", kPassword);
    key_ = instances_[0]->CreateApiKey(user_);
    ASSERT_FALSE(key_.empty());
    std::string why;
    ASSERT_TRUE(nginx_.Start([this](int port) { return Site(port); }, &why)) << why;
    https_ = std::make_unique<HttpClient>(Transport(""));
  }

  // A self-signed certificate for kHost, made with the openssl command line.
  void MakeCertificate() {
    const std::string dir = tls_.path();
    pid_t pid = Spawn({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                       "-nodes", "-days", "2", "-subj", std::string("/CN=") + kHost, "-addext",
                       std::string("subjectAltName=DNS:") + kHost, "-keyout", dir + "/privkey.pem", "-out",
                       dir + "/fullchain.pem"},
                      dir + "/openssl.out", dir + "/openssl.err");
    ASSERT_EQ(WaitFor(pid, std::chrono::seconds(30)), 0) << ReadFile(dir + "/openssl.err");
  }

  // The shipped site file with the test's addresses, port, certificate and log folder.
  std::string Site(int port) {
    std::string site = ReadFile(SourceDir() + "/etc/nginx/rendezvous.conf");
    ReplaceAll(site, "server 10.0.0.11:8080", "server 127.0.0.1:" + std::to_string(instances_[0]->api_port()));
    ReplaceAll(site, "server 10.0.0.12:8080", "server 127.0.0.1:" + std::to_string(instances_[1]->api_port()));
    ReplaceAll(site, "server 10.0.0.11:8081", "server 127.0.0.1:" + std::to_string(instances_[0]->app_port()));
    ReplaceAll(site, "server 10.0.0.12:8081", "server 127.0.0.1:" + std::to_string(instances_[1]->app_port()));
    ReplaceAll(site, "listen 443 ssl;", "listen 127.0.0.1:" + std::to_string(port) + " ssl;");
    ReplaceAll(site, "/etc/ssl/rendezvous/", tls_.path() + "/");
    ReplaceAll(site, "/var/log/nginx/", nginx_.dir() + "/");
    return site;
  }

  // Clients reach https://rendezvous.example.com (port 443, SNI and Host as in production) at
  // nginx's loopback port, trusting the test certificate.
  HttpTransport Transport(const std::string& local_address) {
    HttpTransport t;
    t.ca_file = tls_.path() + "/fullchain.pem";
    t.connect_to = {std::string(kHost) + ":443:127.0.0.1:" + std::to_string(nginx_.port())};
    t.local_address = local_address;
    return t;
  }

  HttpResult Me(HttpClient& http, std::vector<std::string> headers = {}) {
    headers.push_back("Authorization: Bearer " + key_);
    return http.Get(Url("/v2/me"), headers);
  }

  // The access-log line of the request `request_id` in `instance`'s log (null when absent).
  static json RequestLine(const TestServer& instance, const std::string& request_id) {
    std::istringstream lines(instance.Log());
    std::string line;
    while (std::getline(lines, line)) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.value("msg", "") == "request" && j.value("request_id", "") == request_id) return j;
    }
    return nullptr;
  }
  // Which instance answered the request (-1: none).
  int ServedBy(const std::string& request_id) const {
    for (size_t i = 0; i < instances_.size(); ++i)
      if (!RequestLine(*instances_[i], request_id).is_null()) return static_cast<int>(i);
    return -1;
  }
  // Access-log lines of either instance whose path is `path`.
  size_t LinesWithPath(const std::string& path) const {
    size_t n = 0;
    for (const auto& instance : instances_) {
      std::istringstream lines(instance->Log());
      std::string line;
      while (std::getline(lines, line)) {
        json j = json::parse(line, nullptr, false);
        if (j.is_object() && j.value("msg", "") == "request" && j.value("path", "") == path) ++n;
      }
    }
    return n;
  }

  rdv_test::TempDir tls_{"rdv-tls"};
  ScratchDatabase db_;
  std::vector<std::unique_ptr<TestServer>> instances_;
  NginxServer nginx_;
  std::unique_ptr<HttpClient> https_;
  int64_t user_ = 0;
  std::string key_;
};

TEST_F(OperationsProxy, RequestsOverTlsReachEveryInstanceOnKeptAliveConnections) {
  int served[2] = {0, 0};
  std::set<std::string> ids;
  for (int i = 0; i < 8; ++i) {
    HttpResult r = Me(*https_);
    ASSERT_EQ(r.status, 200) << r.error << r.body;
    EXPECT_EQ(r.Json()["data"].value("email", ""), "ada@example.com");
    EXPECT_EQ(r.Header("strict-transport-security"), "max-age=31536000");
    // nginx's request id, passed on and answered back by the instance.
    const std::string id = r.Header("x-request-id");
    EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{32}"))) << id;
    ids.insert(id);
    const int instance = ServedBy(id);
    ASSERT_GE(instance, 0) << "no instance logged request " << id;
    ++served[instance];
  }
  EXPECT_EQ(ids.size(), 8u);
  EXPECT_GT(served[0], 0);
  EXPECT_GT(served[1], 0);

  // nginx's access log names the same id and the instance it went to.
  const std::string one = *ids.begin();
  const std::string upstream = "upstream=127.0.0.1:" + std::to_string(instances_[ServedBy(one)]->api_port());
  std::string access;
  Eventually("the request id in nginx's access log", {std::chrono::seconds(5), std::chrono::milliseconds(20)},
             [&] {
               access = ReadFile(nginx_.dir() + "/rendezvous-access.log");
               return access.find("id=" + one) != std::string::npos;
             });
  EXPECT_TRUE(std::regex_search(access, std::regex(upstream + " [^\n]* id=" + one))) << access;

  // Upstream keep-alive: nginx's connections to the instances stay open after their requests
  // (without it each request would open one and close it with the answer).
  for (const auto& instance : instances_) {
    Eventually("a kept-alive connection to the instance",
               {std::chrono::seconds(5), std::chrono::milliseconds(20)},
               [&] { return EstablishedTo(instance->api_port()) > 0; });
    EXPECT_GE(EstablishedTo(instance->api_port()), 1) << "nginx kept no connection to the instance open";
  }
}

TEST_F(OperationsProxy, OAuthAuthorizationCodeFlowWorksEndToEndThroughTheProxy) {
  // The public URLs come from base_url/app_url, whichever instance answers.
  HttpResult meta = https_->Get(Url("/.well-known/oauth-authorization-server"));
  ASSERT_EQ(meta.status, 200) << meta.error << meta.body;
  EXPECT_EQ(meta.Json()["issuer"], kPublicUrl);
  EXPECT_EQ(meta.Json()["authorization_endpoint"], Url("/auth/oauth2/authorize"));
  EXPECT_EQ(meta.Json()["token_endpoint"], Url("/v2/auth/oauth2/token"));

  CliResult created = instances_[0]->Cli({"admin", "oauth-client", "create", "--owner-id", std::to_string(user_),
                                          "--name", "Proxy App", "--redirect-uri", kRedirect, "--scope",
                                          "PROFILE_READ"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string client_id = created.Json().value("client_id", "");
  const std::string client_secret = created.Json().value("client_secret", "");
  ASSERT_EQ(instances_[1]->Cli({"admin", "oauth-client", "review", client_id, "--accept"}).exit_code, 0);

  std::set<int> served;
  auto note = [&](const HttpResult& r) { served.insert(ServedBy(r.Header("x-request-id"))); };

  // Sign in: the page, then the form (each may be answered by either instance).
  HttpResult login = https_->Get(Url("/auth/login"));
  ASSERT_EQ(login.status, 200) << login.body;
  note(login);
  const std::string csrf_cookie = CookieOf(login, "rdv_csrf");
  ASSERT_FALSE(csrf_cookie.empty()) << "no CSRF cookie";
  EXPECT_NE(csrf_cookie.find("Secure"), std::string::npos) << "app_url is https: " << csrf_cookie;
  HttpResult signed_in = https_->Request(
      "POST", Url("/auth/login"),
      "email=ada%40example.com&password=" + FormEncode(kPassword) + "&csrf_token=" + FormEncode(CsrfFieldOf(login.body)),
      {"Content-Type: application/x-www-form-urlencoded", "Cookie: " + CookiePair(csrf_cookie)});
  ASSERT_EQ(signed_in.status, 302) << signed_in.body;
  note(signed_in);
  const std::string session = CookieOf(signed_in, "rdv_session");
  ASSERT_FALSE(session.empty());
  EXPECT_NE(session.find("Secure"), std::string::npos) << session;
  const std::string cookie = "Cookie: " + CookiePair(session);

  // Consent: the page names the client; Allow sends the browser back with a code.
  const std::string query = "response_type=code&client_id=" + FormEncode(client_id) + "&redirect_uri=" +
                            FormEncode(kRedirect) + "&scope=PROFILE_READ&state=s-1";
  HttpResult consent = https_->Get(Url("/auth/oauth2/authorize?" + query), {cookie});
  ASSERT_EQ(consent.status, 200) << consent.body;
  note(consent);
  EXPECT_NE(consent.body.find("Proxy App"), std::string::npos);
  HttpResult allowed = https_->Request(
      "POST", Url("/auth/oauth2/authorize"),
      query + "&decision=allow&csrf_token=" + FormEncode(CsrfFieldOf(consent.body)),
      {"Content-Type: application/x-www-form-urlencoded", cookie});
  ASSERT_EQ(allowed.status, 302) << allowed.body;
  note(allowed);
  std::smatch m;
  const std::string location = allowed.Header("location");
  ASSERT_TRUE(std::regex_search(location, m,
                                std::regex("^https://client\\.example\\.com/callback\\?code=([^&]+)&state=s-1"
                                           "&iss=https%3A%2F%2Frendezvous\\.example\\.com$")))
      << location;
  const std::string code = m[1];

  // The token endpoint and the API, through the same proxy.
  HttpResult token = https_->Request("POST", Url("/v2/auth/oauth2/token"),
                                     "grant_type=authorization_code&code=" + code + "&redirect_uri=" +
                                         FormEncode(kRedirect) + "&client_id=" + FormEncode(client_id) +
                                         "&client_secret=" + FormEncode(client_secret),
                                     {"Content-Type: application/x-www-form-urlencoded"});
  ASSERT_EQ(token.status, 200) << token.body;
  note(token);
  EXPECT_EQ(token.Header("cache-control"), "no-store");
  const std::string access_token = token.Json().value("access_token", "");
  ASSERT_FALSE(access_token.empty());
  HttpResult me = https_->Get(Url("/v2/me"), {"Authorization: Bearer " + access_token});
  ASSERT_EQ(me.status, 200) << me.body;
  note(me);
  EXPECT_EQ(me.Json()["data"].value("email", ""), "ada@example.com");

  // Round robin spread the flow over both instances: nothing it needed was held by one of them.
  EXPECT_EQ(served, (std::set<int>{0, 1}));
}

TEST_F(OperationsProxy, InstancesSeeTheAddressNginxSawNotAForgedOne) {
  // A client on 127.0.0.2 forging X-Forwarded-For: nginx replaces the header with the address it
  // saw, and the instance, trusting nginx (127.0.0.1), takes the client's address from it.
  HttpClient from_two(Transport("127.0.0.2"));
  HttpResult r = Me(from_two, {"X-Forwarded-For: 198.51.100.9"});
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  const std::string id = r.Header("x-request-id");
  ASSERT_GE(ServedBy(id), 0);
  EXPECT_EQ(RequestLine(*instances_[ServedBy(id)], id).value("remote_ip", ""), "127.0.0.2");

  // Sign-in throttling counts per client address (security.login_failures_per_ip: 2 here, per
  // instance): a client on 127.0.0.2 failing again and again is throttled, one on 127.0.0.3 is not.
  auto fail_sign_in = [this](HttpClient& http) {
    HttpResult login = http.Get(Url("/auth/login"));
    EXPECT_EQ(login.status, 200);
    return http.Request(
        "POST", Url("/auth/login"),
        "email=ada%40example.com&password=wrong-password&csrf_token=" + FormEncode(CsrfFieldOf(login.body)),
        {"Content-Type: application/x-www-form-urlencoded", "Cookie: " + CookiePair(CookieOf(login, "rdv_csrf"))});
  };
  HttpResult failed = fail_sign_in(from_two);
  EXPECT_EQ(failed.status, 401) << failed.body;
  const int signer = ServedBy(failed.Header("x-request-id"));
  ASSERT_GE(signer, 0);
  EXPECT_EQ(RequestLine(*instances_[signer], failed.Header("x-request-id")).value("remote_ip", ""), "127.0.0.2");
  long status = failed.status;
  for (int i = 0; i < 8 && status == 401; ++i) status = fail_sign_in(from_two).status;
  EXPECT_EQ(status, 429) << "repeated failures from one client were never throttled";
  HttpClient from_three(Transport("127.0.0.3"));
  EXPECT_EQ(fail_sign_in(from_three).status, 401) << "another client was throttled with the first";

  // Straight to an instance: from an address it does not trust the header is ignored; from the
  // trusted one (nginx's) it names the client.
  HttpClient direct_from_two(HttpTransport{"", {}, "127.0.0.2"});
  ASSERT_EQ(direct_from_two.Get(instances_[0]->api() + "/healthz", {"X-Request-Id: direct-untrusted",
                                                                    "X-Forwarded-For: 198.51.100.9"})
                .status,
            200);
  EXPECT_EQ(RequestLine(*instances_[0], "direct-untrusted").value("remote_ip", ""), "127.0.0.2");
  HttpClient direct;
  ASSERT_EQ(direct.Get(instances_[0]->api() + "/healthz", {"X-Request-Id: direct-trusted",
                                                          "X-Forwarded-For: 203.0.113.1, 198.51.100.9"})
                .status,
            200);
  EXPECT_EQ(RequestLine(*instances_[0], "direct-trusted").value("remote_ip", ""), "198.51.100.9");
}

TEST_F(OperationsProxy, MetricsAreRefusedAtTheProxyWhateverTheSpelling) {
  HttpClient direct;
  ASSERT_NE(direct.Get(instances_[0]->api() + "/metrics").body.find("# TYPE"), std::string::npos)
      << "the instances serve /metrics on the api listener here, so the proxy must refuse it";
  for (const char* path : {"/metrics", "//metrics", "/metrics/", "/%6Detrics", "/metrics?format=text"}) {
    HttpResult r = https_->Get(Url(path));
    EXPECT_EQ(r.status, 403) << path << ": " << r.error;
    EXPECT_EQ(r.body.find("# TYPE"), std::string::npos) << path;
  }
  EXPECT_EQ(LinesWithPath("/metrics"), 1u);  // the direct scrape above only
  EXPECT_EQ(https_->Get(Url("/healthz")).status, 200);
  EXPECT_EQ(https_->Get(Url("/readyz")).status, 200);
}

TEST_F(OperationsProxy, BodiesOverTheServersLimitStopAtTheProxy) {
  const std::vector<std::string> headers = {"Authorization: Bearer " + key_, "Content-Type: application/json"};
  HttpResult over = https_->Request("POST", Url("/v2/event-types"), std::string(kMaxBodyBytes + 1, ' '), headers);
  EXPECT_EQ(over.status, 413) << over.error;
  EXPECT_EQ(over.Header("content-type"), "application/json");
  EXPECT_EQ(over.Json()["error"].value("code", ""), "payload_too_large") << over.body;
  EXPECT_EQ(LinesWithPath("/v2/event-types"), 0u) << "nginx passed the oversized body on";

  // At the limit the instance answers (the body is no JSON object: 400 from the instance).
  HttpResult at = https_->Request("POST", Url("/v2/event-types"), std::string(kMaxBodyBytes, ' '), headers);
  EXPECT_EQ(at.status, 400) << at.body;
  EXPECT_GE(ServedBy(at.Header("x-request-id")), 0);
}

TEST_F(OperationsProxy, KillingOneInstanceLeavesTheOtherAnswering) {
  ASSERT_EQ(Me(*https_).status, 200);
  ASSERT_EQ(Me(*https_).status, 200);  // both instances have served and hold kept-alive connections
  instances_[0]->Stop(SIGKILL);

  for (int i = 0; i < 6; ++i) {
    HttpResult r = Me(*https_);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(ServedBy(r.Header("x-request-id")), 1);
  }
  HttpResult created = https_->Request("POST", Url("/v2/event-types"),
                                       json{{"title", "Intro"}, {"slug", "intro"}, {"lengthInMinutes", 30}}.dump(),
                                       {"Authorization: Bearer " + key_, "Content-Type: application/json"});
  EXPECT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(ServedBy(created.Header("x-request-id")), 1);
  HttpResult page = https_->Get(Url("/auth/login"));
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(ServedBy(page.Header("x-request-id")), 1);

  // With none left, nginx answers in the API's envelope and asks to retry.
  instances_[1]->Stop(SIGKILL);
  HttpResult none = Me(*https_);
  EXPECT_EQ(none.status, 503);
  EXPECT_EQ(none.Json()["error"].value("code", ""), "service_unavailable") << none.body;
  EXPECT_EQ(none.Header("retry-after"), "5");
}

}  // namespace
}  // namespace rendezvous::testing
