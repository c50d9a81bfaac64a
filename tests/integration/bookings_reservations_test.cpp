// Slot reservations against the real server and database: a hold hides its slot from everyone's
// slots and refuses every booking of it but the holder's (who books it with its reservationUid,
// which ends it); delete, PATCH (move and renew) and expiry end or move it; past and off-grid
// slots are 400 naming slotStart; reservationDuration is the owner's; an address holds at most
// reservations.per_address; and a hold raced by 50 bookings from other addresses lets only the
// holder book, while after its end exactly one of a new race wins.
#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "bookings_fixture.hpp"
#include "eventually.hpp"

namespace rendezvous::testing {
namespace {

using time::Millis;

class BookingsReservations : public BookingsFixture {
 protected:
  // The public routes unlimited (the races send many requests) behind a trusted proxy
  // (127.0.0.1), so each request names its client address in X-Forwarded-For; the sweep every
  // second; at most 3 open holds per address.
  void SetUp() override {
    StartServer(
        "bookings: { completion_sweep_interval: 1, public_rate_limit: { per_minute: 0 },"
        " reservations: { minutes: 5, max_minutes: 15, per_address: 3 } }\n",
        "", "trusted_proxies: [\"127.0.0.1\"]\n");
    event_type_ = CreateEventType(owner_key_, "intro", 30)["id"].get<int64_t>();
    monday_ = Monday();
  }

  // A request from `address`, with `token` when not empty.
  HttpResult From(const std::string& address, const std::string& method, const std::string& path,
                  const json& body = nullptr, const std::string& token = "") {
    std::vector<std::string> headers = {"X-Forwarded-For: " + address};
    if (!token.empty()) headers.push_back("Authorization: Bearer " + token);
    if (!body.is_null()) headers.push_back("Content-Type: application/json");
    HttpClient client;
    return client.Request(method, server_->api() + path, body.is_null() ? "" : body.dump(), headers);
  }
  HttpResult Reserve(const std::string& address, const std::string& start, json extra = json::object(),
                     const std::string& token = "") {
    json body = {{"eventTypeId", event_type_}, {"slotStart", start}};
    body.update(extra);
    return From(address, "POST", "/v2/slots/reservations", body, token);
  }
  // Reserves `start` from `address`; the reservation's uid (fails the test unless 201).
  std::string Hold(const std::string& address, const std::string& start) {
    HttpResult r = Reserve(address, start);
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()["data"].value("reservationUid", "");
  }
  json BookingBody(const std::string& start, const std::string& email, json extra = json::object()) {
    json body = {{"start", start},
                 {"eventTypeId", event_type_},
                 {"attendee", {{"name", "Ann Attendee"}, {"email", email}, {"timeZone", "Europe/Berlin"}}}};
    body.update(extra);
    return body;
  }
  HttpResult Book(const std::string& address, const std::string& start, json extra = json::object()) {
    return From(address, "POST", "/v2/bookings", BookingBody(start, "ann@example.com", std::move(extra)));
  }
  // The starts GET /v2/slots offers on monday_, as `address` sees them.
  std::vector<std::string> Starts(const std::string& address) {
    HttpResult r = From(
        address, "GET",
        "/v2/slots?eventTypeId=" + std::to_string(event_type_) + "&start=" + monday_ + "&end=" + monday_);
    EXPECT_EQ(r.status, 200) << r.body;
    std::vector<std::string> out;
    const json data = r.Json()["data"];
    if (data.contains(monday_)) {
      for (const json& s : data[monday_]) out.push_back(s["start"]);
    }
    return out;
  }
  bool Offered(const std::string& start, const std::string& address = "198.51.100.99") {
    std::vector<std::string> starts = Starts(address);
    return std::find(starts.begin(), starts.end(), start) != starts.end();
  }
  int64_t Holds() const { return Count("SELECT COUNT(*) FROM slot_reservations"); }
  int64_t LiveBookings() const {
    return Count("SELECT COUNT(*) FROM bookings WHERE status IN ('accepted', 'pending')");
  }
  int64_t Overlaps() const {
    return Count(
        "SELECT COUNT(*) FROM bookings a JOIN bookings b ON a.id < b.id AND a.host_id = b.host_id"
        " WHERE a.status IN ('accepted', 'pending') AND b.status IN ('accepted', 'pending')"
        " AND a.start_at < b.end_at AND b.start_at < a.end_at");
  }
  // The value of one series on /metrics (-1 when it is missing).
  double Metric(const std::string& series) {
    const std::string text = http_.Get(server_->api() + "/metrics").body;
    const size_t at = text.find("\n" + series + " ");
    return at == std::string::npos ? -1 : std::atof(text.c_str() + at + series.size() + 2);
  }
  static void ExpectNamed(const HttpResult& r, const std::string& field) {
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], field) << r.body;
  }

