// The bookings plugin's logic classes against a real MariaDB, a suite per class. BookingFlow: the
// completion sweep shared by concurrent sweepers (rows claimed with FOR UPDATE SKIP LOCKED: every
// booking completed and announced exactly once), bounded batches, a change's event committed or
// rolled back with it. HostWrites: a change that throws, one that refuses, one that publishes.
// BookingImport: silent completion of imported history, imported bookings taken out of the slots
// at once. BookingReferenceStore: the references other plugins record and move. EventTypeService:
// ownership, slugs and the guard on event types with bookings; as the other plugins'
// EventTypeDirectory, owners and listeners inside a deletion's transaction.
// Migrations run on rows written at the schema before them (longest booking, event type settings).
#include <algorithm>
#include <atomic>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "booking_flow.hpp"
#include "booking_import.hpp"
#include "booking_reference_store.hpp"
#include "bookings_test_db.hpp"
#include "event_type_service.hpp"
#include "static_users.hpp"
#include "storage/mysql_database.hpp"
#include "storage/outbox_service.hpp"
#include "storage_test_util.hpp"

namespace rendezvous::testing {
namespace {

using bookings::Json;
using time::Millis;

class BookingsDb : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = OpenBookingsDatabase(scratch_, registry_);
    outbox_ = std::make_unique<core::OutboxService>(*db_, registry_, QuietLogger());
    event_types_ = std::make_unique<bookings::EventTypeService>(*db_, users_);
    writes_ = std::make_shared<bookings::HostWrites>(*db_, *outbox_);
    flow_ = std::make_unique<bookings::BookingFlow>(*db_, *outbox_, writes_, users_);
    import_ = std::make_unique<bookings::BookingImport>(users_, writes_);
    references_ = std::make_unique<bookings::BookingReferenceStore>(*db_);
    auto et = event_types_->Create(1, CallFields("call"));
    ASSERT_TRUE(et.ok()) << et.status().message();
    event_type_ = (*et)["id"].get<int64_t>();
  }

  static bookings::EventTypeFields CallFields(const std::string& slug) {
    bookings::EventTypeFields f;
    f.title = "Call";
    f.slug = slug;
    f.length_minutes = 30;
    return f;
  }

  std::string Import(Millis start, bookings::BookingStatus status = bookings::BookingStatus::kAccepted) {
    bookings::ImportRequest r;
    r.user_id = 1;
    r.event_type_id = event_type_;
    r.start = start;
    r.attendee_name = "Ann";
    r.attendee_email = "ann@example.com";
    r.status = status;
    auto out = import_->Import(r);
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? out->value("uid", "") : "";
  }

  int64_t Count(const std::string& sql) const { return std::stoll("0" + scratch_.QueryValue(sql)); }

  ScratchDatabase scratch_;
  prometheus::Registry registry_;
  std::unique_ptr<core::MysqlDatabase> db_;
  std::unique_ptr<core::OutboxService> outbox_;
  StaticUsers users_{{TestUser(1, "Olga Owner", "owner@example.com")}};
  std::unique_ptr<bookings::EventTypeService> event_types_;
  std::shared_ptr<bookings::HostWrites> writes_;
  std::unique_ptr<bookings::BookingFlow> flow_;
  std::unique_ptr<bookings::BookingImport> import_;
  std::unique_ptr<bookings::BookingReferenceStore> references_;
  int64_t event_type_ = 0;
};

// A suite per class, over the same database.
using BookingsFlowDb = BookingsDb;
using BookingsImportDb = BookingsDb;
using BookingsReferencesDb = BookingsDb;
using BookingsEventTypesDb = BookingsDb;
using BookingsHostWritesDb = BookingsDb;

