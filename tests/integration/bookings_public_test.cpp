// The public booking flow against the real server and database: slots of the implicit working
// hours, create (pending when confirmation is required), the 409 of a taken or too-soon time, bad
// input (400 naming the field, nothing written), idempotency keys, cancel, reschedule, reopen,
// buffers, references, the events each operation writes, the rate limits per client address
// and per credential, starts past max_days_ahead and the event types' booking limits per period.
#include <atomic>
#include <thread>

#include "bookings_fixture.hpp"
#include "rendezvous/crypto.hpp"

namespace rendezvous::testing {
namespace {

class BookingsPublic : public BookingsFixture {
 protected:
  void SetUp() override {
    StartServer();
    event_type_ = CreateEventType(owner_key_, "intro", 30)["id"].get<int64_t>();
  }

  json Body(const std::string& start, int64_t event_type = 0, json extra = json::object()) {
    json body = {{"start", start},
                 {"eventTypeId", event_type ? event_type : event_type_},
                 {"attendee", {{"name", "Ann Attendee"}, {"email", "ann@example.com"}, {"timeZone", "Europe/Berlin"}}}};
    body.update(extra);
    return body;
  }
  HttpResult Book(const std::string& start, int64_t event_type = 0, json extra = json::object()) {
    return Call("POST", "/v2/bookings", "", Body(start, event_type, extra));
  }
  HttpResult Slots(int64_t event_type, const std::string& start, const std::string& end, const std::string& zone = "") {
    std::string q = "/v2/slots?eventTypeId=" + std::to_string(event_type) + "&start=" + start + "&end=" + end;
    if (!zone.empty()) q += "&timeZone=" + zone;
    return Call("GET", q, "");
  }
  std::vector<std::string> StartsOn(const json& slots, const std::string& date) {
    std::vector<std::string> out;
    if (!slots.contains(date)) return out;
    for (const json& s : slots[date]) out.push_back(s["start"]);
    return out;
  }
  int64_t Bookings() const { return Count("SELECT COUNT(*) FROM bookings"); }
  int64_t Events() const { return Count("SELECT COUNT(*) FROM outbox_events WHERE topic = 'bookings'"); }

  int64_t event_type_ = 0;
};

TEST_F(BookingsPublic, SlotsFollowTheImplicitWorkingHours) {
  const std::string monday = Monday();
  HttpResult r = Slots(event_type_, monday, time::FormatDate(time::CivilFromDays(time::DaysFromCivil(*time::ParseDate(monday)) + 6)));
  ASSERT_EQ(r.status, 200) << r.body;
  const json data = r.Json()["data"];
  ASSERT_EQ(data.size(), 5u) << data.dump();  // Monday to Friday
  std::vector<std::string> starts = StartsOn(data, monday);
  ASSERT_EQ(starts.size(), 16u);
  EXPECT_EQ(starts.front(), At(monday, "09:00"));
  EXPECT_EQ(starts.back(), At(monday, "16:30"));
  // The same slots seen from New York fall on the same dates there (09:00Z is 04:00 or 05:00).
  HttpResult ny = Slots(event_type_, monday, monday, "America/New_York");
  ASSERT_EQ(ny.status, 200) << ny.body;
  EXPECT_EQ(StartsOn(ny.Json()["data"], monday).front(), At(monday, "09:00"));
}

TEST_F(BookingsPublic, SlotQueriesAreChecked) {
  const std::string monday = Monday();
  struct Case {
    std::string query;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"start=" + monday + "&end=" + monday, "eventTypeId"},
      {"eventTypeId=999999&start=" + monday + "&end=" + monday, "eventTypeId"},
      {"eventTypeId=abc&start=" + monday + "&end=" + monday, "eventTypeId"},
      {"eventTypeId=" + std::to_string(event_type_) + "&end=" + monday, "start"},
      {"eventTypeId=" + std::to_string(event_type_) + "&start=2026-02-30&end=" + monday, "start"},
      {"eventTypeId=" + std::to_string(event_type_) + "&start=" + monday + "&end=tomorrow", "end"},
      {"eventTypeId=" + std::to_string(event_type_) + "&start=" + monday + "&end=" + monday + "&timeZone=Mars/Base",
       "timeZone"},
      {"eventTypeId=" + std::to_string(event_type_) + "&start=2027-01-01&end=2027-03-05", "end"},  // 63 days
      {"eventTypeId=" + std::to_string(event_type_) + "&start=" + monday + "T10:00:00Z&end=" + monday + "T09:00:00Z",
       "end"},
  };
  for (const Case& c : cases) {
    HttpResult r = Call("GET", "/v2/slots?" + c.query, "");
    EXPECT_EQ(r.status, 400) << c.query << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], c.field) << c.query << " " << r.body;
  }
  EXPECT_EQ(Call("GET", "/v2/slots?eventTypeId=" + std::to_string(event_type_) + "&start=2027-01-01&end=2027-03-03", "")
                .status,
            200);  // 62 days
}

