// The error envelopes the bookings routes answer: a refused field, a refused move between states,
// a missing booking. These bytes are what API clients see, so they are pinned here.
#include <gtest/gtest.h>

#include "booking_transitions.hpp"
#include "field_checks.hpp"
#include "rendezvous/http.hpp"

namespace rendezvous::bookings {
namespace {

TEST(BookingsErrors, FieldNamedInMessageAndDetails) {
  Response r = Response::FromStatus(FieldInvalid("title", "must be a string"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body,
            R"({"status":"error","error":{"code":"validation_error","message":"title must be a string",)"
            R"("details":{"field":"title"}}})");
  r = Response::FromStatus(FieldInvalid("body", "must be a JSON object"));
  EXPECT_EQ(r.body, R"({"status":"error","error":{"code":"validation_error",)"
                    R"("message":"the request body must be a JSON object","details":{"field":"body"}}})");
}

TEST(BookingsErrors, RefusedTransitionIsAConflict) {
  Response r =
      Response::FromStatus(CheckTransition(BookingStatus::kAccepted, BookingAction::kConfirm, false, false));
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.body, R"({"status":"error","error":{"code":"conflict",)"
                    R"("message":"the booking is accepted; only a pending booking can be confirmed"}})");
}

}  // namespace
}  // namespace rendezvous::bookings
