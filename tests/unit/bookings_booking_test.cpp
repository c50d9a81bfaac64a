// Booking states and transitions, the title, the JSON shape of DESIGN §9, list filters and the
// owner-facing request bodies.
#include "booking.hpp"

#include <gtest/gtest.h>

#include "booking_events.hpp"
#include "booking_requests.hpp"
#include "booking_transitions.hpp"

namespace rendezvous::bookings {
namespace {

constexpr BookingStatus kAll[] = {BookingStatus::kAccepted, BookingStatus::kPending,
                                  BookingStatus::kCancelled, BookingStatus::kRejected,
                                  BookingStatus::kCompleted};

TEST(BookingsStateMachine, ConfirmAndDeclineOnlyFromPending) {
  for (BookingStatus s : kAll) {
    const bool pending = s == BookingStatus::kPending;
    EXPECT_EQ(CheckTransition(s, BookingAction::kConfirm, true, true).ok(), pending) << StatusName(s);
    EXPECT_EQ(CheckTransition(s, BookingAction::kDecline, false, false).ok(), pending) << StatusName(s);
  }
  EXPECT_EQ(StatusAfter(BookingStatus::kPending, BookingAction::kConfirm), BookingStatus::kAccepted);
  EXPECT_EQ(StatusAfter(BookingStatus::kPending, BookingAction::kDecline), BookingStatus::kRejected);
  Status why = CheckTransition(BookingStatus::kCancelled, BookingAction::kConfirm, false, false);
  EXPECT_EQ(why.code(), ErrorCode::kConflict);
  EXPECT_EQ(why.reason(), "");  // answered with the envelope code "conflict"
  EXPECT_NE(why.message().find("cancelled"), std::string::npos);
}

TEST(BookingsStateMachine, MarkAbsentNeedsStartedAcceptedOrCompleted) {
  EXPECT_TRUE(CheckTransition(BookingStatus::kAccepted, BookingAction::kMarkAbsent, true, false).ok());
  EXPECT_TRUE(CheckTransition(BookingStatus::kCompleted, BookingAction::kMarkAbsent, true, true).ok());
  EXPECT_FALSE(CheckTransition(BookingStatus::kAccepted, BookingAction::kMarkAbsent, false, false).ok());
  for (BookingStatus s : {BookingStatus::kPending, BookingStatus::kCancelled, BookingStatus::kRejected}) {
    EXPECT_FALSE(CheckTransition(s, BookingAction::kMarkAbsent, true, true).ok()) << StatusName(s);
  }
  EXPECT_EQ(StatusAfter(BookingStatus::kCompleted, BookingAction::kMarkAbsent), BookingStatus::kCompleted);
}

TEST(BookingsStateMachine, CompleteOnlyAcceptedAndEnded) {
  EXPECT_TRUE(CheckTransition(BookingStatus::kAccepted, BookingAction::kComplete, true, true).ok());
  EXPECT_FALSE(CheckTransition(BookingStatus::kAccepted, BookingAction::kComplete, true, false).ok());
  EXPECT_FALSE(CheckTransition(BookingStatus::kPending, BookingAction::kComplete, true, true).ok());
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
  b.event_type_slug = "intro";
  b.host_id = 5;
  b.title = "t";
  b.status = BookingStatus::kPending;
  b.start = time::ParseIso("2026-05-04T09:30:00Z").value();
  b.end = b.start + 30 * 60000;
  b.duration = 30;
  b.attendees.push_back({"Ann", "ann@example.com", "Europe/Berlin", true});
  User host;
  host.id = 5;
  host.name = "Olga";
  host.email = "olga@example.com";
  host.time_zone = "UTC";
  host.username = "olga";
  Json j = BookingJson(b, host);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  // Optional fields without a value are omitted.
  std::vector<std::string> want = {"absentHost", "attendees",   "bookingFieldsResponses",
                                   "createdAt",  "description", "duration",
                                   "end",        "eventType",   "eventTypeId",
                                   "guests",     "hosts",       "id",
                                   "metadata",   "start",       "status",
                                   "title",      "uid"};
  EXPECT_EQ(keys, want);
  EXPECT_EQ(j["eventType"], Json::parse(R"({"id":8,"slug":"intro"})"));
  EXPECT_EQ(j["absentHost"], false);
  EXPECT_EQ(j["start"], "2026-05-04T09:30:00.000Z");
  EXPECT_EQ(j["end"], "2026-05-04T10:00:00.000Z");
  EXPECT_EQ(j["status"], "pending");
  EXPECT_EQ(
      j["attendees"],
      Json::parse(R"([{"name":"Ann","email":"ann@example.com","timeZone":"Europe/Berlin","absent":true}])"));
  EXPECT_EQ(j["hosts"],
            Json::parse(
                R"([{"id":5,"name":"Olga","email":"olga@example.com","timeZone":"UTC","username":"olga"}])"));
  EXPECT_EQ(j["guests"], Json::array());
  EXPECT_EQ(j["metadata"], Json::object());

  b.location = "Room 1";
  b.cancellation_reason = "Sick";
  b.rescheduled_from_uid = "u0";
  b.rescheduled_to_uid = "u2";
  b.host_absent = true;
  Json full = BookingJson(b, host);
  EXPECT_EQ(full["location"], "Room 1");
  EXPECT_EQ(full["cancellationReason"], "Sick");
  EXPECT_EQ(full["rescheduledFromUid"], "u0");
  EXPECT_EQ(full["rescheduledToUid"], "u2");
  EXPECT_EQ(full["absentHost"], true);

  // The attendees after the first (who booked) are the guests; they stay attendees too.
  b.attendees.push_back({"", "gus@example.com", "Europe/Berlin", false});
  Json guested = BookingJson(b, host);
  EXPECT_EQ(guested["guests"], Json::array({"gus@example.com"}));
  EXPECT_EQ(guested["attendees"].size(), 2u);
  // The default fields' answers come from the booking; custom answers are their values.
  b.description = "Call first";
  b.responses = Json::parse(R"({"company":{"label":"Company","value":"ACME"}})");
  EXPECT_EQ(BookingJson(b, host)["bookingFieldsResponses"],
            Json::parse(R"({"name":"Ann","email":"ann@example.com","guests":["gus@example.com"],
                            "notes":"Call first","company":"ACME"})"));
  EXPECT_FALSE(BookingPayloadJson(b, host).contains("guests"));
  EXPECT_FALSE(BookingPayloadJson(b, host)["hosts"][0].contains("username"));
}

TEST(BookingsJson, WebhookPayloadKeepsEveryField) {
  Booking b;
  b.uid = "u1";
  b.event_type_id = 8;
  b.event_type_slug = "intro";
  User host;
  Json p = BookingPayloadJson(b, host);
  std::vector<std::string> keys;
  for (auto it = p.begin(); it != p.end(); ++it) keys.push_back(it.key());
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
  EXPECT_TRUE(p["location"].is_null());
  EXPECT_TRUE(p["cancellationReason"].is_null());
  Json e = EventEnvelope("BOOKING_CONFIRMED", 0, p);
  EXPECT_EQ(e["triggerEvent"], "BOOKING_CONFIRMED");
  EXPECT_EQ(e["createdAt"], "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(e["payload"], p);
}

std::multimap<std::string, std::string> Q(
    std::initializer_list<std::pair<const std::string, std::string>> l) {
  return std::multimap<std::string, std::string>(l);
}

TEST(BookingsListQuery, DefaultsAndFilters) {
  Result<ListQuery> q = ParseListQuery({});
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->take, 100);
  EXPECT_EQ(q->skip, 0);
  q = ParseListQuery(Q({{"status", "pending, accepted,pending"},
                        {"afterStart", "2026-01-01T00:00:00Z"},
                        {"eventTypeId", "7"},
                        {"take", "250"},
                        {"skip", "3"},
                        {"unrelated", "x"}}));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->statuses, (std::vector<BookingStatus>{BookingStatus::kPending, BookingStatus::kAccepted}));
  EXPECT_EQ(q->take, 250);
  EXPECT_EQ(q->skip, 3);
  EXPECT_EQ(q->event_type_id, 7);
  EXPECT_EQ(q->after_start, time::ParseIso("2026-01-01T00:00:00Z"));
  EXPECT_FALSE(q->before_end.has_value());
  // "+02:00" sent unencoded in a query string arrives as " 02:00".
  q = ParseListQuery(Q({{"beforeEnd", "2026-01-01T12:00:00 02:00"}}));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->before_end, time::ParseIso("2026-01-01T10:00:00Z"));
}