TEST_F(BookingsFlowDb, ConcurrentSweepsCompleteEachBookingOnce) {
  constexpr int kBookings = 240;
  const Millis start = time::Now() + 3600000;  // ends after the import: completion is announced
  for (int i = 0; i < kBookings; ++i) Import(start + i * 1000);
  const Millis later = start + 86400000;
  std::atomic<size_t> total{0};
  std::vector<std::thread> sweepers;
  for (int t = 0; t < 3; ++t) {
    sweepers.emplace_back([&] {
      for (int round = 0; round < 100; ++round) {
        const size_t n = flow_->CompleteEnded(later, 20);
        total += n;
        if (n == 0 && Count("SELECT COUNT(*) FROM bookings WHERE status = 'accepted'") == 0) break;
      }
    });
  }
  for (auto& s : sweepers) s.join();
  EXPECT_EQ(total.load(), static_cast<size_t>(kBookings));
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bookings WHERE status = 'completed'"), kBookings);
  EXPECT_EQ(
      Count("SELECT COUNT(*) FROM outbox_events WHERE topic = 'bookings' AND type = 'BOOKING_COMPLETED'"),
      kBookings);
  EXPECT_EQ(Count("SELECT COUNT(DISTINCT JSON_VALUE(payload, '$.payload.uid')) FROM outbox_events"),
            kBookings);
}

TEST_F(BookingsFlowDb, BatchesAreBoundedAndOnlyEndedAcceptedComplete) {
  const Millis now = time::Now();
  for (int i = 0; i < 5; ++i) Import(now + 3600000);
  Import(now + 3600000, bookings::BookingStatus::kPending);
  Import(now + 3600000, bookings::BookingStatus::kCancelled);
  EXPECT_EQ(flow_->CompleteEnded(now, 10), 0u);  // none has ended yet
  const Millis later = now + 2 * 3600000;
  EXPECT_EQ(flow_->CompleteEnded(later, 3), 3u);
  EXPECT_EQ(flow_->CompleteEnded(later, 3), 2u);
  EXPECT_EQ(flow_->CompleteEnded(later, 3), 0u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bookings WHERE status = 'completed'"), 5);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bookings WHERE status IN ('pending', 'cancelled')"), 2);
}

TEST_F(BookingsImportDb, ImportedHistoryCompletesWithoutAnEvent) {
  Import(time::Now() - 86400000);
  EXPECT_EQ(flow_->CompleteEnded(time::Now(), 10), 1u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bookings WHERE status = 'completed'"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_events"), 0);
}

TEST_F(BookingsFlowDb, ChangeAndEventCommitTogether) {
  const std::string uid = Import(time::Now() + 3600000, bookings::BookingStatus::kPending);
  User host = *users_.FindUser(1);
  auto confirmed = flow_->Confirm(host, uid);
  ASSERT_TRUE(confirmed.ok()) << confirmed.status().message();
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_events WHERE type = 'BOOKING_CONFIRMED'"), 1);
  auto again = flow_->Confirm(host, uid);
  EXPECT_EQ(again.status().code(), ErrorCode::kConflict);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_events"), 1);
  User stranger = host;
  stranger.id = 2;
  EXPECT_EQ(flow_->Decline(stranger, uid, std::nullopt).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(scratch_.QueryValue("SELECT status FROM bookings WHERE uid = '" + uid + "'"), "accepted");
}

// A host's change: one that throws leaves neither its rows nor its event and gives the host's turn
// back; one that answers a refusal still moves the host's version on; an event commits with its
// change.
TEST_F(BookingsHostWritesDb, AThrowingChangeLeavesNothingAndTheNextOneRuns) {
  const std::string et = std::to_string(event_type_);
  EXPECT_THROW(writes_->Change(1,
                               [&](bookings::HostChange& change) -> Status {
                                 change.conn().Exec("UPDATE event_types SET title = 'Changed' WHERE id = ?",
                                                    {event_type_});
                                 change.Publish("BOOKING_CREATED", time::Now(), Json::object());
                                 throw std::runtime_error("refused");
                               }),
               std::runtime_error);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_events"), 0);
  EXPECT_EQ(scratch_.QueryValue("SELECT title FROM event_types WHERE id = " + et), "Call");
  const int64_t before = Count("SELECT changes FROM booking_host_locks WHERE host_id = 1");
  Status refused = writes_->Change(1, [](bookings::HostChange&) { return Status::Conflict("no"); });
  EXPECT_EQ(refused.code(), ErrorCode::kConflict);
  const int64_t after_refusal = Count("SELECT changes FROM booking_host_locks WHERE host_id = 1");
  EXPECT_GT(after_refusal, before);
  const int answer = writes_->Change(1, [&](bookings::HostChange& change) {
    change.conn().Exec("UPDATE event_types SET title = 'Changed' WHERE id = ?", {event_type_});
    change.Publish("BOOKING_CREATED", time::Now(), Json::object());
    return 7;
  });
  EXPECT_EQ(answer, 7);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_events WHERE topic = 'bookings' AND type = 'BOOKING_CREATED'"),
            1);
  EXPECT_EQ(scratch_.QueryValue("SELECT title FROM event_types WHERE id = " + et), "Changed");
  EXPECT_GT(Count("SELECT changes FROM booking_host_locks WHERE host_id = 1"), after_refusal);
}