  int64_t event_type_ = 0;
  std::string monday_;
};

TEST_F(BookingsReservations, AHoldHidesTheSlotAndOnlyItsHolderBooksIt) {
  const std::string nine = At(monday_, "09:00");
  ASSERT_TRUE(Offered(nine));
  EXPECT_EQ(Metric("bookings_reservations_created_total"), 0);
  const Millis before = time::Now();
  HttpResult held = Reserve("198.51.100.1", nine);
  ASSERT_EQ(held.status, 201) << held.body;
  const json data = held.Json()["data"];
  const std::string uid = data["reservationUid"];
  EXPECT_FALSE(uid.empty());
  EXPECT_EQ(data["eventTypeId"], event_type_);
  EXPECT_EQ(data["slotStart"], nine);
  EXPECT_EQ(data["slotEnd"], At(monday_, "09:30"));
  EXPECT_EQ(data["slotDuration"], 30);
  EXPECT_EQ(data["reservationDuration"], 5);
  const Millis until = *time::ParseIso(data["reservationUntil"].get<std::string>());
  EXPECT_GE(until, before + 5 * time::kMillisPerMinute);
  EXPECT_LE(until, time::Now() + 5 * time::kMillisPerMinute);
  EXPECT_EQ(Metric("bookings_reservations_created_total"), 1);

  // Gone from everyone's slots (the holder's too), the neighbours still there.
  EXPECT_FALSE(Offered(nine, "198.51.100.2"));
  EXPECT_FALSE(Offered(nine, "198.51.100.1"));
  EXPECT_TRUE(Offered(At(monday_, "09:30"), "198.51.100.2"));
  // Anyone may read it by its uid.
  HttpResult got = From("198.51.100.3", "GET", "/v2/slots/reservations/" + uid);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["data"], data);

  // Another client cannot book it: without a uid, with an unknown one, with another hold's.
  const std::string other_uid = Hold("198.51.100.2", At(monday_, "11:00"));
  for (const json& extra : {json::object(), json{{"reservationUid", "no-such-reservation"}},
                            json{{"reservationUid", other_uid}}}) {
    HttpResult refused = Book("198.51.100.2", nine, extra);
    EXPECT_EQ(refused.status, 409) << extra << refused.body;
    EXPECT_EQ(refused.Json()["error"]["code"], "slot_unavailable") << refused.body;
  }
  EXPECT_EQ(LiveBookings(), 0);
  // Nor reserve it again.
  EXPECT_EQ(Reserve("198.51.100.2", nine).status, 409);

  // Nor move a booking into it (reschedule), nor reopen one there.
  HttpResult elsewhere = Book("198.51.100.2", At(monday_, "14:00"));
  ASSERT_EQ(elsewhere.status, 201) << elsewhere.body;
  const std::string moved_uid = elsewhere.Json()["data"]["uid"];
  EXPECT_EQ(
      From("198.51.100.2", "POST", "/v2/bookings/" + moved_uid + "/reschedule", {{"start", nine}}).status,
      409);

  // The holder books it with its uid: the hold becomes the booking and ends.
  HttpResult booked = Book("198.51.100.1", nine, {{"reservationUid", uid}});
  ASSERT_EQ(booked.status, 201) << booked.body;
  EXPECT_EQ(booked.Json()["data"]["start"], nine);
  EXPECT_EQ(From("198.51.100.1", "GET", "/v2/slots/reservations/" + uid).status, 404);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM slot_reservations WHERE uid = '" + uid + "'"), 0);
  EXPECT_EQ(Metric("bookings_reservations_ended_total{how=\"converted\"}"), 1);
  EXPECT_FALSE(Offered(nine));
  // The other hold still holds.
  EXPECT_FALSE(Offered(At(monday_, "11:00")));
  EXPECT_EQ(Book("198.51.100.1", At(monday_, "11:00")).status, 409);
  // A uid that names no open hold does not stop a booking of a free slot.
  EXPECT_EQ(Book("198.51.100.1", At(monday_, "13:00"), {{"reservationUid", uid}}).status, 201);
}

