// Bookings in the host's Google Calendar, against the real server and the fake Google: a booking
// becomes an event (with a Meet when its event type asks for one) whose id is recorded as a
// booking reference, and the event lookup finds it from there; a reschedule moves the event and
// its reference, a cancellation deletes it (the booking keeps its reference); an outage of Google's
// Calendar API never fails a booking and the event appears, once, when Google is back; a host
// without Google is never written for.
#include <chrono>
#include <thread>

#include "calendar_fixture.hpp"
#include "eventually.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::testing {
namespace {

constexpr const char* kPrimary = "ada@example.com";
constexpr const char* kTeam = "team@group.calendar.google.com";

class CalendarBookingSync : public CalendarTest {
 protected:
  // Retries after about a second, so the outage test need not wait for the production delays.
  void SetUp() override { StartServer("", true, "  sync:\n    retry_schedule: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"); }

  // 10:00 UTC of a Tuesday at least a week ahead (inside the default working hours).
  static std::string Tuesday(int weeks_ahead, const std::string& time) {
    int64_t day = time::DaysFromCivil(time::Zone::Utc().DateAt(time::Now())) + 7 * weeks_ahead;
    while (time::IsoWeekday(time::CivilFromDays(day)) != 2) ++day;
    return time::FormatDate(time::CivilFromDays(day)) + "T" + time + ":00Z";
  }

  int64_t EventType(const std::string& slug, json extra = json::object()) {
    json body = {{"title", "Intro"}, {"slug", slug}, {"lengthInMinutes", 30}};
    body.update(extra);
    HttpResult r = Send("POST", "/v2/event-types", body, key_);
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()["data"].value("id", int64_t{0});
  }

  // A public booking; answers the booking (fails the test unless 201).
  json Book(int64_t event_type, const std::string& start) {
    HttpResult r = Send("POST", "/v2/bookings",
                        {{"start", start},
                         {"eventTypeId", event_type},
                         {"attendee", {{"name", "Ann Attendee"}, {"email", "ann@example.com"}, {"timeZone", "UTC"}}},
                         {"guests", {"guest@example.com"}}},
                        "");
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()["data"];
  }

  json References(const std::string& uid) {
    HttpResult r = Get("/v2/bookings/" + uid + "/references", key_);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json()["data"];
  }

  // The booking's references once there is one (empty array after the bound).
  json AwaitReferences(const std::string& uid) {
    json refs = json::array();
    Eventually("the booking's references", [&] {
      refs = References(uid);
      return !refs.empty();
    });
    return refs;
  }

  std::vector<PeerRequest> EventWrites(const std::string& method) const {
    std::vector<PeerRequest> out;
    for (PeerRequest& r : google_.Requests()) {
      if (r.method == method && r.path.find("/events") != std::string::npos) out.push_back(std::move(r));
    }
    return out;
  }

  // Every booking event so far has been handed to the calendar's outbox consumer.
  bool ConsumerCaughtUp() const {
    return Eventually("the calendar consumer caught up", [&] {
      const std::string max = db_.QueryValue("SELECT COALESCE(MAX(id), 0) FROM outbox_events");
      const std::string pos = db_.QueryValue("SELECT position FROM outbox_consumers WHERE consumer = 'calendar'");
      return !pos.empty() && std::stoll(pos) >= std::stoll(max);
    });
  }

