#include "reference_recorder.hpp"

namespace rendezvous::calendar {

void ReferenceRecorder::Record(const SyncJob& job, const std::string& calendar_id, Logger& logger) const {
  if (!references_) return;
  const BookingReference reference{"google_calendar", job.event_id, calendar_id, 0};
  bool recorded = false;
  for (const std::string& from : job.moved_from) {
    Status s = references_->Move(from, job.booking_uid, reference);
    if (s.ok())
      recorded = true;
    else
      logger.Warn("calendar sync: the booking reference was not moved",
                  {{"booking_uid", job.booking_uid}, {"from_uid", from}, {"error", s.message()}});
  }
  if (recorded) return;
  for (const BookingReference& r : references_->List(job.booking_uid)) {
    if (r.type == reference.type && r.event_uid == reference.event_uid) return;
  }
  Status s = references_->Add(job.booking_uid, reference);
  if (!s.ok())
    logger.Warn("calendar sync: the booking reference was not recorded",
                {{"booking_uid", job.booking_uid}, {"error", s.message()}});
}

}  // namespace rendezvous::calendar