TEST_F(BookingsReservations, DeleteEndsTheHold) {
  const std::string ten = At(monday_, "10:00");
  const std::string uid = Hold("198.51.100.1", ten);
  ASSERT_FALSE(Offered(ten));
  HttpResult deleted = From("198.51.100.5", "DELETE", "/v2/slots/reservations/" + uid);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(deleted.Json(), json({{"status", "success"}}));
  EXPECT_TRUE(Offered(ten));
  EXPECT_EQ(From("198.51.100.1", "GET", "/v2/slots/reservations/" + uid).status, 404);
  HttpResult again = From("198.51.100.1", "DELETE", "/v2/slots/reservations/" + uid);
  EXPECT_EQ(again.status, 404) << again.body;
  EXPECT_EQ(again.Json()["status"], "error");
  EXPECT_EQ(From("198.51.100.1", "DELETE", "/v2/slots/reservations/%20bad").status, 404);
  EXPECT_EQ(Metric("bookings_reservations_ended_total{how=\"deleted\"}"), 1);
  EXPECT_EQ(Book("198.51.100.2", ten).status, 201);
}

TEST_F(BookingsReservations, PatchMovesTheHoldAndHoldsItAgain) {
  const std::string nine = At(monday_, "09:00");
  const std::string ten = At(monday_, "10:00");
  HttpResult held = Reserve("198.51.100.1", nine);
  ASSERT_EQ(held.status, 201) << held.body;
  const std::string uid = held.Json()["data"]["reservationUid"];
  const std::string path = "/v2/slots/reservations/" + uid;
  // Its own slot may be held again (a renewal): until moves from now.
  db_.Exec("UPDATE slot_reservations SET until_ms = until_ms - 60000");
  const Millis before = time::Now();
  HttpResult renewed =
      From("198.51.100.1", "PATCH", path, {{"eventTypeId", event_type_}, {"slotStart", nine}});
  ASSERT_EQ(renewed.status, 200) << renewed.body;
  EXPECT_GE(*time::ParseIso(renewed.Json()["data"]["reservationUntil"].get<std::string>()),
            before + 5 * time::kMillisPerMinute);
  // Moved to 10:00: 09:00 is free again, 10:00 held.
  HttpResult moved = From("198.51.100.1", "PATCH", path, {{"eventTypeId", event_type_}, {"slotStart", ten}});
  ASSERT_EQ(moved.status, 200) << moved.body;
  EXPECT_EQ(moved.Json()["data"]["slotStart"], ten);
  EXPECT_EQ(moved.Json()["data"]["reservationUid"], uid);
  EXPECT_TRUE(Offered(nine));
  EXPECT_FALSE(Offered(ten));
  EXPECT_EQ(From("198.51.100.2", "GET", path).Json()["data"]["slotStart"], ten);
  // Not onto a booked or held slot, not to another event type, not off the grid; an unknown uid
  // is 404. Each refusal leaves the hold where it was.
  ASSERT_EQ(Book("198.51.100.2", At(monday_, "11:00")).status, 201);
  EXPECT_EQ(
      From("198.51.100.1", "PATCH", path, {{"eventTypeId", event_type_}, {"slotStart", At(monday_, "11:00")}})
          .status,
      409);
  Hold("198.51.100.3", At(monday_, "12:00"));
  EXPECT_EQ(
      From("198.51.100.1", "PATCH", path, {{"eventTypeId", event_type_}, {"slotStart", At(monday_, "12:00")}})
          .status,
      409);
  const int64_t other_type = CreateEventType(owner_key_, "other", 30)["id"].get<int64_t>();
  ExpectNamed(From("198.51.100.1", "PATCH", path, {{"eventTypeId", other_type}, {"slotStart", nine}}),
              "eventTypeId");
  ExpectNamed(From("198.51.100.1", "PATCH", path,
                   {{"eventTypeId", event_type_}, {"slotStart", At(monday_, "09:10")}}),
              "slotStart");
  EXPECT_EQ(From("198.51.100.1", "PATCH", "/v2/slots/reservations/unknown",
                 {{"eventTypeId", event_type_}, {"slotStart", nine}})
                .status,
            404);
  EXPECT_EQ(From("198.51.100.2", "GET", path).Json()["data"]["slotStart"], ten);
  EXPECT_TRUE(Offered(nine));
}