TEST_F(BookingsPublic, CreateAnswersTheBookingAndWritesItsEvent) {
  const std::string monday = Monday();
  ASSERT_EQ(StartsOn(Slots(event_type_, monday, monday).Json()["data"], monday).size(), 16u);  // read once before
  HttpResult r = Book(At(monday, "10:00"), 0,
                      {{"guests", {"gus@example.com"}}, {"metadata", {{"source", "web"}, {"n", 3}}}});
  ASSERT_EQ(r.status, 201) << r.body;
  const json b = r.Json()["data"];
  EXPECT_EQ(b["status"], "accepted");
  EXPECT_EQ(b["start"], At(monday, "10:00"));
  EXPECT_EQ(b["end"], At(monday, "10:30"));
  EXPECT_EQ(b["duration"], 30);
  EXPECT_EQ(b["title"], "Intro intro between Olga Owner and Ann Attendee");
  ASSERT_EQ(b["attendees"].size(), 2u);
  EXPECT_EQ(b["attendees"][0]["timeZone"], "Europe/Berlin");
  EXPECT_EQ(b["attendees"][1]["email"], "gus@example.com");
  EXPECT_EQ(b["guests"], json::array({"gus@example.com"}));
  EXPECT_EQ(b["hosts"][0]["id"], owner_);
  EXPECT_EQ(b["hosts"][0]["username"], "owner");
  EXPECT_EQ(b["metadata"]["source"], "web");
  EXPECT_EQ(Call("GET", "/v2/bookings/" + b["uid"].get<std::string>(), owner_key_).Json()["data"], b);

  ASSERT_EQ(OutboxCount("BOOKING_CREATED"), 1);
  const json e = LastOutbox("BOOKING_CREATED");
  EXPECT_EQ(e["triggerEvent"], "BOOKING_CREATED");
  const json& p = e["payload"];
  EXPECT_EQ(p["uid"], b["uid"]);
  EXPECT_EQ(p["bookingId"], b["id"]);
  EXPECT_EQ(p["startTime"], b["start"]);
  EXPECT_EQ(p["endTime"], b["end"]);
  EXPECT_EQ(p["type"], "intro");
  EXPECT_EQ(p["eventTitle"], "Intro intro");
  EXPECT_EQ(p["length"], 30);
  EXPECT_EQ(p["organizer"], json({{"id", owner_}, {"name", "Olga Owner"}, {"email", "owner@example.com"},
                                  {"timeZone", "UTC"}}));
  ExpectPayloadShows(p, b);

  // The slot is gone, and the same time (or one overlapping it) is 409 saying why.
  EXPECT_EQ(StartsOn(Slots(event_type_, monday, monday).Json()["data"], monday).size(), 15u);
  HttpResult again = Book(At(monday, "10:00"));
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_NE(again.Json()["error"]["message"].get<std::string>().find("not available"), std::string::npos) << again.body;
  const int64_t quarter = CreateEventType(owner_key_, "quarter", 30, {{"slotInterval", 15}})["id"].get<int64_t>();
  EXPECT_EQ(Book(At(monday, "09:45"), quarter).status, 409);
  EXPECT_EQ(Book(At(monday, "10:15"), quarter).status, 409);
  EXPECT_EQ(Book(At(monday, "10:30"), quarter).status, 201);
  EXPECT_EQ(OutboxCount("BOOKING_CREATED"), 2);
}

TEST_F(BookingsPublic, ConfirmationRequiredMakesItPending) {
  const int64_t et = CreateEventType(owner_key_, "vetted", 30, {{"requiresConfirmation", true}})["id"].get<int64_t>();
  const std::string monday = Monday();
  HttpResult r = Book(At(monday, "11:00"), et);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.Json()["data"]["status"], "pending");
  EXPECT_EQ(LastOutbox("BOOKING_CREATED")["payload"]["status"], "pending");
  // A pending booking holds its time.
  EXPECT_EQ(Book(At(monday, "11:00")).status, 409);
}

TEST_F(BookingsPublic, BadInputNamesTheFieldAndWritesNothing) {
  const std::string monday = Monday();
  const json ok = Body(At(monday, "09:00"));
  auto with = [&](const std::string& path, const json& value) {
    json b = ok;
    b[json::json_pointer(path)] = value;
    return b;
  };
  json guests = json::array();
  for (int i = 0; i < 11; ++i) guests.push_back("g" + std::to_string(i) + "@example.com");
  json metadata = json::object();
  for (int i = 0; i < 51; ++i) metadata["k" + std::to_string(i)] = "v";
  struct Case {
    json body;
    std::string field;
    int status;
  };
  json no_attendee = ok;
  no_attendee.erase("attendee");
  const std::vector<Case> cases = {
      {with("/eventTypeId", 999999), "eventTypeId", 400},
      {with("/eventTypeId", "1"), "eventTypeId", 400},
      {with("/start", At("2021-03-01", "09:00")), "start", 400},  // in the past
      {with("/start", At(monday, "09:10")), "start", 400},        // off the grid
      {with("/start", At(monday, "20:00")), "start", 400},        // outside working hours
      {with("/start", "next monday"), "start", 400},
      {with("/start", monday + "T09:00:00"), "start", 400},  // no zone
      {with("/attendee/email", "ann.example.com"), "attendee.email", 400},
      {with("/attendee/timeZone", "Europe/Nowhere"), "attendee.timeZone", 400},
      {with("/attendee/name", "  "), "attendee.name", 400},
      {with("/attendee/language", "<script>"), "attendee.language", 400},
      {no_attendee, "attendee", 400},
      {with("/guests", guests), "guests", 400},
      {with("/guests", json::array({"ann@example.com"})), "guests[0]", 400},
      {with("/guests", json::array({"gus@example.com", "gus.example.com"})), "guests[1]", 400},
      {with("/guests", "gus@example.com"), "guests", 400},
      {with("/metadata", metadata), "metadata", 400},
      {with("/metadata", json{{std::string(41, 'k'), "v"}}), "metadata", 400},
      {with("/metadata", json{{"k", std::string(501, 'v')}}), "metadata.k", 400},
      {with("/metadata", json{{"k", json::array()}}), "metadata.k", 400},
      {with("/uid", "chosen"), "uid", 400},
  };
  for (const Case& c : cases) {
    HttpResult r = Call("POST", "/v2/bookings", "", c.body);
    EXPECT_EQ(r.status, c.status) << c.body.dump() << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], c.field) << c.body.dump() << " " << r.body;
  }
  EXPECT_EQ(Call("POST", "/v2/bookings", "", "[1]").status, 400);
  EXPECT_EQ(Call("POST", "/v2/bookings", "", "{\"start\":").status, 400);
  EXPECT_EQ(Bookings(), 0);
  EXPECT_EQ(Events(), 0);
  EXPECT_EQ(Book(At(monday, "09:00")).status, 201);  // the same body without the fault books
}

TEST_F(BookingsPublic, GuestsAreRefusedWhenTheEventTypeDisablesThem) {
  const int64_t solo =
      CreateEventType(owner_key_, "solo", 30, {{"disableGuests", true}})["id"].get<int64_t>();
  const std::string monday = Monday();
  HttpResult refused = Book(At(monday, "09:00"), solo, {{"guests", {"gus@example.com"}}});
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.Json()["error"]["details"]["field"], "guests") << refused.body;
  EXPECT_EQ(Bookings(), 0);
  EXPECT_EQ(Events(), 0);
  // Without guests (or with an empty list) the same event type books.
  HttpResult booked = Book(At(monday, "09:00"), solo, {{"guests", json::array()}});
  ASSERT_EQ(booked.status, 201) << booked.body;
  EXPECT_EQ(booked.Json()["data"]["guests"], json::array());
  EXPECT_EQ(booked.Json()["data"]["attendees"].size(), 1u);
  // Another event type of the host still takes them.
  HttpResult guested = Book(At(monday, "10:00"), 0, {{"guests", {"gus@example.com", "gwen@example.com"}}});
  ASSERT_EQ(guested.status, 201) << guested.body;
  EXPECT_EQ(guested.Json()["data"]["guests"], json::array({"gus@example.com", "gwen@example.com"}));
  EXPECT_EQ(LastOutbox("BOOKING_CREATED")["payload"]["attendees"].size(), 3u);
}