TEST(BookingsListQuery, BadValuesNameTheField) {
  auto field = [](std::multimap<std::string, std::string> m) {
    Result<ListQuery> q = ParseListQuery(m);
    return q.ok() ? "" : q.status().field();
  };
  EXPECT_EQ(field(Q({{"take", "0"}})), "take");
  EXPECT_EQ(field(Q({{"take", "251"}})), "take");
  EXPECT_EQ(field(Q({{"take", "ten"}})), "take");
  EXPECT_EQ(field(Q({{"skip", "-1"}})), "skip");
  EXPECT_EQ(field(Q({{"skip", "1000001"}})), "skip");
  EXPECT_EQ(field(Q({{"status", "soon"}})), "status");
  EXPECT_EQ(field(Q({{"status", "Upcoming"}})), "status");
  EXPECT_EQ(field(Q({{"status", "past"}, {"status", "later"}})), "status");
  EXPECT_EQ(field(Q({{"status[]", ""}})), "status");
  EXPECT_EQ(field(Q({{"status", "accepted,"}})), "status");
  EXPECT_EQ(field(Q({{"afterStart", "yesterday"}})), "afterStart");
  EXPECT_EQ(field(Q({{"afterStart", "2026-05-04T09:30:00+25:00"}})), "afterStart");
  EXPECT_EQ(field(Q({{"afterStart", "2026-05-04T09:30:00Zjunk"}})), "afterStart");
  EXPECT_EQ(field(Q({{"beforeEnd", "2026-01-01"}})), "beforeEnd");
  EXPECT_EQ(field(Q({{"beforeEnd", "2025-02-29T00:00:00Z"}})), "beforeEnd");
  EXPECT_EQ(field(Q({{"eventTypeId", "0"}})), "eventTypeId");
  EXPECT_EQ(field(Q({{"take", "1"}, {"take", "2"}})), "take");
}

