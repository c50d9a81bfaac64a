// Booking routes with API keys: list (filters, pagination, order), get, confirm, decline,
// mark-absent; 404 for another user's booking; 409 for other transitions; validation 400s that
// store nothing; each change's outbox event written with it.
#include "bookings_fixture.hpp"

namespace rendezvous::testing {
namespace {

class BookingsRoutes : public BookingsFixture {
 protected:
  void SetUp() override {
    StartServer();
    event_type_ = CreateEventType(owner_key_, "intro", 30)["id"].get<int64_t>();
  }
  std::string Path(const json& booking, const std::string& action = "") const {
    return "/v2/bookings/" + booking["uid"].get<std::string>() + (action.empty() ? "" : "/" + action);
  }
  std::string Status(const json& booking) const {
    return db_.QueryValue("SELECT status FROM bookings WHERE uid = '" + booking["uid"].get<std::string>() +
                          "'");
  }
  int64_t event_type_ = 0;
};

TEST_F(BookingsRoutes, ListFiltersPaginatesInStartOrder) {
  const int64_t second_type = CreateEventType(owner_key_, "second", 60)["id"].get<int64_t>();
  json b3 = Import(owner_, event_type_, In(300), "pending");
  json b1 = Import(owner_, event_type_, In(100));
  json b2 = Import(owner_, second_type, In(200), "cancelled");
  json b0 = Import(owner_, event_type_, In(-100), "rejected");
  const int64_t other_type = CreateEventType(other_key_, "theirs")["id"].get<int64_t>();
  Import(other_, other_type, In(150));

  HttpResult all = Call("GET", "/v2/bookings", owner_key_);
  ASSERT_EQ(all.status, 200) << all.body;
  json j = all.Json();
  EXPECT_EQ(j["status"], "success");
  EXPECT_EQ(j["pagination"], json::parse(R"({"total":4,"skip":0,"take":100})"));
  ASSERT_EQ(j["data"].size(), 4u);
  std::vector<std::string> uids;
  for (const json& b : j["data"]) uids.push_back(b["uid"]);
  EXPECT_EQ(uids, (std::vector<std::string>{b0["uid"], b1["uid"], b2["uid"], b3["uid"]}));
  EXPECT_EQ(j["data"][1], b1);

  json page = Call("GET", "/v2/bookings?skip=1&take=2", owner_key_).Json();
  EXPECT_EQ(page["pagination"], json::parse(R"({"total":4,"skip":1,"take":2})"));
  ASSERT_EQ(page["data"].size(), 2u);
  EXPECT_EQ(page["data"][0]["uid"], b1["uid"]);
  EXPECT_EQ(page["data"][1]["uid"], b2["uid"]);
  json beyond = Call("GET", "/v2/bookings?skip=10", owner_key_).Json();
  EXPECT_EQ(beyond["data"], json::array());
  EXPECT_EQ(beyond["pagination"]["total"], 4);

  json pending = Call("GET", "/v2/bookings?status=pending,cancelled", owner_key_).Json();
  ASSERT_EQ(pending["data"].size(), 2u);
  EXPECT_EQ(pending["data"][0]["uid"], b2["uid"]);
  EXPECT_EQ(pending["data"][1]["uid"], b3["uid"]);
  json by_type = Call("GET", "/v2/bookings?eventTypeId=" + std::to_string(second_type), owner_key_).Json();
  ASSERT_EQ(by_type["data"].size(), 1u);
  EXPECT_EQ(by_type["data"][0]["uid"], b2["uid"]);
  json window = Call("GET", "/v2/bookings?afterStart=" + In(50) + "&beforeEnd=" + In(270), owner_key_).Json();
  ASSERT_EQ(window["data"].size(), 2u) << window.dump();
  EXPECT_EQ(window["data"][0]["uid"], b1["uid"]);
  EXPECT_EQ(window["data"][1]["uid"], b2["uid"]);
  EXPECT_EQ(window["pagination"]["total"], 2);

  for (const char* bad :
       {"take=0", "take=251", "take=x", "skip=-1", "status=soon", "afterStart=tomorrow", "eventTypeId=abc"}) {
    HttpResult r = Call("GET", std::string("/v2/bookings?") + bad, owner_key_);
    EXPECT_EQ(r.status, 400) << bad << " " << r.body;
    EXPECT_TRUE(r.Json()["error"]["details"]["field"].is_string()) << r.body;
  }
  EXPECT_EQ(Call("GET", "/v2/bookings?take=250", owner_key_).Json()["pagination"]["take"], 250);
}

// The list with Cal.com's query parameters (DESIGN §10): its statuses beside DESIGN §9's, the
// attendee and event type filters, and the sort orders. The completion sweep runs once as the
// server starts and not again during a test, so an ended booking set to accepted stays accepted.
class BookingsListCalcom : public BookingsFixture {
 protected:
  void SetUp() override {
    StartServer("bookings: { completion_sweep_interval: 86400 }\n");
    type_a_ = CreateEventType(owner_key_, "intro", 30)["id"].get<int64_t>();
    type_b_ = CreateEventType(owner_key_, "second", 240)["id"].get<int64_t>();
  }
  // The uids listed by GET /v2/bookings?<query>, in order; `total` gets pagination.total.
  std::vector<std::string> Uids(const std::string& query, int64_t* total = nullptr) {
    HttpResult r = Call("GET", "/v2/bookings?" + query, owner_key_);
    EXPECT_EQ(r.status, 200) << query << " " << r.body;
    std::vector<std::string> uids;
    json j = r.Json();
    if (!j["data"].is_array()) return uids;
    for (const json& b : j["data"]) uids.push_back(b["uid"]);
    if (total) *total = j["pagination"]["total"].get<int64_t>();
    return uids;
  }
  void SetStatus(const json& booking, const std::string& status) {
    db_.Exec("UPDATE bookings SET status = '" + status + "' WHERE uid = '" +
             booking["uid"].get<std::string>() + "'");
  }
  static std::vector<std::string> U(std::initializer_list<const json*> bookings) {
    std::vector<std::string> out;
    for (const json* b : bookings) out.push_back((*b)["uid"]);
    return out;
  }
  int64_t type_a_ = 0;
  int64_t type_b_ = 0;
};

TEST_F(BookingsListCalcom, CalcomStatusesAreSetsOfBookingsAtTheTimeOfTheRequest) {
  // Starting in the future (type a: 30 minutes, type b: 240).
  json acc = Import(owner_, type_a_, In(100));
  json pen = Import(owner_, type_b_, In(200), "pending");
  json can = Import(owner_, type_a_, In(300), "cancelled");
  json rej = Import(owner_, type_b_, In(700), "rejected");
  json ongoing = Import(owner_, type_a_, In(-10));  // ends in 20 minutes
  // Ended.
  json p_acc = Import(owner_, type_a_, In(-200));
  json p_com = Import(owner_, type_a_, In(-300));
  json p_pen = Import(owner_, type_a_, In(-400), "pending");
  json p_can = Import(owner_, type_a_, In(-500), "cancelled");
  json p_rej = Import(owner_, type_a_, In(-600), "rejected");
  Import(other_, CreateEventType(other_key_, "theirs")["id"].get<int64_t>(), In(150));
  SetStatus(p_com, "completed");
  SetStatus(p_acc, "accepted");  // had the start's sweep come after its import

  int64_t total = -1;
  EXPECT_EQ(Uids("status=upcoming", &total), U({&ongoing, &acc, &pen}));
  EXPECT_EQ(total, 3);
  EXPECT_EQ(Uids("status=unconfirmed", &total), U({&pen}));
  EXPECT_EQ(total, 1);
  EXPECT_EQ(Uids("status=past", &total), U({&p_pen, &p_com, &p_acc}));
  EXPECT_EQ(total, 3);
  EXPECT_EQ(Uids("status=recurring", &total), std::vector<std::string>{});
  EXPECT_EQ(total, 0);
  // `cancelled` is DESIGN §9's state, as before; Cal.com's cancelled tab is cancelled,rejected.
  EXPECT_EQ(Uids("status=cancelled", &total), U({&p_can, &can}));
  EXPECT_EQ(Uids("status=cancelled,rejected"), U({&p_rej, &p_can, &can, &rej}));

  // Several: any of them, as a comma list, repeated, or bracketed (Cal.com's clients' arrays).
  const std::vector<std::string> upcoming_or_past = U({&p_pen, &p_com, &p_acc, &ongoing, &acc, &pen});
  EXPECT_EQ(Uids("status=upcoming,past", &total), upcoming_or_past);
  EXPECT_EQ(total, 6);
  EXPECT_EQ(Uids("status=upcoming&status=past"), upcoming_or_past);
  EXPECT_EQ(Uids("status%5B%5D=past&status%5B%5D=upcoming"), upcoming_or_past);
  EXPECT_EQ(Uids("status[]=past,upcoming&status=recurring"), upcoming_or_past);
  EXPECT_EQ(Uids("status=unconfirmed,past,cancelled"), U({&p_can, &p_pen, &p_com, &p_acc, &pen, &can}));
  // Mixed with DESIGN §9's states.
  EXPECT_EQ(Uids("status=unconfirmed,accepted"), U({&p_acc, &ongoing, &acc, &pen}));
  EXPECT_EQ(Uids("status=upcoming,rejected", &total), U({&p_rej, &ongoing, &acc, &pen, &rej}));
  EXPECT_EQ(total, 5);
  EXPECT_EQ(Uids("status=past,completed"), U({&p_pen, &p_com, &p_acc}));

  // DESIGN §9's states read as before.
  EXPECT_EQ(Uids("status=accepted"), U({&p_acc, &ongoing, &acc}));
  EXPECT_EQ(Uids("status=pending"), U({&p_pen, &pen}));
  EXPECT_EQ(Uids("status=rejected"), U({&p_rej, &rej}));
  EXPECT_EQ(Uids("status=completed"), U({&p_com}));
  EXPECT_EQ(Uids("status=pending,%20cancelled&status=pending"), U({&p_can, &p_pen, &pen, &can}));

  // With the other filters and pages: total counts the filtered set.
  EXPECT_EQ(Uids("status=upcoming&eventTypeId=" + std::to_string(type_a_)), U({&ongoing, &acc}));
  EXPECT_EQ(Uids("status=upcoming&afterStart=" + In(0)), U({&acc, &pen}));
  EXPECT_EQ(Uids("status=past&beforeEnd=" + In(-250)), U({&p_pen, &p_com}));
  EXPECT_EQ(Uids("status=upcoming,past&skip=2&take=3", &total), U({&p_acc, &ongoing, &acc}));
  EXPECT_EQ(total, 6);
  EXPECT_EQ(Uids("status=upcoming&skip=5", &total), std::vector<std::string>{});
  EXPECT_EQ(total, 3);

  // What is upcoming now is past once it ended: moved back in time, `ongoing` has ended.
  db_.Exec(
      "UPDATE bookings SET start_at = start_at - INTERVAL 1 HOUR, end_at = end_at - INTERVAL 1 HOUR "
      "WHERE uid = '" +
      ongoing["uid"].get<std::string>() + "'");
  EXPECT_EQ(Uids("status=upcoming"), U({&acc, &pen}));
  EXPECT_EQ(Uids("status=past"), U({&p_pen, &p_com, &p_acc, &ongoing}));
}

// Ending later is read with the host's longest booking as a bound of the starts: a booking under
// way as long as that, or longer than any before it, is upcoming.
TEST_F(BookingsListCalcom, ALongBookingUnderWayIsUpcoming) {
  json long_one = Import(owner_, type_b_, In(-230), "pending");  // 240 minutes, ends in 10
  json short_one = Import(owner_, type_a_, In(60));
  EXPECT_EQ(Uids("status=upcoming"), U({&long_one, &short_one}));
  EXPECT_EQ(Uids("status=unconfirmed"), U({&long_one}));
  EXPECT_EQ(Uids("status=past"), std::vector<std::string>{});
  // Longer than any booking before: the bound moves with it.
  const int64_t day_long = CreateEventType(owner_key_, "day", 1440)["id"].get<int64_t>();
  json longer = Import(owner_, day_long, In(-1400));  // ends in 40
  db_.Exec("UPDATE bookings SET status = 'cancelled' WHERE uid = '" + long_one["uid"].get<std::string>() +
           "'");
  EXPECT_EQ(Uids("status=upcoming"), U({&longer, &short_one}));
}

TEST_F(BookingsListCalcom, AttendeeAndEventTypeFilters) {
  json ann = Import(owner_, type_a_, In(100), "", "ann@example.com", "Ann Attendee");
  json bob = Import(owner_, type_b_, In(200), "pending", "Bob@Example.com", "Bob Booker");
  json ann2 = Import(owner_, type_b_, In(-300), "", "ann@example.com", "Ann Attendee");
  json anne = Import(owner_, type_a_, In(500), "cancelled", "anne@example.com", "Ann Attendee-Smith");
  const int64_t type_c = CreateEventType(owner_key_, "third", 30)["id"].get<int64_t>();
  // A public booking with a guest: the guest is an attendee too.
  const std::string monday = Monday();
  HttpResult made =
      Call("POST", "/v2/bookings", "",
           json{{"start", At(monday, "10:00")},
                {"eventTypeId", type_c},
                {"attendee", {{"name", "Cy Client"}, {"email", "cy@example.com"}, {"timeZone", "UTC"}}},
                {"guests", {"gus@example.com"}}});
  ASSERT_EQ(made.status, 201) << made.body;
  json cy = made.Json()["data"];

  int64_t total = -1;
  // E-mail: exact, letter case aside; guests count.
  EXPECT_EQ(Uids("attendeeEmail=ann@example.com", &total), U({&ann2, &ann}));
  EXPECT_EQ(total, 2);
  EXPECT_EQ(Uids("attendeeEmail=ANN%40Example.COM"), U({&ann2, &ann}));
  EXPECT_EQ(Uids("attendeeEmail=bob@example.com"), U({&bob}));
  EXPECT_EQ(Uids("attendeeEmail=%20gus@example.com%20"), U({&cy}));
  EXPECT_EQ(Uids("attendeeEmail=cy@example.com"), U({&cy}));
  EXPECT_EQ(Uids("attendeeEmail=ann", &total), std::vector<std::string>{});
  EXPECT_EQ(total, 0);
  EXPECT_EQ(Uids("attendeeEmail=other@example.com"), std::vector<std::string>{});
  // Name: exact (as Cal.com), letter case aside.
  EXPECT_EQ(Uids("attendeeName=Ann%20Attendee"), U({&ann2, &ann}));
  EXPECT_EQ(Uids("attendeeName=ann+attendee"), U({&ann2, &ann}));
  EXPECT_EQ(Uids("attendeeName=Ann"), std::vector<std::string>{});
  EXPECT_EQ(Uids("attendeeName=Ann%20Attendee-Smith"), U({&anne}));
  // Blank: no filter.
  EXPECT_EQ(Uids("attendeeEmail=&attendeeName=%20").size(), 5u);

  // Event types: a comma list, repeated or bracketed; with eventTypeId both apply.
  const std::string a = std::to_string(type_a_), b = std::to_string(type_b_), c = std::to_string(type_c);
  EXPECT_EQ(Uids("eventTypeIds=" + a + "," + c, &total), U({&ann, &anne, &cy}));
  EXPECT_EQ(total, 3);
  EXPECT_EQ(Uids("eventTypeIds=" + b), U({&ann2, &bob}));
  EXPECT_EQ(Uids("eventTypeIds=" + b + "&eventTypeIds=" + c), U({&ann2, &bob, &cy}));
  EXPECT_EQ(Uids("eventTypeIds%5B%5D=" + c + "&eventTypeIds%5B%5D=" + a), U({&ann, &anne, &cy}));
  EXPECT_EQ(Uids("eventTypeIds=" + a + "," + b + "&eventTypeId=" + b), U({&ann2, &bob}));
  EXPECT_EQ(Uids("eventTypeIds=" + a + "&eventTypeId=" + b), std::vector<std::string>{});
  EXPECT_EQ(Uids("eventTypeIds=999999"), std::vector<std::string>{});

  // Combinations: every filter applies.
  EXPECT_EQ(Uids("attendeeName=Ann%20Attendee&status=upcoming"), U({&ann}));
  EXPECT_EQ(Uids("attendeeName=Ann%20Attendee&status=past"), U({&ann2}));
  EXPECT_EQ(Uids("attendeeEmail=ann@example.com&eventTypeIds=" + b), U({&ann2}));
  EXPECT_EQ(Uids("attendeeEmail=ann@example.com&attendeeName=Bob%20Booker"), std::vector<std::string>{});
  EXPECT_EQ(Uids("attendeeEmail=bob@example.com&attendeeName=Bob%20Booker&status=unconfirmed&eventTypeIds=" +
                     b + "&sortStart=desc&take=1",
                 &total),
            U({&bob}));
  EXPECT_EQ(total, 1);
  EXPECT_EQ(Uids("status=upcoming,cancelled&eventTypeIds=" + a + "," + b + "&sortStart=desc", &total),
            U({&anne, &bob, &ann}));
  EXPECT_EQ(total, 3);

  // Another host's bookings are never found by their attendees.
  HttpResult theirs = Call("GET", "/v2/bookings?attendeeEmail=ann@example.com", other_key_);
  ASSERT_EQ(theirs.status, 200) << theirs.body;
  EXPECT_EQ(theirs.Json()["data"], json::array());
}

TEST_F(BookingsListCalcom, SortParametersOrderTheList) {
  // Made in this order; starts and ends in other orders (type b lasts 240 minutes; the long one is
  // cancelled, so that it may overlap the others).
  json late_short = Import(owner_, type_a_, In(300));               // 300..330
  json early_long = Import(owner_, type_b_, In(100), "cancelled");  // 100..340
  json middle = Import(owner_, type_a_, In(200));                   // 200..230
  json first = Import(owner_, type_a_, In(-100));                   // -100..-70

  EXPECT_EQ(Uids(""), U({&first, &early_long, &middle, &late_short}));
  EXPECT_EQ(Uids("sortStart=asc"), U({&first, &early_long, &middle, &late_short}));
  EXPECT_EQ(Uids("sortStart=desc"), U({&late_short, &middle, &early_long, &first}));
  EXPECT_EQ(Uids("sortEnd=asc"), U({&first, &middle, &late_short, &early_long}));
  EXPECT_EQ(Uids("sortEnd=desc"), U({&early_long, &late_short, &middle, &first}));
  EXPECT_EQ(Uids("sortCreated=asc"), U({&late_short, &early_long, &middle, &first}));
  EXPECT_EQ(Uids("sortCreated=desc"), U({&first, &middle, &early_long, &late_short}));
  // Start, then end, then creation: the first given of them leads.
  EXPECT_EQ(Uids("sortCreated=asc&sortEnd=desc"), U({&early_long, &late_short, &middle, &first}));
  EXPECT_EQ(Uids("sortEnd=asc&sortStart=desc"), U({&late_short, &middle, &early_long, &first}));
  // With filters and pages.
  int64_t total = -1;
  EXPECT_EQ(Uids("status=upcoming,cancelled&sortEnd=desc&skip=1&take=2", &total), U({&late_short, &middle}));
  EXPECT_EQ(total, 3);
  EXPECT_EQ(Uids("sortStart=desc&take=1&skip=3"), U({&first}));
}

TEST_F(BookingsListCalcom, BadValuesNameTheParameterAndTheServerKeepsServing) {
  Import(owner_, type_a_, In(100));
  const std::string too_many_ids = [] {
    std::string s;
    for (int i = 1; i <= 101; ++i) s += (i > 1 ? "," : "") + std::to_string(i);
    return s;
  }();
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"status=soon", "status"},
      {"status=Upcoming", "status"},
      {"status=upcoming,", "status"},
      {"status=past&status=", "status"},
      {"status%5B%5D=later", "status"},
      {"eventTypeIds=1,x", "eventTypeIds"},
      {"eventTypeIds=0", "eventTypeIds"},
      {"eventTypeIds=" + too_many_ids, "eventTypeIds"},
      {"eventTypeIds=" + std::string(2001, '1'), "eventTypeIds"},
      {"sortStart=up", "sortStart"},
      {"sortEnd=DESC", "sortEnd"},
      {"sortCreated=", "sortCreated"},
      {"sortStart=asc&sortStart=desc", "sortStart"},
      {"attendeeEmail=" + std::string(321, 'a'), "attendeeEmail"},
      {"attendeeEmail=a%01b", "attendeeEmail"},
      {"attendeeName=" + std::string(256, 'n'), "attendeeName"},
      {"attendeeName=a&attendeeName=b", "attendeeName"},
      {"attendeeName=%FF", "attendeeName"},
  };
  for (const auto& [query, field] : bad) {
    HttpResult r = Call("GET", "/v2/bookings?" + query, owner_key_);
    EXPECT_EQ(r.status, 400) << query << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], field) << query << " " << r.body;
  }
  EXPECT_EQ(Uids("status=upcoming").size(), 1u);
}

