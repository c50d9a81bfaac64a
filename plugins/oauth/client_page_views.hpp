// The HTML of the OAuth client pages (settings list and create form, one client's page with its
// secrets, the admin review page) and the reading of their forms. Plain data in, HTML out; no
// HTTP, database or plugin API, so it is unit-tested on its own. Every value is escaped by the
// template engine. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client_policy.hpp"
#include "client_service.hpp"

namespace rendezvous::oauth {

// What a client form shows or what was submitted with it. The raw redirect URI text is kept so a
// form with an error shows back exactly what the user typed.
struct ClientFormInput {
  std::string name;
  ClientKind kind = ClientKind::kConfidential;
  std::string redirect_uris_text;  // one per line
  std::vector<std::string> scopes;
  std::string purpose, website, logo;
  bool require_par = false;  // the "require pushed authorization requests" checkbox
};

// The settings of an existing client, as its edit form starts.
ClientFormInput FormInputFromClient(const OAuthClient& client);

// Reads a submitted create or edit form. Scopes come from checkboxes named "scope_<SCOPE>"; only
// user-level and TEAM_/ORG_ values are read, and the legacy values too when `accept_legacy`
// (the edit form of a client that holds them). Unknown fields are ignored.
ClientFormInput ReadClientForm(const std::map<std::string, std::string>& form, bool accept_legacy);

// Splits the redirect URI text on line breaks, trimming blanks and dropping empty lines. Stops
// after kMaxRedirectUris + 1 entries: enough for validation to refuse a list that is too long,
// without holding an unbounded list.
std::vector<std::string> SplitRedirectUris(std::string_view text);

// Settings from a form, for NewClient and ClientUpdate.
ClientSettings SettingsFromForm(const ClientFormInput& input);

// Common to every page: the user's CSRF token for the page's forms, an optional notice (success)
// and error message, and whether to link the admin page.
struct PageFrame {
  std::string csrf_token;
  std::string notice;
  std::string error;
  bool is_admin = false;
};

// GET/POST /settings/developer/oauth: the user's clients and the create form.
std::string RenderClientListPage(const PageFrame& frame, const std::vector<OAuthClient>& clients,
                                 const ClientFormInput& form);

// /settings/developer/oauth/:client_id: summary, edit form, secrets. `new_secret` is shown once,
// with the copy-now notice.
std::string RenderClientPage(const PageFrame& frame, const OAuthClient& client,
                             const ClientFormInput& form,
                             const std::optional<std::string>& new_secret = std::nullopt);

// One pending client on the admin review page, with its owner's name and e-mail.
struct ReviewEntry {
  OAuthClient client;
  std::string owner_name;
  std::string owner_email;
};

// /admin/oauth-clients.
std::string RenderReviewPage(const PageFrame& frame, const std::vector<ReviewEntry>& entries);

// A page with a title and one sentence (403, 404, errors without a form to show again).
std::string RenderMessagePage(const PageFrame& frame, const std::string& title,
                              const std::string& message);

}  // namespace rendezvous::oauth