// The references service other plugins use (as "bookings.references"): records and lists by
// booking uid, refuses unknown bookings and malformed fields, and writes nothing then.
TEST_F(BookingsReferencesDb, ReferencesAreRecordedAndListedByBooking) {
  const std::string uid = Import(time::Now() + 3600000);
  BookingReferences& refs = *references_;
  EXPECT_TRUE(refs.List(uid).empty());
  BookingReference google{"google_calendar", "evt-1", "team@group.calendar.google.com", 0};
  ASSERT_TRUE(refs.Add(uid, google).ok());
  ASSERT_TRUE(refs.Add(uid, BookingReference{"google_calendar", "evt-2", std::nullopt, 0}).ok());
  std::vector<BookingReference> listed = refs.List(uid);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].event_uid, "evt-1");
  EXPECT_EQ(listed[0].calendar_id, "team@group.calendar.google.com");
  EXPECT_GT(listed[0].created_at, 0);
  EXPECT_FALSE(listed[1].calendar_id.has_value());
  EXPECT_EQ(refs.Add("no-such-booking", google).code(), ErrorCode::kNotFound);
  EXPECT_EQ(refs.Add(uid, BookingReference{"", "evt", std::nullopt, 0}).field(), "type");
  EXPECT_EQ(refs.Add(uid, BookingReference{"google_calendar", std::string(1025, 'e'), std::nullopt, 0}).field(),
            "eventUid");
  EXPECT_EQ(refs.Add(uid, BookingReference{"google_calendar", "e", std::string("\xff"), 0}).field(), "calendarId");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM booking_references"), 2);
  EXPECT_TRUE(refs.List("no-such-booking").empty());
}

// A reference handed from a rescheduled booking to its successor: gone from the one, listed once by
// the other, in one transaction; a repeated or racing move changes nothing more; only that type
// and eventUid (compared exactly) move; unknown bookings and bad fields change nothing.
TEST_F(BookingsReferencesDb, AReferenceMovesToAnotherBookingOnceHoweverOftenItIsMoved) {
  const std::string old_uid = Import(time::Now() + 3600000);
  const std::string new_uid = Import(time::Now() + 7200000);
  BookingReferences& refs = *references_;
  const BookingReference event{"google_calendar", "rdvevent", "team@group.calendar.google.com", 0};
  ASSERT_TRUE(refs.Add(old_uid, event).ok());
  ASSERT_TRUE(refs.Add(old_uid, BookingReference{"google_calendar", "RDVEVENT", std::nullopt, 0}).ok());
  ASSERT_TRUE(refs.Add(old_uid, BookingReference{"other_system", "rdvevent", std::nullopt, 0}).ok());

  ASSERT_TRUE(refs.Move(old_uid, new_uid, event).ok());
  std::vector<BookingReference> left = refs.List(old_uid);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].event_uid, "RDVEVENT");
  EXPECT_EQ(left[1].type, "other_system");
  std::vector<BookingReference> moved = refs.List(new_uid);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].type, "google_calendar");
  EXPECT_EQ(moved[0].event_uid, "rdvevent");
  EXPECT_EQ(moved[0].calendar_id, "team@group.calendar.google.com");
  EXPECT_GT(moved[0].created_at, 0);

  // Again: nothing to take, and the successor has it already.
  ASSERT_TRUE(refs.Move(old_uid, new_uid, event).ok());
  EXPECT_EQ(refs.List(old_uid).size(), 2u);
  ASSERT_EQ(refs.List(new_uid).size(), 1u);
  EXPECT_EQ(refs.List(new_uid)[0].created_at, moved[0].created_at);

  EXPECT_EQ(refs.Move("no-such-booking", new_uid, event).code(), ErrorCode::kNotFound);
  EXPECT_EQ(
      refs.Move(old_uid, "no-such-booking", BookingReference{"google_calendar", "RDVEVENT", std::nullopt, 0})
          .code(),
      ErrorCode::kNotFound);
  EXPECT_EQ(refs.Move(old_uid, new_uid, BookingReference{"", "rdvevent", std::nullopt, 0}).field(), "type");
  EXPECT_EQ(refs.Move(old_uid, old_uid, event).field(), "uid");
  EXPECT_EQ(refs.List(old_uid).size(), 2u);
  EXPECT_EQ(refs.List(new_uid).size(), 1u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM booking_references"), 3);
}

