#include "booking_routes.hpp"

#include "rendezvous/crypto.hpp"
#include "route_support.hpp"

namespace rendezvous::bookings {
namespace {

Response EventTypeNotFound() {
  return Response::FromStatus(Status::NotFound("event type not found"));
}

class Routes {
 public:
  Routes(PluginContext& ctx, std::shared_ptr<BookingService> service, RateLimit public_limit)
      : ctx_(ctx), service_(std::move(service)), identity_(ctx.identity()), public_limit_(std::move(public_limit)) {}

  void Register() {
    Add(Method::kGet, "/v2/event-types", "EVENT_TYPE_READ", [](BookingService& s, Request& req) {
      return Response::Success(s.ListEventTypes(req.principal->user_id));
    });
    Add(Method::kPost, "/v2/event-types", "EVENT_TYPE_WRITE", [](BookingService& s, Request& req) {
      auto body = req.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      Result<EventTypeFields> fields = ParseEventTypeCreate(*body);
      if (!fields.ok()) return Response::FromStatus(fields.status());
      return Answer(s.CreateEventType(req.principal->user_id, *fields), 201);
    });
    Add(Method::kGet, "/v2/event-types/:id", "EVENT_TYPE_READ", [](BookingService& s, Request& req) {
      auto id = PathId(req);
      if (!id) return EventTypeNotFound();
      return Answer(s.GetEventType(req.principal->user_id, *id));
    });
    Add(Method::kPatch, "/v2/event-types/:id", "EVENT_TYPE_WRITE", [](BookingService& s, Request& req) {
      auto id = PathId(req);
      if (!id) return EventTypeNotFound();
      auto body = req.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      // Checked before the transaction, so a bad body touches nothing.
      EventTypeFields scratch;
      scratch.title = "x";
      scratch.slug = "x";
      scratch.length_minutes = 1;
      if (Status e = ApplyEventTypePatch(*body, scratch); !e.ok()) return Response::FromStatus(e);
      return Answer(s.UpdateEventType(req.principal->user_id, *id, *body));
    });
    Add(Method::kDelete, "/v2/event-types/:id", "EVENT_TYPE_WRITE", [](BookingService& s, Request& req) {
      auto id = PathId(req);
      if (!id) return EventTypeNotFound();
      return Answer(s.DeleteEventType(req.principal->user_id, *id));
    });

    AddHosted(Method::kGet, "/v2/bookings", "BOOKING_READ",
              [](BookingService& s, const User& host, Request& req) {
                Result<ListQuery> query = ParseListQuery(req.query);
                if (!query.ok()) return Response::FromStatus(query.status());
                return Response::SuccessWith(s.ListBookings(host, *query));
              });
    AddPublic(Method::kGet, "/v2/slots", [](BookingService& s, Request& req) {
      Result<SlotsQuery> query = ParseSlotsQuery(req.query);
      if (!query.ok()) return Response::FromStatus(query.status());
      Result<Json> slots = s.Slots(*query);
      if (!slots.ok()) return Response::FromStatus(slots.status());
      return Response::SuccessWith(*slots);
    });
    AddPublic(Method::kPost, "/v2/bookings", [](BookingService& s, Request& req) {
      std::optional<std::string> key = req.Header("idempotency-key");
      if (key) {
        if (Status e = CheckIdempotencyKey(*key); !e.ok()) return Response::FromStatus(e);
      }
      auto body = req.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      Result<CreateRequest> create = ParseCreateBody(*body);
      if (!create.ok()) return Response::FromStatus(create.status());
      return Answer(s.Create(*create, key, crypto::Sha256Hex(body->dump())), 201);
    });
    AddPublic(Method::kPost, "/v2/bookings/:uid/cancel", [](BookingService& s, Request& req) {
      auto body = req.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      Result<std::optional<std::string>> reason = ParseCancelBody(*body);
      if (!reason.ok()) return Response::FromStatus(reason.status());
      return Answer(s.Cancel(PathUid(req), *reason));
    });
    AddPublic(Method::kPost, "/v2/bookings/:uid/reschedule", [](BookingService& s, Request& req) {
      auto body = req.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      Result<RescheduleRequest> reschedule = ParseRescheduleBody(*body);
      if (!reschedule.ok()) return Response::FromStatus(reschedule.status());
      return Answer(s.Reschedule(PathUid(req), *reschedule), 201);
    });

    AddHosted(Method::kGet, "/v2/bookings/:uid", "BOOKING_READ",
              [](BookingService& s, const User& host, Request& req) {
                return Answer(s.GetBooking(host, PathUid(req)));
              });
    AddHosted(Method::kPost, "/v2/bookings/:uid/confirm", "BOOKING_WRITE",
              [](BookingService& s, const User& host, Request& req) {
                auto body = req.JsonBody();
                if (!body.ok()) return Response::FromStatus(body.status());
                if (Status e = ParseConfirmBody(*body); !e.ok()) return Response::FromStatus(e);
                return Answer(s.Confirm(host, PathUid(req)));
              });
    AddHosted(Method::kPost, "/v2/bookings/:uid/decline", "BOOKING_WRITE",
              [](BookingService& s, const User& host, Request& req) {
                auto body = req.JsonBody();
                if (!body.ok()) return Response::FromStatus(body.status());
                Result<std::optional<std::string>> reason = ParseDeclineBody(*body);
                if (!reason.ok()) return Response::FromStatus(reason.status());
                return Answer(s.Decline(host, PathUid(req), *reason));
              });
    AddHosted(Method::kPost, "/v2/bookings/:uid/mark-absent", "BOOKING_WRITE",
              [](BookingService& s, const User& host, Request& req) {
                auto body = req.JsonBody();
                if (!body.ok()) return Response::FromStatus(body.status());
                Result<AbsentMarks> marks = ParseMarkAbsentBody(*body);
                if (!marks.ok()) return Response::FromStatus(marks.status());
                return Answer(s.MarkAbsent(host, PathUid(req), *marks));
              });
    AddHosted(Method::kPost, "/v2/bookings/:uid/reopen", "BOOKING_WRITE",
              [](BookingService& s, const User& host, Request& req) {
                auto body = req.JsonBody();
                if (!body.ok()) return Response::FromStatus(body.status());
                if (Status e = ParseConfirmBody(*body); !e.ok()) return Response::FromStatus(e);
                return Answer(s.Reopen(host, PathUid(req)));
              });
    AddHosted(Method::kGet, "/v2/bookings/:uid/references", "BOOKING_READ",
              [](BookingService& s, const User& host, Request& req) {
                return Answer(s.ListReferences(host, PathUid(req)));
              });
  }

