// The owner's operations on schedules (DESIGN §9), each change in one transaction, and the rules
// about the default: a user's first schedule becomes the default; isDefault true on create or
// patch makes that schedule the default and clears the others; the default cannot be turned off
// (another one is made the default instead); deleting the default makes the oldest remaining one
// the default. Used by the schedule routes. Thread-safe (each call borrows its own connection).
// Calls may throw DatabaseUnavailable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"
#include "rendezvous/user_extension.hpp"
#include "schedule.hpp"

namespace rendezvous::bookings {

constexpr int kMaxSchedulesPerUser = 100;

// Also the user's "defaultScheduleId" of /v2/me (a UserExtension the host takes): its value,
// PATCH /v2/me {defaultScheduleId}, and a new user made with the implicit default stored.
class ScheduleService final : public UserExtension {
 public:
  explicit ScheduleService(Database& db);

  // The id of the owner's stored default; nullopt while the user has none (the implicit default).
  std::optional<int64_t> DefaultScheduleId(int64_t user_id);
  // Makes the user's schedule the default, on the caller's transaction, with the owner's schedules
  // locked as for any other change of the default. NotFound when the user has no such schedule.
  Status MakeDefault(DbConnection& tx, int64_t user_id, int64_t schedule_id);
  // A new user's default, ImplicitDefaultSchedule(user) stored, on the transaction that creates
  // the user; nothing when the user has a default already.
  Status CreateDefault(DbConnection& tx, const User& user);

  // UserExtension: the field "defaultScheduleId" (null while the user has no stored default).
  std::vector<std::string> Fields() const override;
  void AddFields(const User& user, Json& user_json) override;
  Status CheckChange(const Json& fields) override;
  Status ApplyChange(DbConnection& tx, int64_t user_id, const Json& fields) override;
  Status UserCreated(DbConnection& tx, const User& user) override { return CreateDefault(tx, user); }

  // The owner's stored schedules, oldest first.
  Json List(int64_t owner_id);
  // NotFound for another user's or an unknown id.
  Result<Json> Get(int64_t owner_id, int64_t id);
  // The stored default, else the implicit one (id null).
  Json GetDefault(const User& owner);
  // Conflict at kMaxSchedulesPerUser.
  Result<Json> Create(const Schedule& schedule);
  // `patch` must have passed ApplySchedulePatch on a scratch schedule already. Invalid
  // ("isDefault") for isDefault false on the default.
  Result<Json> Update(int64_t owner_id, int64_t id, const Json& patch);
  // Conflict while event types name the schedule. Answers the deleted schedule.
  Result<Json> Delete(int64_t owner_id, int64_t id);

 private:
  Database& db_;
};

}  // namespace rendezvous::bookings
