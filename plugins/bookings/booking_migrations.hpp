// The bookings plugin's schema (migration owner "bookings"), every version in one list: event
// types, bookings and their attendees, the public flow's locks, idempotency keys and references,
// schedules, and the busy-time columns and indexes. Versions and SQL already applied are never
// edited; a change is a new version at the end.
#pragma once

#include <vector>

#include "rendezvous/database.hpp"

namespace rendezvous::bookings {

std::vector<Migration> BookingMigrations();

}  // namespace rendezvous::bookings
