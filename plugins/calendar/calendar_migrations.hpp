// The calendar plugin's tables (migration owner "calendar").
#pragma once

#include <vector>

#include "rendezvous/database.hpp"

namespace rendezvous::calendar {

std::vector<Migration> CalendarMigrations();

}  // namespace rendezvous::calendar