  std::string Metrics() { return http_.Get(Api("/metrics")).body; }
};

TEST_F(CalendarBookingSync, BookingBecomesAGoogleEventWithMeetFoundThroughItsReference) {
  AddStandardCalendars();
  ASSERT_EQ(ConnectAndSave().status, 200);
  const int64_t et = EventType("meet", {{"locations", {{{"type", "integration"}, {"integration", "google-meet"}}}}});
  const json booking = Book(et, Tuesday(1, "10:00"));
  const std::string uid = booking.value("uid", "");
  ASSERT_FALSE(uid.empty());

  const json refs = AwaitReferences(uid);
  ASSERT_EQ(refs.size(), 1u) << refs;
  EXPECT_EQ(refs[0]["type"], "google_calendar");
  EXPECT_EQ(refs[0]["calendarId"], kPrimary);  // no destination calendar: primary
  const std::string event_uid = refs[0].value("eventUid", "");
  ASSERT_FALSE(event_uid.empty());
  for (char c : event_uid) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'v')) << event_uid;

  // What Google was asked: the booking's contents and a Meet.
  const std::vector<PeerRequest> inserts = EventWrites("POST");
  ASSERT_EQ(inserts.size(), 1u);
  EXPECT_EQ(inserts[0].Query("conferenceDataVersion"), "1");
  const json sent = json::parse(inserts[0].body);
  EXPECT_EQ(sent["id"], event_uid);
  EXPECT_EQ(sent["summary"], booking["title"]);
  EXPECT_EQ(sent["start"]["dateTime"], booking["start"]);
  EXPECT_EQ(sent["end"]["dateTime"], booking["end"]);
  EXPECT_EQ(sent["conferenceData"]["createRequest"]["conferenceSolutionKey"]["type"], "hangoutsMeet");
  EXPECT_FALSE(sent["conferenceData"]["createRequest"].value("requestId", "").empty());
  std::vector<std::string> emails;
  for (const json& a : sent["attendees"]) emails.push_back(a.value("email", ""));
  EXPECT_EQ(emails, (std::vector<std::string>{"ann@example.com", "guest@example.com"}));

  // booking -> references -> event lookup, with the Meet link as a location.
  HttpResult lookup = Get("/v2/calendars/google/event/" + event_uid, key_);
  ASSERT_EQ(lookup.status, 200) << lookup.body;
  const json event = lookup.Json()["data"];
  EXPECT_EQ(event["id"], event_uid);
  EXPECT_EQ(event["title"], booking["title"]);
  EXPECT_EQ(event["status"], "accepted");
  ASSERT_FALSE(event["locations"].empty()) << event;
  EXPECT_EQ(event["locations"][0]["type"], "video");
  EXPECT_EQ(event["locations"][0].value("url", "").rfind("https://meet.google.com/", 0), 0u) << event;

  const std::string metrics = Metrics();
  EXPECT_NE(metrics.find("calendar_google_requests_total{endpoint=\"events_insert\",outcome=\"ok\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.find("calendar_sync_jobs_total{action=\"create\",outcome=\"done\"} 1"), std::string::npos);
}

