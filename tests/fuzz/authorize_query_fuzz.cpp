// libFuzzer target: the authorization page's query, read as the route reads it (the raw query
// string decoded by the core into a multimap, repeated parameters included, then
// AuthorizeQuery::FromParams) and validated against a fixed client. The first input byte picks the
// client (confidential or public, scoped or legacy, approved or pending, the user its owner or
// not); the rest is the raw query.
//
// Checked: validating the same query twice gives the same outcome; a page error has a message; a
// redirect error goes to a registered redirect URI with a known error code, and its URL carries
// the error and the state back intact; a grant holds only what validation promises (registered
// redirect URI, recognized scopes within the client's, an S256 challenge, a bounded state that is
// valid UTF-8 without control characters so it survives the consent form), and the consent form's
// hidden fields, posted back, validate to the same grant.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "authorize_page_views.hpp"
#include "authorize_request.hpp"
#include "pkce.hpp"
#include "rendezvous/pages.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/url.hpp"
#include "scopes.hpp"

namespace {

using namespace rendezvous::oauth;

constexpr int64_t kOwner = 7;
constexpr int64_t kOtherUser = 42;
constexpr char kFuzzIssuer[] = "https://api.example:8443";

AuthorizeClientView Client(uint8_t pick) {
  AuthorizeClientView c;
  c.client_id = "client-1";
  c.owner_id = kOwner;
  c.kind = pick & 1 ? ClientKind::kPublic : ClientKind::kConfidential;
  c.state = pick & 2 ? ClientState::kPending : ClientState::kApproved;
  c.redirect_uris = {"https://app.example/callback", "http://127.0.0.1:5000/cb?tenant=1"};
  switch ((pick >> 2) % 3) {
    case 0: c.scopes = {"BOOKING_READ", "PROFILE_READ", "TEAM_BOOKING_READ"}; break;
    case 1: c.scopes = {"READ_BOOKING", "READ_PROFILE"}; break;  // legacy
    default: break;                                                // legacy, no scopes at all
  }
  return c;
}

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  for (const std::string& s : v)
    if (s == x) return true;
  return false;
}