TEST_F(BookingsRoutes, GetShowsTheBookingAndHidesOtherUsers) {
  json b = Import(owner_, event_type_, In(60));
  HttpResult got = Call("GET", Path(b), owner_key_);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["data"], b);
  EXPECT_EQ(b["title"], "Intro intro between Olga Owner and Ann Attendee");
  EXPECT_EQ(b["hosts"],
            json::parse("[{\"id\":" + std::to_string(owner_) +
                        ",\"name\":\"Olga Owner\",\"email\":\"owner@example.com\",\"timeZone\":\"UTC\","
                        "\"username\":\"owner\"}]"));

  for (const std::string action : {"", "confirm", "decline", "mark-absent"}) {
    HttpResult r = action.empty() ? Call("GET", Path(b), other_key_)
                                  : Call("POST", Path(b, action), other_key_,
                                         action == "mark-absent" ? R"({"host":true})" : "{}");
    EXPECT_EQ(r.status, 404) << action << " " << r.body;
  }
  EXPECT_EQ(Call("GET", "/v2/bookings", other_key_).Json()["data"], json::array());
  EXPECT_EQ(Call("GET", "/v2/bookings/no-such-uid", owner_key_).status, 404);
  EXPECT_EQ(Call("GET", "/v2/bookings/bad%20uid", owner_key_).status, 404);
}