TEST_F(CalendarBookingSync, RescheduleMovesTheEventAndCancelDeletesIt) {
  AddStandardCalendars();
  ASSERT_EQ(ConnectAndSave().status, 200);
  ASSERT_EQ(Send("PUT", "/v2/destination-calendars", {{"integration", "google_calendar"}, {"externalId", kTeam}}, key_)
                .status,
            200);
  const int64_t et = EventType("plain", {{"locations", {{{"type", "address"}, {"address", "Main St 1"}}}}});
  const json booking = Book(et, Tuesday(1, "10:00"));
  const json refs = AwaitReferences(booking["uid"]);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0]["calendarId"], kTeam);  // the destination calendar
  const std::string event_uid = refs[0]["eventUid"];
  EXPECT_FALSE(json::parse(EventWrites("POST").at(0).body).contains("conferenceData"));
  EXPECT_EQ(google_.Event(kTeam, event_uid)["location"], "Main St 1");

  const std::string new_start = Tuesday(2, "11:00");
  HttpResult moved = Send("POST", "/v2/bookings/" + booking["uid"].get<std::string>() + "/reschedule",
                          {{"start", new_start}}, "");
  ASSERT_EQ(moved.status, 201) << moved.body;
  const json fresh = moved.Json()["data"];
  const json fresh_refs = AwaitReferences(fresh["uid"]);
  ASSERT_EQ(fresh_refs.size(), 1u);
  EXPECT_EQ(fresh_refs[0]["eventUid"], event_uid);  // the same event, moved
  EXPECT_EQ(fresh_refs[0]["calendarId"], kTeam);
  // The reference went with the event: the old, cancelled booking names it no more.
  EXPECT_EQ(References(booking["uid"]), json::array());
  ASSERT_EQ(EventWrites("PATCH").size(), 1u);
  EXPECT_EQ(EventWrites("POST").size(), 1u);
  EXPECT_EQ(google_.Event(kTeam, event_uid)["start"]["dateTime"], fresh["start"]);
  EXPECT_EQ(google_.Event(kTeam, event_uid)["end"]["dateTime"], fresh["end"]);
  EXPECT_EQ(google_.LiveEventCount(kTeam), 1u);
  HttpResult lookup = Get("/v2/calendars/google/event/" + event_uid, key_);
  ASSERT_EQ(lookup.status, 200) << lookup.body;
  EXPECT_EQ(time::ParseIso(lookup.Json()["data"]["start"].value("time", "")),
            time::ParseIso(fresh["start"].get<std::string>()));

  ASSERT_EQ(Send("POST", "/v2/bookings/" + fresh["uid"].get<std::string>() + "/cancel", json::object(), "").status,
            200);
  EXPECT_TRUE(Eventually("the Google event cancelled",
                         [&] { return google_.Event(kTeam, event_uid).value("status", "") == "cancelled"; }));
  EXPECT_EQ(EventWrites("DELETE").size(), 1u);
  EXPECT_EQ(google_.LiveEventCount(kTeam), 0u);
  // The cancelled booking keeps its reference; Google still shows the deleted event, as cancelled.
  EXPECT_EQ(References(fresh["uid"]), fresh_refs);
  EXPECT_EQ(Get("/v2/calendars/google/event/" + event_uid, key_).Json()["data"]["status"], "cancelled");
  // Once Google has let the deleted event go, the lookup through the reference is a plain 404.
  google_.ForgetEvent(kTeam, event_uid);
  HttpResult gone = Get("/v2/calendars/google/event/" + event_uid, key_);
  EXPECT_EQ(gone.status, 404) << gone.body;
  EXPECT_EQ(gone.Json()["status"], "error");
  EXPECT_EQ(gone.Json()["error"]["code"], "not_found") << gone.body;
  EXPECT_EQ(References(fresh["uid"]), fresh_refs);
}

