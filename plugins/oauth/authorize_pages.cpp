#include "authorize_pages.hpp"

#include <map>
#include <memory>
#include <utility>
#include <variant>
#include <vector>

#include "authorize_page_views.hpp"
#include "rendezvous/pages.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::oauth {
namespace {

constexpr const char* kAuthorizePath = "/auth/oauth2/authorize";
constexpr size_t kMaxClientIdBytes = 128;  // longer values cannot name a client
constexpr const char* kFormExpired =
    "This form expired or was not sent from this site. Go back to the application and start again.";
constexpr const char* kPushedUnknown =
    "This authorization request is unknown, expired or already used. Go back to the application and start "
    "again.";

// The page for a refused request; its HTTP status is the one core/http gives `problem`.
Response ErrorPage(const Status& problem, const std::string& title) {
  Response res = Response::Page(problem, RenderAuthorizeErrorPage(title, problem.message()));
  AddPageHeaders(res);
  return res;
}

Response RedirectTo(const std::string& location) {
  Response res = Response::Redirect(location, 302);
  AddPageHeaders(res);
  return res;
}

// A pushed request named by the page's parameters (RFC 9126 §4): client_id and request_uri, each
// exactly once, and nothing else is read.
struct PushedReference {
  std::string client_id;
  std::string request_uri;
};

// nullopt when the parameters carry no request_uri (a plain request); otherwise the reference, or
// the page error's message when it is malformed.
std::optional<std::variant<PushedReference, std::string>> PushedReferenceOf(
    const std::multimap<std::string, std::string>& params) {
  if (params.count("request_uri") == 0) return std::nullopt;
  if (params.count("request_uri") != 1) return std::string("request_uri is given more than once");
  if (params.count("client_id") != 1) return std::string("client_id is required, once, with request_uri");
  PushedReference ref{params.find("client_id")->second, params.find("request_uri")->second};
  if (ref.client_id.empty()) return std::string("client_id is required, once, with request_uri");
  return ref;
}

class AuthorizePages {
 public:
  AuthorizePages(Identity& identity, ClientService& clients, CodeExchange& codes,
                 std::shared_ptr<PushedRequests> pushed, Logger& logger, std::string issuer)
      : identity_(identity),
        clients_(clients),
        codes_(codes),
        pushed_(std::move(pushed)),
        logger_(logger),
        issuer_(std::move(issuer)) {}

  Response Show(Request& req) {
    auto user = identity_.SessionUser(req);
    if (!user) return ToLogin(req);
    AuthorizeQuery query = AuthorizeQuery::FromParams(req.query);
    std::optional<std::string> request_uri;
    if (auto ref = PushedReferenceOf(req.query)) {
      if (auto* malformed = std::get_if<std::string>(&*ref)) return PageError(*malformed);
      const auto& [client_id, uri] = std::get<PushedReference>(*ref);
      // Read, not consumed: the user has not decided yet (the consent form's POST consumes it).
      std::optional<AuthorizeQuery> stored = pushed_->Peek(client_id, uri);
      if (!stored) return PageError(kPushedUnknown);
      query = std::move(*stored);
      request_uri = uri;
    }
    auto validated = Validate(query, user->id);
    if (auto* refused = std::get_if<Response>(&validated)) return std::move(*refused);
    const auto& [client, grant] = std::get<Validated>(validated);

    Response res = Response::Page(Status::Ok(), "");
    ConsentPage page;
    page.csrf_token = identity_.CsrfToken(req, res);
    page.client_name = client.settings.name;
    page.client_pending = client.state == ClientState::kPending;
    page.user_email = user->email;
    page.request = query;
    page.request_uri = request_uri;
    page.grant = grant;
    res.body = RenderConsentPage(page);
    AddPageHeaders(res);
    return res;
  }

  Response Decide(Request& req) {
    auto user = identity_.SessionUser(req);
    if (!user) return ToLogin(req);
    auto form = req.FormBody();
    if (!form.ok()) return ErrorPage(Status(ErrorCode::kInvalid, "The form could not be read."), "Form not accepted");
    auto field = [&](const std::string& name) {
      auto it = form->find(name);
      return it == form->end() ? std::string() : it->second;
    };
    if (!identity_.CheckCsrf(req, field("csrf_token"))) return ErrorPage(Status(ErrorCode::kForbidden, kFormExpired), "Form expired");

    const std::string decision = field("decision");
    if (decision != "allow" && decision != "deny") {
      return ErrorPage(Status(ErrorCode::kInvalid, "Choose Allow or Deny."), "Authorization failed");
    }

    // The posted fields are what the page was given, but they came back through the browser:
    // validate them again exactly as a fresh request.
    std::multimap<std::string, std::string> params;
    for (const char* name : {"client_id", "redirect_uri", "state", "scope", "code_challenge",
                             "code_challenge_method", "response_type", "request_uri"}) {
      auto it = form->find(name);
      if (it != form->end()) params.emplace(name, it->second);
    }
    AuthorizeQuery query = AuthorizeQuery::FromParams(params);
    if (auto ref = PushedReferenceOf(params)) {
      if (auto* malformed = std::get_if<std::string>(&*ref)) return PageError(*malformed);
      const auto& [client_id, uri] = std::get<PushedReference>(*ref);
      // The decision uses the request up, Allow or Deny: of two posts of one form only one passes.
      std::optional<AuthorizeQuery> stored = pushed_->Consume(client_id, uri);
      if (!stored) return PageError(kPushedUnknown);
      query = std::move(*stored);
    }
    auto validated = Validate(query, user->id);
    if (auto* refused = std::get_if<Response>(&validated)) return std::move(*refused);
    const auto& [client, grant] = std::get<Validated>(validated);

    if (decision == "deny") {
      logger_.Info("oauth authorization denied", {{"client_id", grant.client_id}, {"user_id", user->id}});
      return RedirectTo(AccessDenied(grant).Url(issuer_));
    }

    CodeGrant code_grant;
    code_grant.client_id = grant.client_id;
    code_grant.user_id = user->id;
    code_grant.redirect_uri = grant.redirect_uri;
    code_grant.scopes = grant.all_scopes ? std::vector<std::string>{} : grant.scopes;
    code_grant.all_scopes = grant.all_scopes;
    code_grant.code_challenge = grant.code_challenge;
    std::string code = codes_.IssueCode(code_grant);
    logger_.Info("oauth authorization allowed", {{"client_id", grant.client_id}, {"user_id", user->id}});
    return RedirectTo(SuccessRedirectUrl(grant.redirect_uri, code, grant.state, issuer_));
  }

