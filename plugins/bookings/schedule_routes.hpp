// The schedule routes (DESIGN §9; API keys and OAuth tokens, managed-user tokens answer 401):
//   GET    /v2/schedules           PROFILE_READ     POST   /v2/schedules       PROFILE_WRITE
//   GET    /v2/schedules/default   PROFILE_READ
//   GET    /v2/schedules/:id       PROFILE_READ     PATCH  /v2/schedules/:id   PROFILE_WRITE
//   DELETE /v2/schedules/:id       PROFILE_WRITE
// The service must outlive the routes (the plugin owns both).
#pragma once

#include <memory>

#include "rendezvous/plugin.hpp"
#include "schedule_service.hpp"

namespace rendezvous::bookings {

void RegisterScheduleRoutes(PluginContext& ctx, std::shared_ptr<ScheduleService> service);

}  // namespace rendezvous::bookings
