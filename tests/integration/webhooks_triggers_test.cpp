// Every trigger reaches a webhook subscribed to it, produced by the real operation: the public
// create (accepted and pending), cancel and reschedule, the owner's confirm, decline, mark-absent
// and reopen, and the completion sweep. Each delivery is checked as DESIGN §6 describes it (body
// with the original service's names, signature headers recomputed here), and a webhook of the same
// owner subscribed to every other trigger gets nothing for it.
#include <algorithm>
#include <chrono>
#include <iterator>
#include <thread>

#include "eventually.hpp"
#include "webhooks_fixture.hpp"

namespace rendezvous::testing {
namespace {

const std::vector<std::string> kTriggers = {"BOOKING_CREATED",   "BOOKING_RESCHEDULED", "BOOKING_CANCELLED",
                                            "BOOKING_CONFIRMED", "BOOKING_REJECTED",    "BOOKING_COMPLETED",
                                            "BOOKING_NO_SHOW",   "BOOKING_REOPENED"};

class WebhooksTriggers : public WebhooksFixture {
 protected:
  static constexpr const char* kSecret = "trigger-s\xC3\xA9" "cret";

  void SetUp() override {
    receiver_ = std::make_unique<LoopbackHttpServer>([](const PeerRequest&) { return PeerResponse{}; });
    StartServer(std::string(kTestPlugins) + "bookings:\n  completion_sweep_interval: 1\n");
    started_ = time::Now() / 1000;
    plain_ = CreateEventType(owner_key_, "plain", 30);
    vetted_ = CreateEventType(owner_key_, "vetted", 45, {{"requiresConfirmation", true}});
  }

  // Subscribes /only to `trigger` (signed with kSecret) and /others to every other trigger.
  void Subscribe(const std::string& trigger) {
    json only = Body(receiver_->url() + "/only", {trigger});
    only["secret"] = kSecret;
    CreateWebhook(only);
    std::vector<std::string> rest;
    std::copy_if(kTriggers.begin(), kTriggers.end(), std::back_inserter(rest),
                 [&](const std::string& t) { return t != trigger; });
    others_ = CreateWebhook(Body(receiver_->url() + "/others", rest))["id"];
  }

  // POST /v2/bookings (the public flow, no credential) at `start` on `event_type`; the booking.
  json Book(const json& event_type, const std::string& start) {
    HttpResult r = Call("POST", "/v2/bookings", "",
                        json{{"start", start},
                             {"eventTypeId", event_type["id"]},
                             {"attendee", {{"name", "Ann Attendee"}, {"email", "ann@example.com"}, {"timeZone", "UTC"}}}});
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()["data"];
  }
  // POST /v2/bookings/{uid}/`action` on `booking` as `token` (none: the public flow); the booking
  // the answer carries (fails the test unless `status`).
  json Act(const json& booking, const std::string& action, const json& body, const std::string& token = "",
           int status = 200) {
    HttpResult r = Call("POST", "/v2/bookings/" + booking["uid"].get<std::string>() + "/" + action, token, body);
    EXPECT_EQ(r.status, status) << action << " " << r.body;
    return r.Json()["data"];
  }

  // The events the receiver got at `path` carrying `trigger`.
  std::vector<PeerRequest> Received(const std::string& path, const std::string& trigger) const {
    std::vector<PeerRequest> out;
    for (const PeerRequest& r : receiver_->Requests()) {
      if (r.path != path) continue;
      const json event = json::parse(r.body, nullptr, false);
      if (event.is_object() && event.value("triggerEvent", "") == trigger) out.push_back(r);
    }
    return out;
  }
  // Waits (bounded) for /only's delivery of `trigger` for booking `uid`; returns its parsed body.
  json AwaitEvent(const std::string& trigger, const std::string& uid) {
    // Generous for the sanitized build, where every process runs several times slower.
    json found;
    if (Eventually(trigger + " for " + uid + " at /only", {std::chrono::seconds(60)}, [&] {
          for (const PeerRequest& r : Received("/only", trigger)) {
            json event = json::parse(r.body);
            if (event["payload"].value("uid", "") != uid) continue;
            ExpectSignedDelivery(r, kSecret, started_);
            found = std::move(event);
            return true;
          }
          return false;
        })) {
      return found;
    }
    ADD_FAILURE() << trigger << " for " << uid << " never reached the subscribed webhook; got "
                  << receiver_->Requests().size() << " requests";
    return json::object();
  }

