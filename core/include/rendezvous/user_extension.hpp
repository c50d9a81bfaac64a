// A plugin's part of a user's account, which the host's users and /v2/me carry without knowing
// what it is: fields of the user's JSON that the plugin answers and PATCH /v2/me changes, and rows
// the plugin writes with every new user, each on the host's own transaction. A plugin provides
// one with ctx.Provide<UserExtension>("<plugin>.<name>", ...) in its factory; the host takes every
// UserExtension provided after loading the plugins, and drops them before the plugins go.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous {

// Thread-safe. Calls may throw DatabaseUnavailable.
class UserExtension {
 public:
  virtual ~UserExtension() = default;
  // The fields of the user's JSON this part owns, each owned by one part and none of them the
  // host's own (the host refuses such a plugin at start-up).
  virtual std::vector<std::string> Fields() const = 0;
  // Sets its fields in `user_json`, the JSON of `user` as /v2/me answers it.
  virtual void AddFields(const User& user, nlohmann::json& user_json) = 0;
  // Checks the values of a change (`fields`: an object of its fields only, at least one) before
  // anything is written: Invalid naming the field.
  virtual Status CheckChange(const nlohmann::json& fields) = 0;
  // Writes a checked change for the user on the caller's transaction `tx`, which commits or rolls
  // back with the rest of the profile change: Invalid naming the field when a value does not fit
  // this user (the whole change is rolled back then).
  virtual Status ApplyChange(DbConnection& tx, int64_t user_id, const nlohmann::json& fields) = 0;
  // Writes its rows for `user`, being created on the caller's transaction `tx`; an error rolls
  // the creation back.
  virtual Status UserCreated(DbConnection& tx, const User& user) = 0;
};

}  // namespace rendezvous
