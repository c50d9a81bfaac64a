// An upgrade from the release before Cal.com compatibility, on a copy of real data: a database at
// that release's schema (built by that release's migrations, which are this server's migrations
// up to the versions below) is filled as that release wrote its rows — users whose e-mails'
// local parts collide, API keys, OAuth clients with secrets and grants, schedules, event types
// with schedules and booking limits, bookings in every state with guests and a reschedule,
// references, host locks, webhooks of both levels — and the real binary's `migrate` then applies
// the rest. Every user gets a unique username and exactly one default schedule (the implicit
// default's hours for those who had none, the stored one kept for those who had one); event
// types, bookings and every other row are unchanged; the server serves the migrated data, and a
// user made after the upgrade gets the same (the next free username, a default schedule made with
// the user); migrating again, or rerunning the default-schedule migration after a failure, changes
// nothing.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "booking_migrations.hpp"
#include "calendar_migrations.hpp"
#include "http_client.hpp"
#include "identity/migrations.hpp"
#include "oauth_migrations.hpp"
#include "schedule.hpp"
#include "scratch_db.hpp"
#include "storage/migrator.hpp"
#include "storage/mysql_database.hpp"
#include "storage/outbox_service.hpp"
#include "storage_test_util.hpp"
#include "test_server.hpp"
#include "webhook_migrations.hpp"