TEST_F(BookingsRoutes, ConfirmAndDeclineWriteTheirEvents) {
  json p1 = Import(owner_, event_type_, In(60), "pending");
  json p2 = Import(owner_, event_type_, In(120), "pending");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_events"), 0);  // import writes no events

  HttpResult confirmed = Call("POST", Path(p1, "confirm"), owner_key_, "{}");
  ASSERT_EQ(confirmed.status, 200) << confirmed.body;
  json c = confirmed.Json()["data"];
  EXPECT_EQ(c["status"], "accepted");
  EXPECT_EQ(Status(p1), "accepted");
  ASSERT_EQ(OutboxCount("BOOKING_CONFIRMED"), 1);
  json event = LastOutbox("BOOKING_CONFIRMED");
  EXPECT_EQ(event["triggerEvent"], "BOOKING_CONFIRMED");
  EXPECT_TRUE(time::ParseIso(event["createdAt"].get<std::string>()).has_value()) << event;
  ExpectPayloadShows(event["payload"], c);

  HttpResult again = Call("POST", Path(p1, "confirm"), owner_key_, "{}");
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_EQ(again.Json()["error"]["code"], "conflict");
  EXPECT_NE(again.Json()["error"]["message"].get<std::string>().find("accepted"), std::string::npos);
  EXPECT_EQ(Call("POST", Path(p1, "decline"), owner_key_, "{}").status, 409);
  EXPECT_EQ(OutboxCount("BOOKING_CONFIRMED"), 1);
  EXPECT_EQ(OutboxCount("BOOKING_REJECTED"), 0);

  HttpResult bad = Call("POST", Path(p2, "decline"), owner_key_, json{{"reason", 42}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.Json()["error"]["details"]["field"], "reason");
  EXPECT_EQ(Call("POST", Path(p2, "confirm"), owner_key_, json{{"extra", true}}).status, 400);
  EXPECT_EQ(Status(p2), "pending");

  HttpResult declined = Call("POST", Path(p2, "decline"), owner_key_, json{{"reason", "Not available"}});
  ASSERT_EQ(declined.status, 200) << declined.body;
  EXPECT_EQ(declined.Json()["data"]["status"], "rejected");
  EXPECT_EQ(declined.Json()["data"]["cancellationReason"], "Not available");
  EXPECT_EQ(Status(p2), "rejected");
  ASSERT_EQ(OutboxCount("BOOKING_REJECTED"), 1);
  ExpectPayloadShows(LastOutbox("BOOKING_REJECTED")["payload"], declined.Json()["data"]);
  EXPECT_EQ(Call("POST", Path(p2, "confirm"), owner_key_, "{}").status, 409);

  json cancelled = Import(owner_, event_type_, In(90), "cancelled");
  EXPECT_EQ(Call("POST", Path(cancelled, "confirm"), owner_key_, "{}").status, 409);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_events"), 2);
}

TEST_F(BookingsRoutes, MarkAbsentRecordsNoShows) {
  json past = Import(owner_, event_type_, In(-120));
  json future = Import(owner_, event_type_, In(120));
  json pending = Import(owner_, event_type_, In(-240), "pending");

  HttpResult early = Call("POST", Path(future, "mark-absent"), owner_key_, json{{"host", true}});
  EXPECT_EQ(early.status, 409) << early.body;
  EXPECT_EQ(Call("POST", Path(pending, "mark-absent"), owner_key_, json{{"host", true}}).status, 409);

  HttpResult unknown = Call("POST", Path(past, "mark-absent"), owner_key_,
                            json::parse(R"({"attendees":[{"email":"bob@example.com","absent":true}]})"));
  EXPECT_EQ(unknown.status, 400) << unknown.body;
  EXPECT_EQ(unknown.Json()["error"]["details"]["field"], "attendees[0].email");
  HttpResult empty = Call("POST", Path(past, "mark-absent"), owner_key_, "{}");
  EXPECT_EQ(empty.status, 400);
  HttpResult bad = Call("POST", Path(past, "mark-absent"), owner_key_, json{{"host", "yes"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.Json()["error"]["details"]["field"], "host");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM booking_attendees WHERE absent = 1"), 0);
  EXPECT_EQ(OutboxCount("BOOKING_NO_SHOW"), 0);

  HttpResult marked =
      Call("POST", Path(past, "mark-absent"), owner_key_,
           json::parse(R"({"host":false,"attendees":[{"email":"ANN@example.com","absent":true}]})"));
  ASSERT_EQ(marked.status, 200) << marked.body;
  json b = marked.Json()["data"];
  EXPECT_EQ(b["attendees"][0]["absent"], true);
  EXPECT_EQ(b["status"], "accepted");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM booking_attendees WHERE absent = 1"), 1);
  ASSERT_EQ(OutboxCount("BOOKING_NO_SHOW"), 1);
  ExpectPayloadShows(LastOutbox("BOOKING_NO_SHOW")["payload"], b);
  EXPECT_EQ(Call("GET", Path(past), owner_key_).Json()["data"], b);

  HttpResult host = Call("POST", Path(past, "mark-absent"), owner_key_, json{{"host", true}});
  ASSERT_EQ(host.status, 200) << host.body;
  EXPECT_EQ(Count("SELECT host_absent FROM bookings WHERE uid = '" + past["uid"].get<std::string>() + "'"),
            1);
  EXPECT_EQ(OutboxCount("BOOKING_NO_SHOW"), 2);
}

}  // namespace
}  // namespace rendezvous::testing