// The clock of a hold is its stored end: moved into the past, the hold has expired (the slot is
// back, its uid unknown), and the sweep deletes it, counted as expired.
TEST_F(BookingsReservations, AnExpiredHoldFreesTheSlot) {
  const std::string nine = At(monday_, "09:00");
  const std::string uid = Hold("198.51.100.1", nine);
  ASSERT_FALSE(Offered(nine));
  EXPECT_TRUE(Eventually("the sweep to count the open hold",
                         [&] { return Metric("bookings_reservations_held") == 1; }));
  db_.Exec("UPDATE slot_reservations SET until_ms = " + std::to_string(time::Now() - 1));
  EXPECT_TRUE(Offered(nine));
  EXPECT_EQ(From("198.51.100.1", "GET", "/v2/slots/reservations/" + uid).status, 404);
  EXPECT_EQ(From("198.51.100.1", "PATCH", "/v2/slots/reservations/" + uid,
                 {{"eventTypeId", event_type_}, {"slotStart", nine}})
                .status,
            404);
  EXPECT_TRUE(Eventually("the sweep to delete the expired hold", [&] { return Holds() == 0; }));
  EXPECT_TRUE(Eventually("the expired hold to be counted",
                         [&] { return Metric("bookings_reservations_ended_total{how=\"expired\"}") == 1; }));
  EXPECT_TRUE(Eventually("the sweep to count no open hold",
                         [&] { return Metric("bookings_reservations_held") == 0; }));
  EXPECT_EQ(Book("198.51.100.2", nine).status, 201);
}

// plugins.bookings.reservations is checked at start-up: a bad value stops it, naming the key.
TEST(BookingsReservationSettings, BadValuesStopTheStartNamingTheKey) {
  ScratchDatabase db;
  for (const char* plugins :
       {"bookings: { reservations: { minutes: 16 } }\n", "bookings: { reservations: { max_minutes: 0 } }\n",
        "bookings: { reservations: { per_address: -1 } }\n", "bookings: { reservations: { hold: 3 } }\n"}) {
    TestServerOptions o;
    o.plugins = plugins;
    TestServer server(db.name(), o);
    std::string why;
    EXPECT_FALSE(server.Start(&why)) << plugins;
    EXPECT_NE(why.find("plugins.bookings.reservations"), std::string::npos) << plugins << why;
  }
}

// A hold of one minute ends by the clock alone.
class BookingsShortReservations : public BookingsReservations {
 protected:
  void SetUp() override {
    StartServer("bookings: { reservations: { minutes: 1 } }\n");
    event_type_ = CreateEventType(owner_key_, "intro", 30)["id"].get<int64_t>();
    monday_ = Monday();
  }
};