TEST_F(BookingsPublic, MinimumNoticeAndBuffers) {
  // Notice: a week and a day; the first Monday a week ahead is inside it for some hours at least.
  const int64_t noticed = CreateEventType(owner_key_, "noticed", 30, {{"minimumBookingNotice", 60 * 24 * 30}})["id"];
  const std::string monday = Monday();
  HttpResult soon = Book(At(monday, "09:00"), noticed);
  EXPECT_EQ(soon.status, 409) << soon.body;
  EXPECT_NE(soon.body.find("minimum booking notice"), std::string::npos) << soon.body;
  EXPECT_TRUE(Slots(noticed, monday, monday).Json()["data"].empty());

  // Buffers: 15 minutes after each booking, slots every 15 minutes.
  const int64_t buffered =
      CreateEventType(owner_key_, "buffered", 30, {{"afterEventBuffer", 15}, {"beforeEventBuffer", 15}, {"slotInterval", 15}})["id"];
  const std::string later = Monday(2);
  ASSERT_EQ(Book(At(later, "10:00"), buffered).status, 201);
  std::vector<std::string> starts = StartsOn(Slots(buffered, later, later).Json()["data"], later);
  for (const char* taken : {"09:30", "09:45", "10:00", "10:15", "10:30"}) {
    EXPECT_EQ(std::count(starts.begin(), starts.end(), At(later, taken)), 0) << taken;
  }
  for (const char* free : {"09:15", "10:45"}) EXPECT_EQ(std::count(starts.begin(), starts.end(), At(later, free)), 1) << free;
  EXPECT_EQ(Book(At(later, "10:30"), buffered).status, 409);
  EXPECT_EQ(Book(At(later, "09:15"), buffered).status, 201);
  // A booking without buffers still keeps the other's: its start may not fall in 10:30-10:45.
  EXPECT_EQ(Book(At(later, "10:30")).status, 409);
}

TEST_F(BookingsPublic, IdempotencyKeyAnswersTheFirstBookingAgain) {
  const std::string monday = Monday();
  auto post = [&](const std::string& key, const json& body) {
    return http_.Request("POST", server_->api() + "/v2/bookings", body.dump(),
                         {"Content-Type: application/json", "Idempotency-Key: " + key});
  };
  HttpResult first = post("key-1", Body(At(monday, "13:00")));
  ASSERT_EQ(first.status, 201) << first.body;
  HttpResult retry = post("key-1", Body(At(monday, "13:00")));
  EXPECT_EQ(retry.status, 201) << retry.body;
  EXPECT_EQ(retry.Json()["data"]["uid"], first.Json()["data"]["uid"]);
  EXPECT_EQ(Bookings(), 1);
  EXPECT_EQ(OutboxCount("BOOKING_CREATED"), 1);
  HttpResult other = post("key-1", Body(At(monday, "14:00")));
  EXPECT_EQ(other.status, 422) << other.body;
  EXPECT_EQ(Bookings(), 1);
  // Without a key, or with another key, the retry is a 409: the time is taken.
  EXPECT_EQ(Book(At(monday, "13:00")).status, 409);
  EXPECT_EQ(post("key-2", Body(At(monday, "13:00"))).status, 409);
  HttpResult too_long = post(std::string(256, 'k'), Body(At(monday, "15:00")));
  EXPECT_EQ(too_long.status, 400) << too_long.body;
  EXPECT_EQ(too_long.Json()["error"]["details"]["field"], "Idempotency-Key");
  // A key older than a day is forgotten.
  db_.Exec("UPDATE booking_idempotency_keys SET created_at = created_at - INTERVAL 25 HOUR");
  HttpResult stale = post("key-1", Body(At(monday, "14:00")));
  EXPECT_EQ(stale.status, 201) << stale.body;
  EXPECT_EQ(Bookings(), 2);
}

