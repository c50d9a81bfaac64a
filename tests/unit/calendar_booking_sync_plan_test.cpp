// Booking events -> the Google Calendar write they ask for (docs/calendar.md, "Bookings in Google
// Calendar"), and the event ids Rendezvous chooses.
#include <gtest/gtest.h>

#include "booking_sync_plan.hpp"

namespace rendezvous::calendar {
namespace {

using nlohmann::json;

constexpr time::Millis kNow = 1767225600000;  // 2026-01-01T00:00:00Z

json Envelope(const std::string& status, const std::string& location = "") {
  json booking = {{"uid", "bk1"},
                  {"status", status},
                  {"title", "Intro between Olga and Ann"},
                  {"description", "Agenda"},
                  {"start", "2026-05-04T09:30:00.000Z"},
                  {"end", "2026-05-04T10:00:00.000Z"},
                  {"attendees", {{{"name", "Ann"}, {"email", "ann@example.com"}}, {{"name", ""}, {"email", "g@example.com"}}}},
                  {"organizer", {{"id", 3}, {"timeZone", "Europe/Berlin"}}}};
  if (!location.empty()) booking["location"] = location;
  return {{"triggerEvent", "X"}, {"payload", booking}};
}

TEST(CalendarBookingSyncPlan, AcceptedBookingsAreCreatedPendingOnesAreNot) {
  for (const char* trigger : {"BOOKING_CREATED", "BOOKING_CONFIRMED", "BOOKING_REOPENED"}) {
    auto plan = PlanBookingSync(trigger, Envelope("accepted"), kNow);
    ASSERT_TRUE(plan) << trigger;
    EXPECT_EQ(plan->action, SyncAction::kCreate);
    EXPECT_EQ(plan->booking_uid, "bk1");
    EXPECT_EQ(plan->user_id, 3);
    EXPECT_FALSE(PlanBookingSync(trigger, Envelope("pending"), kNow)) << trigger;
  }
  for (const char* trigger : {"BOOKING_NO_SHOW", "BOOKING_COMPLETED", "SOMETHING_ELSE"})
    EXPECT_FALSE(PlanBookingSync(trigger, Envelope("accepted"), kNow)) << trigger;
  EXPECT_FALSE(PlanBookingSync("BOOKING_CREATED", json::object(), kNow));
}

TEST(CalendarBookingSyncPlan, TheEventCarriesTheBookingAndMeetWhenAskedFor) {
  auto plan = PlanBookingSync("BOOKING_CREATED", Envelope("accepted", kMeetLocation), kNow);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->meet);
  EXPECT_EQ(plan->event["summary"], "Intro between Olga and Ann");
  EXPECT_EQ(plan->event["description"], "Agenda");
  EXPECT_EQ(plan->event["start"], json({{"dateTime", "2026-05-04T09:30:00.000Z"}, {"timeZone", "Europe/Berlin"}}));
  EXPECT_EQ(plan->event["attendees"],
            json::parse(R"([{"email":"ann@example.com","displayName":"Ann"},{"email":"g@example.com"}])"));
  EXPECT_FALSE(plan->event.contains("location"));

  auto address = PlanBookingSync("BOOKING_CREATED", Envelope("accepted", "Main St 1"), kNow);
  ASSERT_TRUE(address);
  EXPECT_FALSE(address->meet);
  EXPECT_EQ(address->event["location"], "Main St 1");
}

TEST(CalendarBookingSyncPlan, RescheduleMovesCancelAndRejectDelete) {
  json moved = Envelope("accepted");
  moved["payload"]["rescheduleUid"] = "old1";
  auto plan = PlanBookingSync("BOOKING_RESCHEDULED", moved, kNow);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->action, SyncAction::kMove);
  EXPECT_EQ(plan->from_uid, "old1");
  EXPECT_EQ(plan->booking_uid, "bk1");

  json pending = Envelope("pending");
  pending["payload"]["rescheduleUid"] = "old1";
  auto off = PlanBookingSync("BOOKING_RESCHEDULED", pending, kNow);
  ASSERT_TRUE(off);
  EXPECT_EQ(off->action, SyncAction::kDelete);
  EXPECT_EQ(off->booking_uid, "old1");

  for (const char* trigger : {"BOOKING_CANCELLED", "BOOKING_REJECTED"}) {
    auto del = PlanBookingSync(trigger, Envelope("cancelled"), kNow);
    ASSERT_TRUE(del) << trigger;
    EXPECT_EQ(del->action, SyncAction::kDelete);
  }
}

TEST(CalendarBookingSyncPlan, PastMeetingsAreNotWritten) {
  EXPECT_FALSE(PlanBookingSync("BOOKING_CREATED", Envelope("accepted"), kNow + 200LL * 86400 * 1000));
  // A delete still is: the event may exist.
  EXPECT_TRUE(PlanBookingSync("BOOKING_CANCELLED", Envelope("cancelled"), kNow + 200LL * 86400 * 1000));
}

TEST(CalendarBookingSyncPlan, EventIdsAreBase32HexStableAndDistinct) {
  const std::string id = GoogleEventIdFor("bk1");
  EXPECT_EQ(id, GoogleEventIdFor("bk1"));
  EXPECT_NE(id, GoogleEventIdFor("bk2"));
  EXPECT_EQ(id.size(), 55u);
  for (char c : id) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'v')) << id;
}

// The host read from an event's text is the one read from its parsed tree.
TEST(CalendarBookingSyncPlan, TheHostReadFromTheTextIsTheParsedTreesHost) {
  const std::vector<std::string> texts = {
      Envelope("accepted").dump(),
      R"({"payload":{"organizer":{"name":"no id"},"hosts":[{"id":8},{"id":9}]}})",
      R"({"payload":{"organizer":{"id":"3"},"hosts":[{"id":"8"}]}})",
      R"({"payload":{"hosts":[[{"id":8}]]},"organizer":{"id":4}})",
      R"({"payload":{"organizer":{"id":3}},"payload":{"organizer":{"id":5}}})",
      R"(["payload"])",
  };
  for (const std::string& text : texts) {
    EXPECT_EQ(BookingEventHostInText(text), BookingEventHost(json::parse(text))) << text;
  }
  EXPECT_EQ(BookingEventHostInText(texts[0]), 3);
  EXPECT_EQ(BookingEventHostInText(texts[1]), 8);
  EXPECT_EQ(BookingEventHostInText(R"({"payload":{"organizer":{"id":3}})"), std::nullopt);  // not well-formed
}

}  // namespace
}  // namespace rendezvous::calendar
