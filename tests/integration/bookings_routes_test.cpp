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

  for (const char* bad : {"take=0", "take=251", "take=x", "skip=-1", "status=upcoming", "afterStart=tomorrow",
                          "eventTypeId=abc"}) {
    HttpResult r = Call("GET", std::string("/v2/bookings?") + bad, owner_key_);
    EXPECT_EQ(r.status, 400) << bad << " " << r.body;
    EXPECT_TRUE(r.Json()["error"]["details"]["field"].is_string()) << r.body;
  }
  EXPECT_EQ(Call("GET", "/v2/bookings?take=250", owner_key_).Json()["pagination"]["take"], 250);
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
