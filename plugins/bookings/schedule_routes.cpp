#include "schedule_routes.hpp"

#include <optional>

#include "field_checks.hpp"
#include "route_support.hpp"

namespace rendezvous::bookings {
namespace {

Response ScheduleNotFound() {
  return Response::FromStatus(Status::NotFound("schedule not found"));
}

using Fn = Response (*)(ScheduleService&, const User&, Request&);

void Add(PluginContext& ctx, const std::shared_ptr<ScheduleService>& service, Method method,
         const char* pattern, const char* scope, Fn fn) {
  // The caller as a user: defaults come from the user's time zone.
  ctx.AddRoute(Route::Api(method, pattern, RouteAuth::Bearer(scope, kOwnerCredentials),
                          [service, &identity = ctx.identity(), fn](Request& req) {
                            std::optional<User> user = identity.FindUser(req.principal->user_id);
                            if (!user) {
                              return Response::FromStatus(Status(ErrorCode::kUnauthenticated,
                                                                 "the credential's user no longer exists"));
                            }
                            return fn(*service, *user, req);
                          }));
}

}  // namespace

void RegisterScheduleRoutes(PluginContext& ctx, std::shared_ptr<ScheduleService> service) {
  Add(ctx, service, Method::kGet, "/v2/schedules", "PROFILE_READ",
      [](ScheduleService& s, const User& user, Request&) { return Response::Success(s.List(user.id)); });
  Add(ctx, service, Method::kPost, "/v2/schedules", "PROFILE_WRITE",
      [](ScheduleService& s, const User& user, Request& req) {
        auto body = req.JsonBody();
        if (!body.ok()) return Response::FromStatus(body.status());
        Result<Schedule> schedule = ParseScheduleCreate(*body, user);
        if (!schedule.ok()) return Response::FromStatus(schedule.status());
        return Answer(s.Create(*schedule), 201);
      });
  // An exact segment wins over a parameter in the router, so this is not read as an id.
  Add(ctx, service, Method::kGet, "/v2/schedules/default", "PROFILE_READ",
      [](ScheduleService& s, const User& user, Request&) { return Response::Success(s.GetDefault(user)); });
  Add(ctx, service, Method::kGet, "/v2/schedules/:id", "PROFILE_READ",
      [](ScheduleService& s, const User& user, Request& req) {
        auto id = PathId(req);
        if (!id) return ScheduleNotFound();
        return Answer(s.Get(user.id, *id));
      });
  Add(ctx, service, Method::kPatch, "/v2/schedules/:id", "PROFILE_WRITE",
      [](ScheduleService& s, const User& user, Request& req) {
        auto id = PathId(req);
        if (!id) return ScheduleNotFound();
        auto body = req.JsonBody();
        if (!body.ok()) return Response::FromStatus(body.status());
        // Checked before the transaction, so a bad body touches nothing.
        Schedule scratch = ImplicitDefaultSchedule(user);
        if (Status e = ApplySchedulePatch(*body, scratch); !e.ok()) return Response::FromStatus(e);
        return Answer(s.Update(user.id, *id, *body));
      });
  Add(ctx, service, Method::kDelete, "/v2/schedules/:id", "PROFILE_WRITE",
      [](ScheduleService& s, const User& user, Request& req) {
        auto id = PathId(req);
        if (!id) return ScheduleNotFound();
        return Answer(s.Delete(user.id, *id));
      });
}

}  // namespace rendezvous::bookings