TEST_F(BookingsShortReservations, AOneMinuteHoldEndsByItself) {
  const std::string nine = At(monday_, "09:00");
  HttpResult held =
      Call("POST", "/v2/slots/reservations", "", json{{"eventTypeId", event_type_}, {"slotStart", nine}});
  ASSERT_EQ(held.status, 201) << held.body;
  EXPECT_EQ(held.Json()["data"]["reservationDuration"], 1);
  const Millis until = *time::ParseIso(held.Json()["data"]["reservationUntil"].get<std::string>());
  ASSERT_FALSE(Offered(nine, "127.0.0.1"));
  EXPECT_TRUE(Eventually("the one-minute hold to end",
                         Patience{std::chrono::seconds(90), std::chrono::milliseconds(500)},
                         [&] { return Offered(nine, "127.0.0.1"); }));
  EXPECT_GE(time::Now(), until);
  EXPECT_EQ(Call("POST", "/v2/bookings", "", BookingBody(nine, "late@example.com")).status, 201);
}

TEST_F(BookingsReservations, PastAndOffGridSlotsAre400NamingSlotStart) {
  ExpectNamed(Reserve("198.51.100.1", In(-60)), "slotStart");
  ExpectNamed(Reserve("198.51.100.1", At(monday_, "09:10")), "slotStart");
  ExpectNamed(Reserve("198.51.100.1", At(monday_, "18:00")), "slotStart");
  const std::string saturday =
      time::FormatDate(time::CivilFromDays(time::DaysFromCivil(*time::ParseDate(monday_)) + 5));
  ExpectNamed(Reserve("198.51.100.1", At(saturday, "10:00")), "slotStart");
  ExpectNamed(Reserve("198.51.100.1", "2999-01-06T09:00:00Z"), "slotStart");
  ExpectNamed(Reserve("198.51.100.1", "tomorrow"), "slotStart");
  ExpectNamed(From("198.51.100.1", "POST", "/v2/slots/reservations", {{"eventTypeId", event_type_}}),
              "slotStart");
  ExpectNamed(Reserve("198.51.100.1", At(monday_, "09:00"), {{"eventTypeId", 999999}}), "eventTypeId");
  ExpectNamed(Reserve("198.51.100.1", At(monday_, "09:00"), {{"slotDuration", 45}}), "slotDuration");
  ExpectNamed(Reserve("198.51.100.1", At(monday_, "09:00"), {{"reservationDuration", 16}}, owner_key_),
              "reservationDuration");
  ExpectNamed(Reserve("198.51.100.1", At(monday_, "09:00"), {{"seats", 2}}), "seats");
  HttpResult wrong_type = From("198.51.100.1", "POST", "/v2/slots/reservations", json("[]"));
  EXPECT_EQ(wrong_type.status, 400) << wrong_type.body;
  EXPECT_EQ(Holds(), 0);
  // The event type's own length is accepted as slotDuration.
  EXPECT_EQ(Reserve("198.51.100.1", At(monday_, "09:00"), {{"slotDuration", 30}}).status, 201);
}

