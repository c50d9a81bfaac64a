#include "booking_transitions.hpp"

#include <string>

namespace rendezvous::bookings {

Status CheckTransition(BookingStatus from, BookingAction action, bool started, bool ended) {
  const std::string is = "the booking is " + std::string(StatusName(from));
  switch (action) {
    case BookingAction::kConfirm:
      if (from != BookingStatus::kPending)
        return Status::Conflict(is + "; only a pending booking can be confirmed");
      return Status::Ok();
    case BookingAction::kDecline:
      if (from != BookingStatus::kPending)
        return Status::Conflict(is + "; only a pending booking can be declined");
      return Status::Ok();
    case BookingAction::kMarkAbsent:
      if (from != BookingStatus::kAccepted && from != BookingStatus::kCompleted) {
        return Status::Conflict(is + "; absence can only be recorded for an accepted or completed booking");
      }
      if (!started)
        return Status::Conflict(
            "the booking has not started yet; absence can be recorded once it has started");
      return Status::Ok();
    case BookingAction::kComplete:
      if (from != BookingStatus::kAccepted)
        return Status::Conflict(is + "; only an accepted booking can be completed");
      if (!ended) return Status::Conflict("the booking has not ended yet");
      return Status::Ok();
    case BookingAction::kCancel:
    case BookingAction::kReschedule: {
      const char* verb = action == BookingAction::kCancel ? "cancelled" : "rescheduled";
      if (from != BookingStatus::kPending && from != BookingStatus::kAccepted) {
        return Status::Conflict(is + "; only a pending or accepted booking can be " + verb);
      }
      if (ended) return Status::Conflict(std::string("the booking has already ended; it cannot be ") + verb);
      return Status::Ok();
    }
    case BookingAction::kReopen:
      if (from != BookingStatus::kCancelled && from != BookingStatus::kRejected) {
        return Status::Conflict(is + "; only a cancelled or rejected booking can be reopened");
      }
      if (started) return Status::Conflict("the booking's time has passed; it cannot be reopened");
      return Status::Ok();
  }
  return Status(ErrorCode::kInternal, "unknown booking action");
}

BookingStatus StatusAfter(BookingStatus from, BookingAction action) {
  switch (action) {
    case BookingAction::kConfirm:
      return BookingStatus::kAccepted;
    case BookingAction::kDecline:
      return BookingStatus::kRejected;
    case BookingAction::kMarkAbsent:
      return from;
    case BookingAction::kComplete:
      return BookingStatus::kCompleted;
    case BookingAction::kCancel:
    case BookingAction::kReschedule:
      return BookingStatus::kCancelled;
    case BookingAction::kReopen:
      return BookingStatus::kAccepted;
  }
  return from;
}

const char* TriggerFor(BookingAction action) {
  switch (action) {
    case BookingAction::kConfirm:
      return "BOOKING_CONFIRMED";
    case BookingAction::kDecline:
      return "BOOKING_REJECTED";
    case BookingAction::kMarkAbsent:
      return "BOOKING_NO_SHOW";
    case BookingAction::kComplete:
      return "BOOKING_COMPLETED";
    case BookingAction::kCancel:
      return "BOOKING_CANCELLED";
    case BookingAction::kReschedule:
      return "BOOKING_RESCHEDULED";
    case BookingAction::kReopen:
      return "BOOKING_REOPENED";
  }
  return "BOOKING_UPDATED";
}

}  // namespace rendezvous::bookings
