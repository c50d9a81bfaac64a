#include "calendar_routes.hpp"
#include "rendezvous/identity.hpp"
#include "rendezvous/pages.hpp"

namespace rendezvous::calendar {
namespace {

constexpr const char* kTitle = "Connect Google Calendar";

constexpr const char* kStartTemplate = R"(<h1>Connect Google Calendar</h1>
<p>Your Google Calendar will be connected to the Rendezvous account <strong>{{email}}</strong> ({{name}}).</p>
<p>Google will ask which Google account to use and whether Rendezvous may see and edit its calendars.</p>
<p><a id="continue" class="button" href="{{url}}">Continue to Google</a></p>
<p class="muted">Not your account? Sign out and sign in as the account that should hold the calendar.</p>)";


Response ErrorPage(const Status& status) {
  Response res = Response::Page(status, RenderPage(kTitle, "<h1>Connect Google Calendar</h1><p class=\"error\">" +
                                                               HtmlEscape(status.message()) + "</p>"));
  AddPageHeaders(res);
  return res;
}

}  // namespace

void RegisterConnectStartPage(PluginContext& ctx, std::shared_ptr<CalendarParts> parts) {
  Identity& identity = ctx.identity();
  ctx.AddRoute(Route::Page(
      Method::kGet, "/settings/calendars/google/start", RouteAuth::Session(), [parts, &identity, app_url = ctx.app_url()](Request& req) {
        std::optional<User> user = identity.SessionUser(req);
        if (!user) return ErrorPage(Status(ErrorCode::kUnauthenticated, "sign in first"));
        const std::string state = req.Query("state").value_or("");
        auto started = parts->connect.StartConnect(user->id, state);
        if (!started.ok()) return ErrorPage(started.status());
        auto html = RenderTemplate(kStartTemplate,
                                   Json{{"email", user->email}, {"name", user->name}, {"url", started->google_url}});
        if (!html.ok()) return ErrorPage(html.status());
        Response res = Response::Html(200, RenderPage(kTitle, *html));
        res.With("Set-Cookie", BindingCookieHeader(app_url, state, started->cookie_value));
        AddPageHeaders(res);
        return res;
      }));
}

}  // namespace rendezvous::calendar