 private:
  // A request that passed validation: its client and what the user is asked to grant.
  struct Validated {
    OAuthClient client;
    AuthorizeGrant grant;
  };

  // Loads the query's client and validates the request of `user_id`: the grant, or the response
  // that ends the request (the page error, or the redirect that carries the error).
  std::variant<Validated, Response> Validate(const AuthorizeQuery& query, int64_t user_id) {
    std::optional<OAuthClient> client;
    if (auto failed = LoadClient(query, client)) return *failed;
    AuthorizeClientView view;
    if (client) view = AuthorizeViewOf(*client);
    AuthorizeOutcome outcome = ValidateAuthorizeRequest(query, client ? &view : nullptr, user_id);
    if (auto* page_error = std::get_if<AuthorizePageError>(&outcome)) return PageError(page_error->message);
    if (auto* redirect = std::get_if<AuthorizeRedirectError>(&outcome))
      return RedirectTo(redirect->Url(issuer_));
    // A grant names a client that exists: without one the request is a page error.
    return Validated{std::move(*client), std::get<AuthorizeGrant>(outcome)};
  }

  // Loads the client named by query.client_id into `client` (left empty when there is none).
  // Returns a response only when the lookup itself failed for another reason than "not found".
  std::optional<Response> LoadClient(const AuthorizeQuery& query, std::optional<OAuthClient>& client) {
    if (!query.client_id || query.client_id->empty() || query.client_id->size() > kMaxClientIdBytes) {
      return std::nullopt;
    }
    auto found = clients_.Get(*query.client_id);
    if (found.ok()) {
      client = std::move(found).value();
      return std::nullopt;
    }
    if (found.status().code() == ErrorCode::kNotFound) return std::nullopt;
    logger_.Warn("oauth authorize: client lookup failed", {{"error", found.status().message()}});
    return ErrorPage(Status(ErrorCode::kUnavailable, "The authorization service is unavailable. Try again in a moment."),
                     "Try again later");
  }

  static Response PageError(const std::string& message) {
    return ErrorPage(Status(ErrorCode::kInvalid, message), "Authorization failed");
  }

  // The core redirects requests without a session; this covers a session ending meanwhile.
  static Response ToLogin(const Request& req) {
    std::vector<std::pair<std::string, std::string>> params;
    if (req.method == Method::kGet) {
      for (const auto& [name, value] : req.query) params.emplace_back(name, value);
    }
    std::string next = net::AppendQuery(kAuthorizePath, params);
    Response res = Response::Redirect("/auth/login?next=" + net::PercentEncode(next), 303);
    AddPageHeaders(res);
    return res;
  }

  Identity& identity_;
  ClientService& clients_;
  CodeExchange& codes_;
  std::shared_ptr<PushedRequests> pushed_;
  Logger& logger_;
  const std::string issuer_;
};

}  // namespace

AuthorizeClientView AuthorizeViewOf(const OAuthClient& client) {
  AuthorizeClientView v;
  v.client_id = client.client_id;
  v.state = client.state;
  v.owner_id = client.owner_id;
  v.kind = client.kind;
  v.redirect_uris = client.settings.redirect_uris;
  v.scopes = client.settings.scopes;
  v.require_par = client.require_par;
  return v;
}

void RegisterAuthorizePages(rendezvous::PluginContext& ctx, rendezvous::oauth::ClientService& clients,
                            rendezvous::oauth::CodeExchange& codes, std::shared_ptr<PushedRequests> pushed) {
  // The issuer of RFC 8414's metadata (AuthorizationServerMetadata), named in every response.
  auto pages = std::make_shared<AuthorizePages>(ctx.identity(), clients, codes, std::move(pushed),
                                                ctx.logger(), ctx.base_url());
  auto add = [&](Method method, Response (AuthorizePages::*fn)(Request&)) {
    ctx.AddRoute(Route::Page(method, kAuthorizePath, RouteAuth::Session(),
                             [pages, fn](Request& req) { return ((*pages).*fn)(req); }));
  };
  add(Method::kGet, &AuthorizePages::Show);
  add(Method::kPost, &AuthorizePages::Decide);
}

}  // namespace rendezvous::oauth