 private:
  using Fn = Response (*)(BookingService&, Request&);
  using HostedFn = Response (*)(BookingService&, const User&, Request&);

  void Add(Method method, const char* pattern, const char* scope, Fn fn) {
    ctx_.AddRoute(Route::Api(method, pattern, RouteAuth::Bearer(scope, kOwnerCredentials),
                             [service = service_, fn](Request& req) { return fn(*service, req); }));
  }

  // The public booking flow: no credential needed (one given is not looked at); limited per
  // client address.
  void AddPublic(Method method, const char* pattern, Fn fn) {
    ctx_.AddRoute(Route::Api(method, pattern, RouteAuth::Public(),
                             [service = service_, fn](Request& req) { return fn(*service, req); })
                      .LimitedPerAddress(public_limit_));
  }

  // Routes over bookings need the caller as a user (the host shown in each booking).
  void AddHosted(Method method, const char* pattern, const char* scope, HostedFn fn) {
    ctx_.AddRoute(Route::Api(method, pattern, RouteAuth::Bearer(scope, kOwnerCredentials),
                             [service = service_, &identity = identity_, fn](Request& req) {
                               std::optional<User> host = identity.FindUser(req.principal->user_id);
                               if (!host) {
                                 return Response::FromStatus(Status(
                                     ErrorCode::kUnauthenticated, "the credential's user no longer exists"));
                               }
                               return fn(*service, *host, req);
                             }));
  }

  PluginContext& ctx_;
  std::shared_ptr<BookingService> service_;
  Identity& identity_;
  RateLimit public_limit_;
};

}  // namespace

void RegisterBookingRoutes(PluginContext& ctx, std::shared_ptr<BookingService> service, RateLimit public_limit) {
  Routes(ctx, std::move(service), std::move(public_limit)).Register();
}

}  // namespace rendezvous::bookings
