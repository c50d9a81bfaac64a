// `rendezvous admin booking import`: the printed booking (DESIGN §9 shape), past times, statuses,
// no events; bad input exits non-zero with a clear message and stores nothing.
#include "bookings_fixture.hpp"

namespace rendezvous::testing {
namespace {

class BookingsImport : public BookingsFixture {
 protected:
  void SetUp() override {
    StartServer();
    event_type_ =
        CreateEventType(
            owner_key_, "consult", 45,
            json{{"locations", json::parse(R"([{"type":"integration","integration":"google-meet"}])")}})["id"]
            .get<int64_t>();
  }
  int64_t event_type_ = 0;
};

TEST_F(BookingsImport, PrintsTheBookingAsTheApiShowsIt) {
  CliResult r =
      RunImport(owner_, event_type_, "2020-03-01T10:00:00+01:00", "ann@example.com", "Ann Attendee");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json b = r.Json();
  ASSERT_TRUE(b.is_object()) << r.out;
  std::vector<std::string> keys;
  for (auto it = b.begin(); it != b.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"absentHost", "attendees", "bookingFieldsResponses", "createdAt",
                                            "description", "duration", "end", "eventType", "eventTypeId",
                                            "guests", "hosts", "id", "location", "metadata", "start",
                                            "status", "title", "uid"}));
  EXPECT_EQ(b["status"], "accepted");
  EXPECT_EQ(b["start"], "2020-03-01T09:00:00.000Z");
  EXPECT_EQ(b["end"], "2020-03-01T09:45:00.000Z");
  EXPECT_EQ(b["duration"], 45);
  EXPECT_EQ(b["eventTypeId"], event_type_);
  EXPECT_EQ(b["title"], "Intro consult between Olga Owner and Ann Attendee");
  EXPECT_EQ(
      b["attendees"],
      json::parse(R"([{"name":"Ann Attendee","email":"ann@example.com","timeZone":"UTC","absent":false}])"));
  EXPECT_EQ(b["hosts"][0]["id"], owner_);
  EXPECT_EQ(b["hosts"][0]["email"], "owner@example.com");
  EXPECT_EQ(b["hosts"][0]["username"], "owner");
  EXPECT_EQ(b["guests"], json::array());
  EXPECT_EQ(b["location"], "integrations:google:meet");
  EXPECT_EQ(b["metadata"], json::object());
  EXPECT_FALSE(b.contains("rescheduledFromUid"));
  EXPECT_EQ(b["eventType"]["id"], event_type_);
  EXPECT_EQ(b["absentHost"], false);
  EXPECT_FALSE(b["uid"].get<std::string>().empty());
  EXPECT_EQ(Call("GET", "/v2/bookings/" + b["uid"].get<std::string>(), owner_key_).Json()["data"], b);

  for (const char* status : {"pending", "cancelled", "rejected", "accepted"}) {
    json s = Import(owner_, event_type_, In(24 * 60), status);
    EXPECT_EQ(s["status"], status);
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bookings"), 5);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM booking_attendees"), 5);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_events"), 0);  // import brings history over, no events
}

TEST_F(BookingsImport, BadInputStoresNothing) {
  const int64_t others = CreateEventType(other_key_, "theirs")["id"].get<int64_t>();
  const std::string et = std::to_string(event_type_);
  const std::string user = std::to_string(owner_);
  const std::string start = "2026-05-04T09:30:00Z";
  struct Case {
    std::vector<std::string> args;
    std::string expect_in_err;
  };
  std::vector<Case> cases = {
      {{"--user-id", user, "--event-type-id", std::to_string(others), "--start", start, "--attendee-email",
        "a@b.co", "--attendee-name", "A"},
       "not found"},
      {{"--user-id", "999999", "--event-type-id", et, "--start", start, "--attendee-email", "a@b.co",
        "--attendee-name", "A"},
       "not found"},
      {{"--user-id", user, "--event-type-id", "999999", "--start", start, "--attendee-email", "a@b.co",
        "--attendee-name", "A"},
       "not found"},
      {{"--user-id", user, "--event-type-id", et, "--start", "next tuesday", "--attendee-email", "a@b.co",
        "--attendee-name", "A"},
       "--start"},
      {{"--user-id", user, "--event-type-id", et, "--start", "2026-05-04T09:30:00", "--attendee-email",
        "a@b.co", "--attendee-name", "A"},
       "--start"},
      {{"--user-id", user, "--event-type-id", et, "--start", start, "--attendee-email", "not-an-email",
        "--attendee-name", "A"},
       "--attendee-email"},
      {{"--user-id", user, "--event-type-id", et, "--start", start, "--attendee-email", "a@b.co",
        "--attendee-name", " "},
       "--attendee-name"},
      {{"--user-id", user, "--event-type-id", et, "--start", start, "--attendee-email", "a@b.co",
        "--attendee-name", "A", "--status", "completed"},
       "--status"},
      {{"--user-id", user, "--event-type-id", et, "--start", start, "--attendee-email", "a@b.co",
        "--attendee-name", "A", "--status", "maybe"},
       "--status"},
      {{"--user-id", "abc", "--event-type-id", et, "--start", start, "--attendee-email", "a@b.co",
        "--attendee-name", "A"},
       "--user-id"},
      {{"--user-id", user, "--start", start, "--attendee-email", "a@b.co", "--attendee-name", "A"},
       "--event-type-id"},
      {{"--user-id", user, "--event-type-id", et, "--start", start, "--attendee-email", "a@b.co",
        "--attendee-name", "A", "--colour", "red"},
       "--colour"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"admin", "booking", "import"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CliResult r = server_->Cli(args);
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_NE(r.err.find(c.expect_in_err), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  CliResult no_sub = server_->Cli({"admin", "booking", "export"});
  EXPECT_NE(no_sub.exit_code, 0);
  EXPECT_NE(no_sub.err.find("usage"), std::string::npos) << no_sub.err;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bookings"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM booking_attendees"), 0);
}

}  // namespace
}  // namespace rendezvous::testing
