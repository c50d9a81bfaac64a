#include "booking_routes.hpp"

namespace rendezvous::bookings {
namespace {

constexpr unsigned kAccepted = kApiKey | kOAuthToken;

Response FieldErrorResponse(const FieldError& e) {
  const std::string message = e.field == "body" ? "the request body " + e.message : e.field + " " + e.message;
  return Response::Error(400, "", message, Json{{"field", e.field}});
}

Response FromOutcome(const Outcome& o, int success_status = 200) {
  if (o.ok()) return Response::Success(o.data, success_status);
  if (!o.field.empty()) return FieldErrorResponse({o.field, o.status.message()});
  return Response::FromStatus(o.status);
}

// The event type id of the path; nullopt (answered 404) when it is not a positive integer.
std::optional<int64_t> PathId(const Request& req) {
  auto it = req.params.find("id");
  return it == req.params.end() ? std::nullopt : ParsePositiveId(it->second);
}

std::string PathUid(const Request& req) {
  auto it = req.params.find("uid");
  return it == req.params.end() ? "" : it->second;
}

Response EventTypeNotFound() {
  return Response::Error(404, "", "event type not found");
}

class Routes {
 public:
  Routes(PluginContext& ctx, std::shared_ptr<BookingService> service)
      : ctx_(ctx), service_(std::move(service)), identity_(ctx.identity()) {}

  void Register() {
    Add(Method::kGet, "/v2/event-types", "EVENT_TYPE_READ", [](BookingService& s, Request& req) {
      return Response::Success(s.ListEventTypes(req.principal->user_id));
    });
    Add(Method::kPost, "/v2/event-types", "EVENT_TYPE_WRITE", [](BookingService& s, Request& req) {
      auto body = req.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      EventTypeFields fields;
      if (auto e = ParseEventTypeCreate(*body, fields)) return FieldErrorResponse(*e);
      return FromOutcome(s.CreateEventType(req.principal->user_id, fields), 201);
    });
    Add(Method::kGet, "/v2/event-types/:id", "EVENT_TYPE_READ", [](BookingService& s, Request& req) {
      auto id = PathId(req);
      if (!id) return EventTypeNotFound();
      return FromOutcome(s.GetEventType(req.principal->user_id, *id));
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
      if (auto e = ApplyEventTypePatch(*body, scratch)) return FieldErrorResponse(*e);
      return FromOutcome(s.UpdateEventType(req.principal->user_id, *id, *body));
    });
    Add(Method::kDelete, "/v2/event-types/:id", "EVENT_TYPE_WRITE", [](BookingService& s, Request& req) {
      auto id = PathId(req);
      if (!id) return EventTypeNotFound();
      return FromOutcome(s.DeleteEventType(req.principal->user_id, *id));
    });

    AddHosted(Method::kGet, "/v2/bookings", "BOOKING_READ",
              [](BookingService& s, const User& host, Request& req) {
                ListQuery query;
                if (auto e = ParseListQuery(req.query, query)) return FieldErrorResponse(*e);
                return Response::SuccessWith(s.ListBookings(host, query));
              });
    AddHosted(Method::kGet, "/v2/bookings/:uid", "BOOKING_READ",
              [](BookingService& s, const User& host, Request& req) {
                return FromOutcome(s.GetBooking(host, PathUid(req)));
              });
    AddHosted(Method::kPost, "/v2/bookings/:uid/confirm", "BOOKING_WRITE",
              [](BookingService& s, const User& host, Request& req) {
                auto body = req.JsonBody();
                if (!body.ok()) return Response::FromStatus(body.status());
                if (auto e = ParseConfirmBody(*body)) return FieldErrorResponse(*e);
                return FromOutcome(s.Confirm(host, PathUid(req)));
              });
    AddHosted(Method::kPost, "/v2/bookings/:uid/decline", "BOOKING_WRITE",
              [](BookingService& s, const User& host, Request& req) {
                auto body = req.JsonBody();
                if (!body.ok()) return Response::FromStatus(body.status());
                std::optional<std::string> reason;
                if (auto e = ParseDeclineBody(*body, reason)) return FieldErrorResponse(*e);
                return FromOutcome(s.Decline(host, PathUid(req), reason));
              });
    AddHosted(Method::kPost, "/v2/bookings/:uid/mark-absent", "BOOKING_WRITE",
              [](BookingService& s, const User& host, Request& req) {
                auto body = req.JsonBody();
                if (!body.ok()) return Response::FromStatus(body.status());
                AbsentMarks marks;
                if (auto e = ParseMarkAbsentBody(*body, marks)) return FieldErrorResponse(*e);
                return FromOutcome(s.MarkAbsent(host, PathUid(req), marks));
              });
  }

 private:
  using Fn = Response (*)(BookingService&, Request&);
  using HostedFn = Response (*)(BookingService&, const User&, Request&);

  void Add(Method method, const char* pattern, const char* scope, Fn fn) {
    Route r;
    r.listener = Listener::kApi;
    r.method = method;
    r.pattern = pattern;
    r.auth = RouteAuth::Bearer(scope, kAccepted);
    r.handler = [service = service_, fn](Request& req) { return fn(*service, req); };
    ctx_.AddRoute(std::move(r));
  }

  // Routes over bookings need the caller as a user (the host shown in each booking).
  void AddHosted(Method method, const char* pattern, const char* scope, HostedFn fn) {
    Route r;
    r.listener = Listener::kApi;
    r.method = method;
    r.pattern = pattern;
    r.auth = RouteAuth::Bearer(scope, kAccepted);
    r.handler = [service = service_, &identity = identity_, fn](Request& req) {
      std::optional<User> host = identity.FindUser(req.principal->user_id);
      if (!host) return Response::Error(401, "", "the credential's user no longer exists");
      return fn(*service, *host, req);
    };
    ctx_.AddRoute(std::move(r));
  }

  PluginContext& ctx_;
  std::shared_ptr<BookingService> service_;
  Identity& identity_;
};

}  // namespace

void RegisterBookingRoutes(PluginContext& ctx, std::shared_ptr<BookingService> service) {
  Routes(ctx, std::move(service)).Register();
}

}  // namespace rendezvous::bookings
