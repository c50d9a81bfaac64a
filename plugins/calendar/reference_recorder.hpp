// The booking references the sync worker records (a booking's Google event), through the bookings
// plugin's host service once it is found (absent when the bookings plugin is disabled: then there
// are no booking events either).
//
// Attach() once before the sync worker starts; Record() is thread-safe after that.
#pragma once

#include <memory>
#include <string>

#include "rendezvous/contracts/booking_references.hpp"
#include "rendezvous/log.hpp"
#include "sync_jobs.hpp"

namespace rendezvous::calendar {

class ReferenceRecorder {
 public:
  void Attach(std::shared_ptr<BookingReferences> references) { references_ = std::move(references); }
  // Records the job's event as a reference of its booking, unless a repeated job did already. A
  // moved event's reference moves from the bookings that had it, so that one booking at a time
  // names the event. Failures are logged.
  void Record(const SyncJob& job, const std::string& calendar_id, Logger& logger) const;

 private:
  std::shared_ptr<BookingReferences> references_;
};

}  // namespace rendezvous::calendar
