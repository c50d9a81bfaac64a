// Booking states and transitions, the title, the JSON shape of DESIGN §9, list filters and the
// owner-facing request bodies.
#include "booking.hpp"

#include <gtest/gtest.h>

namespace rendezvous::bookings {
namespace {

constexpr BookingStatus kAll[] = {BookingStatus::kAccepted, BookingStatus::kPending,
                                  BookingStatus::kCancelled, BookingStatus::kRejected,
                                  BookingStatus::kCompleted};

TEST(BookingsStateMachine, ConfirmAndDeclineOnlyFromPending) {
  for (BookingStatus s : kAll) {
    const bool pending = s == BookingStatus::kPending;
    EXPECT_EQ(!CheckTransition(s, BookingAction::kConfirm, true, true), pending) << StatusName(s);
    EXPECT_EQ(!CheckTransition(s, BookingAction::kDecline, false, false), pending) << StatusName(s);
  }
  EXPECT_EQ(StatusAfter(BookingStatus::kPending, BookingAction::kConfirm), BookingStatus::kAccepted);
  EXPECT_EQ(StatusAfter(BookingStatus::kPending, BookingAction::kDecline), BookingStatus::kRejected);
  auto why = CheckTransition(BookingStatus::kCancelled, BookingAction::kConfirm, false, false);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("cancelled"), std::string::npos);
}

TEST(BookingsStateMachine, MarkAbsentNeedsStartedAcceptedOrCompleted) {
  EXPECT_FALSE(CheckTransition(BookingStatus::kAccepted, BookingAction::kMarkAbsent, true, false));
  EXPECT_FALSE(CheckTransition(BookingStatus::kCompleted, BookingAction::kMarkAbsent, true, true));
  EXPECT_TRUE(CheckTransition(BookingStatus::kAccepted, BookingAction::kMarkAbsent, false, false));
  for (BookingStatus s : {BookingStatus::kPending, BookingStatus::kCancelled, BookingStatus::kRejected}) {
    EXPECT_TRUE(CheckTransition(s, BookingAction::kMarkAbsent, true, true)) << StatusName(s);
  }
  EXPECT_EQ(StatusAfter(BookingStatus::kCompleted, BookingAction::kMarkAbsent), BookingStatus::kCompleted);
}

TEST(BookingsStateMachine, CompleteOnlyAcceptedAndEnded) {
  EXPECT_FALSE(CheckTransition(BookingStatus::kAccepted, BookingAction::kComplete, true, true));
  EXPECT_TRUE(CheckTransition(BookingStatus::kAccepted, BookingAction::kComplete, true, false));
  EXPECT_TRUE(CheckTransition(BookingStatus::kPending, BookingAction::kComplete, true, true));
  EXPECT_STREQ(TriggerFor(BookingAction::kComplete), "BOOKING_COMPLETED");
  EXPECT_STREQ(TriggerFor(BookingAction::kConfirm), "BOOKING_CONFIRMED");
  EXPECT_STREQ(TriggerFor(BookingAction::kDecline), "BOOKING_REJECTED");
  EXPECT_STREQ(TriggerFor(BookingAction::kMarkAbsent), "BOOKING_NO_SHOW");
}

TEST(BookingsStateMachine, StatusNamesRoundTrip) {
  for (BookingStatus s : kAll) EXPECT_EQ(ParseStatus(StatusName(s)), s);
  EXPECT_FALSE(ParseStatus("ACCEPTED").has_value());
}

TEST(BookingsJson, TitleAndShape) {
  EXPECT_EQ(BookingTitle("Intro", "Olga Owner", "Ann Attendee"), "Intro between Olga Owner and Ann Attendee");
  Booking b;
  b.id = 3;
  b.uid = "u1";
  b.event_type_id = 8;
  b.host_id = 5;
  b.title = "t";
  b.status = BookingStatus::kPending;
  b.start = ParseIsoTime("2026-05-04T09:30:00Z").value();
  b.end = b.start + 30 * 60000;
  b.duration = 30;
  b.attendees.push_back({"Ann", "ann@example.com", "Europe/Berlin", true});
  User host;
  host.id = 5;
  host.name = "Olga";
  host.email = "olga@example.com";
  host.time_zone = "UTC";
  Json j = BookingJson(b, host);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  std::vector<std::string> want = {"attendees",
                                   "cancellationReason",
                                   "createdAt",
                                   "description",
                                   "duration",
                                   "end",
                                   "eventTypeId",
                                   "hosts",
                                   "id",
                                   "location",
                                   "metadata",
                                   "rescheduledFromUid",
                                   "rescheduledToUid",
                                   "start",
                                   "status",
                                   "title",
                                   "uid"};
  EXPECT_EQ(keys, want);
  EXPECT_EQ(j["start"], "2026-05-04T09:30:00.000Z");
  EXPECT_EQ(j["end"], "2026-05-04T10:00:00.000Z");
  EXPECT_EQ(j["status"], "pending");
  EXPECT_EQ(
      j["attendees"],
      Json::parse(R"([{"name":"Ann","email":"ann@example.com","timeZone":"Europe/Berlin","absent":true}])"));
  EXPECT_EQ(j["hosts"],
            Json::parse(R"([{"id":5,"name":"Olga","email":"olga@example.com","timeZone":"UTC"}])"));
  EXPECT_TRUE(j["location"].is_null());
  EXPECT_TRUE(j["cancellationReason"].is_null());
  EXPECT_EQ(j["metadata"], Json::object());
  Json e = EventEnvelope("BOOKING_CONFIRMED", 0, j);
  EXPECT_EQ(e["triggerEvent"], "BOOKING_CONFIRMED");
  EXPECT_EQ(e["createdAt"], "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(e["payload"], j);
}

std::multimap<std::string, std::string> Q(
    std::initializer_list<std::pair<const std::string, std::string>> l) {
  return std::multimap<std::string, std::string>(l);
}

TEST(BookingsListQuery, DefaultsAndFilters) {
  ListQuery q;
  ASSERT_FALSE(ParseListQuery({}, q));
  EXPECT_EQ(q.take, 100);
  EXPECT_EQ(q.skip, 0);
  ASSERT_FALSE(ParseListQuery(Q({{"status", "pending, accepted,pending"},
                                 {"afterStart", "2026-01-01T00:00:00Z"},
                                 {"eventTypeId", "7"},
                                 {"take", "250"},
                                 {"skip", "3"},
                                 {"unrelated", "x"}}),
                              q));
  EXPECT_EQ(q.statuses, (std::vector<BookingStatus>{BookingStatus::kPending, BookingStatus::kAccepted}));
  EXPECT_EQ(q.take, 250);
  EXPECT_EQ(q.skip, 3);
  EXPECT_EQ(q.event_type_id, 7);
  EXPECT_TRUE(q.after_start.has_value());
  EXPECT_FALSE(q.before_end.has_value());
  // "+02:00" sent unencoded in a query string arrives as " 02:00".
  ASSERT_FALSE(ParseListQuery(Q({{"beforeEnd", "2026-01-01T12:00:00 02:00"}}), q));
  EXPECT_EQ(q.before_end, ParseIsoTime("2026-01-01T10:00:00Z"));
}

TEST(BookingsListQuery, BadValuesNameTheField) {
  auto field = [](std::multimap<std::string, std::string> m) {
    ListQuery q;
    auto e = ParseListQuery(m, q);
    return e ? e->field : "";
  };
  EXPECT_EQ(field(Q({{"take", "0"}})), "take");
  EXPECT_EQ(field(Q({{"take", "251"}})), "take");
  EXPECT_EQ(field(Q({{"take", "ten"}})), "take");
  EXPECT_EQ(field(Q({{"skip", "-1"}})), "skip");
  EXPECT_EQ(field(Q({{"skip", "1000001"}})), "skip");
  EXPECT_EQ(field(Q({{"status", "upcoming"}})), "status");
  EXPECT_EQ(field(Q({{"status", "accepted,"}})), "status");
  EXPECT_EQ(field(Q({{"afterStart", "yesterday"}})), "afterStart");
  EXPECT_EQ(field(Q({{"beforeEnd", "2026-01-01"}})), "beforeEnd");
  EXPECT_EQ(field(Q({{"eventTypeId", "0"}})), "eventTypeId");
  EXPECT_EQ(field(Q({{"take", "1"}, {"take", "2"}})), "take");
}

TEST(BookingsBodies, ConfirmDeclineMarkAbsent) {
  EXPECT_FALSE(ParseConfirmBody(Json::object()));
  EXPECT_EQ(ParseConfirmBody(Json{{"x", 1}})->field, "x");
  std::optional<std::string> reason;
  EXPECT_FALSE(ParseDeclineBody(Json{{"reason", " busy "}}, reason));
  EXPECT_EQ(reason, "busy");
  EXPECT_FALSE(ParseDeclineBody(Json::object(), reason));
  EXPECT_FALSE(reason.has_value());
  EXPECT_EQ(ParseDeclineBody(Json{{"reason", 5}}, reason)->field, "reason");
  EXPECT_EQ(ParseDeclineBody(Json{{"reason", std::string(1001, 'r')}}, reason)->field, "reason");

  AbsentMarks m;
  EXPECT_EQ(ParseMarkAbsentBody(Json::object(), m)->field, "body");
  EXPECT_EQ(ParseMarkAbsentBody(Json{{"host", "yes"}}, m)->field, "host");
  EXPECT_EQ(ParseMarkAbsentBody(Json::parse(R"({"attendees":[{"email":"nope"}]})"), m)->field,
            "attendees[0].email");
  EXPECT_EQ(ParseMarkAbsentBody(Json::parse(R"({"attendees":[{"email":"a@b.co"}]})"), m)->field,
            "attendees[0].absent");
  ASSERT_FALSE(ParseMarkAbsentBody(
      Json::parse(R"({"host":true,"attendees":[{"email":"ANN@example.com","absent":true}]})"), m));

  Booking b;
  b.attendees.push_back({"Ann", "ann@example.com", "UTC", false});
  bool marked = false;
  ASSERT_FALSE(ApplyAbsentMarks(m, b, marked));
  EXPECT_TRUE(marked);
  EXPECT_TRUE(b.attendees[0].absent);
  EXPECT_TRUE(b.host_absent);

  AbsentMarks other;
  ASSERT_FALSE(ParseMarkAbsentBody(
      Json::parse(R"({"attendees":[{"email":"bob@example.com","absent":true}]})"), other));
  auto e = ApplyAbsentMarks(other, b, marked);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "attendees[0].email");
}

TEST(BookingsBodies, ImportAttendee) {
  EXPECT_FALSE(CheckAttendee("Ann", "ann@example.com"));
  EXPECT_EQ(CheckAttendee("", "ann@example.com")->field, "attendee-name");
  EXPECT_EQ(CheckAttendee(std::string(256, 'a'), "ann@example.com")->field, "attendee-name");
  EXPECT_EQ(CheckAttendee("Ann", "ann")->field, "attendee-email");
  EXPECT_EQ(CheckAttendee("Ann", "ann@localhost")->field, "attendee-email");
  EXPECT_EQ(CheckAttendee("Ann", "a b@example.com")->field, "attendee-email");
}

}  // namespace
}  // namespace rendezvous::bookings