TEST_F(BookingsReferencesDb, RacingMovesOfOneReferenceRecordItOnce) {
  const std::string old_uid = Import(time::Now() + 3600000);
  const std::string new_uid = Import(time::Now() + 7200000);
  const BookingReference event{"google_calendar", "rdvrace", "primary", 0};
  ASSERT_TRUE(references_->Add(old_uid, event).ok());
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      if (!references_->Move(old_uid, new_uid, event).ok()) ++failed;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_TRUE(references_->List(old_uid).empty());
  EXPECT_EQ(references_->List(new_uid).size(), 1u);
}

// Every start the slots offer over [from, to), as instants.
std::vector<Millis> SlotStarts(bookings::BookingFlow& flow, int64_t event_type, Millis from, Millis to) {
  bookings::SlotsQuery q;
  q.event_type_id = event_type;
  q.from = from;
  q.to = to;
  Result<Json> slots = flow.Slots(q);
  EXPECT_TRUE(slots.ok()) << slots.status().message();
  std::vector<Millis> out;
  if (!slots.ok()) return out;
  for (const auto& [day, starts] : (*slots)["data"].items()) {
    for (const Json& s : starts) out.push_back(time::ParseIso(s.value("start", "")).value_or(0));
  }
  return out;
}

TEST_F(BookingsImportDb, AnImportedBookingLeavesTheSlotsAtOnce) {
  const Millis from = time::Now() + 86400000;
  const Millis to = from + 7 * 86400000;
  const std::vector<Millis> before = SlotStarts(*flow_, event_type_, from, to);  // fills the cache
  ASSERT_FALSE(before.empty());
  const Millis taken = before.front();
  Import(taken);
  const std::vector<Millis> after = SlotStarts(*flow_, event_type_, from, to);
  EXPECT_EQ(std::count(after.begin(), after.end(), taken), 0);
  EXPECT_EQ(after.size(), before.size() - 1);
  // An event type that is not the user's, an unknown user or a start past 9999: nothing stored.
  bookings::ImportRequest r;
  r.user_id = 1;
  r.event_type_id = event_type_ + 1;
  r.start = taken;
  EXPECT_EQ(import_->Import(r).status().code(), ErrorCode::kNotFound);
  r.event_type_id = event_type_;
  r.user_id = 7;
  EXPECT_EQ(import_->Import(r).status().code(), ErrorCode::kNotFound);
  r.user_id = 1;
  r.start = 253370764800000;
  EXPECT_EQ(import_->Import(r).status().field(), "start");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bookings"), 1);
}