TEST_F(BookingsReservations, OnlyTheOwnerSetsReservationDuration) {
  const json fifteen = {{"reservationDuration", 15}};
  HttpResult anonymous = Reserve("198.51.100.1", At(monday_, "09:00"), fifteen);
  EXPECT_EQ(anonymous.status, 401) << anonymous.body;
  EXPECT_EQ(anonymous.Json()["status"], "error");
  EXPECT_NE(anonymous.Header("www-authenticate"), "");
  EXPECT_EQ(Reserve("198.51.100.1", At(monday_, "09:00"), fifteen, "rdv_not_a_key").status, 401);
  HttpResult stranger = Reserve("198.51.100.1", At(monday_, "09:00"), fifteen, other_key_);
  EXPECT_EQ(stranger.status, 403) << stranger.body;
  const std::string no_write =
      GrantOAuthToken(*server_, db_, owner_, owner_, {"BOOKING_READ", "BOOKING_WRITE"}, {"BOOKING_READ"})
          .access_token;
  HttpResult scoped = Reserve("198.51.100.1", At(monday_, "09:00"), fifteen, no_write);
  EXPECT_EQ(scoped.status, 403) << scoped.body;
  EXPECT_EQ(scoped.Json()["error"]["code"], "insufficient_scope") << scoped.body;
  EXPECT_EQ(Holds(), 0);

  const Millis before = time::Now();
  HttpResult owner = Reserve("198.51.100.1", At(monday_, "09:00"), fifteen, owner_key_);
  ASSERT_EQ(owner.status, 201) << owner.body;
  EXPECT_EQ(owner.Json()["data"]["reservationDuration"], 15);
  EXPECT_GE(*time::ParseIso(owner.Json()["data"]["reservationUntil"].get<std::string>()),
            before + 15 * time::kMillisPerMinute);
  const std::string with_write =
      GrantOAuthToken(*server_, db_, owner_, owner_, {"BOOKING_READ", "BOOKING_WRITE"}, {"BOOKING_WRITE"})
          .access_token;
  HttpResult oauth = Reserve("198.51.100.1", At(monday_, "10:00"), {{"reservationDuration", 2}}, with_write);
  ASSERT_EQ(oauth.status, 201) << oauth.body;
  EXPECT_EQ(oauth.Json()["data"]["reservationDuration"], 2);
  // A PATCH without it holds for the default again; the owner's PATCH may set it.
  const std::string path =
      "/v2/slots/reservations/" + oauth.Json()["data"]["reservationUid"].get<std::string>();
  const json move = {{"eventTypeId", event_type_}, {"slotStart", At(monday_, "10:00")}};
  EXPECT_EQ(From("198.51.100.1", "PATCH", path, move).Json()["data"]["reservationDuration"], 5);
  json longer = move;
  longer["reservationDuration"] = 12;
  EXPECT_EQ(From("198.51.100.1", "PATCH", path, longer).status, 401);
  EXPECT_EQ(From("198.51.100.1", "PATCH", path, longer, other_key_).status, 403);
  EXPECT_EQ(From("198.51.100.1", "PATCH", path, longer, owner_key_).Json()["data"]["reservationDuration"],
            12);
  // Without reservationDuration a credential is not needed, and anyone's is accepted.
  EXPECT_EQ(Reserve("198.51.100.1", At(monday_, "11:00"), json::object(), other_key_).status, 201);
}

TEST_F(BookingsReservations, AnAddressHoldsAtMostPerAddress) {
  for (const char* clock : {"09:00", "09:30", "10:00"}) Hold("198.51.100.1", At(monday_, clock));
  HttpResult refused = Reserve("198.51.100.1", At(monday_, "10:30"));
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_EQ(refused.Json()["error"]["code"], "rate_limited");
  const int retry = std::atoi(refused.Header("retry-after").c_str());
  EXPECT_GE(retry, 1);
  EXPECT_LE(retry, 300);
  EXPECT_EQ(Holds(), 3);
  // Another address is not affected; an ended hold no longer counts.
  EXPECT_EQ(Reserve("198.51.100.2", At(monday_, "10:30")).status, 201);
  db_.Exec("UPDATE slot_reservations SET until_ms = 0 WHERE start_ms = " +
           std::to_string(*time::ParseIso(At(monday_, "09:00"))));
  EXPECT_EQ(Reserve("198.51.100.1", At(monday_, "11:00")).status, 201);
  EXPECT_EQ(Reserve("198.51.100.1", At(monday_, "11:30")).status, 429);
}

// The reservation routes share the public routes' bucket per client address.
class BookingsReservationLimit : public BookingsReservations {
 protected:
  void SetUp() override {
    StartServer("bookings: { public_rate_limit: { per_minute: 6, burst: 3 } }\n", "",
                "trusted_proxies: [\"127.0.0.1\"]\n");
    event_type_ = CreateEventType(owner_key_, "intro", 30)["id"].get<int64_t>();
    monday_ = Monday();
  }
};

TEST_F(BookingsReservationLimit, ReservationsCountTowardThePublicRateLimit) {
  HttpResult held = Reserve("198.51.100.1", At(monday_, "09:00"));
  ASSERT_EQ(held.status, 201) << held.body;
  EXPECT_EQ(held.Header("x-ratelimit-limit"), "3");
  EXPECT_EQ(held.Header("x-ratelimit-remaining"), "2");
  const std::string path =
      "/v2/slots/reservations/" + held.Json()["data"]["reservationUid"].get<std::string>();
  EXPECT_EQ(From("198.51.100.1", "GET", path).status, 200);
  EXPECT_EQ(Book("198.51.100.1", At(monday_, "10:00")).status, 201);
  HttpResult refused = From("198.51.100.1", "DELETE", path);
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_EQ(Holds(), 1);
  EXPECT_EQ(From("198.51.100.2", "DELETE", path).status, 200);
}