// Any C0 control or DEL: none survives an HTML form unchanged (CR and LF are normalised).
bool HasAnyControl(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

// The outcome as text, to compare two validations.
std::string Describe(const AuthorizeOutcome& o) {
  if (const auto* p = std::get_if<AuthorizePageError>(&o)) return "page|" + p->message;
  if (const auto* r = std::get_if<AuthorizeRedirectError>(&o)) {
    return "redirect|" + r->redirect_uri + "|" + r->error + "|" + r->error_description + "|" +
           (r->state ? "s" + *r->state : "-");
  }
  const auto& g = std::get<AuthorizeGrant>(o);
  std::string out = "grant|" + g.client_id + "|" + g.redirect_uri + "|" + (g.state ? "s" + *g.state : "-") + "|" +
                    (g.all_scopes ? "all" : "some") + "|" + g.code_challenge + "|" + g.code_challenge_method;
  for (const std::string& s : g.scopes) out += "|" + s;
  return out;
}

// A URL built by AppendQuery, read back: the query after the redirect URI's own.
std::multimap<std::string, std::string> QueryOf(const std::string& url, const std::string& redirect_uri) {
  if (url.compare(0, redirect_uri.size(), redirect_uri) != 0) __builtin_trap();
  std::string_view rest = std::string_view(url).substr(redirect_uri.size());
  if (rest.empty() || (rest[0] != '?' && rest[0] != '&')) __builtin_trap();
  if ((rest[0] == '&') != (redirect_uri.find('?') != std::string::npos)) __builtin_trap();
  auto pairs = rendezvous::net::ParseUrlEncoded(rest.substr(1));
  if (!pairs) __builtin_trap();
  return {pairs->begin(), pairs->end()};
}

void ExpectParam(const std::multimap<std::string, std::string>& q, const std::string& name,
                 const std::optional<std::string>& value) {
  auto [begin, end] = q.equal_range(name);
  if (!value) {
    if (begin != end) __builtin_trap();
    return;
  }
  if (begin == end || std::next(begin) != end || begin->second != *value) __builtin_trap();
}

void CheckRedirectError(const AuthorizeRedirectError& r, const AuthorizeClientView& client,
                        const AuthorizeQuery& query) {
  static const std::set<std::string> kErrors = {"invalid_request", "invalid_scope", "unsupported_response_type"};
  if (!Contains(client.redirect_uris, r.redirect_uri) || !kErrors.count(r.error) || r.error_description.empty()) {
    __builtin_trap();
  }
  if (r.state && (r.state != query.state || r.state->size() > kMaxStateLength)) __builtin_trap();
  const auto back = QueryOf(r.Url(kFuzzIssuer), r.redirect_uri);
  ExpectParam(back, "error", r.error);
  ExpectParam(back, "error_description", r.error_description);
  ExpectParam(back, "state", r.state);
  ExpectParam(back, "iss", std::optional<std::string>(kFuzzIssuer));
}

void CheckGrant(const AuthorizeGrant& g, const AuthorizeClientView& client, const AuthorizeQuery& query,
                int64_t user) {
  if (g.client_id != client.client_id || !Contains(client.redirect_uris, g.redirect_uri)) __builtin_trap();
  if (!query.repeated.empty() || g.state != query.state) __builtin_trap();
  if (g.state && (g.state->size() > kMaxStateLength || !rendezvous::text::IsValidUtf8(*g.state) ||
                  HasAnyControl(*g.state))) {
    __builtin_trap();
  }
  if (client.state == ClientState::kRejected || (client.state == ClientState::kPending && user != client.owner_id)) {
    __builtin_trap();
  }
  const bool legacy = IsLegacyClient(client.scopes);
  if (g.all_scopes && (!legacy || g.scopes != client.scopes)) __builtin_trap();
  if (!g.all_scopes) {
    if (g.scopes.empty() || g.scopes.size() > kMaxScopesPerList) __builtin_trap();
    std::set<std::string> distinct;
    for (const std::string& s : g.scopes) {
      if (!IsRecognizedScope(s) || !distinct.insert(s).second) __builtin_trap();
      if (!legacy && !Contains(client.scopes, s)) __builtin_trap();
    }
  }
  if (g.code_challenge.empty()) {
    if (!g.code_challenge_method.empty() || client.kind == ClientKind::kPublic) __builtin_trap();
  } else if (g.code_challenge_method != "S256" || !IsValidS256Challenge(g.code_challenge)) {
    __builtin_trap();
  }

  // The success redirect carries the code and the state back intact.
  const std::string code = "c0de-_.~";
  const auto back = QueryOf(SuccessRedirectUrl(g.redirect_uri, code, g.state, kFuzzIssuer), g.redirect_uri);
  ExpectParam(back, "code", code);
  ExpectParam(back, "state", g.state);
  ExpectParam(back, "iss", std::optional<std::string>(kFuzzIssuer));

  // The consent form carries the request in hidden fields, each value escaped; posted back, they
  // validate to the same grant.
  ConsentPage page;
  page.csrf_token = "csrf";
  page.client_name = "Client";
  page.user_email = "user@example.com";
  page.request = query;
  page.grant = g;
  const std::string html = RenderConsentPage(page);
  std::multimap<std::string, std::string> posted;
  for (const auto& [name, value] : ConsentHiddenFields(query)) {
    const std::string input =
        "<input type=\"hidden\" name=\"" + name + "\" value=\"" + rendezvous::HtmlEscape(value) + "\">";
    if (html.find(input) == std::string::npos) __builtin_trap();
    posted.emplace(name, value);
  }
  const AuthorizeOutcome again = ValidateAuthorizeRequest(AuthorizeQuery::FromParams(posted), &client, user);
  if (Describe(again) != Describe(g)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const AuthorizeClientView client = Client(data[0]);
  const int64_t user = data[0] & 0x80 ? kOwner : kOtherUser;
  const std::string_view raw(reinterpret_cast<const char*>(data + 1), size - 1);

  // As the core does for every request: a query that does not decode is answered 400 there.
  auto pairs = rendezvous::net::ParseUrlEncoded(raw);
  if (!pairs) return 0;
  std::multimap<std::string, std::string> params;
  for (auto& [name, value] : *pairs) params.emplace(std::move(name), std::move(value));
  const AuthorizeQuery query = AuthorizeQuery::FromParams(params);

  for (const std::string& name : query.repeated) {
    if (params.count(name) < 2) __builtin_trap();
  }
  // The route looks the client up by client_id; an unknown one reaches validation as nullptr.
  const bool known = query.client_id && *query.client_id == client.client_id;
  const AuthorizeClientView* view = known ? &client : nullptr;
  const AuthorizeOutcome outcome = ValidateAuthorizeRequest(query, view, user);
  if (Describe(outcome) != Describe(ValidateAuthorizeRequest(query, view, user))) __builtin_trap();

  if (const auto* p = std::get_if<AuthorizePageError>(&outcome)) {
    if (p->message.empty()) __builtin_trap();
  } else if (!known) {
    __builtin_trap();  // without a client only a page error is possible
  } else if (const auto* r = std::get_if<AuthorizeRedirectError>(&outcome)) {
    CheckRedirectError(*r, client, query);
  } else {
    CheckGrant(std::get<AuthorizeGrant>(outcome), client, query, user);
  }
  return 0;
}