TEST(BookingsListQuery, CalcomsParameters) {
  // Cal.com's statuses beside DESIGN §9's, as a comma list, repeated, or bracketed.
  Result<ListQuery> q = ParseListQuery(Q({{"status", "upcoming,pending"},
                                          {"status", "past"},
                                          {"status[]", "unconfirmed"},
                                          {"status[]", "recurring,upcoming"}}));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->statuses, (std::vector<BookingStatus>{BookingStatus::kPending}));
  EXPECT_EQ(q->periods, (std::vector<ListPeriod>{ListPeriod::kUpcoming, ListPeriod::kPast,
                                                 ListPeriod::kUnconfirmed, ListPeriod::kRecurring}));
  // `cancelled` stays DESIGN §9's state.
  q = ParseListQuery(Q({{"status", "cancelled"}}));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->statuses, (std::vector<BookingStatus>{BookingStatus::kCancelled}));
  EXPECT_TRUE(q->periods.empty());

  q = ParseListQuery(Q({{"eventTypeIds", "3, 5,3"},
                        {"eventTypeIds[]", "9"},
                        {"attendeeEmail", " Ann@Example.com "},
                        {"attendeeName", "Ann Attendee"},
                        {"sortEnd", "desc"},
                        {"sortCreated", "asc"}}));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->event_type_ids, (std::vector<int64_t>{3, 5, 9}));
  EXPECT_EQ(q->attendee_email, "Ann@Example.com");
  EXPECT_EQ(q->attendee_name, "Ann Attendee");
  EXPECT_FALSE(q->sort_start.has_value());
  EXPECT_EQ(q->sort_end, SortOrder::kDesc);
  EXPECT_EQ(q->sort_created, SortOrder::kAsc);
  // Blank attendee filters filter nothing, as in Cal.com.
  q = ParseListQuery(Q({{"attendeeEmail", " "}, {"attendeeName", ""}}));
  ASSERT_TRUE(q.ok());
  EXPECT_FALSE(q->attendee_email.has_value());
  EXPECT_FALSE(q->attendee_name.has_value());
}

TEST(BookingsListQuery, CalcomsParametersAreBounded) {
  auto field = [](std::multimap<std::string, std::string> m) {
    Result<ListQuery> q = ParseListQuery(m);
    return q.ok() ? "" : q.status().field();
  };
  EXPECT_EQ(field(Q({{"eventTypeIds", "1,x"}})), "eventTypeIds");
  EXPECT_EQ(field(Q({{"eventTypeIds", "0"}})), "eventTypeIds");
  EXPECT_EQ(field(Q({{"eventTypeIds", "1,,2"}})), "eventTypeIds");
  EXPECT_EQ(field(Q({{"eventTypeIds", "-1"}})), "eventTypeIds");
  std::string ids;
  for (int i = 1; i <= 101; ++i) ids += (i > 1 ? "," : "") + std::to_string(i);
  EXPECT_EQ(field(Q({{"eventTypeIds", ids}})), "eventTypeIds");
  EXPECT_EQ(field(Q({{"eventTypeIds", std::string(2001, '1')}})), "eventTypeIds");
  std::multimap<std::string, std::string> many;
  for (int i = 0; i < 51; ++i) many.emplace("status", "past");
  EXPECT_EQ(field(many), "status");
  many.erase(many.begin());
  EXPECT_EQ(field(many), "");
  EXPECT_EQ(field(Q({{"sortStart", "ASC"}})), "sortStart");
  EXPECT_EQ(field(Q({{"sortEnd", "up"}})), "sortEnd");
  EXPECT_EQ(field(Q({{"sortCreated", ""}})), "sortCreated");
  EXPECT_EQ(field(Q({{"sortStart", "asc"}, {"sortStart", "desc"}})), "sortStart");
  EXPECT_EQ(field(Q({{"attendeeEmail", std::string(321, 'a')}})), "attendeeEmail");
  EXPECT_EQ(field(Q({{"attendeeEmail", "a@b.c"}, {"attendeeEmail", "d@e.f"}})), "attendeeEmail");
  EXPECT_EQ(field(Q({{"attendeeName", std::string(256, 'n')}})), "attendeeName");
  EXPECT_EQ(field(Q({{"attendeeName", "Ann\x01"}})), "attendeeName");
  EXPECT_EQ(field(Q({{"attendeeName", "\xff"}})), "attendeeName");
  EXPECT_EQ(field(Q({{"attendeeName", std::string(255, 'n')}})), "");
}

