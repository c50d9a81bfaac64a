#include "client_policy.hpp"

#include <algorithm>
#include <set>

#include "rendezvous/text.hpp"
#include "scopes.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::oauth {
namespace {

// Decodes UTF-8 strictly (no overlongs, no surrogates, at most U+10FFFF). Calls `fn` for each code
// point; false on malformed input.
template <class Fn>
bool ForEachCodePoint(std::string_view s, Fn&& fn) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp = 0;
    size_t len = 0;
    if (c < 0x80) {
      cp = c;
      len = 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
      cp = c & 0x1f;
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      cp = c & 0x0f;
      len = 3;
    } else if (c >= 0xf0 && c <= 0xf4) {
      cp = c & 0x07;
      len = 4;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    fn(cp);
    i += len;
  }
  return true;
}

bool IsControl(uint32_t cp) { return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f); }

// Checks text as UTF-8 of at most `max_chars` code points without control characters (except
// those in `allowed_controls`). Returns "" or the problem.
std::string CheckText(std::string_view text, size_t max_chars, std::string_view allowed_controls) {
  size_t count = 0;
  bool bad_control = false;
  const bool ok = ForEachCodePoint(text, [&](uint32_t cp) {
    ++count;
    if (IsControl(cp) && (cp >= 0x80 || allowed_controls.find(char(cp)) == std::string_view::npos)) {
      bad_control = true;
    }
  });
  if (!ok) return "is not valid UTF-8";
  if (bad_control) return "must not contain control characters";
  if (count > max_chars) return "must be at most " + std::to_string(max_chars) + " characters";
  return "";
}

// https, or http for a loopback host. `what` names the field in messages.
Status CheckWebUrl(std::string_view url, std::string_view what, bool allow_fragment) {
  if (url.size() > kMaxUrlLength) {
    return Status(ErrorCode::kInvalid, std::string(what) + " must be at most " +
                                           std::to_string(kMaxUrlLength) + " characters");
  }
  Result<net::Url> parts = net::ParseUrl(url);
  if (!parts.ok()) {
    return Status(ErrorCode::kInvalid, std::string(what) + " is invalid: " + parts.status().message());
  }
  if (!allow_fragment && parts->fragment) {
    return Status(ErrorCode::kInvalid, std::string(what) + " must not contain a fragment (#...)");
  }
  if (parts->scheme == "https") return Status::Ok();
  if (parts->scheme == "http") {
    if (net::IsLoopbackHost(parts->host)) return Status::Ok();
    return Status(ErrorCode::kInvalid,
                  std::string(what) + " must use https (http is allowed only for loopback hosts: "
                                      "localhost, 127.0.0.1, [::1])");
  }
  return Status(ErrorCode::kInvalid, std::string(what) + " must use https");
}

std::set<std::string> AsSet(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

template <class T>
std::vector<T> Dedupe(const std::vector<T>& v) {
  std::vector<T> out;
  for (const T& x : v) {
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  }
  return out;
}

}  // namespace

std::string_view ClientStateName(ClientState state) {
  switch (state) {
    case ClientState::kPending: return "pending";
    case ClientState::kApproved: return "approved";
    case ClientState::kRejected: return "rejected";
  }
  return "pending";
}

std::optional<ClientState> ParseClientState(std::string_view name) {
  if (name == "pending") return ClientState::kPending;
  if (name == "approved") return ClientState::kApproved;
  if (name == "rejected") return ClientState::kRejected;
  return std::nullopt;
}

std::string_view ClientKindName(ClientKind kind) {
  return kind == ClientKind::kPublic ? "public" : "confidential";
}

std::optional<ClientKind> ParseClientKind(std::string_view name) {
  if (name == "confidential") return ClientKind::kConfidential;
  if (name == "public") return ClientKind::kPublic;
  return std::nullopt;
}

bool IsLegacyClient(const std::vector<std::string>& scopes) {
  return std::all_of(scopes.begin(), scopes.end(),
                     [](const std::string& s) { return IsLegacyScopeValue(s); });
}

Status ValidateRedirectUri(std::string_view uri) {
  return CheckWebUrl(uri, "redirect URI", /*allow_fragment=*/false);
}

Status ValidateRedirectUris(const std::vector<std::string>& uris) {
  if (uris.empty()) return Status(ErrorCode::kInvalid, "at least one redirect URI is required");
  if (uris.size() > kMaxRedirectUris) {
    return Status(ErrorCode::kInvalid,
                  "at most " + std::to_string(kMaxRedirectUris) + " redirect URIs are allowed");
  }
  for (size_t i = 0; i < uris.size(); ++i) {
    const std::string position = "redirect URI " + std::to_string(i + 1);
    Status s = ValidateRedirectUri(uris[i]);
    if (!s.ok()) return Status(ErrorCode::kInvalid, position + ": " + s.message());
    for (size_t j = 0; j < i; ++j) {
      if (uris[j] == uris[i]) {
        return Status(ErrorCode::kInvalid, position + " is a duplicate of redirect URI " +
                                               std::to_string(j + 1));
      }
    }
  }
  return Status::Ok();
}

ClientSettings NormalizeClientSettings(ClientSettings settings) {
  settings.name = std::string(text::Trim(settings.name));
  settings.logo = std::string(text::Trim(settings.logo));
  settings.website = std::string(text::Trim(settings.website));
  settings.purpose = std::string(text::Trim(settings.purpose));
  for (std::string& uri : settings.redirect_uris) uri = std::string(text::Trim(uri));
  for (std::string& scope : settings.scopes) scope = std::string(text::Trim(scope));
  settings.redirect_uris = Dedupe(settings.redirect_uris);
  settings.scopes = Dedupe(settings.scopes);
  return settings;
}