// A booking's guests are attendees of its Google event beside the one who booked (name shown for
// the booker, e-mail only for guests, who give no name), in the insert Google is sent and in the
// event Google keeps after a reschedule moved it; a reschedule whose old event is gone from Google
// writes a new event with every guest again.
TEST_F(CalendarBookingSync, GuestsAreAttendeesOfTheEventBesideTheBookerAlsoAfterReschedules) {
  AddStandardCalendars();
  ASSERT_EQ(ConnectAndSave().status, 200);
  const int64_t et = EventType("guests");
  const std::vector<std::string> guests = {"gia@example.net", "gus@example.org", "Gwen.Guest@Example.com"};
  HttpResult created =
      Send("POST", "/v2/bookings",
           {{"start", Tuesday(1, "10:00")},
            {"eventTypeId", et},
            {"attendee", {{"name", "Ann Attendee"}, {"email", "ann@example.com"}, {"timeZone", "UTC"}}},
            {"guests", guests}},
           "");
  ASSERT_EQ(created.status, 201) << created.body;
  const json booking = created.Json()["data"];
  const json expected = json::array({{{"email", "ann@example.com"}, {"displayName", "Ann Attendee"}},
                                     {{"email", booking["guests"][0]}},
                                     {{"email", booking["guests"][1]}},
                                     {{"email", booking["guests"][2]}}});
  ASSERT_EQ(booking["guests"].size(), 3u) << booking;
  for (size_t i = 0; i < guests.size(); ++i) {
    EXPECT_EQ(text::AsciiLower(booking["guests"][i].get<std::string>()), text::AsciiLower(guests[i]));
  }

  const json refs = AwaitReferences(booking["uid"]);
  ASSERT_EQ(refs.size(), 1u);
  const std::string event_uid = refs[0]["eventUid"];
  const std::vector<PeerRequest> inserts = EventWrites("POST");
  ASSERT_EQ(inserts.size(), 1u);
  EXPECT_EQ(json::parse(inserts[0].body)["attendees"], expected);
  EXPECT_EQ(google_.Event(kPrimary, event_uid)["attendees"], expected);

  // Moved: the event Google keeps still has every guest.
  HttpResult moved = Send("POST", "/v2/bookings/" + booking["uid"].get<std::string>() + "/reschedule",
                          {{"start", Tuesday(2, "11:00")}}, "");
  ASSERT_EQ(moved.status, 201) << moved.body;
  const json fresh = moved.Json()["data"];
  EXPECT_EQ(fresh["guests"], booking["guests"]);
  ASSERT_EQ(AwaitReferences(fresh["uid"]).at(0)["eventUid"], event_uid);
  ASSERT_EQ(EventWrites("PATCH").size(), 1u);
  EXPECT_EQ(google_.Event(kPrimary, event_uid)["start"]["dateTime"], fresh["start"]);
  EXPECT_EQ(google_.Event(kPrimary, event_uid)["attendees"], expected);

  // The event is gone from Google: the next reschedule writes it anew, guests and all.
  google_.ForgetEvent(kPrimary, event_uid);
  HttpResult again = Send("POST", "/v2/bookings/" + fresh["uid"].get<std::string>() + "/reschedule",
                          {{"start", Tuesday(3, "12:00")}}, "");
  ASSERT_EQ(again.status, 201) << again.body;
  const json last = again.Json()["data"];
  ASSERT_EQ(AwaitReferences(last["uid"]).size(), 1u);
  const std::vector<PeerRequest> rewrites = EventWrites("POST");
  ASSERT_EQ(rewrites.size(), 2u);
  const json rewritten = json::parse(rewrites[1].body);
  EXPECT_EQ(rewritten["start"]["dateTime"], last["start"]);
  EXPECT_EQ(rewritten["attendees"], expected);
}

// Along a chain of reschedules the one event moves and its reference with it, so only the last
// booking names it; doing the last move job again writes the same times and changes no reference.
TEST_F(CalendarBookingSync, TheReferenceFollowsTheEventAlongReschedulesAndARepeatedMoveChangesNothing) {
  AddStandardCalendars();
  ASSERT_EQ(ConnectAndSave().status, 200);
  const int64_t et = EventType("chain");
  const std::string first = Book(et, Tuesday(1, "10:00")).value("uid", "");
  ASSERT_FALSE(first.empty());
  const json first_refs = AwaitReferences(first);
  ASSERT_EQ(first_refs.size(), 1u);
  const std::string event_uid = first_refs[0]["eventUid"];

  std::vector<std::string> uids{first};
  json last;
  for (const char* start : {"11:00", "14:00"}) {
    HttpResult moved =
        Send("POST", "/v2/bookings/" + uids.back() + "/reschedule", {{"start", Tuesday(2, start)}}, "");
    ASSERT_EQ(moved.status, 201) << moved.body;
    last = moved.Json()["data"];
    uids.push_back(last["uid"]);
    ASSERT_FALSE(AwaitReferences(uids.back()).empty());
  }
  const json last_refs = References(uids.back());
  ASSERT_EQ(last_refs.size(), 1u) << last_refs;
  EXPECT_EQ(last_refs[0]["type"], "google_calendar");
  EXPECT_EQ(last_refs[0]["eventUid"], event_uid);
  EXPECT_EQ(last_refs[0]["calendarId"], kPrimary);
  EXPECT_EQ(References(uids[0]), json::array());
  EXPECT_EQ(References(uids[1]), json::array());
  EXPECT_EQ(EventWrites("PATCH").size(), 2u);
  EXPECT_EQ(google_.LiveEventCount(kPrimary), 1u);
  // The lookup through the last booking's reference finds the event at its time.
  HttpResult lookup = Get("/v2/calendars/google/event/" + event_uid, key_);
  ASSERT_EQ(lookup.status, 200) << lookup.body;
  EXPECT_EQ(time::ParseIso(lookup.Json()["data"]["start"].value("time", "")),
            time::ParseIso(last["start"].get<std::string>()));

  // The last move job once more, as after an answer lost before the job was marked done.
  const std::string job = "booking_uid = '" + uids.back() + "' AND action = 'move'";
  ASSERT_EQ(db_.QueryValue("SELECT CONCAT(status, ':', attempts) FROM calendar_sync_jobs WHERE " + job),
            "done:1");
  db_.Exec("UPDATE calendar_sync_jobs SET status = 'pending', next_attempt_at = UTC_TIMESTAMP(3) WHERE " +
           job);
  ASSERT_TRUE(Eventually("the sync job done after 2 attempts", [&] {
    return db_.QueryValue("SELECT CONCAT(status, ':', attempts) FROM calendar_sync_jobs WHERE " + job) ==
           "done:2";
  }));
  EXPECT_EQ(EventWrites("PATCH").size(), 3u);
  EXPECT_EQ(EventWrites("POST").size(), 1u);
  EXPECT_EQ(google_.LiveEventCount(kPrimary), 1u);
  EXPECT_EQ(google_.Event(kPrimary, event_uid)["start"]["dateTime"], last["start"]);
  EXPECT_EQ(References(uids.back()), last_refs);
  EXPECT_EQ(References(uids[0]), json::array());
  EXPECT_EQ(References(uids[1]), json::array());
}

