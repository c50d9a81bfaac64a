// IdentityService's handlers against a real MariaDB: the sign-in flow (CSRF, failures, throttle,
// session cookie, safe `next`), sign-out, and GET/PATCH /v2/me. Handlers are called directly with
// hand-built requests, as the router would after its own checks.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include <prometheus/registry.h>

#include "identity/identity_service.hpp"
#include "identity_test_db.hpp"

namespace rendezvous::core {
namespace {

class QuietLogger final : public Logger {
 public:
  std::vector<std::string> lines;
  void Log(LogLevel, std::string_view message, const nlohmann::json& fields) override {
    lines.push_back(std::string(message) + " " + fields.dump());
  }
  bool Enabled(LogLevel) const override { return true; }
};

std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const auto& [k, v] : fields) {
    if (!out.empty()) out += '&';
    for (const std::string* s : {&k, &v}) {
      for (unsigned char c : *s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
          out.push_back(static_cast<char>(c));
        } else {
          out += '%';
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        }
      }
      if (s == &k) out += '=';
    }
  }
  return out;
}

std::vector<std::string> SetCookies(const Response& res) {
  std::vector<std::string> out;
  for (const auto& [name, value] : res.headers) {
    if (name == "Set-Cookie") out.push_back(value);
  }
  return out;
}

std::string HeaderOf(const Response& res, const std::string& name) {
  for (const auto& [n, v] : res.headers) {
    if (n == name) return v;
  }
  return "";
}

// "name=value; ..." -> value of the first Set-Cookie for `name` ("" when none).
std::string CookieValue(const Response& res, const std::string& name) {
  for (const auto& c : SetCookies(res)) {
    if (c.rfind(name + "=", 0) == 0) return c.substr(name.size() + 1, c.find(';') - name.size() - 1);
  }
  return "";
}