TEST(BookingsListQuery, ErrorsAreValidationStatusesNamingTheField) {
  Status e = ParseListQuery(Q({{"take", "0"}})).status();
  EXPECT_EQ(e.code(), ErrorCode::kInvalid);
  EXPECT_EQ(e.reason(), "");
  EXPECT_EQ(e.message(), "take must be an integer between 1 and 250");
}

TEST(BookingsBodies, ConfirmDeclineMarkAbsent) {
  EXPECT_TRUE(ParseConfirmBody(Json::object()).ok());
  EXPECT_EQ(ParseConfirmBody(Json{{"x", 1}}).field(), "x");
  Result<std::optional<std::string>> reason = ParseDeclineBody(Json{{"reason", " busy "}});
  ASSERT_TRUE(reason.ok());
  EXPECT_EQ(*reason, "busy");
  reason = ParseDeclineBody(Json::object());
  ASSERT_TRUE(reason.ok());
  EXPECT_FALSE(reason->has_value());
  EXPECT_EQ(ParseDeclineBody(Json{{"reason", 5}}).status().field(), "reason");
  EXPECT_EQ(ParseDeclineBody(Json{{"reason", std::string(1001, 'r')}}).status().field(), "reason");

  auto absent_field = [](const Json& body) { return ParseMarkAbsentBody(body).status().field(); };
  EXPECT_EQ(absent_field(Json::object()), "body");
  EXPECT_EQ(ParseMarkAbsentBody(Json::object()).status().message(),
            "the request body must give host, attendees or both");
  EXPECT_EQ(absent_field(Json{{"host", "yes"}}), "host");
  EXPECT_EQ(absent_field(Json::parse(R"({"attendees":[{"email":"nope"}]})")), "attendees[0].email");
  EXPECT_EQ(absent_field(Json::parse(R"({"attendees":[{"email":"a@b.co"}]})")), "attendees[0].absent");
  Result<AbsentMarks> m = ParseMarkAbsentBody(
      Json::parse(R"({"host":true,"attendees":[{"email":"ANN@example.com","absent":true}]})"));
  ASSERT_TRUE(m.ok());

  Booking b;
  b.attendees.push_back({"Ann", "ann@example.com", "UTC", false});
  Result<bool> marked = ApplyAbsentMarks(*m, b);
  ASSERT_TRUE(marked.ok());
  EXPECT_TRUE(*marked);
  EXPECT_TRUE(b.attendees[0].absent);
  EXPECT_TRUE(b.host_absent);

  Result<AbsentMarks> other =
      ParseMarkAbsentBody(Json::parse(R"({"attendees":[{"email":"bob@example.com","absent":true}]})"));
  ASSERT_TRUE(other.ok());
  marked = ApplyAbsentMarks(*other, b);
  ASSERT_FALSE(marked.ok());
  EXPECT_EQ(marked.status().field(), "attendees[0].email");
}

TEST(BookingsBodies, ImportAttendee) {
  EXPECT_TRUE(CheckAttendee("Ann", "ann@example.com").ok());
  EXPECT_EQ(CheckAttendee("", "ann@example.com").field(), "attendee-name");
  EXPECT_EQ(CheckAttendee("", "ann@example.com").message(), "attendee-name must not be empty");
  EXPECT_EQ(CheckAttendee(std::string(256, 'a'), "ann@example.com").field(), "attendee-name");
  EXPECT_EQ(CheckAttendee("Ann", "ann").field(), "attendee-email");
  // One e-mail rule for the host and the plugins: a domain needs no dot.
  EXPECT_TRUE(CheckAttendee("Ann", "ann@localhost").ok());
  EXPECT_EQ(CheckAttendee("Ann", "a b@example.com").field(), "attendee-email");
}

}  // namespace
}  // namespace rendezvous::bookings