// 50 bookings from 50 addresses race the holder's own: only the holder books. Then, after the
// hold is deleted and after another one expires, exactly one of a new race of 50 wins; and a hold
// raced by 50 bookings of a free slot never wins together with one of them.
TEST_F(BookingsReservations, RacesAgainstAHold) {
  auto race = [&](const std::string& start, const std::string& holder_uid, const std::string& tag) {
    std::atomic<int> created{0}, conflicts{0}, others{0};
    std::atomic<bool> holder_won{false};
    std::vector<std::thread> threads;
    for (int i = 0; i <= 50; ++i) {
      threads.emplace_back([&, i] {
        const bool holder = i == 50 && !holder_uid.empty();
        if (i == 50 && !holder) return;
        json body = BookingBody(start, tag + std::to_string(i) + "@example.com");
        if (holder) body["reservationUid"] = holder_uid;
        HttpResult r = From(holder ? "198.51.100.1" : "203.0.113." + std::to_string(i + 1), "POST",
                            "/v2/bookings", body);
        if (r.status == 201) {
          ++created;
          if (holder) holder_won = true;
        } else if (r.status == 409) {
          ++conflicts;
        } else {
          ++others;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(others.load(), 0) << tag;
    EXPECT_EQ(created.load() + conflicts.load(), holder_uid.empty() ? 50 : 51) << tag;
    return std::pair<int, bool>{created.load(), holder_won.load()};
  };
  auto booked_at = [&](const std::string& start) {
    return Count("SELECT COUNT(*) FROM bookings WHERE start_ms = " + std::to_string(*time::ParseIso(start)));
  };

  const std::string nine = At(monday_, "09:00");
  const std::string uid = Hold("198.51.100.1", nine);
  EXPECT_EQ(race(nine, uid, "held"), (std::pair<int, bool>{1, true}));
  EXPECT_EQ(Holds(), 0);
  EXPECT_EQ(booked_at(nine), 1);

  const std::string ten = At(monday_, "10:00");
  const std::string deleted = Hold("198.51.100.1", ten);
  EXPECT_EQ(race(ten, "", "held-for-nobody").first, 0);  // none of 50 others while it holds
  EXPECT_EQ(booked_at(ten), 0);
  ASSERT_EQ(From("198.51.100.1", "DELETE", "/v2/slots/reservations/" + deleted).status, 200);
  EXPECT_EQ(race(ten, "", "after-delete").first, 1);
  EXPECT_EQ(booked_at(ten), 1);

  const std::string eleven = At(monday_, "11:00");
  Hold("198.51.100.1", eleven);
  db_.Exec("UPDATE slot_reservations SET until_ms = " + std::to_string(time::Now() - 1));
  EXPECT_EQ(race(eleven, "", "after-expiry").first, 1);
  EXPECT_EQ(booked_at(eleven), 1);

  // A reservation and 50 bookings of a free slot: exactly one of them wins.
  const std::string noon = At(monday_, "12:00");
  std::atomic<int> reserved{0}, booked{0}, others{0};
  std::vector<std::thread> threads;
  for (int i = 0; i <= 50; ++i) {
    threads.emplace_back([&, i] {
      HttpResult r = i == 25 ? Reserve("198.51.100.9", noon)
                             : From("203.0.113." + std::to_string(i + 1), "POST", "/v2/bookings",
                                    BookingBody(noon, "noon" + std::to_string(i) + "@example.com"));
      if (r.status == 201) {
        ++(i == 25 ? reserved : booked);
      } else if (r.status != 409) {
        ++others;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(others.load(), 0);
  EXPECT_EQ(reserved.load() + booked.load(), 1);
  EXPECT_EQ(Overlaps(), 0);
  EXPECT_EQ(LiveBookings(), 3 + booked.load());
}

}  // namespace
}  // namespace rendezvous::testing
