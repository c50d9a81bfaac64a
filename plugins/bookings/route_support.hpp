// What the bookings plugin's route tables share: the credentials they take, the answer of a
// service call, and the path parameters. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "field_checks.hpp"
#include "rendezvous/http.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::bookings {

// Owner routes take API keys and OAuth tokens (managed-user tokens are 401).
constexpr unsigned kOwnerCredentials = kApiKey | kOAuthToken;

// The service's result as the answer: `success_status` with the data, else the status's error.
inline Response Answer(const Result<Json>& result, int success_status = 200) {
  if (!result.ok()) return Response::FromStatus(result.status());
  return Response::Success(*result, success_status);
}

// The numeric `:id` of the path; nullopt (answered 404) when it is not a positive integer.
inline std::optional<int64_t> PathId(const Request& req) {
  auto it = req.params.find("id");
  return it == req.params.end() ? std::nullopt : ParsePositiveId(it->second);
}

// The `:uid` of the path ("" when there is none).
inline std::string PathUid(const Request& req) {
  auto it = req.params.find("uid");
  return it == req.params.end() ? "" : it->second;
}

}  // namespace rendezvous::bookings
