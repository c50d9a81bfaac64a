#include "authorize_page_views.hpp"

#include "authorize_page_templates.hpp"
#include "rendezvous/pages.hpp"
#include "scopes.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::oauth {
namespace {

std::string Render(const std::string& tmpl, const Json& data) {
  auto out = RenderTemplate(tmpl, data);
  // The templates are constants covered by the unit tests; a failure is a programming error.
  return out.ok() ? *out : std::string("<p class=\"error\">This page could not be shown.</p>");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ConsentHiddenFields(const AuthorizeQuery& request) {
  std::vector<std::pair<std::string, std::string>> fields;
  auto add = [&](const char* name, const std::optional<std::string>& value) {
    if (value) fields.emplace_back(name, *value);
  };
  add("client_id", request.client_id);
  add("redirect_uri", request.redirect_uri);
  add("state", request.state);
  add("scope", request.scope);
  add("code_challenge", request.code_challenge);
  add("code_challenge_method", request.code_challenge_method);
  return fields;
}

std::string RedirectHost(const std::string& redirect_uri) {
  auto parts = net::ParseUrl(redirect_uri);
  if (!parts.ok()) return redirect_uri;
  std::string host = parts->HostInUrl();
  if (parts->port) host += ":" + std::to_string(*parts->port);
  return host;
}

std::string RenderConsentPage(const ConsentPage& page) {
  Json scopes = Json::array();
  if (!page.grant.all_scopes) {
    for (const std::string& s : page.grant.scopes) scopes.push_back({{"scope", s}, {"description", DescribeScope(s)}});
  }
  Json fields = Json::array();
  if (page.request_uri) {
    fields.push_back({{"name", "client_id"}, {"value", page.grant.client_id}});
    fields.push_back({{"name", "request_uri"}, {"value", *page.request_uri}});
  } else {
    for (const auto& [name, value] : ConsentHiddenFields(page.request))
      fields.push_back({{"name", name}, {"value", value}});
  }
  Json data = {{"csrf_token", page.csrf_token},
               {"client_name", page.client_name},
               {"pending", page.client_pending},
               {"user_email", page.user_email},
               {"all_scopes", page.grant.all_scopes},
               {"scopes", scopes},
               {"redirect_host", RedirectHost(page.grant.redirect_uri)},
               {"fields", fields}};
  return RenderPage("Authorize " + page.client_name,
                    std::string(templates::kConsentStyle) + "\n" + Render(templates::kConsentBody, data));
}

std::string RenderAuthorizeErrorPage(const std::string& title, const std::string& message) {
  return RenderPage(title, Render(templates::kAuthorizeErrorBody, {{"title", title}, {"message", message}}));
}

}  // namespace rendezvous::oauth
