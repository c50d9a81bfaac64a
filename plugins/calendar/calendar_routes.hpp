// The calendar plugin's HTTP routes (DESIGN §7, spec §4.5 and §5.3), thin over CalendarService.
#pragma once

#include <memory>

#include "calendar_service.hpp"
#include "rendezvous/plugin.hpp"

namespace rendezvous::calendar {

void RegisterCalendarRoutes(PluginContext& ctx, std::shared_ptr<CalendarService> service);

}  // namespace rendezvous::calendar
