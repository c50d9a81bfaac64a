// Schedules against a real MariaDB: the schedule an event type uses (named, the stored default,
// the implicit one, and the fallbacks), rows read back as written, and one default per user
// however creates and default switches race.
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "bookings_test_db.hpp"
#include "schedule_rows.hpp"
#include "schedule_service.hpp"
#include "storage/mysql_database.hpp"
#include "storage/outbox_service.hpp"
#include "storage_test_util.hpp"

namespace rendezvous::testing {
using bookings::Json;
namespace {

using bookings::Schedule;
using bookings::ScheduleService;

class BookingsScheduleDb : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = OpenBookingsDatabase(scratch_, registry_);
    service_ = std::make_unique<ScheduleService>(*db_);
    owner_.id = 1;
    owner_.time_zone = "Asia/Tokyo";
    other_.id = 2;
  }

  // Creates a schedule of `user` from a POST body; answers its id.
  int64_t Create(const User& user, const Json& body) {
    Result<Schedule> parsed = bookings::ParseScheduleCreate(body, user);
    EXPECT_TRUE(parsed.ok()) << parsed.status().message();
    Result<Json> created = service_->Create(*parsed);
    EXPECT_TRUE(created.ok()) << created.status().message();
    return created.ok() ? (*created)["id"].get<int64_t>() : 0;
  }

  Schedule For(std::optional<int64_t> schedule_id) {
    return db_->Run(
        [&](DbConnection& conn) { return bookings::ScheduleForEventType(conn, owner_, schedule_id); });
  }

  int64_t Count(const std::string& sql) const { return std::stoll("0" + scratch_.QueryValue(sql)); }

  ScratchDatabase scratch_;
  prometheus::Registry registry_;
  std::unique_ptr<core::MysqlDatabase> db_;
  std::unique_ptr<ScheduleService> service_;
  User owner_;
  User other_;
};

TEST_F(BookingsScheduleDb, TheScheduleAnEventTypeUses) {
  // Nothing stored: the implicit default in the owner's zone.
  Schedule implicit = For(std::nullopt);
  EXPECT_FALSE(implicit.id.has_value());
  EXPECT_EQ(implicit.time_zone, "Asia/Tokyo");
  EXPECT_EQ(bookings::ScheduleJson(implicit),
            bookings::ScheduleJson(bookings::ImplicitDefaultSchedule(owner_)));
  EXPECT_FALSE(For(12345).id.has_value()) << "an unknown id falls back";

  const int64_t first = Create(owner_, Json::parse(R"({"name": "First", "timeZone": "Europe/Berlin",
      "availability": [{"days": ["Sunday"], "startTime": "10:00", "endTime": "24:00"}],
      "overrides": [{"date": "2026-03-29", "startTime": "12:00", "endTime": "12:00"}]})"));
  const int64_t second = Create(owner_, Json{{"name", "Second"}});
  const int64_t theirs = Create(other_, Json{{"name", "Theirs"}});

  Schedule by_default = For(std::nullopt);
  EXPECT_EQ(by_default.id, first);
  EXPECT_TRUE(by_default.is_default);
  EXPECT_EQ(by_default.owner_id, 1);
  EXPECT_EQ(by_default.name, "First");
  EXPECT_EQ(by_default.time_zone, "Europe/Berlin");
  ASSERT_EQ(by_default.availability.size(), 1u);
  EXPECT_EQ(by_default.availability[0].days, std::vector<unsigned>{7});
  EXPECT_EQ(by_default.availability[0].start_minute, 600);
  EXPECT_EQ(by_default.availability[0].end_minute, 1440);
  ASSERT_EQ(by_default.overrides.size(), 1u);
  EXPECT_EQ(by_default.overrides[0].date, (time::CivilDate{2026, 3, 29}));
  // The stored schedule's working time, as slots will see it: that Sunday is overridden away.
  EXPECT_TRUE(bookings::WorkingIntervals(by_default, *time::ParseIso("2026-03-29T00:00:00Z"),
                                         *time::ParseIso("2026-03-30T00:00:00Z"))
                  .empty());

  EXPECT_EQ(For(second).id, second);
  EXPECT_EQ(For(second).name, "Second");
  EXPECT_EQ(For(second).time_zone, "Asia/Tokyo");
  EXPECT_FALSE(For(second).is_default);
  EXPECT_EQ(For(theirs).id, first) << "another owner's schedule is never used";
  scratch_.Exec("DELETE FROM schedules WHERE id = " + std::to_string(second));
  EXPECT_EQ(For(second).id, first) << "a vanished schedule falls back to the default";
}

