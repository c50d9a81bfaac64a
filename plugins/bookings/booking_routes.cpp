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
  Routes(PluginContext& ctx, BookingServices services, RateLimit public_limit)
      : ctx_(ctx),
        services_(std::make_shared<BookingServices>(std::move(services))),
        identity_(ctx.identity()),
        public_limit_(std::move(public_limit)) {}

  void Register() {
    Add(Method::kGet, "/v2/event-types", "EVENT_TYPE_READ", [](BookingServices& s, Request& req) {
      return Response::Success(s.event_types->List(req.principal->user_id));
    });
    Add(Method::kPost, "/v2/event-types", "EVENT_TYPE_WRITE", [](BookingServices& s, Request& req) {
      auto body = req.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      Result<EventTypeFields> fields = ParseEventTypeCreate(*body);
      if (!fields.ok()) return Response::FromStatus(fields.status());
      return Answer(s.event_types->Create(req.principal->user_id, *fields), 201);
    });
    Add(Method::kGet, "/v2/event-types/:id", "EVENT_TYPE_READ", [](BookingServices& s, Request& req) {
      auto id = PathId(req);
      if (!id) return EventTypeNotFound();
      return Answer(s.event_types->Get(req.principal->user_id, *id));
    });
    Add(Method::kPatch, "/v2/event-types/:id", "EVENT_TYPE_WRITE", [](BookingServices& s, Request& req) {
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
      return Answer(s.event_types->Update(req.principal->user_id, *id, *body));
    });
    Add(Method::kDelete, "/v2/event-types/:id", "EVENT_TYPE_WRITE", [](BookingServices& s, Request& req) {
      auto id = PathId(req);
      if (!id) return EventTypeNotFound();
      return Answer(s.event_types->Delete(req.principal->user_id, *id));
    });

    AddHosted(Method::kGet, "/v2/bookings", "BOOKING_READ",
              [](BookingServices& s, const User& host, Request& req) {
                Result<ListQuery> query = ParseListQuery(req.query);
                if (!query.ok()) return Response::FromStatus(query.status());
                return Response::SuccessWith(s.flow->ListBookings(host, *query));
              });
    AddPublic(Method::kGet, "/v2/slots", [](BookingServices& s, Request& req) {
      Result<SlotsQuery> query = ParseSlotsQuery(req.query);
      if (!query.ok()) return Response::FromStatus(query.status());
      Result<Json> slots = s.flow->Slots(*query);
      if (!slots.ok()) return Response::FromStatus(slots.status());
      return Response::SuccessWith(*slots);
    });
    AddPublic(Method::kPost, "/v2/bookings", [](BookingServices& s, Request& req) {
      std::optional<std::string> key = req.Header("idempotency-key");
      if (key) {
        if (Status e = CheckIdempotencyKey(*key); !e.ok()) return Response::FromStatus(e);
      }
      auto body = req.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      Result<CreateRequest> create = ParseCreateBody(*body);
      if (!create.ok()) return Response::FromStatus(create.status());
      return Answer(s.flow->Create(*create, key, crypto::Sha256Hex(body->dump())), 201);
    });
    AddPublic(Method::kPost, "/v2/bookings/:uid/cancel", [](BookingServices& s, Request& req) {
      auto body = req.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      Result<std::optional<std::string>> reason = ParseCancelBody(*body);
      if (!reason.ok()) return Response::FromStatus(reason.status());
      return Answer(s.flow->Cancel(PathUid(req), *reason));
    });
    AddPublic(Method::kPost, "/v2/bookings/:uid/reschedule", [](BookingServices& s, Request& req) {
      auto body = req.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      Result<RescheduleRequest> reschedule = ParseRescheduleBody(*body);
      if (!reschedule.ok()) return Response::FromStatus(reschedule.status());
      return Answer(s.flow->Reschedule(PathUid(req), *reschedule), 201);
    });

    // Slot reservations: public, the uid is the holder's proof; a credential, when given, is
    // looked at (the event type's owner may set reservationDuration).
    AddReserving(Method::kPost, "/v2/slots/reservations", [](BookingServices& s, Request& req) {
      auto body = req.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      Result<ReserveRequest> reserve = ParseReserveBody(*body, s.reservations->settings().max_minutes);
      if (!reserve.ok()) return Response::FromStatus(reserve.status());
      if (auto refused = RefuseScope(req, *reserve)) return std::move(*refused);
      return Reservation(s.reservations->Reserve(*reserve, Caller(req)), 201);
    });
    AddPublic(Method::kGet, "/v2/slots/reservations/:uid",
              [](BookingServices& s, Request& req) { return Answer(s.reservations->Get(PathUid(req))); });
    AddReserving(Method::kPatch, "/v2/slots/reservations/:uid", [](BookingServices& s, Request& req) {
      auto body = req.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      Result<ReserveRequest> reserve = ParseReserveBody(*body, s.reservations->settings().max_minutes);
      if (!reserve.ok()) return Response::FromStatus(reserve.status());
      if (auto refused = RefuseScope(req, *reserve)) return std::move(*refused);
      return Reservation(s.reservations->Update(PathUid(req), *reserve, Caller(req)), 200);
    });
    AddPublic(Method::kDelete, "/v2/slots/reservations/:uid", [](BookingServices& s, Request& req) {
      if (Status e = s.reservations->Delete(PathUid(req)); !e.ok()) return Response::FromStatus(e);
      return Response::RawJson(200, Json{{"status", "success"}});
    });

    AddHosted(Method::kGet, "/v2/bookings/:uid", "BOOKING_READ",
              [](BookingServices& s, const User& host, Request& req) {
                return Answer(s.flow->GetBooking(host, PathUid(req)));
              });
    AddHosted(Method::kPost, "/v2/bookings/:uid/confirm", "BOOKING_WRITE",
              [](BookingServices& s, const User& host, Request& req) {
                auto body = req.JsonBody();
                if (!body.ok()) return Response::FromStatus(body.status());
                if (Status e = ParseConfirmBody(*body); !e.ok()) return Response::FromStatus(e);
                return Answer(s.flow->Confirm(host, PathUid(req)));
              });
    AddHosted(Method::kPost, "/v2/bookings/:uid/decline", "BOOKING_WRITE",
              [](BookingServices& s, const User& host, Request& req) {
                auto body = req.JsonBody();
                if (!body.ok()) return Response::FromStatus(body.status());
                Result<std::optional<std::string>> reason = ParseDeclineBody(*body);
                if (!reason.ok()) return Response::FromStatus(reason.status());
                return Answer(s.flow->Decline(host, PathUid(req), *reason));
              });
    AddHosted(Method::kPost, "/v2/bookings/:uid/mark-absent", "BOOKING_WRITE",
              [](BookingServices& s, const User& host, Request& req) {
                auto body = req.JsonBody();
                if (!body.ok()) return Response::FromStatus(body.status());
                Result<AbsentMarks> marks = ParseMarkAbsentBody(*body);
                if (!marks.ok()) return Response::FromStatus(marks.status());
                return Answer(s.flow->MarkAbsent(host, PathUid(req), *marks));
              });
    AddHosted(Method::kPost, "/v2/bookings/:uid/reopen", "BOOKING_WRITE",
              [](BookingServices& s, const User& host, Request& req) {
                auto body = req.JsonBody();
                if (!body.ok()) return Response::FromStatus(body.status());
                if (Status e = ParseConfirmBody(*body); !e.ok()) return Response::FromStatus(e);
                return Answer(s.flow->Reopen(host, PathUid(req)));
              });
    AddHosted(Method::kGet, "/v2/bookings/:uid/references", "BOOKING_READ",
              [](BookingServices& s, const User& host, Request& req) {
                return Answer(s.references->ListReferences(host, PathUid(req)));
              });
  }

 private:
  using Fn = Response (*)(BookingServices&, Request&);
  using HostedFn = Response (*)(BookingServices&, const User&, Request&);

  void Add(Method method, const char* pattern, const char* scope, Fn fn) {
    ctx_.AddRoute(Route::Api(method, pattern, RouteAuth::Bearer(scope, kOwnerCredentials),
                             [services = services_, fn](Request& req) { return fn(*services, req); }));
  }

  // The public booking flow: no credential needed (one given is not looked at); limited per
  // client address.
  void AddPublic(Method method, const char* pattern, Fn fn) {
    ctx_.AddRoute(Route::Api(method, pattern, RouteAuth::Public(), [services = services_, fn](Request& req) {
                    return fn(*services, req);
                  }).LimitedPerAddress(public_limit_));
  }

  // A reservation route: public, limited with the public booking routes, and a credential given
  // is checked (401 when it is not valid) and its user passed on.
  void AddReserving(Method method, const char* pattern, Fn fn) {
    ctx_.AddRoute(Route::Api(method, pattern, RouteAuth::OptionalBearer(kOwnerCredentials),
                             [services = services_, fn](Request& req) { return fn(*services, req); })
                      .LimitedPerAddress(public_limit_));
  }

  static ReservationFlow::Caller Caller(const Request& req) {
    ReservationFlow::Caller caller;
    caller.address = req.remote_ip;
    if (req.principal) caller.user_id = req.principal->user_id;
    return caller;
  }

  // An OAuth token setting reservationDuration needs BOOKING_WRITE.
  static std::optional<Response> RefuseScope(const Request& req, const ReserveRequest& reserve) {
    if (!reserve.reservation_minutes || !req.principal || req.principal->HasScope("BOOKING_WRITE")) {
      return std::nullopt;
    }
    return Response::FromStatus(
               Status(ErrorCode::kInsufficientScope, "reservationDuration requires the scope BOOKING_WRITE")
                   .WithDetails(Json{{"scope", "BOOKING_WRITE"}}))
        .With("WWW-Authenticate", R"(Bearer error="insufficient_scope", scope="BOOKING_WRITE")");
  }

  // A reservation's answer; a 401 carries its challenge.
  static Response Reservation(const Result<Json>& result, int success_status) {
    Response res = Answer(result, success_status);
    if (res.status == 401) res.With("WWW-Authenticate", "Bearer");
    return res;
  }

  // Routes over bookings need the caller as a user (the host shown in each booking).
  void AddHosted(Method method, const char* pattern, const char* scope, HostedFn fn) {
    ctx_.AddRoute(Route::Api(method, pattern, RouteAuth::Bearer(scope, kOwnerCredentials),
                             [services = services_, &identity = identity_, fn](Request& req) {
                               std::optional<User> host = identity.FindUser(req.principal->user_id);
                               if (!host) {
                                 return Response::FromStatus(Status(
                                     ErrorCode::kUnauthenticated, "the credential's user no longer exists"));
                               }
                               return fn(*services, *host, req);
                             }));
  }

  PluginContext& ctx_;
  std::shared_ptr<BookingServices> services_;
  Identity& identity_;
  RateLimit public_limit_;
};

}  // namespace

void RegisterBookingRoutes(PluginContext& ctx, BookingServices services, RateLimit public_limit) {
  Routes(ctx, std::move(services), std::move(public_limit)).Register();
}

}  // namespace rendezvous::bookings