TEST_F(CalendarBookingSync, GoogleOutageNeverFailsABookingAndTheEventAppearsOnceWhenItIsBack) {
  AddStandardCalendars();
  ASSERT_EQ(ConnectAndSave().status, 200);
  const int64_t et = EventType("outage");
  google_.SetEventWriteFailStatus(503);
  const json booking = Book(et, Tuesday(1, "13:00"));  // 201 although Google fails
  const std::string uid = booking.value("uid", "");
  ASSERT_FALSE(uid.empty());
  // Two attempts of the job have failed, each after Google's call was tried three times.
  ASSERT_TRUE(Eventually("6 event inserts", [&] { return EventWrites("POST").size() >= 6; }));
  EXPECT_TRUE(References(uid).empty());
  EXPECT_EQ(google_.LiveEventCount(kPrimary), 0u);
  EXPECT_TRUE(Eventually("one pending sync job", [&] {
    return Metrics().find("calendar_sync_jobs_pending 1") != std::string::npos;
  }));

  google_.SetEventWriteFailStatus(0);
  const json refs = AwaitReferences(uid);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(google_.LiveEventCount(kPrimary), 1u);
  EXPECT_EQ(google_.Event(kPrimary, refs[0]["eventUid"])["summary"], booking["title"]);
  EXPECT_EQ(db_.QueryValue("SELECT CONCAT(status, ':', attempts >= 2) FROM calendar_sync_jobs"), "done:1");
  EXPECT_TRUE(Eventually("no pending sync job", [&] {
    return Metrics().find("calendar_sync_jobs_pending 0") != std::string::npos;
  }));
  EXPECT_NE(Metrics().find("calendar_sync_jobs_total{action=\"create\",outcome=\"retry\"}"), std::string::npos);
  EXPECT_NE(Metrics().find("calendar_google_requests_total{endpoint=\"events_insert\",outcome=\"server_error\"}"),
            std::string::npos);
}

TEST_F(CalendarBookingSync, HostWithoutGoogleIsNeverWrittenFor) {
  const int64_t et = EventType("nogoogle");
  const json booking = Book(et, Tuesday(1, "10:00"));
  ASSERT_EQ(Send("POST", "/v2/bookings/" + booking["uid"].get<std::string>() + "/cancel", json::object(), "").status,
            200);
  ASSERT_TRUE(ConsumerCaughtUp());
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM calendar_sync_jobs"), "0");
  EXPECT_TRUE(google_.Requests().empty());
  EXPECT_TRUE(References(booking["uid"]).empty());
}

}  // namespace
}  // namespace rendezvous::testing
