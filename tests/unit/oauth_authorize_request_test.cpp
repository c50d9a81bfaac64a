#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "authorize_request.hpp"
#include "pkce.hpp"
#include "pushed_requests.hpp"

namespace rendezvous::oauth {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kOwner = 7;
constexpr int64_t kUser = 42;
constexpr char kRedirect[] = "https://app.example/callback";
constexpr char kIssuer[] = "https://api.example";
constexpr char kIss[] = "&iss=https%3A%2F%2Fapi.example";  // kIssuer as the redirect carries it
constexpr char kChallenge[] = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";  // RFC 7636 B

AuthorizeClientView Client(std::vector<std::string> scopes = {"BOOKING_READ", "PROFILE_READ"},
                           ClientKind kind = ClientKind::kConfidential,
                           ClientState state = ClientState::kApproved) {
  AuthorizeClientView c;
  c.client_id = "client-1";
  c.state = state;
  c.owner_id = kOwner;
  c.kind = kind;
  c.redirect_uris = {kRedirect, "http://127.0.0.1:5000/cb?tenant=1"};
  c.scopes = std::move(scopes);
  return c;
}

AuthorizeQuery Query(std::optional<std::string> scope = "BOOKING_READ") {
  AuthorizeQuery q;
  q.client_id = "client-1";
  q.redirect_uri = kRedirect;
  q.state = "xyz";
  q.scope = std::move(scope);
  return q;
}

std::string PageError(const AuthorizeQuery& q, const AuthorizeClientView* c,
                      int64_t user = kUser) {
  AuthorizeOutcome o = ValidateAuthorizeRequest(q, c, user);
  if (auto* e = std::get_if<AuthorizePageError>(&o)) return e->message;
  ADD_FAILURE() << "expected a page error";
  return "";
}

AuthorizeRedirectError RedirectError(const AuthorizeQuery& q, const AuthorizeClientView& c,
                                     int64_t user = kUser) {
  AuthorizeOutcome o = ValidateAuthorizeRequest(q, &c, user);
  if (auto* e = std::get_if<AuthorizeRedirectError>(&o)) return *e;
  if (auto* p = std::get_if<AuthorizePageError>(&o)) ADD_FAILURE() << "page error: " << p->message;
  if (std::holds_alternative<AuthorizeGrant>(o)) ADD_FAILURE() << "unexpected success";
  return {};
}

AuthorizeGrant Grant(const AuthorizeQuery& q, const AuthorizeClientView& c, int64_t user = kUser) {
  AuthorizeOutcome o = ValidateAuthorizeRequest(q, &c, user);
  if (auto* g = std::get_if<AuthorizeGrant>(&o)) return *g;
  if (auto* p = std::get_if<AuthorizePageError>(&o)) ADD_FAILURE() << "page error: " << p->message;
  if (auto* r = std::get_if<AuthorizeRedirectError>(&o)) {
    ADD_FAILURE() << "redirect error: " << r->error << " " << r->error_description;
  }
  return {};
}

// ---- page errors (§7.1 first table) ----

TEST(OAuthAuthorize, UnknownClient) {
  EXPECT_THAT(PageError(Query(), nullptr), HasSubstr("No OAuth client"));
  AuthorizeClientView other = Client();
  other.client_id = "someone-else";
  EXPECT_THAT(PageError(Query(), &other), HasSubstr("No OAuth client"));
  AuthorizeQuery q = Query();
  q.client_id.reset();
  AuthorizeClientView c = Client();
  EXPECT_EQ(PageError(q, &c), "client_id is required");
}

TEST(OAuthAuthorize, ClientNotApproved) {
  AuthorizeClientView pending = Client({"BOOKING_READ"}, ClientKind::kConfidential,
                                       ClientState::kPending);
  EXPECT_THAT(PageError(Query(), &pending, kUser), HasSubstr("awaiting approval"));
  // The owner may use a pending client, for testing.
  EXPECT_EQ(Grant(Query(), pending, kOwner).scopes, std::vector<std::string>{"BOOKING_READ"});

  AuthorizeClientView rejected = Client({"BOOKING_READ"}, ClientKind::kConfidential,
                                        ClientState::kRejected);
  EXPECT_THAT(PageError(Query(), &rejected, kUser), HasSubstr("rejected"));
  EXPECT_THAT(PageError(Query(), &rejected, kOwner), HasSubstr("rejected"));
}

TEST(OAuthAuthorize, RedirectUriMustMatchExactly) {
  AuthorizeClientView c = Client();
  for (const char* uri : {"https://app.example/callback/", "https://app.example/Callback",
                          "HTTPS://app.example/callback", "https://app.example/callback?x=1",
                          "https://app.example/callback#f", "https://evil.example/callback",
                          "http://127.0.0.1:5000/cb", "https://app.example:443/callback"}) {
    AuthorizeQuery q = Query();
    q.redirect_uri = uri;
    EXPECT_EQ(PageError(q, &c), "redirect_uri is not registered for this OAuth client") << uri;
  }
  AuthorizeQuery q = Query();
  q.redirect_uri.reset();
  EXPECT_EQ(PageError(q, &c), "redirect_uri is required");
  q.redirect_uri = "http://127.0.0.1:5000/cb?tenant=1";
  EXPECT_EQ(Grant(q, c).redirect_uri, "http://127.0.0.1:5000/cb?tenant=1");
}

TEST(OAuthAuthorize, ScopeRequiredForNonLegacyClient) {
  AuthorizeClientView c = Client();
  for (std::optional<std::string> scope :
       {std::optional<std::string>(), std::optional<std::string>(""),
        std::optional<std::string>(" , ")}) {
    EXPECT_EQ(PageError(Query(scope), &c), "scope parameter is required for this OAuth client");
  }
}

TEST(OAuthAuthorize, PageErrorsComeInTableOrder) {
  // Rejected client with a bad redirect URI and no scope: the client state answers first.
  AuthorizeClientView rejected = Client({"BOOKING_READ"}, ClientKind::kConfidential,
                                        ClientState::kRejected);
  AuthorizeQuery q = Query(std::nullopt);
  q.redirect_uri = "https://evil.example/";
  EXPECT_THAT(PageError(q, &rejected), HasSubstr("rejected"));
  // Approved client: the redirect URI before the missing scope.
  AuthorizeClientView c = Client();
  EXPECT_THAT(PageError(q, &c), HasSubstr("redirect_uri"));
}

TEST(OAuthAuthorize, RepeatedClientIdOrRedirectUriIsAPageError) {
  AuthorizeClientView c = Client();
  AuthorizeQuery q = AuthorizeQuery::FromParams({{"client_id", "client-1"},
                                                 {"client_id", "client-2"},
                                                 {"redirect_uri", kRedirect},
                                                 {"scope", "BOOKING_READ"}});
  EXPECT_THAT(PageError(q, &c), HasSubstr("client_id is given more than once"));
  q = AuthorizeQuery::FromParams({{"client_id", "client-1"},
                                  {"redirect_uri", kRedirect},
                                  {"redirect_uri", "https://evil.example/"},
                                  {"scope", "BOOKING_READ"}});
  EXPECT_THAT(PageError(q, &c), HasSubstr("redirect_uri is given more than once"));
}

// ---- redirect errors (§7.1 second table) ----

TEST(OAuthAuthorize, UnrecognizedScope) {
  AuthorizeClientView c = Client();
  for (const char* scope : {"NOPE", "BOOKING_READ NOPE", "booking_read", "BOOKING_READ,ADMIN"}) {
    AuthorizeRedirectError e = RedirectError(Query(scope), c);
    EXPECT_EQ(e.error, "invalid_scope") << scope;
    EXPECT_EQ(e.error_description, "Requested scope is not a recognized scope") << scope;
    EXPECT_EQ(e.state, "xyz");
    EXPECT_EQ(e.redirect_uri, kRedirect);
  }
  // Over-long lists and values are unrecognized too.
  EXPECT_EQ(RedirectError(Query(std::string(200, 'A')), c).error, "invalid_scope");
}

TEST(OAuthAuthorize, UnrecognizedScopeForLegacyClient) {
  for (std::vector<std::string> scopes :
       {std::vector<std::string>{}, std::vector<std::string>{"READ_BOOKING"}}) {
    AuthorizeClientView legacy = Client(scopes);
    AuthorizeRedirectError e = RedirectError(Query("BOOKING_READ NOPE"), legacy);
    EXPECT_EQ(e.error, "invalid_scope");
    EXPECT_EQ(e.error_description, "Requested scope is not a recognized scope");
  }
}

TEST(OAuthAuthorize, ScopeExceedsClientScopes) {
  AuthorizeClientView c = Client({"BOOKING_WRITE"});
  for (const char* scope : {"PROFILE_READ", "BOOKING_WRITE PROFILE_READ", "BOOKING_READ",
                            "TEAM_BOOKING_WRITE", "READ_BOOKING"}) {
    AuthorizeRedirectError e = RedirectError(Query(scope), c);
    EXPECT_EQ(e.error, "invalid_request") << scope;
    EXPECT_EQ(e.error_description, "Requested scope exceeds the client's registered scopes")
        << scope;
  }
}

TEST(OAuthAuthorize, UnrecognizedBeatsExceeds) {
  AuthorizeRedirectError e = RedirectError(Query("PROFILE_WRITE NOPE"), Client({"BOOKING_READ"}));
  EXPECT_EQ(e.error, "invalid_scope");
}

TEST(OAuthAuthorize, ResponseType) {
  AuthorizeClientView c = Client();
  AuthorizeQuery q = Query();
  q.response_type = "code";
  Grant(q, c);
  q.response_type = "token";
  AuthorizeRedirectError e = RedirectError(q, c);
  EXPECT_EQ(e.error, "unsupported_response_type");
  EXPECT_EQ(e.state, "xyz");
}

TEST(OAuthAuthorize, RepeatedOtherParameterIsARedirectError) {
  AuthorizeQuery q = AuthorizeQuery::FromParams({{"client_id", "client-1"},
                                                 {"redirect_uri", kRedirect},
                                                 {"scope", "BOOKING_READ"},
                                                 {"state", "one"},
                                                 {"state", "two"}});
  EXPECT_EQ(q.state, "one");
  AuthorizeRedirectError e = RedirectError(q, Client());
  EXPECT_EQ(e.error, "invalid_request");
  EXPECT_THAT(e.error_description, HasSubstr("state is given more than once"));
}

TEST(OAuthAuthorize, OverlongStateIsNotEchoed) {
  AuthorizeQuery q = Query();
  q.state = std::string(kMaxStateLength, 's');
  EXPECT_EQ(Grant(q, Client()).state, q.state);
  q.state = std::string(kMaxStateLength + 1, 's');
  AuthorizeRedirectError e = RedirectError(q, Client());
  EXPECT_EQ(e.error, "invalid_request");
  EXPECT_EQ(e.state, std::nullopt);
  EXPECT_EQ(e.Url(kIssuer).find("state="), std::string::npos);
}

// The consent form carries state through the browser, which would change ill-formed UTF-8 and
// line breaks; such a state is refused (and not echoed) instead of failing the application later.
TEST(OAuthAuthorize, StateTheConsentFormCannotCarryIsRefused) {
  AuthorizeQuery q = Query();
  q.state = "caf\xc3\xa9 \xe6\x97\xa5-~!";
  EXPECT_EQ(Grant(q, Client()).state, q.state);
  for (const std::string bad : {"caf\xc3", "\xff", "a\rb", "a\nb", "a\tb", "a\x01", "a\x7f"}) {
    q.state = bad;
    AuthorizeRedirectError e = RedirectError(q, Client());
    EXPECT_EQ(e.error, "invalid_request");
    EXPECT_THAT(e.error_description, HasSubstr("UTF-8"));
    EXPECT_EQ(e.state, std::nullopt);
    EXPECT_EQ(e.Url(kIssuer).find("state="), std::string::npos);
  }
}

// ---- PKCE ----

TEST(OAuthAuthorize, PublicClientNeedsS256Challenge) {
  AuthorizeClientView pub = Client({"BOOKING_READ"}, ClientKind::kPublic);
  AuthorizeRedirectError e = RedirectError(Query(), pub);
  EXPECT_EQ(e.error, "invalid_request");
  EXPECT_THAT(e.error_description, HasSubstr("code_challenge"));

  AuthorizeQuery q = Query();
  q.code_challenge = kChallenge;
  q.code_challenge_method = "S256";
  AuthorizeGrant g = Grant(q, pub);
  EXPECT_EQ(g.code_challenge, kChallenge);
  EXPECT_EQ(g.code_challenge_method, "S256");

  // Without a method the challenge is taken as S256 (the specification names no method param).
  q.code_challenge_method.reset();
  EXPECT_EQ(Grant(q, pub).code_challenge_method, "S256");
}

TEST(OAuthAuthorize, OnlyS256) {
  for (const ClientKind kind : {ClientKind::kPublic, ClientKind::kConfidential}) {
    AuthorizeClientView c = Client({"BOOKING_READ"}, kind);
    for (const char* method : {"plain", "s256", "", "S512"}) {
      AuthorizeQuery q = Query();
      q.code_challenge = kChallenge;
      q.code_challenge_method = method;
      AuthorizeRedirectError e = RedirectError(q, c);
      EXPECT_EQ(e.error, "invalid_request") << method;
      EXPECT_EQ(e.error_description, "code_challenge_method must be S256") << method;
    }
  }
}

TEST(OAuthAuthorize, ChallengeFormatAndMethodWithoutChallenge) {
  AuthorizeClientView c = Client();
  AuthorizeQuery q = Query();
  q.code_challenge = "too-short";
  q.code_challenge_method = "S256";
  EXPECT_THAT(RedirectError(q, c).error_description, HasSubstr("43 base64url"));
  q.code_challenge = std::string(43, '+');
  EXPECT_EQ(RedirectError(q, c).error, "invalid_request");
  q.code_challenge.reset();
  EXPECT_THAT(RedirectError(q, c).error_description, HasSubstr("code_challenge is required"));
}

TEST(OAuthAuthorize, ConfidentialClientMayUsePkce) {
  AuthorizeClientView c = Client();
  EXPECT_EQ(Grant(Query(), c).code_challenge, "");
  AuthorizeQuery q = Query();
  q.code_challenge = S256Challenge(std::string(50, 'v'));
  q.code_challenge_method = "S256";
  EXPECT_EQ(Grant(q, c).code_challenge, *q.code_challenge);
}

// ---- success ----

TEST(OAuthAuthorize, GrantCarriesRequestedScopes) {
  AuthorizeClientView c = Client({"BOOKING_READ", "PROFILE_READ", "APPS_READ"});
  AuthorizeGrant g = Grant(Query("PROFILE_READ,BOOKING_READ PROFILE_READ"), c);
  EXPECT_EQ(g.client_id, "client-1");
  EXPECT_EQ(g.redirect_uri, kRedirect);
  EXPECT_EQ(g.state, "xyz");
  EXPECT_EQ(g.scopes, (std::vector<std::string>{"PROFILE_READ", "BOOKING_READ"}));
  EXPECT_FALSE(g.all_scopes);
}

TEST(OAuthAuthorize, StateIsOptional) {
  AuthorizeQuery q = Query();
  q.state.reset();
  EXPECT_EQ(Grant(q, Client()).state, std::nullopt);
}

TEST(OAuthAuthorize, LegacyClientWithoutScopeGetsEverything) {
  for (std::vector<std::string> scopes :
       {std::vector<std::string>{}, std::vector<std::string>{"READ_BOOKING", "READ_PROFILE"}}) {
    AuthorizeClientView legacy = Client(scopes);
    AuthorizeGrant g = Grant(Query(std::nullopt), legacy);
    EXPECT_TRUE(g.all_scopes);
    EXPECT_EQ(g.scopes, scopes);
  }
}

TEST(OAuthAuthorize, LegacyClientWithScopeGetsOnlyThose) {
  // §5.5 step 1: the scope parameter narrows the token even while the client is legacy, and is
  // not checked against the client's (empty or old) scopes.
  AuthorizeClientView legacy = Client({"READ_BOOKING"});
  AuthorizeGrant g = Grant(Query("BOOKING_READ PROFILE_WRITE"), legacy);
  EXPECT_FALSE(g.all_scopes);
  EXPECT_EQ(g.scopes, (std::vector<std::string>{"BOOKING_READ", "PROFILE_WRITE"}));
}

TEST(OAuthAuthorize, MigratedClientIsValidated) {
  // §5.5 step 2: once user-level scopes are selected, the client is no longer legacy.
  AuthorizeClientView migrated = Client({"READ_BOOKING", "BOOKING_READ"});
  EXPECT_EQ(PageError(Query(std::nullopt), &migrated),
            "scope parameter is required for this OAuth client");
  EXPECT_EQ(RedirectError(Query("PROFILE_READ"), migrated).error, "invalid_request");
}

// ---- URLs ----

TEST(OAuthAuthorizeUrls, SuccessRedirect) {
  EXPECT_EQ(SuccessRedirectUrl("https://app.example/cb", "abc", std::string("xyz"), kIssuer),
            std::string("https://app.example/cb?code=abc&state=xyz") + kIss);
  EXPECT_EQ(SuccessRedirectUrl("https://app.example/cb?tenant=1", "abc", std::string("xyz"), kIssuer),
            std::string("https://app.example/cb?tenant=1&code=abc&state=xyz") + kIss);
  EXPECT_EQ(SuccessRedirectUrl("https://app.example/cb?", "abc", std::nullopt, kIssuer),
            std::string("https://app.example/cb?code=abc") + kIss);
  EXPECT_EQ(SuccessRedirectUrl("https://app.example/cb?a=1&", "c", std::nullopt, kIssuer),
            std::string("https://app.example/cb?a=1&code=c") + kIss);
  EXPECT_EQ(SuccessRedirectUrl("https://app.example/cb", "a+b/c=", std::string("s t&u=v#w"), kIssuer),
            std::string("https://app.example/cb?code=a%2Bb%2Fc%3D&state=s%20t%26u%3Dv%23w") + kIss);
}

TEST(OAuthAuthorizeUrls, ErrorRedirectIsEncoded) {
  AuthorizeRedirectError e = RedirectError(Query("NOPE"), Client());
  EXPECT_EQ(
      e.Url(kIssuer),
      std::string("https://app.example/callback?error=invalid_scope"
                  "&error_description=Requested%20scope%20is%20not%20a%20recognized%20scope&state=xyz") +
          kIss);
  AuthorizeQuery q = Query("PROFILE_WRITE");
  q.state = "a&b=c";
  q.redirect_uri = "http://127.0.0.1:5000/cb?tenant=1";
  EXPECT_EQ(
      RedirectError(q, Client()).Url(kIssuer),
      std::string("http://127.0.0.1:5000/cb?tenant=1&error=invalid_request"
                  "&error_description=Requested%20scope%20exceeds%20the%20client%27s%20registered%20scopes"
                  "&state=a%26b%3Dc") +
          kIss);
}

TEST(OAuthAuthorizeUrls, AccessDenied) {
  AuthorizeGrant g = Grant(Query(), Client());
  AuthorizeRedirectError denied = AccessDenied(g);
  EXPECT_EQ(denied.error, "access_denied");
  EXPECT_EQ(denied.state, "xyz");
  EXPECT_THAT(denied.Url(kIssuer), HasSubstr("https://app.example/callback?error=access_denied&"));
  EXPECT_THAT(denied.Url(kIssuer), HasSubstr(std::string("&state=xyz") + kIss));
}

// ---- pushed authorization requests (RFC 9126) ----

TEST(OAuthPushedRequests, ParametersRoundTripAsPushed) {
  AuthorizeQuery q = Query();
  q.code_challenge = kChallenge;
  q.state = "caf\xc3\xa9 & \"x\"";
  q.scope = std::nullopt;
  std::optional<AuthorizeQuery> back = PushedParamsFromJson(PushedParamsJson(q));
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->pushed);
  EXPECT_EQ(back->client_id, q.client_id);
  EXPECT_EQ(back->redirect_uri, q.redirect_uri);
  EXPECT_EQ(back->state, q.state);
  EXPECT_EQ(back->scope, std::nullopt);  // absent stays absent
  EXPECT_EQ(back->code_challenge, q.code_challenge);
  EXPECT_EQ(back->code_challenge_method, std::nullopt);
  for (const char* bad : {"", "[]", "{\"scope\":1}", "{", "null"}) {
    EXPECT_EQ(PushedParamsFromJson(bad), std::nullopt) << bad;
  }
}

