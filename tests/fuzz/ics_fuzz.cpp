// libFuzzer target: the iCalendar reader of ICS feeds and the busy times taken from it. Whatever
// a feed holds, reading it ends, and every busy interval is non-empty and overlaps the range asked.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;
  std::optional<rendezvous::calendar::IcsCalendar> cal = rendezvous::calendar::ParseIcs(text, &error);
  if (!cal) {
    if (error.empty()) __builtin_trap();
    return 0;
  }
  const rendezvous::time::Millis from = 1798761600000;  // 2027-01-01
  const rendezvous::time::Millis to = from + 31LL * 86400000;
  static const rendezvous::time::Zone berlin = *rendezvous::time::Zone::Find("Europe/Berlin");
  for (const auto& b : rendezvous::calendar::IcsBusyTimes(*cal, from, to, berlin)) {
    if (b.end <= b.start || b.end <= from || b.start >= to) __builtin_trap();
  }
  return 0;
}
