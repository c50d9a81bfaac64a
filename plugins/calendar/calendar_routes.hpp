// The calendar plugin's HTTP routes (DESIGN §7, spec §4.5 and §5.3), thin over CalendarService.
#pragma once

#include <memory>

#include "calendar_service.hpp"
#include "rendezvous/plugin.hpp"

namespace rendezvous::calendar {

void RegisterCalendarRoutes(PluginContext& ctx, std::shared_ptr<CalendarService> service);

// GET {app_url}/settings/calendars/google/start?state=.. (connect_start_page.cpp): the page the
// connect answer's authUrl points at. Needs the signed-in session of the state's user, names the
// account being connected, sets the browser binding cookie and links on to Google.
void RegisterConnectStartPage(PluginContext& ctx, std::shared_ptr<CalendarService> service);

}  // namespace rendezvous::calendar
