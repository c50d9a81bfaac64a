#include "client_page_views.hpp"

#include <algorithm>

#include "client_page_templates.hpp"
#include "rendezvous/pages.hpp"
#include "rendezvous/text.hpp"
#include "scopes.hpp"

namespace rendezvous::oauth {
namespace {

// Mustache renders a section for any string, even an empty one; null renders nothing.
Json Optional(const std::string& value) { return value.empty() ? Json(nullptr) : Json(value); }

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string Field(const std::map<std::string, std::string>& form, const std::string& name) {
  auto it = form.find(name);
  return it == form.end() ? std::string() : it->second;
}

Json ScopeChoice(const std::string& scope, bool checked) {
  return {{"scope", scope}, {"description", DescribeScope(scope)}, {"checked", checked}};
}

Json FormJson(const ClientFormInput& form, const std::vector<std::string>& legacy_shown) {
  Json user = Json::array(), team = Json::array(), legacy = Json::array();
  bool team_open = false;
  for (const std::string& scope : AllRecognizedScopes()) {
    bool checked = Contains(form.scopes, scope);
    if (IsUserLevelScope(scope)) {
      user.push_back(ScopeChoice(scope, checked));
    } else if (IsTeamOrOrgScope(scope)) {
      team.push_back(ScopeChoice(scope, checked));
      team_open = team_open || checked;
    } else if (Contains(legacy_shown, scope)) {
      legacy.push_back(ScopeChoice(scope, checked));
    }
  }
  return {{"name", form.name},
          {"confidential", form.kind == ClientKind::kConfidential},
          {"redirect_uris", form.redirect_uris_text},
          {"purpose", form.purpose},
          {"website", form.website},
          {"logo", form.logo},
          {"require_par", form.require_par},
          {"user_scopes", user},
          {"team_scopes", team},
          {"team_open", team_open},
          {"legacy_scopes", legacy},
          {"has_legacy_scopes", !legacy.empty()}};
}

Json ClientSummaryJson(const OAuthClient& client) {
  Json secrets = Json::array();
  for (const ClientSecretInfo& s : client.secrets) {
    secrets.push_back({{"secret_id", std::to_string(s.secret_id)}, {"hint", s.hint}, {"created_at", s.created_at}});
  }
  return {{"client_id", client.client_id},
          {"name", client.settings.name},
          {"kind", std::string(ClientKindName(client.kind))},
          {"confidential", client.kind == ClientKind::kConfidential},
          {"state", std::string(ClientStateName(client.state))},
          {"review_reason", client.state == ClientState::kRejected ? Optional(client.review_reason) : Json(nullptr)},
          {"legacy", client.legacy},
          {"created_at", client.created_at},
          {"updated_at", client.updated_at},
          {"secrets", secrets},
          {"has_secrets", !secrets.empty()}};
}

std::string RenderClientView(const std::string& tmpl, const Json& data) {
  auto out = RenderTemplate(tmpl, data);
  // The templates are constants covered by the unit tests; a failure here is a programming error,
  // and the page says so rather than showing half a form.
  return out.ok() ? *out : std::string("<p class=\"error\">This page could not be shown.</p>");
}

std::string Nav(const PageFrame& frame) {
  return RenderClientView(
      templates::kNav,
      {{"is_admin", frame.is_admin}, {"notice", Optional(frame.notice)}, {"error", Optional(frame.error)}});
}

std::string Page(const std::string& title, const std::string& body) {
  return RenderPage(title, std::string(templates::kStyle) + "\n" + body);
}

}  // namespace

ClientFormInput FormInputFromClient(const OAuthClient& client) {
  ClientFormInput f;
  f.name = client.settings.name;
  f.kind = client.kind;
  for (const std::string& uri : client.settings.redirect_uris) {
    if (!f.redirect_uris_text.empty()) f.redirect_uris_text += "\n";
    f.redirect_uris_text += uri;
  }
  f.scopes = client.settings.scopes;
  f.purpose = client.settings.purpose;
  f.website = client.settings.website;
  f.logo = client.settings.logo;
  f.require_par = client.require_par;
  return f;
}

ClientFormInput ReadClientForm(const std::map<std::string, std::string>& form, bool accept_legacy) {
  ClientFormInput f;
  f.name = Field(form, "name");
  f.kind = Field(form, "kind") == "public" ? ClientKind::kPublic : ClientKind::kConfidential;
  f.redirect_uris_text = Field(form, "redirect_uris");
  f.purpose = Field(form, "purpose");
  f.website = Field(form, "website");
  f.logo = Field(form, "logo");
  f.require_par = form.count("require_par") != 0;
  for (const std::string& scope : AllRecognizedScopes()) {
    if (IsLegacyScopeValue(scope) && !accept_legacy) continue;
    if (form.count("scope_" + scope) != 0) f.scopes.push_back(scope);
  }
  return f;
}

std::vector<std::string> SplitRedirectUris(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty() && out.size() <= kMaxRedirectUris) {
    size_t end = text.find('\n');
    std::string line(text::Trim(text.substr(0, end)));
    if (!line.empty()) out.push_back(std::move(line));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

ClientSettings SettingsFromForm(const ClientFormInput& input) {
  ClientSettings s;
  s.name = input.name;
  s.logo = input.logo;
  s.website = input.website;
  s.purpose = input.purpose;
  s.redirect_uris = SplitRedirectUris(input.redirect_uris_text);
  s.scopes = input.scopes;
  return s;
}

std::string RenderClientListPage(const PageFrame& frame, const std::vector<OAuthClient>& clients,
                                 const ClientFormInput& form) {
  Json list = Json::array();
  for (const OAuthClient& c : clients) list.push_back(ClientSummaryJson(c));
  Json data = {{"nav", Nav(frame)},
               {"csrf_token", frame.csrf_token},
               {"clients", list},
               {"has_clients", !list.empty()},
               {"form", FormJson(form, {})},
               {"fields", ""}};
  data["form"]["choose_kind"] = true;
  data["fields"] = RenderClientView(templates::kSettingsFields, data);
  return Page("OAuth clients", RenderClientView(templates::kListBody, data));
}

std::string RenderClientPage(const PageFrame& frame, const OAuthClient& client,
                             const ClientFormInput& form, const std::optional<std::string>& new_secret) {
  std::vector<std::string> legacy_shown;
  for (const auto* list : {&client.settings.scopes, &form.scopes}) {
    for (const std::string& s : *list) {
      if (IsLegacyScopeValue(s) && !Contains(legacy_shown, s)) legacy_shown.push_back(s);
    }
  }
  Json data = {{"nav", Nav(frame)},
               {"csrf_token", frame.csrf_token},
               {"client", ClientSummaryJson(client)},
               {"form", FormJson(form, legacy_shown)},
               {"has_secret", new_secret.has_value()},
               {"secret", new_secret.value_or("")},
               {"fields", ""}};
  data["fields"] = RenderClientView(templates::kSettingsFields, data);
  return Page(client.settings.name + " · OAuth client", RenderClientView(templates::kClientBody, data));
}

std::string RenderReviewPage(const PageFrame& frame, const std::vector<ReviewEntry>& entries) {
  Json list = Json::array();
  for (const ReviewEntry& e : entries) {
    const OAuthClient& c = e.client;
    Json scopes = Json::array();
    for (const std::string& s : c.settings.scopes) scopes.push_back({{"scope", s}, {"description", DescribeScope(s)}});
    list.push_back({{"client_id", c.client_id},
                    {"name", c.settings.name},
                    {"owner_name", e.owner_name},
                    {"owner_email", e.owner_email},
                    {"kind", std::string(ClientKindName(c.kind))},
                    {"scopes", scopes},
                    {"has_scopes", !scopes.empty()},
                    {"redirect_uris", c.settings.redirect_uris},
                    {"purpose", c.settings.purpose},
                    {"website", Optional(c.settings.website)},
                    {"logo", Optional(c.settings.logo)},
                    {"updated_at", c.updated_at}});
  }
  Json data = {{"nav", Nav(frame)},
               {"csrf_token", frame.csrf_token},
               {"entries", list},
               {"has_entries", !list.empty()}};
  return Page("Review OAuth clients", RenderClientView(templates::kReviewBody, data));
}

std::string RenderMessagePage(const PageFrame& frame, const std::string& title, const std::string& message) {
  return Page(title, RenderClientView(templates::kMessageBody,
                                      {{"nav", Nav(frame)}, {"title", title}, {"message", message}}));
}

}  // namespace rendezvous::oauth
