#include "import_command.hpp"

#include <ostream>
#include <stdexcept>

#include "booking_requests.hpp"
#include "field_checks.hpp"
#include "rendezvous/cli_args.hpp"
#include "rendezvous/digits.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::bookings {
namespace {

constexpr const char* kUsage =
    "usage: rendezvous admin booking import --user-id ID --event-type-id ID --start ISO\n"
    "         --attendee-email E --attendee-name N [--status accepted|pending|cancelled|rejected]";

int Usage(std::ostream& err, const std::string& message) {
  err << "booking import: " << message << "\n" << kUsage << std::endl;
  return 2;
}

int Refuse(std::ostream& err, const std::string& message) {
  err << "booking import: " << message << std::endl;
  return 1;
}

}  // namespace

int RunBookingCommand(BookingImport& import, const std::vector<std::string>& args, std::ostream& out,
                      std::ostream& err) {
  if (args.empty() || args[0] != "import") {
    err << (args.empty() ? "" : "unknown booking command '" + args[0] + "'\n") << kUsage << std::endl;
    return 2;
  }
  ImportRequest req;
  try {
    CliArgs a(args, {"user-id", "event-type-id", "start", "attendee-email", "attendee-name", "status"}, {});
    if (a.positional().size() != 1) return Usage(err, "unexpected argument '" + a.positional()[1] + "'");
    for (const char* name :
         {"user-id", "event-type-id", "start", "attendee-email", "attendee-name", "status"}) {
      if (a.GetAll(name).size() > 1)
        return Usage(err, std::string("option --") + name + " given more than once");
    }
    auto user = text::ParseDigits(a.Require("user-id"), 1);
    if (!user) return Usage(err, "--user-id must be a positive integer");
    auto event_type = text::ParseDigits(a.Require("event-type-id"), 1);
    if (!event_type) return Usage(err, "--event-type-id must be a positive integer");
    const std::string start_text = a.Require("start");
    auto start = time::ParseIso(start_text);
    if (!start) {
      return Usage(err,
                   "--start must be an ISO 8601 date-time with a zone (e.g. 2026-05-04T09:30:00Z), got '" +
                       start_text.substr(0, 64) + "'");
    }
    req.user_id = *user;
    req.event_type_id = *event_type;
    req.start = *start;
    req.attendee_email = text::Trim(a.Require("attendee-email"));
    req.attendee_name = text::Trim(a.Require("attendee-name"));
    if (Status e = CheckAttendee(req.attendee_name, req.attendee_email); !e.ok())
      return Usage(err, "--" + e.message());
    if (auto s = a.Get("status")) {
      auto status = ParseStatus(*s);
      if (!status || *status == BookingStatus::kCompleted) {
        return Usage(err, "--status must be one of accepted, pending, cancelled, rejected");
      }
      req.status = *status;
    }
  } catch (const std::invalid_argument& e) {
    return Usage(err, e.what());
  }
  Result<Json> result = import.Import(req);
  if (!result.ok()) return Refuse(err, result.status().message());
  out << result->dump() << std::endl;
  return 0;
}

}  // namespace rendezvous::bookings