  // The DESIGN §6 default body for `booking` (as the API answered it after the change) of
  // `event_type`, organized by the owner.
  void ExpectBody(const json& event, const std::string& trigger, const json& booking, const json& event_type) {
    ASSERT_TRUE(event.contains("triggerEvent") && event.contains("payload")) << "no delivery: " << event.dump();
    EXPECT_EQ(event["triggerEvent"], trigger);
    ASSERT_TRUE(event["createdAt"].is_string()) << event.dump();
    EXPECT_TRUE(time::ParseIso(event["createdAt"].get<std::string>()).has_value()) << event["createdAt"];
    const json& p = event["payload"];
    ExpectPayloadShows(p, booking);
    EXPECT_EQ(p["organizer"], (json{{"id", owner_}, {"name", "Olga Owner"}, {"email", "owner@example.com"},
                                    {"timeZone", "UTC"}}));
    EXPECT_EQ(p["type"], event_type["slug"]);
    EXPECT_EQ(p["eventTitle"], event_type["title"]);
    EXPECT_EQ(p["length"], event_type["lengthInMinutes"]);
  }

  // The /only delivery of `trigger` reached us, and the consumer writes every delivery of one event
  // in one transaction: /others, not subscribed to it, has none of it and never will.
  void ExpectOthersGotNone(const std::string& trigger) {
    for (const json& d : Deliveries(others_)) EXPECT_NE(d["triggerEvent"], trigger) << d.dump();
    EXPECT_TRUE(Received("/others", trigger).empty());
  }

  // Waits for /only's `trigger` for `booking` (as the API answered it after the change, of
  // `event_type`), checks its body and that /others got none of it; returns the event.
  json ExpectSent(const std::string& trigger, const json& booking, const json& event_type) {
    json event = AwaitEvent(trigger, booking["uid"].get<std::string>());
    ExpectBody(event, trigger, booking, event_type);
    ExpectOthersGotNone(trigger);
    return event;
  }

