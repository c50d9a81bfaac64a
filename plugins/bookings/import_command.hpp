// `rendezvous admin booking import --user-id ID --event-type-id ID --start ISO --attendee-email E
// --attendee-name N [--status accepted|pending|cancelled|rejected]` (DESIGN §3): stores a booking
// brought over from another system (past times allowed, no event written) and prints it as the API
// shows it. Exit 0 on success; 2 for a usage error, 1 when the input is refused (nothing stored).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "booking_import.hpp"

namespace rendezvous::bookings {

// `args`: the words after "booking".
int RunBookingCommand(BookingImport& import, const std::vector<std::string>& args, std::ostream& out,
                      std::ostream& err);

}  // namespace rendezvous::bookings
