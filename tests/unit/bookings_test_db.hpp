// Test helper of the bookings tests that run against MariaDB: the host's pool over a scratch
// database with the outbox and bookings migrations applied.
#pragma once

#include <memory>

#include <prometheus/registry.h>

#include "booking_migrations.hpp"
#include "scratch_db.hpp"
#include "storage/migrator.hpp"
#include "storage/mysql_database.hpp"
#include "storage/outbox_service.hpp"
#include "storage_test_util.hpp"

namespace rendezvous::testing {

// Eight connections over `scratch`, its metrics in `registry` (both must outlive the pool).
inline std::unique_ptr<core::MysqlDatabase> OpenBookingsDatabase(const ScratchDatabase& scratch,
                                                                 prometheus::Registry& registry) {
  auto db = std::make_unique<core::MysqlDatabase>(OptionsFor(scratch, 8), registry, QuietLogger());
  core::Migrator m(*db, QuietLogger());
  m.Add("outbox", core::OutboxService::Migrations());
  m.Add("bookings", bookings::BookingMigrations());
  m.Apply();
  return db;
}

}  // namespace rendezvous::testing
