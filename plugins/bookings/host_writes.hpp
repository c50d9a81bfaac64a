// A change of one host's bookings or slot holds, the one way every writer makes it (BookingFlow,
// ReservationFlow, BookingImport): this instance's turn at the host, then one transaction whose
// first statement takes the host's lock row (LockHost) and in which the change writes its rows and
// its outbox events; after the transaction, the cache of the host's booked times is told what the
// transaction committed, and the outbox is woken when an event was written.
//
// The turn: an instance sends one such transaction of a host at a time (the others wait here,
// holding no connection), so racing writers on a cluster meet one per instance at the lock row.
// Other hosts never wait on it. Owns the cache of the hosts' booked times that the slots read.
// Thread-safe. The Database and Outbox must outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "booked_times_cache.hpp"
#include "booking_rows.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/outbox.hpp"

namespace rendezvous::bookings {

// What a change sees of its transaction: the connection, and where it says what it wrote.
class HostChange {
 public:
  DbConnection& conn() { return conn_; }
  // Writes the event `trigger` (topic "bookings", EventEnvelope) in the transaction.
  void Publish(const char* trigger, Millis created_at, const Json& payload);
  // A booking that now takes its time, and one that no longer does (for the booked times' cache).
  void Booked(const BookedTime& time) { added_ = time; }
  void Freed(int64_t booking_id) { removed_ = booking_id; }

 private:
  friend class HostWrites;
  HostChange(DbConnection& conn, Outbox& outbox, int64_t version)
      : conn_(conn), outbox_(outbox), version_(version) {}

  DbConnection& conn_;
  Outbox& outbox_;
  int64_t version_;  // the host's version the transaction makes
  bool published_ = false;
  std::optional<BookedTime> added_;
  int64_t removed_ = 0;
};

class HostWrites {
 public:
  HostWrites(Database& db, Outbox& outbox) : db_(db), outbox_(outbox) {}
  HostWrites(const HostWrites&) = delete;
  HostWrites& operator=(const HostWrites&) = delete;

  // The hosts' booked times the slots read.
  BookedTimesCache& booked_times() { return booked_times_; }

  // Runs `change(HostChange&)` as a change of `host_id`'s bookings and answers what it answers.
  // The transaction is retried on a deadlock, so `change` must act only through the HostChange.
  // What it wrote commits even when it answers a refusal (the lock row's version does). Throws
  // what the transaction throws (DatabaseUnavailable); nothing is then applied or woken.
  template <class F>
  auto Change(int64_t host_id, F&& change) -> decltype(change(std::declval<HostChange&>())) {
    Committed done;
    Turn turn(*this, host_id);
    auto out = db_.Transaction([&](DbConnection& conn) {
      done = {};
      HostChange c(conn, outbox_, LockHost(conn, host_id));
      done.version = c.version_;
      auto answer = change(c);
      done.published = c.published_;
      done.added = c.added_;
      done.removed = c.removed_;
      return answer;
    });
    turn.unlock();
    Apply(host_id, done);
    return out;
  }

 private:
  // What a transaction holding a host's lock changed: the version it made (0: it did not commit),
  // a booking now booked, one no longer (0: none), whether it wrote an event.
  struct Committed {
    int64_t version = 0;
    bool published = false;
    std::optional<BookedTime> added;
    int64_t removed = 0;
  };
  void Apply(int64_t host_id, const Committed& done);

  // One host's turn: held while the host's transaction runs.
  class Turn {
   public:
    Turn(HostWrites& writes, int64_t host_id);
    ~Turn() { unlock(); }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;
    void unlock();

   private:
    HostWrites& writes_;
    int64_t host_id_;
    std::shared_ptr<std::mutex> mutex_;
  };

  Database& db_;
  Outbox& outbox_;
  BookedTimesCache booked_times_;
  // The hosts whose turn is held or awaited, each with its number of holders and waiters.
  std::mutex turns_mutex_;
  std::map<int64_t, std::pair<std::shared_ptr<std::mutex>, size_t>> turns_;
};

}  // namespace rendezvous::bookings
