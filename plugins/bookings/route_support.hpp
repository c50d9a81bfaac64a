// What the bookings plugin's route tables share: the credentials they take and the path
// parameters (a service call's answer is rendezvous::Answer). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "field_checks.hpp"
#include "rendezvous/answer.hpp"
#include "rendezvous/digits.hpp"
#include "rendezvous/http.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::bookings {

// Owner routes take API keys, OAuth tokens and managed-user tokens (DESIGN §10: a managed user's
// token acts as that user with its client's scopes).
constexpr unsigned kOwnerCredentials = kApiKey | kOAuthToken | kManagedUserToken;

// The numeric `:id` of the path; nullopt (answered 404) when it is not a positive integer.
inline std::optional<int64_t> PathId(const Request& req) {
  auto it = req.params.find("id");
  return it == req.params.end() ? std::nullopt : text::ParseDigits(it->second, 1);
}

// The `:uid` of the path ("" when there is none).
inline std::string PathUid(const Request& req) {
  auto it = req.params.find("uid");
  return it == req.params.end() ? "" : it->second;
}

}  // namespace rendezvous::bookings