TEST_F(BookingsPublic, RacingCreatesNeverOverlap) {
  const int64_t hour = CreateEventType(owner_key_, "hour", 60, {{"slotInterval", 10}})["id"].get<int64_t>();
  const std::string monday = Monday();
  std::atomic<int> created{0}, conflicts{0}, others{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 40; ++i) {
    threads.emplace_back([&, i] {
      HttpClient client;
      const int minutes = 9 * 60 + (i % 20) * 10;  // 09:00 .. 12:10, every start overlaps others
      char clock[6];
      std::snprintf(clock, sizeof clock, "%02d:%02d", minutes / 60, minutes % 60);
      json body = Body(At(monday, clock), hour);
      body["attendee"]["email"] = "racer" + std::to_string(i) + "@example.com";
      HttpResult r = client.Request("POST", server_->api() + "/v2/bookings", body.dump(),
                                    {"Content-Type: application/json"});
      (r.status == 201 ? created : r.status == 409 ? conflicts : others)++;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(others.load(), 0);
  // An hour starting at S blocks the starts S-50 .. S+50, 11 of the 20: whichever requests win the
  // race, at least two bookings fit (09:50 and 11:40 block all the others), and at most four.
  EXPECT_GE(created.load(), 2);
  EXPECT_LE(created.load(), 4);
  EXPECT_GE(conflicts.load(), 20);
  EXPECT_EQ(created.load() + conflicts.load(), 40);
  EXPECT_EQ(Bookings(), created.load());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bookings a JOIN bookings b ON a.id < b.id AND a.host_id = b.host_id"
                  " WHERE a.status IN ('accepted', 'pending') AND b.status IN ('accepted', 'pending')"
                  " AND a.start_at < b.end_at AND b.start_at < a.end_at"),
            0);
  EXPECT_EQ(OutboxCount("BOOKING_CREATED"), created.load());
}

// Every booking answer (create, get, list, cancel, reschedule, confirm, decline, mark-absent) in
// Cal.com's shape: eventType and absentHost present, optional strings omitted while they have no
// value and strings once they have one.
TEST_F(BookingsPublic, AnswersCarryCalComBookingFields) {
  const std::string monday = Monday();
  HttpResult created = Book(At(monday, "09:00"));
  ASSERT_EQ(created.status, 201) << created.body;
  const json b = created.Json()["data"];
  ExpectCalComShape(b, "intro");
  for (const char* omitted : {"location", "cancellationReason", "rescheduledFromUid", "rescheduledToUid"}) {
    EXPECT_FALSE(b.contains(omitted)) << omitted << ": " << b;
  }
  EXPECT_EQ(b["eventType"]["id"], event_type_);
  EXPECT_EQ(b["hosts"][0]["username"], "owner");
  EXPECT_EQ(b["guests"], json::array());
  const std::string uid = b["uid"];
  HttpResult got = Call("GET", "/v2/bookings/" + uid, owner_key_);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["data"], b);
  HttpResult listed = Call("GET", "/v2/bookings", owner_key_);
  ASSERT_EQ(listed.status, 200) << listed.body;
  ASSERT_EQ(listed.Json()["data"].size(), 1u);
  EXPECT_EQ(listed.Json()["data"][0], b);

  HttpResult moved =
      Call("POST", "/v2/bookings/" + uid + "/reschedule", "", json{{"start", At(monday, "10:00")}});
  ASSERT_EQ(moved.status, 201) << moved.body;
  const json fresh = moved.Json()["data"];
  ExpectCalComShape(fresh, "intro");
  EXPECT_EQ(fresh["rescheduledFromUid"], uid);
  EXPECT_FALSE(fresh.contains("cancellationReason"));
  EXPECT_FALSE(fresh.contains("rescheduledToUid"));
  const json was = Call("GET", "/v2/bookings/" + uid, owner_key_).Json()["data"];
  ExpectCalComShape(was, "intro");
  EXPECT_EQ(was["rescheduledToUid"], fresh["uid"]);
  EXPECT_FALSE(was.contains("cancellationReason"));  // rescheduled without a reason

  HttpResult cancelled =
      Call("POST", "/v2/bookings/" + fresh["uid"].get<std::string>() + "/cancel", "", "{}");
  ASSERT_EQ(cancelled.status, 200) << cancelled.body;
  ExpectCalComShape(cancelled.Json()["data"], "intro");
  EXPECT_FALSE(cancelled.Json()["data"].contains("cancellationReason"));
  // The webhook payload keeps every field, null without a value.
  const json payload = LastOutbox("BOOKING_CANCELLED")["payload"];
  EXPECT_TRUE(payload["cancellationReason"].is_null());
  EXPECT_TRUE(payload["location"].is_null());
  EXPECT_FALSE(payload.contains("eventType"));

  const int64_t vetted =
      CreateEventType(owner_key_, "vetted", 30, {{"requiresConfirmation", true}})["id"].get<int64_t>();
  HttpResult placed = Book(At(monday, "11:00"), vetted, {{"location", "Room 1"}});
  ASSERT_EQ(placed.status, 201) << placed.body;
  const json pending = placed.Json()["data"];
  ExpectCalComShape(pending, "vetted");
  EXPECT_EQ(pending["location"], "Room 1");
  const std::string pending_uid = pending["uid"];
  HttpResult confirmed = Call("POST", "/v2/bookings/" + pending_uid + "/confirm", owner_key_, "{}");
  ASSERT_EQ(confirmed.status, 200) << confirmed.body;
  ExpectCalComShape(confirmed.Json()["data"], "vetted");
  const std::string second = Book(At(monday, "13:00"), vetted).Json()["data"]["uid"];
  HttpResult declined =
      Call("POST", "/v2/bookings/" + second + "/decline", owner_key_, json{{"reason", "Busy"}});
  ASSERT_EQ(declined.status, 200) << declined.body;
  ExpectCalComShape(declined.Json()["data"], "vetted");
  EXPECT_EQ(declined.Json()["data"]["cancellationReason"], "Busy");

  const std::string past = Import(owner_, event_type_, In(-120))["uid"];
  HttpResult absent = Call("POST", "/v2/bookings/" + past + "/mark-absent", owner_key_, json{{"host", true}});
  ASSERT_EQ(absent.status, 200) << absent.body;
  ExpectCalComShape(absent.Json()["data"], "intro", true);
  ExpectCalComShape(Call("GET", "/v2/bookings/" + past, owner_key_).Json()["data"], "intro", true);
  HttpResult present =
      Call("POST", "/v2/bookings/" + past + "/mark-absent", owner_key_, json{{"host", false}});
  ASSERT_EQ(present.status, 200) << present.body;
  ExpectCalComShape(present.Json()["data"], "intro", false);
}

