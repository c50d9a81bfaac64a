// The bookings plugin's metrics, on /metrics from start-up (every label value is known in advance
// and exported at zero):
//
//   bookings_created_total{status}              bookings made through POST /v2/bookings (an
//       idempotent replay is not counted); status accepted or pending
//   bookings_transitions_total{action}          changes of existing bookings: confirm, decline,
//       mark_absent, complete (the sweep), cancel, reschedule, reopen
//   bookings_overlaps_refused_total{action}     create, reschedule or reopen refused because the
//       time overlaps a booking or a busy time of the host (buffers included)
//   bookings_slots_duration_seconds             computing one GET /v2/slots answer, busy-time
//       sources included
//   bookings_reservations_created_total         slot reservations made (POST /v2/slots/reservations)
//   bookings_reservations_ended_total{how}      slot reservations that ended: converted (became the
//       holder's booking), deleted (DELETE), expired (their time passed; counted by the instance
//       whose sweep removed them)
//   bookings_reservations_held                  open slot reservations of every instance, as the
//       last sweep counted them (every completion_sweep_interval)
//
// Thread-safe. `metrics` must outlive this object.
#pragma once

#include <cstddef>
#include <string_view>

#include "booking.hpp"
#include "booking_transitions.hpp"
#include "rendezvous/metrics.hpp"

namespace rendezvous::bookings {

class BookingMetrics {
 public:
  explicit BookingMetrics(Metrics& metrics);

  void Created(std::string_view status);
  void Transitioned(BookingAction action, size_t count = 1);
  // `action`: "create", "reschedule" or "reopen".
  void OverlapRefused(std::string_view action);
  void SlotsComputed(double seconds);
  void ReservationMade();
  // `how`: "converted", "deleted" or "expired".
  void ReservationEnded(std::string_view how, size_t count = 1);
  void ReservationsHeld(size_t open);

 private:
  MetricFamily& created_;
  MetricFamily& transitions_;
  MetricFamily& overlaps_;
  Metric& slots_duration_;
  Metric& reservations_made_;
  MetricFamily& reservations_ended_;
  Metric& reservations_held_;
};

}  // namespace rendezvous::bookings