Status ValidateClientSettings(const ClientSettings& settings,
                              const ClientValidationOptions& options) {
  const std::string name = std::string(text::Trim(settings.name));
  if (name.empty()) return Status(ErrorCode::kInvalid, "name is required");
  if (std::string problem = CheckText(name, kMaxClientNameChars, ""); !problem.empty()) {
    return Status(ErrorCode::kInvalid, "name " + problem);
  }
  if (!settings.logo.empty()) {
    if (Status s = CheckWebUrl(settings.logo, "logo URL", true); !s.ok()) return s;
  }
  if (!settings.website.empty()) {
    if (Status s = CheckWebUrl(settings.website, "website URL", true); !s.ok()) return s;
  }
  if (std::string problem = CheckText(settings.purpose, kMaxPurposeChars, "\t\r\n");
      !problem.empty()) {
    return Status(ErrorCode::kInvalid, "purpose " + problem);
  }
  if (Status s = ValidateRedirectUris(settings.redirect_uris); !s.ok()) return s;
  if (settings.scopes.empty() && options.require_scopes) {
    return Status(ErrorCode::kInvalid, "at least one scope is required");
  }
  for (size_t i = 0; i < settings.scopes.size(); ++i) {
    const std::string& scope = settings.scopes[i];
    if (!IsRecognizedScope(scope)) {
      // Unknown values are echoed only when short and printable, so messages stay readable.
      const bool printable = scope.size() <= kMaxScopeLength &&
                             std::all_of(scope.begin(), scope.end(), [](char c) {
                               return c > 0x20 && c < 0x7f;
                             });
      return Status(ErrorCode::kInvalid,
                    printable ? "unknown scope: " + scope
                              : "scope " + std::to_string(i + 1) + " is not a known scope");
    }
    for (size_t j = 0; j < i; ++j) {
      if (settings.scopes[j] == scope) {
        return Status(ErrorCode::kInvalid, "scope " + scope + " is listed twice");
      }
    }
  }
  return Status::Ok();
}

ReviewDecision DecideAfterUpdate(ClientState current, const ClientSettings& before,
                                 const ClientSettings& after) {
  std::vector<std::string> pending_because;   // rules that send the client to review
  std::vector<std::string> unchanged_because;  // changes that explicitly do not

  if (before.name != after.name) pending_because.push_back("name changed");
  if (before.logo != after.logo) pending_because.push_back("logo changed");
  if (before.website != after.website) pending_because.push_back("website changed");
  if (AsSet(before.redirect_uris) != AsSet(after.redirect_uris)) {
    pending_because.push_back("redirect URIs changed");
  }
  if (before.purpose != after.purpose) unchanged_because.push_back("purpose changed");

  const std::set<std::string> had = AsSet(before.scopes);
  const std::set<std::string> has = AsSet(after.scopes);
  const bool legacy_before = IsLegacyClient(before.scopes);
  const bool legacy_after = IsLegacyClient(after.scopes);

  std::vector<std::string> added;
  for (const std::string& s : after.scopes) {
    if (!had.count(s) && std::find(added.begin(), added.end(), s) == added.end()) {
      added.push_back(s);
    }
  }
  const bool removed = std::any_of(had.begin(), had.end(),
                                   [&](const std::string& s) { return !has.count(s); });
  if (removed) unchanged_because.push_back("scopes removed");

  if (legacy_before) {
    for (const std::string& s : added) {
      if (IsTeamOrOrgScope(s)) {
        pending_because.push_back("legacy client added team/org scope " + s);
      }
    }
    if (!added.empty() && pending_because.empty()) {
      unchanged_because.push_back(legacy_after
                                      ? "legacy client added legacy scope values"
                                      : "legacy client added user-level scopes, no longer legacy");
    }
  } else {
    for (const std::string& s : added) {
      const std::string write = MatchingWriteScope(s);
      if (!write.empty() && had.count(write)) {
        unchanged_because.push_back("added " + s + " while " + write + " is granted");
      } else {
        pending_because.push_back("scope expansion: " + s);
      }
    }
    if (legacy_after) {
      pending_because.push_back("client became legacy (scope enforcement lifted)");
    }
  }

  ReviewDecision d;
  d.legacy_after = legacy_after;
  const auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v) out += (out.empty() ? "" : "; ") + s;
    return out;
  };
  const bool changed = !pending_because.empty() || !unchanged_because.empty();

  switch (current) {
    case ClientState::kPending:
      d.next_state = ClientState::kPending;
      d.reason = "pending stays pending";
      return d;
    case ClientState::kRejected:
      if (changed) {
        d.next_state = ClientState::kPending;
        d.reason = "rejected client edited by its owner: new review";
      } else {
        d.next_state = ClientState::kRejected;
        d.reason = "no change";
      }
      return d;
    case ClientState::kApproved:
      if (!pending_because.empty()) {
        d.next_state = ClientState::kPending;
        d.reason = join(pending_because);
      } else {
        d.next_state = ClientState::kApproved;
        d.reason = changed ? "no re-review: " + join(unchanged_because) : "no change";
      }
      return d;
  }
  return d;
}

}  // namespace rendezvous::oauth
