// The calendar plugin stands on its own: with the bookings plugin disabled the server starts and
// the calendar routes serve.
#include "calendar_fixture.hpp"

namespace rendezvous::testing {
namespace {

class CalendarWithoutBookingsTest : public CalendarTest {
 protected:
  // Webhooks are built on booking events, so they go with bookings.
  void SetUp() override {
    StartServer("", true, "bookings:\n  enabled: false\nwebhooks:\n  enabled: false\n");
  }
};

TEST_F(CalendarWithoutBookingsTest, CalendarRoutesServe) {
  HttpResult list = Get("/v2/calendars", key_);
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_TRUE(list.Json()["data"]["calendars"].empty()) << list.body;

  AddStandardCalendars();
  HttpResult saved = ConnectAndSave();
  ASSERT_EQ(saved.status, 200) << saved.body;
  EXPECT_EQ(Get("/v2/calendars", key_).Json()["data"]["calendars"].size(), 3u);
  // The bookings routes are gone with their plugin.
  EXPECT_EQ(Get("/v2/bookings", key_).status, 404);
}

}  // namespace
}  // namespace rendezvous::testing
