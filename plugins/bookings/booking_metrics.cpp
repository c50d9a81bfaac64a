#include "booking_metrics.hpp"

#include <string>

namespace rendezvous::bookings {
namespace {

constexpr BookingAction kActions[] = {BookingAction::kConfirm,  BookingAction::kDecline, BookingAction::kMarkAbsent,
                                      BookingAction::kComplete, BookingAction::kCancel,  BookingAction::kReschedule,
                                      BookingAction::kReopen};

const char* ActionLabel(BookingAction action) {
  switch (action) {
    case BookingAction::kConfirm:
      return "confirm";
    case BookingAction::kDecline:
      return "decline";
    case BookingAction::kMarkAbsent:
      return "mark_absent";
    case BookingAction::kComplete:
      return "complete";
    case BookingAction::kCancel:
      return "cancel";
    case BookingAction::kReschedule:
      return "reschedule";
    case BookingAction::kReopen:
      return "reopen";
  }
  return "other";
}

}  // namespace

BookingMetrics::BookingMetrics(Metrics& metrics)
    : created_(metrics.Counter("bookings_created_total", "Bookings created through the API, by status.",
                               {"status"})),
      transitions_(metrics.Counter("bookings_transitions_total", "Changes of existing bookings, by action.",
                                   {"action"})),
      overlaps_(metrics.Counter(
          "bookings_overlaps_refused_total",
          "Booking writes refused because the time overlaps the host's bookings or busy times.", {"action"})),
      slots_duration_(metrics
                          .Histogram("bookings_slots_duration_seconds",
                                     "Time to compute a slots answer, busy-time sources included.", {},
                                     {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10})
                          .With()),
      reservations_made_(
          metrics.Counter("bookings_reservations_created_total", "Slot reservations made.").With()),
      reservations_ended_(metrics.Counter(
          "bookings_reservations_ended_total",
          "Slot reservations that ended: converted into the holder's booking, deleted, or expired.",
          {"how"})),
      reservations_held_(
          metrics
              .Gauge("bookings_reservations_held", "Open slot reservations, as the last sweep counted them.")
              .With()) {
  for (const char* how : {"converted", "deleted", "expired"}) reservations_ended_.With({how});
  for (std::string_view status : {StatusName(BookingStatus::kAccepted), StatusName(BookingStatus::kPending)})
    created_.With({std::string(status)});
  for (BookingAction action : kActions) transitions_.With({ActionLabel(action)});
  for (const char* action : {"create", "reschedule", "reopen"}) overlaps_.With({action});
}

void BookingMetrics::Created(std::string_view status) { created_.With({std::string(status)}).Increment(); }

void BookingMetrics::Transitioned(BookingAction action, size_t count) {
  transitions_.With({ActionLabel(action)}).Add(static_cast<double>(count));
}

void BookingMetrics::OverlapRefused(std::string_view action) { overlaps_.With({std::string(action)}).Increment(); }

void BookingMetrics::SlotsComputed(double seconds) { slots_duration_.Observe(seconds); }

void BookingMetrics::ReservationMade() {
  reservations_made_.Increment();
}

void BookingMetrics::ReservationEnded(std::string_view how, size_t count) {
  reservations_ended_.With({std::string(how)}).Add(static_cast<double>(count));
}

void BookingMetrics::ReservationsHeld(size_t open) {
  reservations_held_.Set(static_cast<double>(open));
}

}  // namespace rendezvous::bookings
