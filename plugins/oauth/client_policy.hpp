// Rules about OAuth clients that need no storage: the legacy flag (specification §2.1), what a
// valid client looks like (redirect URIs per RFC 9700 §2.1, limits of §8), and whether an owner's
// edit sends the client back to review (§3.1). Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/status.hpp"

namespace rendezvous::oauth {

inline constexpr size_t kMaxRedirectUris = 10;      // §8
inline constexpr size_t kMaxUrlLength = 2048;
inline constexpr size_t kMaxClientNameChars = 100;  // characters = Unicode code points
inline constexpr size_t kMaxPurposeChars = 1000;

enum class ClientState { kPending, kApproved, kRejected };
enum class ClientKind { kConfidential, kPublic };

// "pending" / "approved" / "rejected" (the DESIGN §3 wire names) and back.
std::string_view ClientStateName(ClientState state);
std::optional<ClientState> ParseClientState(std::string_view name);
// "confidential" / "public" and back.
std::string_view ClientKindName(ClientKind kind);
std::optional<ClientKind> ParseClientKind(std::string_view name);

// The owner-editable settings of a client.
struct ClientSettings {
  std::string name, logo, website, purpose;  // logo, website, purpose may be empty
  std::vector<std::string> redirect_uris;
  std::vector<std::string> scopes;
};

// §2.1: legacy when there are no scopes, or only READ_BOOKING and/or READ_PROFILE.
bool IsLegacyClient(const std::vector<std::string>& scopes);

// One redirect URI: at most kMaxUrlLength, absolute, no fragment, https — or http when the host
// is loopback (127.0.0.0/8, [::1], localhost), as RFC 9700 §2.1 / RFC 8252 §7.3 allow.
Status ValidateRedirectUri(std::string_view uri);
// The list: 1..kMaxRedirectUris entries, each valid, no duplicates. Messages name the position
// ("redirect URI 2: ...").
Status ValidateRedirectUris(const std::vector<std::string>& uris);

struct ClientValidationOptions {
  // The settings page requires at least one scope (§2.1, §8); the command line may create a
  // legacy client without any (DESIGN §3).
  bool require_scopes = true;
};

// Trims name, logo, website and purpose and drops duplicate scopes and redirect URIs (first
// occurrence kept). Call before ValidateClientSettings when taking a form.
ClientSettings NormalizeClientSettings(ClientSettings settings);

// Checks: name 1..100 characters after trimming, valid UTF-8, no control characters; logo and
// website empty or an absolute https (http only for loopback) URL of at most kMaxUrlLength;
// purpose at most 1000 characters, valid UTF-8, no control characters except tab and line
// breaks; redirect URIs as ValidateRedirectUris; scopes each recognized, no duplicates, at least
// one unless options.require_scopes is false. kInvalid with the first problem found.
Status ValidateClientSettings(const ClientSettings& settings,
                              const ClientValidationOptions& options = {});

// What an owner's edit does to the client's review state (§3.1).
struct ReviewDecision {
  ClientState next_state = ClientState::kPending;
  bool legacy_after = false;  // IsLegacyClient(after.scopes)
  std::string reason;         // which rules fired, "; "-separated, for logs and tests
};

// The decision for an update from `before` to `after` of a client in state `current`:
// - pending stays pending.
// - approved → pending on a change of name, logo or website, on any redirect URI added, removed
//   or changed (order alone is no change), or on scope expansion (a scope not held before) —
//   except an X_READ added while X_WRITE is already held, which changes nothing.
// - a legacy client (before) adding a TEAM_ or ORG_ scope → pending; adding only user-level
//   (or legacy) scopes → state unchanged, and the client stops being legacy when it gained a
//   user-level scope.
// - removing scopes or changing the purpose alone → unchanged. But an edit that makes a
//   non-legacy client legacy (e.g. removing its last user-level scope) lifts scope enforcement
//   for its tokens, a privilege expansion: → pending.
// - rejected: the specification leaves the way out open. Decision: any change by the owner puts
//   the client back to pending for a new review; a save that changes nothing leaves it rejected.
// When several rules fire, pending wins.
ReviewDecision DecideAfterUpdate(ClientState current, const ClientSettings& before,
                                 const ClientSettings& after);

}  // namespace rendezvous::oauth