TEST_F(BookingsPublic, CancelFreesTheTime) {
  const std::string monday = Monday();
  const std::string uid = Book(At(monday, "09:30")).Json()["data"]["uid"];
  HttpResult bad = Call("POST", "/v2/bookings/" + uid + "/cancel", "", json{{"cancellationReason", 5}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.Json()["error"]["details"]["field"], "cancellationReason");
  HttpResult r = Call("POST", "/v2/bookings/" + uid + "/cancel", "", json{{"cancellationReason", " Sick "}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["data"]["status"], "cancelled");
  EXPECT_EQ(r.Json()["data"]["cancellationReason"], "Sick");
  ASSERT_EQ(OutboxCount("BOOKING_CANCELLED"), 1);
  EXPECT_EQ(LastOutbox("BOOKING_CANCELLED")["payload"]["cancellationReason"], "Sick");
  EXPECT_EQ(Call("POST", "/v2/bookings/" + uid + "/cancel", "", "{}").status, 409);
  EXPECT_EQ(Call("POST", "/v2/bookings/nope/cancel", "", "{}").status, 404);
  EXPECT_EQ(Book(At(monday, "09:30")).status, 201);
  EXPECT_EQ(OutboxCount("BOOKING_CANCELLED"), 1);
  // Lists follow every change, also one made by another process: seen, cancelled, imported.
  const std::string uid2 = Book(At(monday, "11:00")).Json()["data"]["uid"];
  auto listed = [&](const char* clock) {
    std::vector<std::string> starts = StartsOn(Slots(event_type_, monday, monday).Json()["data"], monday);
    return std::count(starts.begin(), starts.end(), At(monday, clock)) == 1;
  };
  EXPECT_FALSE(listed("11:00"));
  ASSERT_EQ(Call("POST", "/v2/bookings/" + uid2 + "/cancel", "", "{}").status, 200);
  EXPECT_TRUE(listed("11:00"));
  EXPECT_TRUE(listed("12:00"));
  Import(owner_, event_type_, At(monday, "12:00"));
  EXPECT_FALSE(listed("12:00"));
  // An ended booking cannot be cancelled, a pending one can.
  const std::string past = Import(owner_, event_type_, In(-120))["uid"];
  EXPECT_EQ(Call("POST", "/v2/bookings/" + past + "/cancel", "", "{}").status, 409);
  const std::string pending = Import(owner_, event_type_, In(60 * 24 * 30), "pending")["uid"];
  EXPECT_EQ(Call("POST", "/v2/bookings/" + pending + "/cancel", "", "{}").status, 200);
}

TEST_F(BookingsPublic, RescheduleReplacesTheBooking) {
  const int64_t hour = CreateEventType(owner_key_, "hour", 60, {{"slotInterval", 30}})["id"].get<int64_t>();
  const std::string monday = Monday();
  const json old = Book(At(monday, "09:00"), hour, {{"metadata", {{"ref", "x1"}}}}).Json()["data"];
  const std::string uid = old["uid"];
  // Overlapping its own old time is fine: the old booking does not count.
  HttpResult r = Call("POST", "/v2/bookings/" + uid + "/reschedule", "",
                      json{{"start", At(monday, "09:30")}, {"reschedulingReason", "Running late"}});
  ASSERT_EQ(r.status, 201) << r.body;
  const json fresh = r.Json()["data"];
  EXPECT_NE(fresh["uid"], uid);
  EXPECT_EQ(fresh["rescheduledFromUid"], uid);
  EXPECT_EQ(fresh["start"], At(monday, "09:30"));
  EXPECT_EQ(fresh["attendees"], old["attendees"]);
  EXPECT_EQ(fresh["metadata"], old["metadata"]);
  const json was = Call("GET", "/v2/bookings/" + uid, owner_key_).Json()["data"];
  EXPECT_EQ(was["status"], "cancelled");
  EXPECT_EQ(was["rescheduledToUid"], fresh["uid"]);
  EXPECT_EQ(was["cancellationReason"], "Running late");

  ASSERT_EQ(OutboxCount("BOOKING_RESCHEDULED"), 1);
  EXPECT_EQ(OutboxCount("BOOKING_CANCELLED"), 0);
  const json p = LastOutbox("BOOKING_RESCHEDULED")["payload"];
  EXPECT_EQ(p["uid"], fresh["uid"]);
  EXPECT_EQ(p["rescheduleUid"], uid);
  EXPECT_EQ(p["rescheduleStartTime"], At(monday, "09:00"));
  EXPECT_EQ(p["rescheduleEndTime"], At(monday, "10:00"));
  EXPECT_EQ(p["organizer"]["id"], owner_);

  // The old one is cancelled: it cannot move again; the new one cannot move onto a taken time.
  EXPECT_EQ(Call("POST", "/v2/bookings/" + uid + "/reschedule", "", json{{"start", At(monday, "13:00")}}).status, 409);
  ASSERT_EQ(Book(At(monday, "12:00"), hour).status, 201);
  const std::string fresh_uid = fresh["uid"];
  HttpResult taken = Call("POST", "/v2/bookings/" + fresh_uid + "/reschedule", "", json{{"start", At(monday, "11:30")}});
  EXPECT_EQ(taken.status, 409) << taken.body;
  HttpResult off = Call("POST", "/v2/bookings/" + fresh_uid + "/reschedule", "", json{{"start", At(monday, "11:10")}});
  EXPECT_EQ(off.status, 400) << off.body;
  EXPECT_EQ(Call("POST", "/v2/bookings/" + fresh_uid + "/reschedule", "", json{{"when", "soon"}}).status, 400);
  EXPECT_EQ(Call("POST", "/v2/bookings/nope/reschedule", "", json{{"start", At(monday, "14:00")}}).status, 404);
  EXPECT_EQ(OutboxCount("BOOKING_RESCHEDULED"), 1);
  // A rejected booking cannot be rescheduled.
  const std::string rejected = Import(owner_, hour, In(60 * 24 * 40), "rejected")["uid"];
  EXPECT_EQ(Call("POST", "/v2/bookings/" + rejected + "/reschedule", "", json{{"start", At(monday, "15:00")}}).status,
            409);
}

TEST_F(BookingsPublic, ReopenWhenTheTimeIsStillFree) {
  const int64_t vetted = CreateEventType(owner_key_, "vetted", 30, {{"requiresConfirmation", true}})["id"].get<int64_t>();
  const std::string monday = Monday();
  const std::string uid = Book(At(monday, "09:00")).Json()["data"]["uid"];
  ASSERT_EQ(Call("POST", "/v2/bookings/" + uid + "/reopen", owner_key_, "{}").status, 409);  // accepted
  ASSERT_EQ(Call("POST", "/v2/bookings/" + uid + "/cancel", "", "{\"cancellationReason\":\"oops\"}").status, 200);
  EXPECT_EQ(Call("POST", "/v2/bookings/" + uid + "/reopen", other_key_, "{}").status, 404);
  EXPECT_EQ(Call("POST", "/v2/bookings/" + uid + "/reopen", owner_key_, "{\"x\":1}").status, 400);
  HttpResult r = Call("POST", "/v2/bookings/" + uid + "/reopen", owner_key_, "{}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["data"]["status"], "accepted");
  EXPECT_FALSE(r.Json()["data"].contains("cancellationReason"));
  ASSERT_EQ(OutboxCount("BOOKING_REOPENED"), 1);
  EXPECT_EQ(LastOutbox("BOOKING_REOPENED")["payload"]["uid"], uid);

  // Taken in the meantime: 409, nothing written.
  ASSERT_EQ(Call("POST", "/v2/bookings/" + uid + "/cancel", "", "{}").status, 200);
  ASSERT_EQ(Book(At(monday, "09:00")).status, 201);
  HttpResult taken = Call("POST", "/v2/bookings/" + uid + "/reopen", owner_key_, "{}");
  EXPECT_EQ(taken.status, 409) << taken.body;
  EXPECT_EQ(OutboxCount("BOOKING_REOPENED"), 1);

  // Confirmation required: back to pending. A declined booking reopens too.
  const std::string pending = Book(At(monday, "14:00"), vetted).Json()["data"]["uid"];
  ASSERT_EQ(Call("POST", "/v2/bookings/" + pending + "/decline", owner_key_, "{}").status, 200);
  HttpResult again = Call("POST", "/v2/bookings/" + pending + "/reopen", owner_key_, "{}");
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.Json()["data"]["status"], "pending");
  // A past booking cannot be reopened.
  const std::string past = Import(owner_, event_type_, In(-60 * 24), "cancelled")["uid"];
  EXPECT_EQ(Call("POST", "/v2/bookings/" + past + "/reopen", owner_key_, "{}").status, 409);
}

// "YYYY-MM-DD" of the first Monday at least `days` days ahead (UTC).
std::string MondayAfter(int64_t days) {
  int64_t day = time::DaysFromCivil(time::Zone::Utc().DateAt(time::Now())) + days;
  while (time::IsoWeekday(time::CivilFromDays(day)) != 1) ++day;
  return time::FormatDate(time::CivilFromDays(day));
}
std::string DayAfter(const std::string& date, int days) {
  return time::FormatDate(time::CivilFromDays(time::DaysFromCivil(*time::ParseDate(date)) + days));
}

// A start further ahead than plugins.bookings.max_days_ahead (730 days by default), year 9999
// included, is a 400 naming start wherever a booking is made, and nothing is stored; slots end
// there; the database itself refuses a booking that does not end after it starts.
TEST_F(BookingsPublic, StartsTooFarAheadAreRefusedAndNothingIsStored) {
  // Open around the clock, so 23:45 on the last day of the year 9999 is on the grid.
  HttpResult schedule = Call("POST", "/v2/schedules", owner_key_,
                             json{{"name", "Always"}, {"timeZone", "UTC"},
                                  {"availability", json::array({{{"days", {"Monday", "Tuesday", "Wednesday", "Thursday",
                                                                           "Friday", "Saturday", "Sunday"}},
                                                                 {"startTime", "00:00"}, {"endTime", "24:00"}}})}});
  ASSERT_EQ(schedule.status, 201) << schedule.body;
  const int64_t always =
      CreateEventType(owner_key_, "always", 15, {{"scheduleId", schedule.Json()["data"]["id"]}})["id"].get<int64_t>();
  const std::string year_9999 = "9999-12-31T23:45:00Z";
  const std::string beyond = At(MondayAfter(731), "09:00");  // a working-hours slot but for the horizon
  for (const std::string& start : {year_9999, year_9999, beyond}) {
    HttpResult r = Book(start, always);
    EXPECT_EQ(r.status, 400) << start << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], "start") << r.body;
  }
  EXPECT_EQ(Bookings(), 0);
  EXPECT_EQ(Events(), 0);

  const std::string uid = Book(At(Monday(), "09:00")).Json()["data"]["uid"];
  for (const std::string& start : {year_9999, beyond}) {
    HttpResult r = Call("POST", "/v2/bookings/" + uid + "/reschedule", "", json{{"start", start}});
    EXPECT_EQ(r.status, 400) << start << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], "start") << r.body;
  }
  CliResult imported = RunImport(owner_, event_type_, year_9999, "ann@example.com", "Ann Attendee");
  EXPECT_NE(imported.exit_code, 0) << imported.out;
  EXPECT_NE(imported.err.find("--start must be before 9999"), std::string::npos) << imported.err;
  EXPECT_EQ(Bookings(), 1);
  EXPECT_EQ(Events(), 1);
  // An import brings over what another system holds: past the public horizon is accepted.
  CliResult far_import = RunImport(owner_, event_type_, beyond, "ann@example.com", "Ann Attendee");
  EXPECT_EQ(far_import.exit_code, 0) << far_import.err;
  EXPECT_EQ(Bookings(), 2);
  EXPECT_EQ(Call("GET", "/v2/bookings/" + uid, owner_key_).Json()["data"]["status"], "accepted");

  // Slots stop at the horizon: none on the Monday past it, the week before still has its own.
  const std::string last_monday = DayAfter(MondayAfter(731), -7);
  HttpResult slots = Slots(event_type_, last_monday, DayAfter(MondayAfter(731), 4));
  ASSERT_EQ(slots.status, 200) << slots.body;
  const json data = slots.Json()["data"];
  EXPECT_TRUE(data.contains(last_monday)) << data.dump();
  const time::Millis horizon = time::Now() + 730 * time::kMillisPerDay;
  for (auto it = data.begin(); it != data.end(); ++it) {
    for (const json& s : it.value()) EXPECT_LE(*time::ParseIso(s["start"].get<std::string>()), horizon) << s;
  }
  HttpResult far_slots = Slots(event_type_, "9999-12-01", "9999-12-31");
  ASSERT_EQ(far_slots.status, 200) << far_slots.body;
  EXPECT_EQ(far_slots.Json()["data"], json::object());

  EXPECT_ANY_THROW(db_.Exec("UPDATE bookings SET end_at = start_at WHERE uid = '" + uid + "'"));
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bookings WHERE end_at > start_at"), 2);
}