  std::unique_ptr<LoopbackHttpServer> receiver_;
  int64_t started_ = 0;
  int64_t others_ = 0;
  json plain_;
  json vetted_;
};

TEST_F(WebhooksTriggers, CreatedIsSentForAcceptedAndPendingBookings) {
  Subscribe("BOOKING_CREATED");
  const std::string monday = Monday();
  const json accepted = Book(plain_, At(monday, "09:00"));
  const json pending = Book(vetted_, At(monday, "10:30"));
  ASSERT_EQ(accepted["status"], "accepted");
  ASSERT_EQ(pending["status"], "pending");
  ExpectSent("BOOKING_CREATED", accepted, plain_);
  ExpectSent("BOOKING_CREATED", pending, vetted_);
  EXPECT_EQ(Received("/only", "BOOKING_CREATED").size(), 2u);
}

TEST_F(WebhooksTriggers, CancelledIsSentForACancelledBooking) {
  Subscribe("BOOKING_CANCELLED");
  const json booked = Book(plain_, At(Monday(), "09:00"));
  const json cancelled = Act(booked, "cancel", json{{"cancellationReason", "Ill"}});
  ASSERT_EQ(cancelled["status"], "cancelled");
  EXPECT_EQ(ExpectSent("BOOKING_CANCELLED", cancelled, plain_)["payload"]["cancellationReason"], "Ill");
}

TEST_F(WebhooksTriggers, RescheduledIsSentForTheNewBookingAndNoCancelledForTheOld) {
  Subscribe("BOOKING_RESCHEDULED");
  // A third webhook hears everything: the old half of the move must not reach it as a cancellation.
  const int64_t all = CreateWebhook(Body(receiver_->url() + "/all", kTriggers))["id"];
  const std::string monday = Monday();
  const json old = Book(plain_, At(monday, "09:00"));
  const json moved = Act(old, "reschedule", json{{"start", At(monday, "13:00")}, {"reschedulingReason", "Late"}},
                         "", 201);
  ASSERT_EQ(moved["rescheduledFromUid"], old["uid"]);
  const json event = ExpectSent("BOOKING_RESCHEDULED", moved, plain_);
  EXPECT_EQ(event["payload"]["rescheduleUid"], old["uid"]);
  EXPECT_EQ(event["payload"]["rescheduleStartTime"], At(monday, "09:00"));
  EXPECT_EQ(event["payload"]["rescheduleEndTime"], At(monday, "09:30"));
  EXPECT_EQ(event["payload"]["start"], At(monday, "13:00"));

  // Cancelling the new booking afterwards is a fence: once its cancellation has reached /all, every
  // earlier event has been consumed, and the only cancellation /all heard of is this one.
  Act(moved, "cancel", json::object());
  Eventually("a cancellation at /all", [&] { return !Received("/all", "BOOKING_CANCELLED").empty(); });
  const std::vector<PeerRequest> cancellations = Received("/all", "BOOKING_CANCELLED");
  ASSERT_EQ(cancellations.size(), 1u);
  EXPECT_EQ(json::parse(cancellations[0].body)["payload"]["uid"], moved["uid"]);
  size_t cancelled_logged = 0;
  for (const json& d : Deliveries(all)) cancelled_logged += d["triggerEvent"] == "BOOKING_CANCELLED" ? 1 : 0;
  EXPECT_EQ(cancelled_logged, 1u);
  EXPECT_EQ(Received("/all", "BOOKING_RESCHEDULED").size(), 1u);
}

// A booking's guests are in the payload as attendees after the one who booked (each with an empty
// name and the booker's time zone), as the booking's answer shows them.
TEST_F(WebhooksTriggers, GuestsAreAttendeesOfThePayloadAfterTheBooker) {
  Subscribe("BOOKING_CREATED");
  HttpResult r =
      Call("POST", "/v2/bookings", "",
           json{{"start", At(Monday(), "09:00")},
                {"eventTypeId", plain_["id"]},
                {"attendee", {{"name", "Ann Attendee"}, {"email", "ann@example.com"}, {"timeZone", "UTC"}}},
                {"guests", {"gia@example.net", "gus@example.org"}}});
  ASSERT_EQ(r.status, 201) << r.body;
  const json booked = r.Json()["data"];
  const json attendees = ExpectSent("BOOKING_CREATED", booked, plain_)["payload"]["attendees"];
  ASSERT_EQ(attendees.size(), 3u) << attendees;
  EXPECT_EQ(attendees[0]["email"], "ann@example.com");
  EXPECT_EQ(attendees[0]["name"], "Ann Attendee");
  EXPECT_EQ(attendees[1],
            (json{{"name", ""}, {"email", "gia@example.net"}, {"timeZone", "UTC"}, {"absent", false}}));
  EXPECT_EQ(attendees[2],
            (json{{"name", ""}, {"email", "gus@example.org"}, {"timeZone", "UTC"}, {"absent", false}}));
}

TEST_F(WebhooksTriggers, ConfirmedIsSentWhenTheOwnerConfirms) {
  Subscribe("BOOKING_CONFIRMED");
  const json pending = Book(vetted_, At(Monday(), "09:00"));
  ASSERT_EQ(pending["status"], "pending");
  const json confirmed = Act(pending, "confirm", json::object(), owner_key_);
  ASSERT_EQ(confirmed["status"], "accepted");
  ExpectSent("BOOKING_CONFIRMED", confirmed, vetted_);
}

TEST_F(WebhooksTriggers, RejectedIsSentWhenTheOwnerDeclines) {
  Subscribe("BOOKING_REJECTED");
  const json pending = Book(vetted_, At(Monday(), "09:00"));
  const json rejected = Act(pending, "decline", json{{"reason", "Fully booked"}}, owner_key_);
  ASSERT_EQ(rejected["status"], "rejected");
  EXPECT_EQ(ExpectSent("BOOKING_REJECTED", rejected, vetted_)["payload"]["cancellationReason"], "Fully booked");
}

TEST_F(WebhooksTriggers, NoShowIsSentWhenTheOwnerMarksAnAttendeeAbsent) {
  Subscribe("BOOKING_NO_SHOW");
  // A meeting that started ten minutes ago (imported: the public flow books only future times;
  // import writes no event of its own).
  const json started = Import(owner_, plain_["id"], In(-10));
  const json marked = Act(started, "mark-absent",
                          json{{"attendees", {{{"email", "ANN@example.com"}, {"absent", true}}}}}, owner_key_);
  ASSERT_EQ(marked["attendees"][0]["absent"], true);
  EXPECT_EQ(ExpectSent("BOOKING_NO_SHOW", marked, plain_)["payload"]["attendees"][0]["absent"], true);
}

TEST_F(WebhooksTriggers, CompletedIsSentByTheCompletionSweep) {
  Subscribe("BOOKING_COMPLETED");
  // A one-minute meeting that ends about two seconds from now; the sweep runs every second.
  const json short_type = CreateEventType(owner_key_, "minute", 1);
  const json ending = Import(owner_, short_type["id"], time::FormatIso(time::Now() - 58000));
  ASSERT_EQ(ending["status"], "accepted");
  const json event = AwaitEvent("BOOKING_COMPLETED", ending["uid"].get<std::string>());
  const json completed = Call("GET", "/v2/bookings/" + ending["uid"].get<std::string>(), owner_key_).Json()["data"];
  ASSERT_EQ(completed["status"], "completed");
  ExpectBody(event, "BOOKING_COMPLETED", completed, short_type);
  ExpectOthersGotNone("BOOKING_COMPLETED");
}

TEST_F(WebhooksTriggers, ReopenedIsSentForACancelledAndForARejectedBooking) {
  Subscribe("BOOKING_REOPENED");
  const std::string monday = Monday();
  const json cancelled = Book(plain_, At(monday, "09:00"));
  Act(cancelled, "cancel", json::object());
  const json reopened = Act(cancelled, "reopen", json::object(), owner_key_);
  ASSERT_EQ(reopened["status"], "accepted");
  ExpectSent("BOOKING_REOPENED", reopened, plain_);

  const json rejected = Book(vetted_, At(monday, "12:00"));  // on its 45-minute grid
  Act(rejected, "decline", json::object(), owner_key_);
  const json back = Act(rejected, "reopen", json::object(), owner_key_);
  ASSERT_EQ(back["status"], "pending");  // its event type requires confirmation
  ExpectSent("BOOKING_REOPENED", back, vetted_);
}

}  // namespace
}  // namespace rendezvous::testing