std::string HiddenCsrf(const std::string& html) {
  std::smatch m;
  if (std::regex_search(html, m, std::regex(R"re(name="csrf_token" value="([^"]*)")re"))) return m[1];
  return "";
}

class IdentityServiceTest : public ::testing::Test {
 protected:
  IdentityServiceTest() : db_(scratch_) {
    MigrateIdentity(scratch_);
    IdentityOptions options;
    options.app_url = "https://app.example.test";
    service_ = std::make_unique<IdentityService>(db_, logger_, registry_, options);
    service_->RegisterRoutes([this](Route r) { routes_.push_back(std::move(r)); });
    auto user = service_->CreateUser("Ada@Example.com", "Ada", "right password", "Europe/London", false);
    EXPECT_TRUE(user.ok()) << user.status().message();
    user_ = *user;
  }

  Response Call(Method method, const std::string& pattern, Request& req) {
    for (auto& r : routes_) {
      if (r.method == method && r.pattern == pattern) {
        req.method = method;
        req.path = pattern;
        req.route = pattern;
        return r.handler(req);
      }
    }
    ADD_FAILURE() << "no route " << pattern;
    return Response::Text(599, "");
  }

  Request Form(const std::vector<std::pair<std::string, std::string>>& fields, const std::string& cookie) {
    Request req;
    req.headers["content-type"] = "application/x-www-form-urlencoded";
    if (!cookie.empty()) req.headers["cookie"] = cookie;
    req.body = FormEncode(fields);
    req.remote_ip = "192.0.2.7";
    return req;
  }

  // A CSRF cookie and token as the login page hands them out.
  std::pair<std::string, std::string> PreSessionCsrf() {
    Request get;
    Response page = Call(Method::kGet, "/auth/login", get);
    std::string cookie = CookieValue(page, "rdv_csrf");
    EXPECT_FALSE(cookie.empty());
    EXPECT_EQ(HiddenCsrf(page.body), cookie);
    return {"rdv_csrf=" + cookie, cookie};
  }

  Response SignIn(const std::string& email, const std::string& password, const std::string& next = "") {
    auto [cookie, token] = PreSessionCsrf();
    Request req = Form({{"email", email}, {"password", password}, {"csrf_token", token}, {"next", next}}, cookie);
    return Call(Method::kPost, "/auth/login", req);
  }

  testing::ScratchDatabase scratch_;
  IdentityTestDatabase db_;
  QuietLogger logger_;
  prometheus::Registry registry_;
  std::unique_ptr<IdentityService> service_;
  std::vector<Route> routes_;
  User user_;
};

TEST_F(IdentityServiceTest, RoutesAndTheirAuth) {
  ASSERT_EQ(routes_.size(), 6u);
  for (const auto& r : routes_) {
    if (r.pattern == "/v2/me") {
      EXPECT_EQ(r.listener, Listener::kApi);
      EXPECT_TRUE(r.auth.bearer_required);
      EXPECT_EQ(r.auth.scope, r.method == Method::kGet ? "PROFILE_READ" : "PROFILE_WRITE");
    } else {
      EXPECT_EQ(r.listener, Listener::kApp);
      EXPECT_FALSE(r.auth.bearer_required);
    }
  }
}

TEST_F(IdentityServiceTest, LoginPageSetsACsrfCookieAndCarriesNext) {
  Request req;
  req.query.emplace("next", "/settings/developer/oauth?x=1&y=\"2\"");
  Response res = Call(Method::kGet, "/auth/login", req);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.content_type.rfind("text/html", 0), 0u);
  EXPECT_NE(res.body.find("<button type=\"submit\">Sign in</button>"), std::string::npos);
  EXPECT_NE(res.body.find("name=\"next\" value=\"/settings/developer/oauth?x=1&amp;y=&quot;2&quot;\""),
            std::string::npos);
  auto cookies = SetCookies(res);
  ASSERT_EQ(cookies.size(), 1u);
  EXPECT_NE(cookies[0].find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookies[0].find("Secure"), std::string::npos);  // app_url is https
  EXPECT_NE(cookies[0].find("SameSite=Lax"), std::string::npos);
  EXPECT_EQ(HeaderOf(res, "Cache-Control"), "no-store");

  Request offsite;
  offsite.query.emplace("next", "//evil.example/");
  Response res2 = Call(Method::kGet, "/auth/login", offsite);
  EXPECT_NE(res2.body.find("name=\"next\" value=\"\""), std::string::npos);
}

TEST_F(IdentityServiceTest, MissingOrWrongCsrfIs403) {
  auto [cookie, token] = PreSessionCsrf();
  Request no_token = Form({{"email", "ada@example.com"}, {"password", "right password"}}, cookie);
  EXPECT_EQ(Call(Method::kPost, "/auth/login", no_token).status, 403);
  Request wrong = Form({{"email", "ada@example.com"}, {"password", "right password"}, {"csrf_token", token + "x"}}, cookie);
  EXPECT_EQ(Call(Method::kPost, "/auth/login", wrong).status, 403);
  Request no_cookie = Form({{"email", "ada@example.com"}, {"password", "right password"}, {"csrf_token", token}}, "");
  Response res = Call(Method::kPost, "/auth/login", no_cookie);
  EXPECT_EQ(res.status, 403);
  EXPECT_TRUE(CookieValue(res, "rdv_session").empty());
  // The 403 page offers a fresh form that works.
  EXPECT_FALSE(HiddenCsrf(res.body).empty());
}

TEST_F(IdentityServiceTest, WrongPasswordAndUnknownEmailLookTheSame) {
  Response wrong = SignIn("ada@example.com", "wrong password");
  Response unknown = SignIn("nobody@example.com", "right password");
  for (const Response* r : {&wrong, &unknown}) {
    EXPECT_EQ(r->status, 401);
    EXPECT_NE(r->body.find("Invalid email or password."), std::string::npos);
    EXPECT_TRUE(CookieValue(*r, "rdv_session").empty());
  }
  Response echoed = SignIn("\"><script>x</script>@example.com", "pw");
  EXPECT_EQ(echoed.status, 401);
  EXPECT_EQ(echoed.body.find("<script>x"), std::string::npos);
  EXPECT_EQ(CounterValue(registry_, "identity_logins_total", "failed"), 3);
  // Oversized input is a failure too, not an error.
  EXPECT_EQ(SignIn(std::string(300, 'a') + "@example.com", "pw").status, 401);
  EXPECT_EQ(SignIn("ada@example.com", std::string(2000, 'p')).status, 401);
}

TEST_F(IdentityServiceTest, SuccessfulSignInStartsASessionAndRedirects) {
  Response res = SignIn("ADA@example.com", "right password", "/settings/developer/oauth");
  ASSERT_EQ(res.status, 302) << res.body;
  EXPECT_EQ(HeaderOf(res, "Location"), "/settings/developer/oauth");
  auto cookies = SetCookies(res);
  ASSERT_EQ(cookies.size(), 1u);
  EXPECT_EQ(cookies[0].rfind("rdv_session=", 0), 0u);
  for (const char* attr : {"; Path=/", "; HttpOnly", "; Secure", "; SameSite=Lax", "; Max-Age=1209600"}) {
    EXPECT_NE(cookies[0].find(attr), std::string::npos) << attr;
  }
  EXPECT_EQ(CounterValue(registry_, "identity_logins_total", "ok"), 1);

  Request page;
  page.headers["cookie"] = "rdv_session=" + CookieValue(res, "rdv_session");
  auto user = service_->SessionUser(page);
  ASSERT_TRUE(user);
  EXPECT_EQ(user->id, user_.id);
  // With a session the CSRF token is the session's, and no cookie is needed.
  Response scratch;
  std::string csrf = service_->CsrfToken(page, scratch);
  EXPECT_TRUE(SetCookies(scratch).empty());
  EXPECT_TRUE(service_->CheckCsrf(page, csrf));
  EXPECT_FALSE(service_->CheckCsrf(page, ""));
  EXPECT_FALSE(service_->CheckCsrf(page, csrf.substr(1)));
}

TEST_F(IdentityServiceTest, UnsafeNextFallsBackToRoot) {
  for (const char* next : {"//evil.example/", "https://evil.example/", "/\\evil.example", ""}) {
    Response res = SignIn("ada@example.com", "right password", next);
    ASSERT_EQ(res.status, 302);
    EXPECT_EQ(HeaderOf(res, "Location"), "/") << next;
  }
}

TEST_F(IdentityServiceTest, ThrottlesRepeatedFailures) {
  for (int i = 0; i < 10; ++i) ASSERT_EQ(SignIn("ada@example.com", "nope").status, 401) << i;
  Response blocked = SignIn("Ada@Example.com", "right password");
  EXPECT_EQ(blocked.status, 429);
  EXPECT_TRUE(CookieValue(blocked, "rdv_session").empty());
  EXPECT_EQ(CounterValue(registry_, "identity_logins_total", "throttled"), 1);
}

TEST_F(IdentityServiceTest, LogoutNeedsCsrfThenEndsTheSession) {
  Response signed_in = SignIn("ada@example.com", "right password");
  std::string cookie = "rdv_session=" + CookieValue(signed_in, "rdv_session");
  Request page;
  page.headers["cookie"] = cookie;
  Response scratch;
  std::string csrf = service_->CsrfToken(page, scratch);

  Request forged = Form({}, cookie);
  EXPECT_EQ(Call(Method::kPost, "/auth/logout", forged).status, 403);
  ASSERT_TRUE(service_->SessionUser(page));

  Request logout = Form({{"csrf_token", csrf}}, cookie);
  Response res = Call(Method::kPost, "/auth/logout", logout);
  EXPECT_EQ(res.status, 302);
  EXPECT_EQ(HeaderOf(res, "Location"), "/auth/login");
  EXPECT_EQ(CookieValue(res, "rdv_session"), "");
  EXPECT_NE(SetCookies(res).at(0).find("Max-Age=0"), std::string::npos);
  EXPECT_FALSE(service_->SessionUser(page));
}

TEST_F(IdentityServiceTest, GetAndPatchMe) {
  auto key = service_->CreateApiKey(user_.id, "test");
  ASSERT_TRUE(key.ok());
  auto principal = service_->ResolveApiKey(key->key);
  ASSERT_TRUE(principal);
  for (const auto& line : logger_.lines) EXPECT_EQ(line.find(key->key), std::string::npos) << line;

  Request get;
  get.principal = principal;
  Response res = Call(Method::kGet, "/v2/me", get);
  ASSERT_EQ(res.status, 200);
  Json body = Json::parse(res.body);
  EXPECT_EQ(body["status"], "success");
  const Json& data = body["data"];
  EXPECT_EQ(data.size(), 10u);
  EXPECT_EQ(data["id"], user_.id);
  EXPECT_EQ(data["username"], "ada");
  EXPECT_EQ(data["timeFormat"], 12);
  // No schedule source in this test: no stored default. No organizations.
  EXPECT_TRUE(data["defaultScheduleId"].is_null());
  EXPECT_TRUE(data["organizationId"].is_null());
  EXPECT_EQ(data["email"], "ada@example.com");
  EXPECT_EQ(data["name"], "Ada");
  EXPECT_EQ(data["timeZone"], "Europe/London");
  EXPECT_EQ(data["weekStart"], "Monday");
  EXPECT_TRUE(std::regex_match(data["createdDate"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));

  Request patch;
  patch.principal = principal;
  patch.headers["content-type"] = "application/json";
  patch.body = R"({"name":"Ada L.","timeZone":"Asia/Tokyo","weekStart":"sunday"})";
  Response patched = Call(Method::kPatch, "/v2/me", patch);
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(Json::parse(patched.body)["data"]["timeZone"], "Asia/Tokyo");
  // The user cache of this instance was refreshed.
  Json after = Json::parse(Call(Method::kGet, "/v2/me", get).body)["data"];
  EXPECT_EQ(after["name"], "Ada L.");
  EXPECT_EQ(after["weekStart"], "Sunday");

  for (const char* bad : {R"({"email":"x@y.z"})", R"({"nickname":"x"})", R"({"timeZone":"../../etc/passwd"})",
                          R"({"weekStart":"Caturday"})", R"({"name":""})"}) {
    Request req;
    req.principal = principal;
    req.headers["content-type"] = "application/json";
    req.body = bad;
    Response r = Call(Method::kPatch, "/v2/me", req);
    EXPECT_EQ(r.status, 400) << bad << " " << r.body;
  }
}

}  // namespace
}  // namespace rendezvous::core

#include <optional>

#include "identity/verified_resources.hpp"

namespace rendezvous::core {
namespace {

// Keeps the messages sent, as the outbox would deliver them.
class KeptMail final : public Mailer {
 public:
  void Send(DbConnection&, const Mail& mail) override { sent.push_back(mail); }
  std::vector<Mail> sent;
};
class KeptSms final : public SmsSender {
 public:
  void Send(DbConnection&, const Sms& sms) override { sent.push_back(sms); }
  std::vector<Sms> sent;
};

std::string SixDigits(const std::string& text) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(R"(\b([0-9]{6})\b)")) ? m[1].str() : "";
}

// VerifiedResourceService alone: every answer a value or a Status, as the routes map them.
class VerifiedResourceServiceTest : public IdentityServiceTest {
 protected:
  KeptMail mail_;
  KeptSms sms_;
  VerifiedResourceService verified_{db_, mail_, sms_, logger_};
};

TEST_F(VerifiedResourceServiceTest, RequestVerifyListAndGet) {
  Result<Json> requested = verified_.RequestCode(VerifiedKind::kEmail, user_.id, {{"email", "Work@Example.com"}});
  ASSERT_TRUE(requested.ok()) << requested.status().message();
  EXPECT_EQ(requested->value("email", ""), "work@example.com");
  EXPECT_EQ(requested->value("expiresIn", 0), 600);
  ASSERT_EQ(mail_.sent.size(), 1u);
  const std::string code = SixDigits(mail_.sent[0].text);
  ASSERT_EQ(code.size(), 6u);

  Result<Json> wrong = verified_.VerifyCode(VerifiedKind::kEmail, user_.id,
                                            {{"email", "work@example.com"}, {"code", code == "000000" ? "111111" : "000000"}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), ErrorCode::kInvalid);
  EXPECT_EQ(wrong.status().field(), "code");
  EXPECT_EQ(wrong.status().reason(), "invalid_verification_code");
  EXPECT_EQ(wrong.status().details().value("attemptsLeft", -1), 4);

  Result<Json> verified = verified_.VerifyCode(VerifiedKind::kEmail, user_.id, {{"email", "work@example.com"}, {"code", code}});
  ASSERT_TRUE(verified.ok()) << verified.status().message();
  EXPECT_EQ(verified->value("email", ""), "work@example.com");
  EXPECT_EQ(verified->value("userId", int64_t{0}), user_.id);

  Result<Pagination> take10 = ParsePagination({{"take", "10"}}, kVerifiedListLimits);
  ASSERT_TRUE(take10.ok());
  Json page = verified_.List(VerifiedKind::kEmail, user_.id, *take10);
  EXPECT_EQ(page["data"].size(), 1u);
  EXPECT_EQ(page["pagination"], Json({{"total", 1}, {"skip", 0}, {"take", 10}}));
  Result<Pagination> bad_skip = ParsePagination({{"skip", "-1"}}, kVerifiedListLimits);
  EXPECT_EQ(bad_skip.status().code(), ErrorCode::kInvalid);
  EXPECT_EQ(bad_skip.status().field(), "skip");

  const std::string id = std::to_string((*verified)["id"].get<int64_t>());
  EXPECT_TRUE(verified_.Get(VerifiedKind::kEmail, user_.id, id).ok());
  EXPECT_EQ(verified_.Get(VerifiedKind::kEmail, user_.id + 1, id).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(verified_.Get(VerifiedKind::kEmail, user_.id, "1x").status().code(), ErrorCode::kNotFound);
  // Another kind's id space: the phone of that id does not exist.
  EXPECT_EQ(verified_.Get(VerifiedKind::kPhone, user_.id, id).status().message(), "verified phone number not found");
}

TEST_F(VerifiedResourceServiceTest, LimitsAreRateLimitedStatuses) {
  const Json phone = {{"phone", "+15551234567"}};
  Status limited;
  for (int i = 0; i < 10 && limited.ok(); ++i) limited = verified_.RequestCode(VerifiedKind::kPhone, user_.id, phone).status();
  EXPECT_EQ(limited.code(), ErrorCode::kRateLimited);
  ASSERT_TRUE(limited.retry_after().has_value());
  EXPECT_GT(*limited.retry_after(), 0);
  EXPECT_EQ(limited.details().value("retryAfter", 0), *limited.retry_after());
  EXPECT_EQ(sms_.sent.size(), 5u);

  // Wrong codes until the code is dead: then a rate limit with nothing to wait for.
  const std::string code = SixDigits(sms_.sent.back().text);
  const Json wrong = {{"phone", "+15551234567"}, {"code", code == "000000" ? "111111" : "000000"}};
  Status dead;
  for (int i = 0; i < 10 && dead.code() != ErrorCode::kRateLimited; ++i) {
    dead = verified_.VerifyCode(VerifiedKind::kPhone, user_.id, wrong).status();
  }
  EXPECT_EQ(dead.code(), ErrorCode::kRateLimited);
  EXPECT_EQ(dead.reason(), "verification_code_locked");
  EXPECT_FALSE(dead.retry_after().has_value());
  EXPECT_EQ(dead.details().value("attemptsLeft", -1), 0);
  // A user that no longer exists gets nothing queued.
  EXPECT_EQ(verified_.RequestCode(VerifiedKind::kEmail, user_.id + 100, {{"email", "a@example.com"}}).status().code(),
            ErrorCode::kUnauthenticated);
}

}  // namespace
}  // namespace rendezvous::core
