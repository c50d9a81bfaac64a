// libFuzzer target: the public booking flow's inputs — the create, cancel and reschedule bodies
// (any JSON the input parses to) and the slots query (the input split into parameters). Every
// refusal must name the field at fault; what is accepted must be within the documented bounds.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "public_requests.hpp"

namespace {

using namespace rendezvous::bookings;
using rendezvous::Result;

void CheckRefusal(const rendezvous::Status& s) {
  if (s.ok()) return;
  if (s.code() != rendezvous::ErrorCode::kInvalid || s.field().empty() || s.message().empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Json body = Json::parse(text, nullptr, false);
  if (!body.is_discarded()) {
    Result<CreateRequest> create = ParseCreateBody(body);
    CheckRefusal(create.status());
    if (create.ok()) {
      if (create->guests.size() > kMaxGuests || create->metadata.size() > kMaxMetadataKeys) __builtin_trap();
      if (create->attendee.name.empty() || create->attendee.email.empty()) __builtin_trap();
    }
    CheckRefusal(ParseCancelBody(body).status());
    CheckRefusal(ParseRescheduleBody(body).status());
  }
  // The slots query: parameters separated by '&', names from values by '='.
  std::multimap<std::string, std::string> query;
  size_t pos = 0;
  while (pos <= text.size() && query.size() < 16) {
    size_t amp = text.find('&', pos);
    if (amp == std::string_view::npos) amp = text.size();
    std::string_view pair = text.substr(pos, amp - pos);
    const size_t eq = pair.find('=');
    query.emplace(std::string(pair.substr(0, eq)), eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1)));
    pos = amp + 1;
  }
  Result<SlotsQuery> slots = ParseSlotsQuery(query);
  CheckRefusal(slots.status());
  if (slots.ok() && (slots->to <= slots->from || slots->to - slots->from > kMaxSlotRangeDays * rendezvous::time::kMillisPerDay)) {
    __builtin_trap();
  }
  return 0;
}
