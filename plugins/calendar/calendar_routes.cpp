#include "calendar_routes.hpp"

namespace rendezvous::calendar {
namespace {

Response ErrorResponse(const ApiError& e) {
  return Response::Error(e.status, e.code, e.message, e.details);
}

// Every route but connect calls Google or an ICS host: they run as outbound routes.
Route MakeRoute(Method method, std::string pattern, RouteAuth auth, Handler handler) {
  Route r;
  r.outbound = pattern != "/v2/calendars/google/connect";
  r.listener = Listener::kApi;
  r.method = method;
  r.pattern = std::move(pattern);
  r.auth = std::move(auth);
  r.handler = std::move(handler);
  return r;
}

}  // namespace

Response ToResponse(const Outcome<Json>& outcome, int success_status) {
  if (const auto* e = std::get_if<ApiError>(&outcome)) return ErrorResponse(*e);
  return Response::Success(std::get<Json>(outcome), success_status);
}

void RegisterCalendarRoutes(PluginContext& ctx, std::shared_ptr<CalendarService> service) {
  const unsigned kScoped = kApiKey | kOAuthToken;

  ctx.AddRoute(MakeRoute(Method::kGet, "/v2/calendars/google/connect",
                         RouteAuth::Bearer("APPS_WRITE", kScoped), [service](Request& req) {
                           auto url = service->Connect(req.principal->user_id, req.Query("redir"));
                           if (const auto* e = std::get_if<ApiError>(&url)) return ErrorResponse(*e);
                           return Response::Success(Json{{"authUrl", std::get<std::string>(url)}});
                         }));

  // Public: the state names the user (Google's browser redirect carries no bearer token).
  ctx.AddRoute(
      MakeRoute(Method::kGet, "/v2/calendars/google/save", RouteAuth::Public(), [service](Request& req) {
        auto saved = service->Save(req.Query("code").value_or(""), req.Query("state").value_or(""),
                                   req.Query("error").value_or(""));
        if (const auto* e = std::get_if<ApiError>(&saved)) return ErrorResponse(*e);
        const auto& result = std::get<CalendarService::SaveResult>(saved);
        if (!result.redirect.empty()) return Response::Redirect(result.redirect, 302);
        return Response::Success(result.calendars);
      }));

  ctx.AddRoute(MakeRoute(
      Method::kGet, "/v2/calendars", RouteAuth::Bearer("APPS_READ", kScoped),
      [service](Request& req) { return ToResponse(service->ListCalendars(req.principal->user_id)); }));

  ctx.AddRoute(MakeRoute(Method::kGet, "/v2/calendars/busy-times", RouteAuth::Bearer("APPS_READ", kScoped),
                         [service](Request& req) {
                           return ToResponse(service->BusyTimes(req.principal->user_id, req.Query("dateFrom"),
                                                                req.Query("dateTo"), req.Query("timeZone")));
                         }));

  ctx.AddRoute(MakeRoute(Method::kPost, "/v2/calendars/ics-feed/save",
                         RouteAuth::Bearer("APPS_WRITE", kScoped), [service](Request& req) {
                           auto body = req.JsonBody();
                           if (!body.ok()) return Response::FromStatus(body.status());
                           return ToResponse(service->SaveIcsFeeds(req.principal->user_id, *body), 201);
                         }));

  ctx.AddRoute(MakeRoute(Method::kPut, "/v2/destination-calendars", RouteAuth::Bearer("APPS_WRITE", kScoped),
                         [service](Request& req) {
                           auto body = req.JsonBody();
                           if (!body.ok()) return Response::FromStatus(body.status());
                           return ToResponse(service->SetDestination(req.principal->user_id, *body));
                         }));

  // Spec §4.5/§5.1: API keys and managed-user tokens only; OAuth tokens answer 401.
  ctx.AddRoute(MakeRoute(Method::kGet, "/v2/calendars/:calendar/event/:eventUid",
                         RouteAuth::Bearer("", kApiKey | kManagedUserToken), [service](Request& req) {
                           return ToResponse(service->GetEvent(req.principal->user_id, req.params["calendar"],
                                                               req.params["eventUid"]));
                         }));
}

}  // namespace rendezvous::calendar