// A conflict check reads only the bookings that can reach the start asked for: those starting
// within the host's longest booking before it. The longest is the longest booking the host ever
// had, not its event types' lengths now: a five-hour booking made before its event type was
// shortened to thirty minutes still blocks its whole time.
TEST_F(BookingsFlowDb, ALongBookingBlocksItsWholeTimeAfterItsEventTypeIsShortened) {
  const Millis from = time::Now() + 86400000;
  const std::vector<Millis> free = SlotStarts(*flow_, event_type_, from, from + 7 * 86400000);
  ASSERT_FALSE(free.empty());
  // A free start with another `hours` later the same working day, from `after` on.
  const auto day_with = [&](double hours, Millis after) {
    return std::find_if(free.begin(), free.end(), [&](Millis s) {
      return s >= after &&
             std::binary_search(free.begin(), free.end(), s + static_cast<Millis>(hours * 3600000));
    });
  };
  const auto first = day_with(4, 0);
  ASSERT_NE(first, free.end());
  const Millis inside = *first + 4 * 3600000;
  scratch_.Exec("UPDATE event_types SET length_minutes = 300 WHERE id = " + std::to_string(event_type_));
  Import(*first);
  scratch_.Exec("UPDATE event_types SET length_minutes = 30 WHERE id = " + std::to_string(event_type_));
  EXPECT_EQ(Count("SELECT longest_ms FROM booking_host_locks WHERE host_id = 1"), 300 * 60000);

  bookings::CreateRequest r;
  r.event_type_id = event_type_;
  r.attendee = {"Bo", "bo@example.com", "UTC", false};
  r.start = inside;
  Result<Json> refused = flow_->Create(r, std::nullopt, "");
  EXPECT_EQ(refused.status().reason(), "slot_unavailable") << "a start inside the five-hour booking";
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bookings WHERE start_ms = " + std::to_string(inside)), 0);

  // A shorter booking leaves the longest as it is; a longer one raises it.
  r.start = free.back();
  ASSERT_TRUE(flow_->Create(r, std::nullopt, "").ok());
  EXPECT_EQ(Count("SELECT longest_ms FROM booking_host_locks WHERE host_id = 1"), 300 * 60000);
  const auto longer_day = day_with(6.5, *first + 2 * 86400000);
  ASSERT_NE(longer_day, free.end());
  scratch_.Exec("UPDATE event_types SET length_minutes = 420 WHERE id = " + std::to_string(event_type_));
  r.start = *longer_day;
  Result<Json> longer = flow_->Create(r, std::nullopt, "");
  ASSERT_TRUE(longer.ok()) << longer.status().message();
  EXPECT_EQ(Count("SELECT longest_ms FROM booking_host_locks WHERE host_id = 1"), 420 * 60000);
}

// Hosts booked before the longest booking was kept get it from their bookings when the
// migration runs.
// A scratch database at the bookings schema before one migration: a test writes rows as that
// schema had them, then runs the rest of the migrations over them.
class BookingsMigrationDb : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::make_unique<core::MysqlDatabase>(OptionsFor(scratch_, 2), registry_, QuietLogger());
  }

  // Applies the bookings migrations before `version` (which must be one of them).
  void MigrateBefore(int version) {
    const std::vector<Migration> all = bookings::BookingMigrations();
    ASSERT_GE(all.size(), static_cast<size_t>(version));
    ASSERT_EQ(all[version - 1].version, version);
    Apply(std::vector<Migration>(all.begin(), all.begin() + version - 1));
  }
  void MigrateAll() { Apply(bookings::BookingMigrations()); }

  // An event type "call" of user 1 written with the columns every schema has; answers its id.
  std::string InsertOldCall() {
    scratch_.Exec(
        "INSERT INTO event_types (owner_id, title, slug, length_minutes, description, locations, created_at,"
        " updated_at) VALUES (1, 'Call', 'call', 30, '', '[]', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
    return scratch_.QueryValue("SELECT id FROM event_types WHERE slug = 'call'");
  }

  ScratchDatabase scratch_;
  prometheus::Registry registry_;
  std::unique_ptr<core::MysqlDatabase> db_;
  StaticUsers users_{{TestUser(1, "Olga Owner", "owner@example.com")}};

 private:
  void Apply(std::vector<Migration> migrations) {
    core::Migrator m(*db_, QuietLogger());
    m.Add("bookings", std::move(migrations));
    m.Apply();
  }
};