TEST(OAuthPushedRequests, RequestUriForm) {
  const std::string random(43, 'a');
  EXPECT_TRUE(IsPushedRequestUri("urn:ietf:params:oauth:request_uri:" + random));
  EXPECT_TRUE(IsPushedRequestUri("urn:ietf:params:oauth:request_uri:" + std::string(42, '-') + "_"));
  EXPECT_FALSE(IsPushedRequestUri("urn:ietf:params:oauth:request_uri:" + random + "a"));
  EXPECT_FALSE(IsPushedRequestUri("urn:ietf:params:oauth:request_uri:" + random.substr(1)));
  EXPECT_FALSE(IsPushedRequestUri("urn:ietf:params:oauth:request_uri:" + random.substr(1) + "="));
  EXPECT_FALSE(IsPushedRequestUri("urn:example:request_uri:" + random + "0123456789a"));
  EXPECT_FALSE(IsPushedRequestUri(""));
}

TEST(OAuthAuthorize, RequireParClientRefusesAPlainRequest) {
  AuthorizeClientView c = Client();
  c.require_par = true;
  EXPECT_EQ(PageError(Query(), &c),
            "This OAuth client accepts only pushed authorization requests: its application must push the "
            "request first (request_uri)");
  AuthorizeQuery pushed = Query();
  pushed.pushed = true;
  EXPECT_EQ(Grant(pushed, c).scopes, std::vector<std::string>{"BOOKING_READ"});
  // A pushed request is validated like any other: a pending client still only for its owner.
  AuthorizeClientView pending = Client({"BOOKING_READ"}, ClientKind::kConfidential, ClientState::kPending);
  pending.require_par = true;
  EXPECT_EQ(PageError(pushed, &pending),
            "This OAuth client is awaiting approval; until then only its owner can use it");
  // Without require_par both kinds of request are served.
  EXPECT_EQ(Grant(Query(), Client()).client_id, "client-1");
  EXPECT_EQ(Grant(pushed, Client()).client_id, "client-1");
}

}  // namespace
}  // namespace rendezvous::oauth