namespace rendezvous::testing {
namespace {

using nlohmann::json;

// The last version of each owner in the release before Cal.com compatibility (main at 079c1a9).
const std::map<std::string, int> kPreviousRelease = {{"outbox", 2},   {"identity", 2}, {"bookings", 6},
                                                     {"calendar", 4}, {"oauth", 6},    {"webhooks", 11}};

std::vector<Migration> UpTo(std::vector<Migration> all, int last) {
  std::erase_if(all, [&](const Migration& m) { return m.version > last; });
  return all;
}

void MigrateToPreviousRelease(const ScratchDatabase& scratch) {
  prometheus::Registry registry;
  core::MysqlDatabase db(OptionsFor(scratch, 1), registry, QuietLogger());
  core::Migrator m(db, QuietLogger());
  const std::vector<std::pair<std::string, std::vector<Migration>>> owners = {
      {"outbox", core::OutboxService::Migrations()}, {"identity", core::IdentityMigrations()},
      {"oauth", oauth::OAuthMigrations()},           {"bookings", bookings::BookingMigrations()},
      {"calendar", calendar::CalendarMigrations()},  {"webhooks", webhooks::WebhookMigrations()}};
  for (const auto& [owner, migrations] : owners) {
    const std::vector<Migration> old = UpTo(migrations, kPreviousRelease.at(owner));
    ASSERT_EQ(old.size(), static_cast<size_t>(kPreviousRelease.at(owner))) << owner;
    m.Add(owner, old);
  }
  m.Apply();
}

// 4 + 43 characters, as `admin api-key create` makes them.
std::string Key(const std::string& who) {
  return "rdv_" + who + std::string(43 - who.size(), 'k');
}

const char* kNow = "'2026-11-02 08:00:00.000'";

// The rows the previous release would have written (its columns only).
void FillAsThePreviousReleaseWrote(const ScratchDatabase& db) {
  const std::string t = kNow;
  db.Exec(
      "INSERT INTO users (id, email, name, time_zone, week_start, password_hash, is_admin, created_at, "
      "updated_at)"
      " VALUES"
      " (1, 'ann@example.com', 'Ann Archer', 'Europe/Berlin', 'Monday', NULL, 1, '2025-01-05 "
      "10:00:00.000', " +
      t +
      "),"
      " (2, 'ann@example.org', 'Ann Other', 'America/New_York', 'Monday', NULL, 0, '2025-02-01 "
      "10:00:00.000', " +
      t +
      "),"
      " (3, 'ann1@example.com', 'Ann One', 'UTC', 'Monday', NULL, 0, '2025-03-01 10:00:00.000', " +
      t +
      "),"
      " (4, 'ann.lee+cal@example.com', 'Ann Lee', 'Asia/Tokyo', 'Sunday', NULL, 0, '2025-04-01 "
      "10:00:00.000', " +
      t +
      "),"
      " (5, 'bob@example.com', 'Bob Builder', 'Europe/London', 'Monday', NULL, 0, '2025-05-01 "
      "10:00:00.000', " +
      t +
      "),"
      " (6, '+@example.net', 'Plus Only', 'Australia/Sydney', 'Saturday', NULL, 0, '2025-06-01 "
      "10:00:00.000', " +
      t + ")");
  db.Exec(
      "INSERT INTO api_keys (user_id, name, key_hash, hint, created_at, last_used_at, revoked_at) VALUES"
      " (1, 'default', SHA2('" +
      Key("ann") + "', 256), 'kkkk', " + t + ", " + t +
      ", NULL),"
      " (1, 'old', SHA2('" +
      Key("annold") + "', 256), 'kkkk', '2025-01-06 00:00:00', NULL, " + t +
      "),"
      " (2, 'default', SHA2('" +
      Key("ann2") + "', 256), 'kkkk', " + t +
      ", NULL, NULL),"
      " (5, 'ci', SHA2('" +
      Key("bob") + "', 256), 'kkkk', " + t + ", NULL, NULL)");
  db.Exec(
      "INSERT INTO oauth_clients (client_id, owner_id, kind, state, review_reason, name, logo, website, "
      "purpose,"
      " redirect_uris, scopes, created_at, updated_at, require_par) VALUES"
      " ('c_upgrade_approved', 1, 'confidential', 'approved', '', 'Ann''s CRM', '', "
      "'https://crm.example.com',"
      " 'Books calls', '[\"https://crm.example.com/cb\"]', '[\"BOOKING_READ\",\"PROFILE_READ\"]', " +
      t + ", " + t +
      ", 0),"
      " ('c_upgrade_pending', 5, 'public', 'pending', '', 'Bob''s app', '', '', 'Testing',"
      " '[\"http://127.0.0.1:9999/cb\"]', '[\"PROFILE_READ\"]', " +
      t + ", " + t + ", 1)");
  db.Exec(
      "INSERT INTO oauth_client_secrets (client_id, secret_hash, hint, created_at, revoked_at) VALUES"
      " ('c_upgrade_approved', SHA2('secret-one', 256), 'e-one', " +
      t + ", NULL), ('c_upgrade_approved', SHA2('secret-old', 256), 'e-old', '2025-01-01 00:00:00', " + t +
      ")");
  db.Exec(
      "INSERT INTO oauth_grants (client_id, user_id, scopes, all_scopes, kind, created_at, revoked_at) VALUES"
      " ('c_upgrade_approved', 2, '[\"BOOKING_READ\"]', 0, 'oauth', " +
      t + ", NULL)");

  // Bob stored schedules: his default (weekends) and evening hours that one event type names.
  db.Exec(
      "INSERT INTO schedules (id, owner_id, name, time_zone, default_owner_id, availability, overrides, "
      "created_at,"
      " updated_at) VALUES"
      " (1, 5, 'Weekends', 'Europe/London', 5,"
      " '[{\"days\":[\"Saturday\",\"Sunday\"],\"endTime\":\"14:00\",\"startTime\":\"10:00\"}]',"
      " '[{\"date\":\"2031-12-25\",\"endTime\":\"00:00\",\"startTime\":\"00:00\"}]', " +
      t + ", " + t +
      "),"
      " (2, 5, 'Evenings', 'Europe/London', NULL,"
      " '[{\"days\":[\"Monday\",\"Wednesday\"],\"endTime\":\"21:00\",\"startTime\":\"18:00\"}]', '[]', " +
      t + ", " + t + ")");
  db.Exec(
      "INSERT INTO event_types (id, owner_id, title, slug, length_minutes, description, locations,"
      " requires_confirmation, minimum_booking_notice, before_event_buffer, after_event_buffer, "
      "slot_interval,"
      " schedule_id, limit_day, limit_week, limit_month, limit_year, created_at, updated_at) VALUES"
      " (1, 1, 'Intro', 'intro', 30, 'A first call', '[]', 0, 60, 0, 10, NULL, NULL, 3, 10, NULL, NULL, " +
      t + ", " + t +
      "),"
      " (2, 2, 'Consultation', 'consultation', 45, '',"
      " '[{\"address\":\"1 Main St\",\"public\":true,\"type\":\"address\"}]', 1, 0, 5, 5, 15, NULL, NULL, "
      "NULL,"
      " 20, 100, " +
      t + ", " + t +
      "),"
      " (3, 5, 'Review', 'review', 60, 'Evening review', "
      "'[{\"integration\":\"google-meet\",\"type\":\"integration\"}]',"
      " 0, 0, 0, 0, NULL, 2, NULL, NULL, NULL, NULL, " +
      t + ", " + t +
      "),"
      " (4, 5, 'Weekend chat', 'weekend-chat', 20, '', '[]', 0, 0, 0, 0, NULL, NULL, 1, NULL, NULL, NULL, " +
      t + ", " + t + ")");
  // Bookings in every state, a reschedule (the old one cancelled, pointing at the new one) and guests.
  const std::string cols =
      "INSERT INTO bookings (id, uid, event_type_id, host_id, title, description, status, start_at, end_at, "
      "duration,"
      " location, metadata, cancellation_reason, rescheduled_from_uid, rescheduled_to_uid, host_absent,"
      " emit_completion, created_at, updated_at) VALUES ";
  db.Exec(cols +
          " (1, 'bk-accepted', 1, 1, 'Intro between Ann Archer and Carl', 'A first call', 'accepted',"
          " '2031-03-03 09:00:00', '2031-03-03 09:30:00', 30, NULL, '{\"crm\":\"42\"}', NULL, NULL, NULL, 0, "
          "1, " +
          t + ", " + t +
          "),"
          " (2, 'bk-pending', 2, 2, 'Consultation between Ann Other and Dora', '', 'pending',"
          " '2031-03-04 15:00:00', '2031-03-04 15:45:00', 45, '1 Main St', '{}', NULL, NULL, NULL, 0, 1, " +
          t + ", " + t +
          "),"
          " (3, 'bk-cancelled', 1, 1, 'Intro between Ann Archer and Eve', 'A first call', 'cancelled',"
          " '2031-03-05 09:00:00', '2031-03-05 09:30:00', 30, NULL, '{}', 'Ill', NULL, NULL, 0, 1, " +
          t + ", " + t +
          "),"
          " (4, 'bk-rejected', 2, 2, 'Consultation between Ann Other and Finn', '', 'rejected',"
          " '2031-03-06 15:00:00', '2031-03-06 15:45:00', 45, '1 Main St', '{}', 'Fully booked', NULL, NULL, "
          "0, 1, " +
          t + ", " + t +
          "),"
          " (5, 'bk-completed', 1, 1, 'Intro between Ann Archer and Gus', 'A first call', 'completed',"
          " '2025-06-02 09:00:00', '2025-06-02 09:30:00', 30, NULL, '{}', NULL, NULL, NULL, 1, 0, " +
          t + ", " + t +
          "),"
          " (6, 'bk-moved-from', 3, 5, 'Review between Bob Builder and Hal', 'Evening review', 'cancelled',"
          " '2031-03-03 18:00:00', '2031-03-03 19:00:00', 60, 'integrations:google:meet', '{}', NULL, NULL,"
          " 'bk-moved-to', 0, 1, " +
          t + ", " + t +
          "),"
          " (7, 'bk-moved-to', 3, 5, 'Review between Bob Builder and Hal', 'Evening review', 'accepted',"
          " '2031-03-05 18:00:00', '2031-03-05 19:00:00', 60, 'integrations:google:meet', '{}', NULL, "
          "'bk-moved-from',"
          " NULL, 0, 1, " +
          t + ", " + t + ")");
  db.Exec(
      "INSERT INTO booking_attendees (booking_id, position, name, email, time_zone, absent) VALUES"
      " (1, 0, 'Carl', 'carl@example.net', 'Europe/Paris', 0), (1, 1, '', 'guest@example.net', "
      "'Europe/Paris', 0),"
      " (2, 0, 'Dora', 'dora@example.net', 'UTC', 0), (3, 0, 'Eve', 'eve@example.net', 'UTC', 0),"
      " (4, 0, 'Finn', 'finn@example.net', 'UTC', 0), (5, 0, 'Gus', 'gus@example.net', 'UTC', 1),"
      " (6, 0, 'Hal', 'hal@example.net', 'UTC', 0), (7, 0, 'Hal', 'hal@example.net', 'UTC', 0)");
  db.Exec(
      "INSERT INTO booking_host_locks (host_id, changes, longest_ms) VALUES (1, 3, 1800000), (2, 2, 2700000),"
      " (5, 2, 3600000)");
  db.Exec(
      "INSERT INTO booking_references (booking_id, type, event_uid, calendar_id, created_at) VALUES"
      " (7, 'google_calendar', 'rdvevent7', 'bob@example.com', " +
      t + ")");
  db.Exec(
      "INSERT INTO webhooks (user_id, event_type_id, subscriber_url, url_hash, active, triggers, "
      "payload_template,"
      " secret_encrypted, created_at, updated_at) VALUES"
      " (1, NULL, 'https://hooks.example.com/ann', SHA2('https://hooks.example.com/ann', 256), 1,"
      " '[\"BOOKING_CREATED\",\"BOOKING_CANCELLED\"]', NULL, NULL, " +
      t + ", " + t +
      "),"
      " (5, 3, 'https://hooks.example.com/review', SHA2('https://hooks.example.com/review', 256), 0,"
      " '[\"BOOKING_RESCHEDULED\"]', '{\"uid\":\"{{uid}}\"}', NULL, " +
      t + ", " + t + ")");
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size() && !text.empty()) {
    const size_t comma = text.find(',', at);
    out.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

std::vector<std::string> Tables(const ScratchDatabase& db) {
  return Split(
      db.QueryValue("SELECT GROUP_CONCAT(table_name ORDER BY table_name) FROM information_schema.tables"
                    " WHERE table_schema = DATABASE()"));
}

std::string Columns(const ScratchDatabase& db, const std::string& table) {
  return db.QueryValue(
      "SELECT GROUP_CONCAT(CONCAT('QUOTE(`', column_name, '`)') ORDER BY ordinal_position)"
      " FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = '" +
      table + "'");
}

// The table's rows in `columns` (QUOTE(...) expressions): their count and a digest independent of
// their order.
std::string Digest(const ScratchDatabase& db, const std::string& table, const std::string& columns) {
  return db.QueryValue("SELECT CONCAT(COUNT(*), ' ', COALESCE(MD5(GROUP_CONCAT(MD5(CONCAT_WS('|', " +
                       columns + ")) ORDER BY MD5(CONCAT_WS('|', " + columns + ")))), '-')) FROM `" + table +
                       "`");
}

// Every table's rows in every column (schema_migrations' times aside: nothing is applied twice).
std::map<std::string, std::string> Everything(const ScratchDatabase& db) {
  std::map<std::string, std::string> out;
  for (const std::string& table : Tables(db)) out[table] = Digest(db, table, Columns(db, table));
  out["(schema)"] = db.QueryValue(
      "SELECT MD5(GROUP_CONCAT(CONCAT_WS(' ', table_name, column_name, column_type, is_nullable)"
      " ORDER BY table_name, ordinal_position)) FROM information_schema.columns WHERE table_schema = "
      "DATABASE()");
  return out;
}

TEST(OperationsUpgrade, ExistingRowsMigrateUsernamesDerivedDefaultSchedulesCreatedTheRestUnchanged) {
  ScratchDatabase db;
  MigrateToPreviousRelease(db);
  ASSERT_EQ(db.QueryValue("SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE()"
                          " AND table_name = 'users' AND column_name = 'username'"),
            "0")
      << "the previous release had no usernames";
  FillAsThePreviousReleaseWrote(db);

  // Every table's rows in the previous release's columns, to compare after the upgrade.
  std::map<std::string, std::pair<std::string, std::string>> before;  // table -> (columns, digest)
  for (const std::string& table : Tables(db)) {
    const std::string columns = Columns(db, table);
    before[table] = {columns, Digest(db, table, columns)};
  }
  ASSERT_EQ(before.at("bookings").second.substr(0, 2), "7 ");

  TestServer server(db.name());
  server.Migrate();

  // Usernames: derived from the e-mails in the order the users were made, unique, none missing.
  EXPECT_EQ(db.QueryValue("SELECT GROUP_CONCAT(CONCAT(id, '=', username) ORDER BY id) FROM users"),
            "1=ann,2=ann1,3=ann11,4=ann.leecal,5=bob,6=user");
  EXPECT_EQ(db.QueryValue("SELECT COUNT(DISTINCT username) FROM users WHERE username IS NOT NULL"), "6");

  // Default schedules: exactly one per user; Bob keeps his, the others get the implicit default.
  EXPECT_EQ(db.QueryValue("SELECT GROUP_CONCAT(CONCAT(u.id, ':', (SELECT COUNT(*) FROM schedules s"
                          " WHERE s.default_owner_id = u.id)) ORDER BY u.id) FROM users u"),
            "1:1,2:1,3:1,4:1,5:1,6:1");
  EXPECT_EQ(db.QueryValue("SELECT id FROM schedules WHERE default_owner_id = 5"), "1");
  EXPECT_EQ(db.QueryValue("SELECT COUNT(*) FROM schedules WHERE owner_id = 5"), "2");
  for (int id : {1, 2, 3, 4, 6}) {
    const std::string where = " FROM schedules WHERE default_owner_id = " + std::to_string(id);
    User user;
    user.id = id;
    user.time_zone = db.QueryValue("SELECT time_zone FROM users WHERE id = " + std::to_string(id));
    const bookings::Schedule implicit = bookings::ImplicitDefaultSchedule(user);
    EXPECT_EQ(db.QueryValue("SELECT CONCAT_WS('|', owner_id, name, time_zone)" + where),
              std::to_string(id) + "|" + implicit.name + "|" + implicit.time_zone);
    EXPECT_EQ(db.QueryValue("SELECT availability" + where),
              bookings::AvailabilityJson(implicit.availability).dump());
    EXPECT_EQ(db.QueryValue("SELECT overrides" + where), "[]");
  }

  // Every row of the previous release is as it was, in the columns it had (users gained theirs).
  for (const auto& [table, seen] : before) {
    if (table == "schedules" || table == "schema_migrations" || table == "schema_migrations_lock") continue;
    EXPECT_EQ(Digest(db, table, seen.first), seen.second) << table;
  }
  EXPECT_EQ(db.QueryValue("SELECT COUNT(*) FROM schedules WHERE id IN (1, 2)"), "2");
  EXPECT_EQ(Digest(db, "schedules", before.at("schedules").first + "").substr(0, 2), "7 ")
      << "Bob's two and five new defaults";

  // The server serves the migrated data with the keys of the previous release.
  std::string why;
  ASSERT_TRUE(server.Start(&why)) << why;
  HttpClient http;
  auto get = [&](const std::string& path, const std::string& key) {
    HttpResult r = http.Request("GET", server.api() + path, "", {"Authorization: Bearer " + key});
    EXPECT_EQ(r.status, 200) << path << " " << r.body;
    return r.Json()["data"];
  };
  for (const auto& [who, id] :
       std::vector<std::pair<std::string, int>>{{"ann", 1}, {"ann2", 2}, {"bob", 5}}) {
    const json me = get("/v2/me", Key(who));
    EXPECT_EQ(me["username"], db.QueryValue("SELECT username FROM users WHERE id = " + std::to_string(id)));
    const json schedule = get("/v2/schedules/default", Key(who));
    EXPECT_EQ(me["defaultScheduleId"], schedule["id"]) << me.dump();
    EXPECT_TRUE(schedule["id"].is_number_integer()) << schedule.dump();
    if (id != 5) {
      User user;
      user.id = id;
      user.time_zone = me["timeZone"].get<std::string>();
      json implicit = bookings::ScheduleJson(bookings::ImplicitDefaultSchedule(user));
      implicit["id"] = schedule["id"];
      EXPECT_EQ(schedule, implicit);
    } else {
      EXPECT_EQ(schedule["name"], "Weekends");
    }
  }
  EXPECT_EQ(
      http.Request("GET", server.api() + "/v2/me", "", {"Authorization: Bearer " + Key("annold")}).status,
      401)
      << "a revoked key stays revoked";
  const json bookings = get("/v2/bookings", Key("ann"));
  std::set<std::string> states;
  for (const json& b : bookings) states.insert(b["status"].get<std::string>());
  EXPECT_EQ(states, (std::set<std::string>{"accepted", "cancelled", "completed"})) << bookings.dump();
  const json accepted = get("/v2/bookings/bk-accepted", Key("ann"));
  EXPECT_EQ(accepted["guests"], json::array({"guest@example.net"}));
  EXPECT_EQ(accepted["metadata"], json({{"crm", "42"}}));
  const json intro = get("/v2/event-types/1", Key("ann"));
  EXPECT_TRUE(intro["scheduleId"].is_null()) << "event types keep naming the owner's default";
  EXPECT_EQ(intro["bookingLimitsCount"], json({{"day", 3}, {"week", 10}}));
  EXPECT_EQ(get("/v2/event-types/3", Key("bob"))["scheduleId"], 2);
  EXPECT_EQ(get("/v2/bookings/bk-moved-to", Key("bob"))["rescheduledFromUid"], "bk-moved-from");
  EXPECT_EQ(get("/v2/webhooks", Key("ann")).size(), 1u);
  // A user made after the upgrade continues both rules: the next free username, a default made.
  const int64_t newcomer = server.CreateUser("ann@example.net", "Ann Newcomer");
  EXPECT_EQ(db.QueryValue("SELECT username FROM users WHERE id = " + std::to_string(newcomer)), "ann2");
  EXPECT_EQ(
      db.QueryValue(
          "SELECT CONCAT_WS('|', name, time_zone, availability) FROM schedules WHERE default_owner_id = " +
          std::to_string(newcomer)),
      db.QueryValue(
          "SELECT CONCAT_WS('|', name, time_zone, availability) FROM schedules WHERE default_owner_id = 3"));
  EXPECT_EQ(server.Stop(), 0);

  // Migrating again changes nothing; nor does the default-schedule migration run again (as after
  // a failure part way, which leaves it unrecorded).
  const std::map<std::string, std::string> migrated = Everything(db);
  CliResult again = server.Cli({"migrate"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.Json()["applied"], json::array()) << again.out;
  EXPECT_EQ(Everything(db), migrated);
  db.Exec("DELETE FROM schema_migrations WHERE owner = 'bookings' AND version = 9");
  CliResult rerun = server.Cli({"migrate"});
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  EXPECT_EQ(rerun.Json()["applied"].size(), 1u) << rerun.out;
  std::map<std::string, std::string> after = Everything(db);
  after.erase("schema_migrations");
  std::map<std::string, std::string> expected = migrated;
  expected.erase("schema_migrations");
  EXPECT_EQ(after, expected);
}

}  // namespace
}  // namespace rendezvous::testing