TEST_F(BookingsMigrationDb, HostsBookedBeforeGetTheirLongestBooking) {
  ASSERT_NO_FATAL_FAILURE(MigrateBefore(6));
  const std::string id = InsertOldCall();
  for (const char* times :
       {"'2030-01-01 09:00:00', '2030-01-01 09:30:00'", "'2030-01-02 09:00:00', '2030-01-02 11:00:00'"}) {
    scratch_.Exec(
        "INSERT INTO bookings (uid, event_type_id, host_id, title, description, metadata, status, start_at,"
        " end_at, duration, created_at, updated_at) VALUES (UUID(), " +
        id +
        ", 1, 'Call', '', '{}',"
        " 'accepted', " +
        times + ", 30, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
  }
  scratch_.Exec("INSERT INTO booking_host_locks (host_id, changes) VALUES (1, 7)");
  MigrateAll();
  EXPECT_EQ(scratch_.QueryValue(
                "SELECT CONCAT(changes, ' ', longest_ms) FROM booking_host_locks WHERE host_id = 1"),
            "7 7200000");
}

// Event types written before Cal.com's settings existed show Cal.com's defaults once the
// migration has run, and take the settings like new ones.
TEST_F(BookingsMigrationDb, EventTypesWrittenBeforeGetTheDefaults) {
  ASSERT_NO_FATAL_FAILURE(MigrateBefore(7));
  // Two event types as version 6 wrote them, one with booking limits.
  scratch_.Exec(
      "INSERT INTO event_types (owner_id, title, slug, length_minutes, description, locations,"
      " requires_confirmation, minimum_booking_notice, limit_day, created_at, updated_at) VALUES"
      " (1, 'Old call', 'old-call', 20, 'from before', '[]', 1, 30, 4, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)),"
      " (1, 'Other', 'other', 30, '', '[]', 0, 0, NULL, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
  MigrateAll();
  bookings::EventTypeService event_types(*db_, users_);
  const Json list = event_types.List(1);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  for (const Json& et : list) {
    EXPECT_EQ(et["disableGuests"], false);
    EXPECT_EQ(et["lockTimeZoneToggleOnBookingPage"], false);
    EXPECT_EQ(et["forwardParamsSuccessRedirect"], true);
    EXPECT_TRUE(et["successRedirectUrl"].is_null());
    EXPECT_EQ(et["metadata"], Json::object());
    EXPECT_EQ(et["price"], 0);
    EXPECT_EQ(et["currency"], "usd");
    EXPECT_EQ(et["isInstantEvent"], false);
    EXPECT_TRUE(et["recurrence"].is_null());
  }
  EXPECT_EQ(list[0]["title"], "Old call");
  EXPECT_EQ(list[0]["description"], "from before");
  EXPECT_EQ(list[0]["requiresConfirmation"], true);
  EXPECT_EQ(list[0]["minimumBookingNotice"], 30);
  EXPECT_EQ(list[0]["bookingLimitsCount"], Json({{"day", 4}}));
  EXPECT_EQ(list[1]["bookingLimitsCount"], Json::object());
  const int64_t id = list[0]["id"].get<int64_t>();
  Result<Json> patched =
      event_types.Update(1, id, Json{{"metadata", {{"migrated", true}}}, {"disableGuests", true}});
  ASSERT_TRUE(patched.ok()) << patched.status().message();
  Result<Json> got = event_types.Get(1, id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["metadata"], Json({{"migrated", true}}));
  EXPECT_EQ((*got)["disableGuests"], true);
  EXPECT_EQ((*got)["title"], "Old call");
}

TEST_F(BookingsEventTypesDb, OwnedBySlugAndGuardedWhileBooked) {
  EXPECT_EQ(event_types_->List(1).size(), 1u);
  EXPECT_EQ(event_types_->List(2).size(), 0u);
  EXPECT_EQ(event_types_->Create(1, CallFields("call")).status().code(), ErrorCode::kConflict);
  Result<Json> other = event_types_->Create(1, CallFields("other"));
  ASSERT_TRUE(other.ok()) << other.status().message();
  const int64_t other_id = (*other)["id"].get<int64_t>();
  // Another user's event type is not found, whatever the call.
  EXPECT_EQ(event_types_->Get(2, other_id).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(event_types_->Delete(2, other_id).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(event_types_->Update(1, other_id, Json{{"slug", "call"}}).status().code(), ErrorCode::kConflict);
  Result<Json> renamed = event_types_->Update(1, other_id, Json{{"title", "Other call"}});
  ASSERT_TRUE(renamed.ok()) << renamed.status().message();
  EXPECT_EQ(event_types_->Get(1, other_id)->value("title", ""), "Other call");
  EXPECT_EQ(event_types_->Update(1, other_id, Json{{"scheduleId", 999}}).status().field(), "scheduleId");
  // An event type with bookings stays; one without goes.
  Import(time::Now() + 3600000);
  EXPECT_EQ(event_types_->Delete(1, event_type_).status().code(), ErrorCode::kConflict);
  EXPECT_TRUE(event_types_->Delete(1, other_id).ok());
  EXPECT_EQ(event_types_->List(1).size(), 1u);
}

TEST_F(BookingsEventTypesDb, DirectoryNamesOwnersAndRunsListenersInsideTheDeletion) {
  Result<Json> spare = event_types_->Create(1, CallFields("spare"));
  ASSERT_TRUE(spare.ok()) << spare.status().message();
  const int64_t spare_id = (*spare)["id"].get<int64_t>();
  EventTypeDirectory& directory = *event_types_;
  db_->Run([&](DbConnection& conn) {
    EXPECT_EQ(directory.Owner(conn, spare_id, false), std::optional<int64_t>(1));
    EXPECT_EQ(directory.Owner(conn, 999999, false), std::nullopt);
  });
  // A listener writes in the deletion's transaction; one that throws undoes the deletion and
  // what the listeners before it wrote.
  scratch_.Exec("CREATE TABLE deletion_marks (event_type_id BIGINT NOT NULL)");
  bool refuse = true;
  directory.OnDelete([](DbConnection& tx, int64_t id) {
    tx.Exec("INSERT INTO deletion_marks (event_type_id) VALUES (?)", {id});
  });
  directory.OnDelete([&refuse](DbConnection&, int64_t) {
    if (refuse) throw std::runtime_error("refused");
  });
  EXPECT_THROW(event_types_->Delete(1, spare_id), std::runtime_error);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types WHERE id = " + std::to_string(spare_id)), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM deletion_marks"), 0);
  refuse = false;
  ASSERT_TRUE(event_types_->Delete(1, spare_id).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types WHERE id = " + std::to_string(spare_id)), 0);
  EXPECT_EQ(scratch_.QueryValue("SELECT GROUP_CONCAT(event_type_id) FROM deletion_marks"),
            std::to_string(spare_id));
  // Neither a refused deletion (another user's, one with bookings) nor a missing one calls them.
  Import(time::Now() + 3600000);
  EXPECT_EQ(event_types_->Delete(1, event_type_).status().code(), ErrorCode::kConflict);
  EXPECT_EQ(event_types_->Delete(2, event_type_).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM deletion_marks"), 1);
}

// Event types and bookings written before booking questions existed show the default fields and
// the default fields' answers once the migration has run; the event type then takes questions.
TEST_F(BookingsMigrationDb, RowsWrittenBeforeShowTheDefaultFields) {
  ASSERT_NO_FATAL_FAILURE(MigrateBefore(8));
  // An event type and a booking with its attendee as version 7 wrote them.
  const std::string id = InsertOldCall();
  scratch_.Exec(
      "INSERT INTO bookings (uid, event_type_id, host_id, title, description, metadata, status, start_at,"
      " end_at, duration, created_at, updated_at) VALUES ('old-booking', " +
      id +
      ", 1, 'Call', 'Bring slides', '{}', 'accepted', '2030-01-01 09:00:00', '2030-01-01 09:30:00', 30,"
      " UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))");
  scratch_.Exec(
      "INSERT INTO booking_attendees (booking_id, position, name, email, time_zone, absent)"
      " SELECT id, 0, 'Ann Attendee', 'ann@example.com', 'UTC', 0 FROM bookings WHERE uid = 'old-booking'");
  MigrateAll();
  bookings::EventTypeService event_types(*db_, users_);
  const Json list = event_types.List(1);
  ASSERT_EQ(list.size(), 1u) << list.dump();
  ASSERT_EQ(list[0]["bookingFields"].size(), 6u) << list.dump();
  for (const Json& f : list[0]["bookingFields"]) EXPECT_EQ(f["isDefault"], true) << f;
  core::OutboxService outbox(*db_, registry_, QuietLogger());
  bookings::BookingFlow flow(*db_, outbox, std::make_shared<bookings::HostWrites>(*db_, outbox), users_);
  Result<Json> old = flow.GetBooking(TestUser(1, "Olga Owner", "owner@example.com"), "old-booking");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ((*old)["bookingFieldsResponses"], Json::parse(R"({"name":"Ann Attendee","email":"ann@example.com",
                                                              "guests":[],"notes":"Bring slides"})"));
  Result<Json> asked = event_types.Update(
      1, std::stoll(id),
      Json::parse(R"({"bookingFields":[{"type":"text","slug":"company","label":"Company"}]})"));
  ASSERT_TRUE(asked.ok()) << asked.status().message();
  EXPECT_EQ((*asked)["bookingFields"].size(), 7u);
  EXPECT_EQ(
      scratch_.QueryValue("SELECT booking_fields FROM event_types WHERE id = " + id),
      R"([{"disableOnPrefill":false,"hidden":false,"label":"Company","required":false,"slug":"company","type":"text"}])");
}

}  // namespace
}  // namespace rendezvous::testing
