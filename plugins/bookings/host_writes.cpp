#include "host_writes.hpp"

#include "booking_events.hpp"

namespace rendezvous::bookings {

void HostChange::Publish(const char* trigger, Millis created_at, const Json& payload) {
  outbox_.Publish(conn_, kOutboxTopic, trigger, EventEnvelope(trigger, created_at, payload));
  published_ = true;
}

void HostWrites::Apply(int64_t host_id, const Committed& done) {
  if (done.version != 0) booked_times_.Apply(host_id, done.version, done.added, done.removed);
  if (done.published) outbox_.Notify();
}

HostWrites::Turn::Turn(HostWrites& writes, int64_t host_id) : writes_(writes), host_id_(host_id) {
  {
    std::lock_guard<std::mutex> lock(writes_.turns_mutex_);
    auto& entry = writes_.turns_[host_id];
    if (!entry.first) entry.first = std::make_shared<std::mutex>();
    ++entry.second;
    mutex_ = entry.first;
  }
  mutex_->lock();
}

void HostWrites::Turn::unlock() {
  if (!mutex_) return;
  mutex_->unlock();
  mutex_.reset();
  std::lock_guard<std::mutex> lock(writes_.turns_mutex_);
  auto it = writes_.turns_.find(host_id_);
  if (--it->second.second == 0) writes_.turns_.erase(it);
}

}  // namespace rendezvous::bookings