// The schedules as the host's /v2/me sees them (UserExtension): the user's defaultScheduleId, its
// change in the host's transaction, and a new user's default.
TEST_F(BookingsScheduleDb, TheDefaultScheduleIdOfAUser) {
  UserExtension& extension = *service_;
  EXPECT_EQ(extension.Fields(), std::vector<std::string>{"defaultScheduleId"});
  const auto field_of = [&](const User& user) {
    Json me = Json::object();
    extension.AddFields(user, me);
    return me;
  };
  EXPECT_EQ(field_of(owner_), (Json{{"defaultScheduleId", nullptr}})) << "nothing stored yet";

  const Json body = Json::parse(R"({"name": "A", "timeZone": "UTC",
      "availability": [{"days": ["Monday"], "startTime": "09:00", "endTime": "10:00"}]})");
  const int64_t first = Create(owner_, body);
  const int64_t second = Create(owner_, body);
  const int64_t foreign = Create(other_, body);
  EXPECT_EQ(field_of(owner_)["defaultScheduleId"], first) << "the first schedule is the default";

  for (const Json& bad : {Json(0), Json(-3), Json(1.5), Json("42"), Json(nullptr), Json(UINT64_MAX)}) {
    const Status checked = extension.CheckChange(Json{{"defaultScheduleId", bad}});
    EXPECT_EQ(checked.code(), ErrorCode::kInvalid) << bad.dump();
    EXPECT_EQ(checked.field(), "defaultScheduleId") << bad.dump();
  }
  EXPECT_TRUE(extension.CheckChange(Json{{"defaultScheduleId", second}}).ok());

  const auto apply = [&](int64_t schedule_id) {
    return db_->Transaction([&](DbConnection& tx) {
      return extension.ApplyChange(tx, owner_.id, Json{{"defaultScheduleId", schedule_id}});
    });
  };
  const Status not_yours = apply(foreign);
  EXPECT_EQ(not_yours.code(), ErrorCode::kInvalid);
  EXPECT_EQ(not_yours.field(), "defaultScheduleId");
  EXPECT_EQ(field_of(owner_)["defaultScheduleId"], first);
  EXPECT_EQ(field_of(other_)["defaultScheduleId"], foreign);
  ASSERT_TRUE(apply(second).ok());
  EXPECT_EQ(field_of(owner_)["defaultScheduleId"], second);

  // A new user's rows: the implicit default stored, once.
  User created;
  created.id = 3;
  created.time_zone = "Europe/Paris";
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(db_->Transaction([&](DbConnection& tx) { return extension.UserCreated(tx, created); }).ok());
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules WHERE owner_id = 3"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules WHERE default_owner_id = 3"), 1);
  EXPECT_FALSE(field_of(created)["defaultScheduleId"].is_null());
}

TEST_F(BookingsScheduleDb, RacingFirstCreatesLeaveOneDefault) {
  constexpr int kThreads = 6;
  std::atomic<int> created{0};
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Result<Schedule> s = bookings::ParseScheduleCreate(Json{{"name", "S" + std::to_string(t)}}, owner_);
      Result<Json> out = service_->Create(*s);
      if (out.ok()) {
        ++created;
      } else {
        EXPECT_EQ(out.status().code(), ErrorCode::kConflict) << out.status().message();
        ++conflicts;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(created + conflicts, kThreads);
  EXPECT_GE(created.load(), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules WHERE owner_id = 1"), created.load());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules WHERE owner_id = 1 AND default_owner_id IS NOT NULL"), 1);
}

TEST_F(BookingsScheduleDb, RacingDefaultSwitchesLeaveOneDefault) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Create(owner_, Json{{"name", "S" + std::to_string(i)}}));
  std::vector<std::thread> threads;
  for (int64_t id : ids) {
    threads.emplace_back([&, id] {
      for (int round = 0; round < 10; ++round) {
        Result<Json> out = service_->Update(1, id, Json{{"isDefault", true}});
        if (!out.ok()) {
          EXPECT_EQ(out.status().code(), ErrorCode::kConflict) << out.status().message();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules WHERE owner_id = 1 AND default_owner_id IS NOT NULL"), 1);
  // Deleting the default passes it on: still exactly one.
  const Json def = service_->GetDefault(owner_);
  ASSERT_TRUE(def["id"].is_number()) << def.dump();
  ASSERT_TRUE(service_->Delete(1, def["id"].get<int64_t>()).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules WHERE owner_id = 1 AND default_owner_id IS NOT NULL"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules WHERE owner_id = 1"), 4);
}

}  // namespace
}  // namespace rendezvous::testing
