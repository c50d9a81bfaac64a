// Slot reservations (docs/bookings.md "Holding a slot"). A hold is taken, moved and deleted as a
// HostWrites change, under the host's lock like a booking, so a hold and a racing booking never
// both win; while it lasts its slot is left out of the slots and refused to every booking but its
// holder's (the one naming its uid, which BookingFlow::Create turns into the booking). Each such
// change moves the host's version on (the booked times' cache follows it) and raises the host's
// holds_until_ms, which tells the slots and the bookings whether the host may have an open hold at
// all. A hold ends by the clock: every read asks for holds whose until_ms is after now, and the
// sweep deletes the ended ones later. Thread-safe (each call borrows its own connection). Calls may
// throw DatabaseUnavailable. The Database and UserDirectory must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "booking_metrics.hpp"
#include "booking_window.hpp"
#include "event_type.hpp"
#include "host_writes.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/user.hpp"
#include "reservation_requests.hpp"

namespace rendezvous::bookings {

class ReservationFlow {
 public:
  // `writes`: the host changes shared with BookingFlow.
  ReservationFlow(Database& db, std::shared_ptr<HostWrites> writes, UserDirectory& users);

  // The busy source and the horizon a hold keeps to, as a booking does. Set before the server
  // serves; none and 730 days by default.
  void SetWindow(BookingWindow window) { window_ = std::move(window); }
  // Where holds made, ended and open are counted. Set before the server serves; none by default.
  void SetMetrics(std::shared_ptr<BookingMetrics> metrics) { metrics_ = std::move(metrics); }
  // plugins.bookings.reservations. Set before the server serves; DESIGN §8's defaults otherwise.
  void SetSettings(ReservationSettings settings) { settings_ = settings; }
  const ReservationSettings& settings() const { return settings_; }

  // Who asks: the client address (at most reservations.per_address open holds each: 429) and the
  // user of a credential given (nullopt: none); reservationDuration is the event type owner's only
  // (401 without a credential, 403 with another's). A slotStart in the past or off the grid is 400
  // naming slotStart, a slot not free 409; an unknown event type 400 naming eventTypeId; an
  // unknown or ended reservation 404.
  struct Caller {
    std::string address;
    std::optional<int64_t> user_id;
  };
  Result<Json> Reserve(const ReserveRequest& request, const Caller& caller);
  Result<Json> Get(const std::string& uid);
  // Moves the hold to the request's slot (of the same event type) and holds it again from now.
  Result<Json> Update(const std::string& uid, const ReserveRequest& request, const Caller& caller);
  Status Delete(const std::string& uid);
  // Deletes up to `limit` holds that ended at `now` (counted as expired). Returns how many.
  size_t ForgetExpired(Millis now, size_t limit);
  // Sets the gauge of open holds to their number at `now` (all instances').
  void CountOpen(Millis now);

 private:
  // A reservation request's event type and its owner, with the checks that need no lock (the
  // event type, who may set reservationDuration, slotDuration, the horizon, and, when `holder` is
  // given, that the event type is that host's: a reservation keeps its event type), and the busy
  // times outside the bookings over its slot.
  struct Target {
    EventType event_type;
    User host;
    int minutes = 0;  // how long the hold lasts
    std::vector<BusyBlock> outside;
  };
  Result<Target> Check(const ReserveRequest& request, const Caller& caller,
                       std::optional<int64_t> holder = std::nullopt);
  // The host of the open reservation `uid`; NotFound when there is none.
  Result<User> HostOf(const std::string& uid);
  // Under the host's lock: the request's slot, checked free (but for `hold` itself), placed on
  // `hold` and held from `now`.
  Status Place(DbConnection& conn, const Target& target, const ReserveRequest& request, Millis now,
               SlotReservation& hold);

  Database& db_;
  std::shared_ptr<HostWrites> writes_;
  UserDirectory& users_;
  BookingWindow window_;
  std::shared_ptr<BookingMetrics> metrics_;
  ReservationSettings settings_;
};

}  // namespace rendezvous::bookings
