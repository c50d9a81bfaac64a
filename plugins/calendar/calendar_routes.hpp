// The calendar plugin's HTTP routes (DESIGN §7, spec §4.5 and §5.3), thin over its logic classes
// (calendar_parts.hpp).
#pragma once

#include <memory>
#include <string>

#include "calendar_parts.hpp"
#include "rendezvous/plugin.hpp"

namespace rendezvous::calendar {

void RegisterCalendarRoutes(PluginContext& ctx, std::shared_ptr<CalendarParts> parts);

// GET {app_url}/settings/calendars/google/start?state=.. (connect_start_page.cpp): the page the
// connect answer's authUrl points at. Needs the signed-in session of the state's user, names the
// account being connected, sets the browser binding cookie and links on to Google.
void RegisterConnectStartPage(PluginContext& ctx, std::shared_ptr<CalendarParts> parts);

// The Set-Cookie value that sets (`value`) or clears ("") the binding cookie of a connect state:
// HttpOnly, SameSite=Lax, Path=/v2/calendars/google/save, 10 minutes, Secure when `app_url` is https.
std::string BindingCookieHeader(const std::string& app_url, const std::string& state, const std::string& value);

}  // namespace rendezvous::calendar