// bookingLimitsCount: a full day offers no more slots there and refuses creates, reschedules and
// reopens into it with 409 booking_limit_reached; other days are untouched.
TEST_F(BookingsPublic, ADayLimitStopsSlotsAndRefusesBookingsIntoTheFullDay) {
  const int64_t limited =
      CreateEventType(owner_key_, "limited", 30, {{"bookingLimitsCount", {{"day", 2}}}})["id"].get<int64_t>();
  const std::string monday = Monday();
  const std::string tuesday = DayAfter(monday, 1);
  ASSERT_EQ(StartsOn(Slots(limited, monday, monday).Json()["data"], monday).size(), 16u);
  const std::string first = Book(At(monday, "09:00"), limited).Json()["data"]["uid"];
  ASSERT_EQ(Book(At(monday, "10:00"), limited).status, 201);
  ASSERT_EQ(Book(At(monday, "11:00")).status, 201);  // another event type does not count

  const json slots = Slots(limited, monday, tuesday).Json()["data"];
  EXPECT_TRUE(StartsOn(slots, monday).empty()) << slots.dump();
  EXPECT_EQ(StartsOn(slots, tuesday).size(), 16u) << slots.dump();

  HttpResult full = Book(At(monday, "14:00"), limited);
  EXPECT_EQ(full.status, 409) << full.body;
  EXPECT_EQ(full.Json()["error"]["code"], "booking_limit_reached") << full.body;
  const int64_t created = OutboxCount("BOOKING_CREATED");

  // Moving a booking within its own full day is fine (it does not count itself); onto another
  // full day it is not.
  HttpResult moved = Call("POST", "/v2/bookings/" + first + "/reschedule", "", json{{"start", At(monday, "15:00")}});
  ASSERT_EQ(moved.status, 201) << moved.body;
  const std::string on_tuesday = Book(At(tuesday, "09:00"), limited).Json()["data"]["uid"];
  HttpResult into_full =
      Call("POST", "/v2/bookings/" + on_tuesday + "/reschedule", "", json{{"start", At(monday, "16:00")}});
  EXPECT_EQ(into_full.status, 409) << into_full.body;
  EXPECT_EQ(into_full.Json()["error"]["code"], "booking_limit_reached");

  // A cancelled booking frees its place; reopening it once the day is full again is refused.
  const std::string moved_uid = moved.Json()["data"]["uid"];
  ASSERT_EQ(Call("POST", "/v2/bookings/" + moved_uid + "/cancel", "", "{}").status, 200);
  EXPECT_EQ(StartsOn(Slots(limited, monday, monday).Json()["data"], monday).size(), 14u);  // 10:00 and 11:00 taken
  ASSERT_EQ(Book(At(monday, "13:00"), limited).status, 201);
  HttpResult reopened = Call("POST", "/v2/bookings/" + moved_uid + "/reopen", owner_key_, "{}");
  EXPECT_EQ(reopened.status, 409) << reopened.body;
  EXPECT_EQ(reopened.Json()["error"]["code"], "booking_limit_reached");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bookings WHERE event_type_id = " + std::to_string(limited) +
                  " AND status IN ('accepted', 'pending') AND DATE(start_at) = '" + monday + "'"),
            2);
  EXPECT_EQ(OutboxCount("BOOKING_CREATED"), created + 2);
  EXPECT_EQ(OutboxCount("BOOKING_REOPENED"), 0);
}

