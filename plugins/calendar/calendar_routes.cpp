#include "calendar_routes.hpp"

#include "rendezvous/answer.hpp"
#include "rendezvous/pages.hpp"

namespace rendezvous::calendar {

std::string BindingCookieHeader(const std::string& app_url, const std::string& state, const std::string& value) {
  CookieOptions o;
  o.path = "/v2/calendars/google/save";
  o.http_only = true;
  o.same_site = "Lax";  // sent on Google's top-level redirect back to /save
  o.secure = app_url.rfind("https://", 0) == 0;
  o.max_age = std::chrono::seconds(value.empty() ? 0 : kStateTtlSeconds);
  return SetCookieHeader(GoogleConnection::BindingCookieName(state), value, o);
}

void RegisterCalendarRoutes(PluginContext& ctx, std::shared_ptr<CalendarParts> parts) {
  // A managed user's token acts as that user with its client's scopes (DESIGN §10), except on the
  // connect route: managed users cannot sign in to finish Google's flow.
  const unsigned kScoped = kApiKey | kOAuthToken | kManagedUserToken;
  const unsigned kConnects = kApiKey | kOAuthToken;

  // Connect only writes a state row; every other route calls Google or an ICS host (outbound).
  ctx.AddRoute(Route::Api(Method::kGet, "/v2/calendars/google/connect",
                          RouteAuth::Bearer("APPS_WRITE", kConnects), [parts](Request& req) {
                            auto url = parts->connect.Connect(req.principal->user_id, req.Query("redir"));
                            if (!url.ok()) return Response::FromStatus(url.status());
                            return Response::Success(Json{{"authUrl", *url}});
                          }));

  // Public: Google's browser redirect carries no bearer token. The state names the user and the
  // binding cookie the start page set proves this is the browser that user started in.
  ctx.AddRoute(Route::Api(Method::kGet, "/v2/calendars/google/save", RouteAuth::Public(),
                          [parts, app_url = ctx.app_url()](Request& req) {
                            const std::string state = req.Query("state").value_or("");
                            auto saved = parts->connect.Save(req.Query("code").value_or(""), state,
                                                             req.Query("error").value_or(""),
                                                             req.Cookie(GoogleConnection::BindingCookieName(state)));
                            if (!saved.ok()) return Response::FromStatus(saved.status());
                            Response res = saved->redirect.empty() ? Response::Success(saved->calendars)
                                                                   : Response::Redirect(saved->redirect, 302);
                            res.With("Set-Cookie", BindingCookieHeader(app_url, state, ""));
                            return res;
                          })
                   .Outbound());

  RegisterConnectStartPage(ctx, parts);

  ctx.AddRoute(
      Route::Api(Method::kGet, "/v2/calendars/google/check", RouteAuth::Bearer("APPS_READ", kScoped),
                 [parts](Request& req) { return Answer(parts->connect.Check(req.principal->user_id)); })
          .Outbound());

  // Spec §5.3: APPS_WRITE is "connect and disconnect apps".
  ctx.AddRoute(Route::Api(Method::kPost, "/v2/calendars/google/disconnect",
                          RouteAuth::Bearer("APPS_WRITE", kScoped),
                          [parts](Request& req) {
                            // Cal.com's body {id} names the credential; an empty body disconnects Google.
                            auto body = req.JsonBody();
                            if (!body.ok()) return Response::FromStatus(body.status());
                            std::optional<int64_t> id;
                            if (body->contains("id")) {
                              const Json& v = (*body)["id"];
                              if (!v.is_number_integer() || v.get<int64_t>() <= 0)
                                return Response::FromStatus(
                                    Status::Invalid("id", "id must be a credential id (a positive integer)"));
                              id = v.get<int64_t>();
                            }
                            return Answer(parts->connect.Disconnect(req.principal->user_id, id));
                          })
                   .Outbound());

  ctx.AddRoute(Route::Api(Method::kGet, "/v2/calendars", RouteAuth::Bearer("APPS_READ", kScoped),
                          [parts](Request& req) {
                            return Answer(parts->calendars.ListCalendars(req.principal->user_id));
                          })
                   .Outbound());

  ctx.AddRoute(Route::Api(Method::kGet, "/v2/calendars/busy-times", RouteAuth::Bearer("APPS_READ", kScoped),
                          [parts](Request& req) {
                            Result<std::string> busy = parts->busy.Answer(
                                req.principal->user_id, req.Query("dateFrom"), req.Query("dateTo"),
                                req.Query("timeZone"));
                            if (!busy.ok()) return Response::FromStatus(busy.status());
                            Response res = Response::SuccessWith(Json::object());
                            res.body = std::move(*busy);
                            return res;
                          })
                   .Outbound());

  ctx.AddRoute(Route::Api(Method::kPost, "/v2/calendars/ics-feed/save", RouteAuth::Bearer("APPS_WRITE", kScoped),
                          [parts](Request& req) {
                            auto body = req.JsonBody();
                            if (!body.ok()) return Response::FromStatus(body.status());
                            return Answer(parts->feeds.Save(req.principal->user_id, *body), 201);
                          })
                   .Outbound());

  // DESIGN §10: 200 {"status":"success"} while one of the user's feeds works, 400 otherwise.
  ctx.AddRoute(Route::Api(Method::kGet, "/v2/calendars/ics-feed/check",
                          RouteAuth::Bearer("APPS_READ", kScoped),
                          [parts](Request& req) {
                            Status s = parts->feeds.Check(req.principal->user_id);
                            if (!s.ok()) return Response::FromStatus(s);
                            return Response::SuccessWith(Json::object());
                          })
                   .Outbound());

  ctx.AddRoute(Route::Api(Method::kPut, "/v2/destination-calendars", RouteAuth::Bearer("APPS_WRITE", kScoped),
                          [parts](Request& req) {
                            auto body = req.JsonBody();
                            if (!body.ok()) return Response::FromStatus(body.status());
                            return Answer(parts->calendars.SetDestination(req.principal->user_id, *body));
                          })
                   .Outbound());

  // Spec §4.5/§5.1: API keys and managed-user tokens only; OAuth tokens answer 401.
  ctx.AddRoute(Route::Api(Method::kGet, "/v2/calendars/:calendar/event/:eventUid",
                          RouteAuth::Bearer("", kApiKey | kManagedUserToken),
                          [parts](Request& req) {
                            return Answer(parts->events.GetEvent(
                                req.principal->user_id, req.params["calendar"], req.params["eventUid"]));
                          })
                   .Outbound());
}

}  // namespace rendezvous::calendar
