// The bookings plugin's scoped routes (API keys and OAuth tokens; managed-user tokens answer 401):
//   GET    /v2/event-types           EVENT_TYPE_READ    POST   /v2/event-types        EVENT_TYPE_WRITE
//   GET    /v2/event-types/:id       EVENT_TYPE_READ    PATCH  /v2/event-types/:id    EVENT_TYPE_WRITE
//   DELETE /v2/event-types/:id       EVENT_TYPE_WRITE
//   GET    /v2/bookings              BOOKING_READ       GET    /v2/bookings/:uid      BOOKING_READ
//   POST   /v2/bookings/:uid/confirm | /decline | /mark-absent                        BOOKING_WRITE
// The public booking flow (GET /v2/slots, POST /v2/bookings, /:uid/cancel, /:uid/reschedule,
// and the slot reservations POST /v2/slots/reservations, GET/PATCH/DELETE .../:uid) is limited
// per client address by `public_limit` (plugins.bookings.public_rate_limit).
// The routes share the ownership of the services.
#pragma once

#include <memory>

#include "booking_flow.hpp"
#include "booking_reference_store.hpp"
#include "event_type_service.hpp"
#include "rendezvous/plugin.hpp"
#include "reservation_flow.hpp"

namespace rendezvous::bookings {

// What the routes answer with.
struct BookingServices {
  std::shared_ptr<EventTypeService> event_types;
  std::shared_ptr<BookingFlow> flow;
  std::shared_ptr<ReservationFlow> reservations;
  std::shared_ptr<BookingReferenceStore> references;
};

void RegisterBookingRoutes(PluginContext& ctx, BookingServices services, RateLimit public_limit);

}  // namespace rendezvous::bookings