// Weeks begin on the host's weekStart; a full week offers nothing in it, the next week is open.
TEST_F(BookingsPublic, AWeekLimitCountsTheHostsWeek) {
  ASSERT_EQ(Call("PATCH", "/v2/me", owner_key_, json{{"weekStart", "Wednesday"}}).status, 200);
  const int64_t limited =
      CreateEventType(owner_key_, "weekly", 30, {{"bookingLimitsCount", {{"week", 2}}}})["id"].get<int64_t>();
  const std::string monday = Monday();
  // The host's week: Wednesday to Tuesday. Monday and Tuesday close the week begun the Wednesday
  // before; Wednesday opens the next.
  ASSERT_EQ(Book(At(monday, "09:00"), limited).status, 201);
  ASSERT_EQ(Book(At(DayAfter(monday, 1), "09:00"), limited).status, 201);
  const json slots = Slots(limited, monday, DayAfter(monday, 4)).Json()["data"];
  EXPECT_FALSE(slots.contains(monday)) << slots.dump();
  EXPECT_FALSE(slots.contains(DayAfter(monday, 1))) << slots.dump();
  EXPECT_EQ(StartsOn(slots, DayAfter(monday, 2)).size(), 16u) << slots.dump();
  HttpResult full = Book(At(DayAfter(monday, 1), "10:00"), limited);
  EXPECT_EQ(full.status, 409) << full.body;
  EXPECT_EQ(full.Json()["error"]["code"], "booking_limit_reached");
  EXPECT_EQ(Book(At(DayAfter(monday, 2), "09:00"), limited).status, 201);
}

// The limit holds however many creates race into one day (they are counted under the host's lock).
TEST_F(BookingsPublic, ADayLimitHoldsUnderRacingCreates) {
  const int64_t limited =
      CreateEventType(owner_key_, "racy", 15, {{"bookingLimitsCount", {{"day", 3}, {"month", 1000}}}})["id"].get<int64_t>();
  const std::string monday = Monday();
  std::atomic<int> created{0}, limited_out{0}, others{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      HttpClient client;
      const int minutes = 9 * 60 + i * 15;  // 16 distinct, non-overlapping starts
      char clock[16];
      std::snprintf(clock, sizeof clock, "%02d:%02d", minutes / 60, minutes % 60);
      json body = Body(At(monday, clock), limited);
      body["attendee"]["email"] = "racer" + std::to_string(i) + "@example.com";
      HttpResult r = client.Request("POST", server_->api() + "/v2/bookings", body.dump(),
                                    {"Content-Type: application/json"});
      const bool limit = r.status == 409 && r.Json()["error"]["code"] == "booking_limit_reached";
      (r.status == 201 ? created : limit ? limited_out : others)++;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(others.load(), 0);
  EXPECT_EQ(created.load(), 3);
  EXPECT_EQ(limited_out.load(), 13);
  EXPECT_EQ(Bookings(), 3);
}

TEST_F(BookingsPublic, ReferencesBelongToTheOwner) {
  const std::string monday = Monday();
  const json b = Book(At(monday, "09:00")).Json()["data"];
  const std::string uid = b["uid"];
  HttpResult none = Call("GET", "/v2/bookings/" + uid + "/references", owner_key_);
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_EQ(none.Json()["data"], json::array());
  db_.Exec("INSERT INTO booking_references (booking_id, type, event_uid, calendar_id, created_at) VALUES (" +
           std::to_string(b["id"].get<int64_t>()) + ", 'google_calendar', 'evt123', 'primary', '2026-05-01 10:00:00')");
  HttpResult one = Call("GET", "/v2/bookings/" + uid + "/references", owner_key_);
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.Json()["data"], json::parse(R"([{"type":"google_calendar","eventUid":"evt123","calendarId":"primary",
                                                  "createdAt":"2026-05-01T10:00:00.000Z"}])"));
  EXPECT_EQ(Call("GET", "/v2/bookings/" + uid + "/references", other_key_).status, 404);
  EXPECT_EQ(Call("GET", "/v2/bookings/" + uid + "/references", "").status, 401);
}

// The public routes behind a trusted proxy (127.0.0.1, which the test connects from), limited to
// a burst of 5 refilled one token per 10 s: slow enough that no refill lands mid-test.
class BookingsRateLimit : public BookingsPublic {
 protected:
  void SetUp() override {
    StartServer("bookings: { public_rate_limit: { per_minute: 6, burst: 5 } }\n", "",
                "trusted_proxies: [\"127.0.0.1\"]\n");
    event_type_ = CreateEventType(owner_key_, "intro", 30)["id"].get<int64_t>();
  }
  // A public request from `client` (the address the trusted proxy names in X-Forwarded-For).
  HttpResult From(const std::string& client, const std::string& method, const std::string& path,
                  const json& body = nullptr) {
    std::vector<std::string> headers = {"X-Forwarded-For: " + client};
    if (!body.is_null()) headers.push_back("Content-Type: application/json");
    return http_.Request(method, server_->api() + path, body.is_null() ? "" : body.dump(), headers);
  }
  std::string SlotsPath(const std::string& day) const {
    return "/v2/slots?eventTypeId=" + std::to_string(event_type_) + "&start=" + day + "&end=" + day;
  }
  static void ExpectRefused(const HttpResult& r) {
    EXPECT_EQ(r.status, 429) << r.body;
    EXPECT_EQ(r.Json()["error"]["code"], "rate_limited") << r.body;
    const int retry = std::atoi(r.Header("retry-after").c_str());
    EXPECT_GE(retry, 1) << r.Header("retry-after");
    EXPECT_LE(retry, 10) << r.Header("retry-after");
    EXPECT_EQ(r.Header("x-ratelimit-limit"), "5");
    EXPECT_EQ(r.Header("x-ratelimit-remaining"), "0");
    EXPECT_GE(std::atoi(r.Header("x-ratelimit-reset").c_str()), 1);
  }
  double RefusedMetric() {
    const std::string text = http_.Get(server_->api() + "/metrics").body;
    const std::string series = "http_rate_limited_total{group=\"bookings_public\"} ";
    const size_t at = text.find(series);
    return at == std::string::npos ? -1 : std::atof(text.c_str() + at + series.size());
  }
};

