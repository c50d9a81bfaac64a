// Background and lifecycle behaviour of the bookings plugin: the completion sweep (accepted
// bookings whose end passed become completed, with BOOKING_COMPLETED; imported history completes
// without an event), a prompt stop, and the plugin disabled (its routes answer 404).
#include "bookings_fixture.hpp"
#include "eventually.hpp"

namespace rendezvous::testing {
namespace {

class BookingsLifecycle : public BookingsFixture {};

TEST_F(BookingsLifecycle, SweepCompletesEndedAcceptedBookings) {
  StartServer("bookings: { completion_sweep_interval: 1 }\n");
  const int64_t et = CreateEventType(owner_key_, "short", 1)["id"].get<int64_t>();
  // Ends about ten seconds from now: completed by the sweep, with an event.
  const std::string soon = time::FormatIso(time::Now() - 50000);
  json ending = Import(owner_, et, soon);
  EXPECT_EQ(ending["status"], "accepted");
  json history = Import(owner_, et, "2021-01-01T10:00:00Z");  // ended before the import
  json pending = Import(owner_, et, "2021-01-01T11:00:00Z", "pending");
  json future = Import(owner_, et, In(60));
  const std::string uid = ending["uid"];

  std::string status;
  ASSERT_TRUE(Eventually("the ended booking completed",
                         {std::chrono::seconds(30), std::chrono::milliseconds(200)},
                         [&] {
                           status = db_.QueryValue("SELECT status FROM bookings WHERE uid = '" + uid + "'");
                           return status == "completed";
                         }))
      << "status " << status;
  ASSERT_EQ(OutboxCount("BOOKING_COMPLETED"), 1);
  json event = LastOutbox("BOOKING_COMPLETED");
  EXPECT_EQ(event["triggerEvent"], "BOOKING_COMPLETED");
  EXPECT_EQ(event["payload"]["uid"], uid);
  EXPECT_EQ(event["payload"]["status"], "completed");
  ExpectPayloadShows(event["payload"], Call("GET", "/v2/bookings/" + uid, owner_key_).Json()["data"]);

  EXPECT_EQ(
      db_.QueryValue("SELECT status FROM bookings WHERE uid = '" + history["uid"].get<std::string>() + "'"),
      "completed");
  EXPECT_EQ(
      db_.QueryValue("SELECT status FROM bookings WHERE uid = '" + pending["uid"].get<std::string>() + "'"),
      "pending");
  EXPECT_EQ(
      db_.QueryValue("SELECT status FROM bookings WHERE uid = '" + future["uid"].get<std::string>() + "'"),
      "accepted");
  // A completed booking may still record a no-show.
  HttpResult marked = Call("POST", "/v2/bookings/" + uid + "/mark-absent", owner_key_, json{{"host", true}});
  EXPECT_EQ(marked.status, 200) << marked.body;
  EXPECT_EQ(marked.Json()["data"]["status"], "completed");
  EXPECT_EQ(OutboxCount("BOOKING_COMPLETED"), 1);
}

TEST_F(BookingsLifecycle, StopsPromptlyWithALongInterval) {
  StartServer("bookings: { completion_sweep_interval: 86400 }\n");
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_EQ(server_->Stop(15, std::chrono::seconds(10)), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(10));
}

// Webhooks stays enabled: it meets bookings only through the outbox, so it starts without them.
TEST_F(BookingsLifecycle, DisabledPluginRoutesAreNotFound) {
  StartServer("bookings: { enabled: false }\ncalendar: { enabled: false }\n");
  for (const char* path : {"/v2/event-types", "/v2/bookings", "/v2/bookings/abc"}) {
    HttpResult r = Call("GET", path, owner_key_);
    EXPECT_EQ(r.status, 404) << path << " " << r.body;
  }
  EXPECT_EQ(
      Call("POST", "/v2/event-types", owner_key_, json{{"title", "T"}, {"slug", "t"}, {"lengthInMinutes", 5}})
          .status,
      404);
  EXPECT_EQ(Call("GET", "/v2/me", owner_key_).status, 200);
  CliResult import = server_->Cli({"admin", "booking", "import", "--user-id", std::to_string(owner_)});
  EXPECT_NE(import.exit_code, 0);
}

}  // namespace
}  // namespace rendezvous::testing