TEST_F(BookingsRateLimit, OneAddressGetsItsBurstThen429WhileOthersAreServed) {
  const std::string monday = Monday();
  EXPECT_EQ(RefusedMetric(), 0);  // seeded before any refusal
  // Allowed answers carry the headers, counting down.
  for (int i = 0; i < 4; ++i) {
    HttpResult r = From("198.51.100.7", "GET", SlotsPath(monday));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Header("x-ratelimit-limit"), "5");
    EXPECT_EQ(r.Header("x-ratelimit-remaining"), std::to_string(4 - i));
    EXPECT_GE(std::atoi(r.Header("x-ratelimit-reset").c_str()), 10 * (i + 1) - 1);
  }
  // The routes share the address's bucket: the fifth request is a create.
  HttpResult created = From("198.51.100.7", "POST", "/v2/bookings", Body(At(monday, "09:00")));
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.Header("x-ratelimit-remaining"), "0");
  const std::string uid = created.Json()["data"]["uid"];

  // Over the limit: refused before any work, nothing written.
  ExpectRefused(From("198.51.100.7", "GET", SlotsPath(monday)));
  ExpectRefused(From("198.51.100.7", "POST", "/v2/bookings", Body(At(monday, "10:00"))));
  ExpectRefused(From("198.51.100.7", "POST", "/v2/bookings/" + uid + "/cancel", json::object()));
  ExpectRefused(From("198.51.100.7", "POST", "/v2/bookings/" + uid + "/reschedule",
                     json{{"start", At(monday, "11:00")}}));
  EXPECT_EQ(Bookings(), 1);
  EXPECT_EQ(OutboxCount("BOOKING_CREATED"), 1);
  EXPECT_EQ(RefusedMetric(), 4);

  // Another client, and the proxy itself, have buckets of their own.
  HttpResult other = From("198.51.100.8", "POST", "/v2/bookings", Body(At(monday, "10:00")));
  ASSERT_EQ(other.status, 201) << other.body;
  EXPECT_EQ(other.Header("x-ratelimit-remaining"), "4");
  EXPECT_EQ(Call("GET", SlotsPath(monday), "").status, 200);
  // A client cannot pick a fresh bucket by forging the left of X-Forwarded-For: the proxy's
  // entry (the right-most untrusted one) names it.
  ExpectRefused(From("203.0.113.99, 198.51.100.7", "GET", SlotsPath(monday)));
  // Routes without a limit carry no headers, and credentials are not limited by default.
  HttpResult owner = Call("GET", "/v2/bookings", owner_key_);
  ASSERT_EQ(owner.status, 200) << owner.body;
  EXPECT_EQ(owner.Header("x-ratelimit-limit"), "");
}

TEST_F(BookingsRateLimit, NoCredentialLimitByDefault) {
  for (int i = 0; i < 80; ++i) {
    HttpResult r = Call("GET", "/v2/me", other_key_);
    ASSERT_EQ(r.status, 200) << i << " " << r.body;
    ASSERT_EQ(r.Header("x-ratelimit-limit"), "");
  }
}

// server.rate_limit.per_credential: 30 a minute (burst 30), one token per 2 s.
class BookingsCredentialLimit : public BookingsPublic {
 protected:
  void SetUp() override {
    StartServer("", "", "rate_limit: { per_credential: 30 }\n");
    event_type_ = CreateEventType(owner_key_, "intro", 30)["id"].get<int64_t>();
  }
};

TEST_F(BookingsCredentialLimit, AnApiKeyGetsItsBurstThen429) {
  int allowed = 0;
  HttpResult last;
  for (int i = 0; i < 60; ++i) {
    last = Call("GET", "/v2/me", other_key_);
    if (last.status != 200) break;
    ++allowed;
    EXPECT_EQ(last.Header("x-ratelimit-limit"), "30");
  }
  // 30, plus a token for each 2 s the loop took.
  EXPECT_GE(allowed, 30);
  EXPECT_LE(allowed, 33);
  EXPECT_EQ(last.status, 429) << last.body;
  EXPECT_EQ(last.Json()["error"]["code"], "rate_limited");
  EXPECT_GE(std::atoi(last.Header("retry-after").c_str()), 1);
  EXPECT_EQ(last.Header("x-ratelimit-remaining"), "0");
  // Another key is not affected; a wrong key is 401, not a token taken.
  HttpResult owner = Call("GET", "/v2/me", owner_key_);
  EXPECT_EQ(owner.status, 200) << owner.body;
  // One token went on the event type; a second may have come back since.
  const int remaining = std::atoi(owner.Header("x-ratelimit-remaining").c_str());
  EXPECT_GE(remaining, 28);
  EXPECT_LE(remaining, 29);
  EXPECT_EQ(Call("GET", "/v2/me", "rdv_not_a_key").status, 401);
  const std::string text = http_.Get(server_->api() + "/metrics").body;
  EXPECT_NE(text.find("http_rate_limited_total{group=\"credential\"} 1"), std::string::npos);
}

TEST(BookingsRateLimitConfig, BadValuesStopStartUpWithTheirLine) {
  ScratchDatabase db;
  TestServer server(db.name());
  struct Case {
    std::string yaml;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"    public_rate_limit: { per_minute: 120, burst: 0 }\n", ":3: plugins.bookings.public_rate_limit.burst"},
      {"    public_rate_limit:\n      per_minute: -1\n", ":4: plugins.bookings.public_rate_limit.per_minute"},
      {"    public_rate_limit: { per_second: 2 }\n", ":3: plugins.bookings.public_rate_limit.per_second"},
  };
  for (const Case& c : cases) {
    server.WriteConfig("plugins:\n  bookings:\n" + c.yaml);
    CliResult r = server.Cli({"serve"}, std::chrono::seconds(20));
    EXPECT_EQ(r.exit_code, 78) << c.yaml << r.err;
    EXPECT_NE(r.err.find(server.config_path() + c.error), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace rendezvous::testing
