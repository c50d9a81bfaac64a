// What the iCalendar reader needs around libical 3 (Debian's libical-dev): owning handles that
// free every libical object, the conversions between libical's times and ours, and the one-time
// set-up that makes concurrent use safe.
//
// Thread safety: libical keeps its error number and scratch buffers per thread and is safe for
// objects used by one thread at a time. What it shares is a table of error states that its parser
// flips to "non-fatal" and back around each parse; UseLibical() sets every state to non-fatal (and
// errors never fatal) once, so those flips write the value already there and can never make an
// error abort the process. Builtin time zones (a global cache) are never loaded: TZIDs are read as
// text and resolved through rendezvous::time or the feed's own VTIMEZONE.
#pragma once

#include <libical/ical.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "rendezvous/time.hpp"

namespace rendezvous::calendar::ical {

// Call before any other libical function (cheap after the first call).
void UseLibical();

struct ComponentFree {
  void operator()(icalcomponent* c) const { icalcomponent_free(c); }
};
using Component = std::unique_ptr<icalcomponent, ComponentFree>;

struct IteratorFree {
  void operator()(icalrecur_iterator* i) const { icalrecur_iterator_free(i); }
};
using Iterator = std::unique_ptr<icalrecur_iterator, IteratorFree>;

struct TimezoneFree {
  void operator()(icaltimezone* z) const { icaltimezone_free(z, 1); }
};
using Timezone = std::unique_ptr<icaltimezone, TimezoneFree>;

// A string libical allocated for the caller (the *_r functions).
struct StringFree {
  void operator()(char* s) const { std::free(s); }
};
using String = std::unique_ptr<char, StringFree>;

inline std::string Take(char* s) {
  String owned(s);
  return owned ? std::string(owned.get()) : std::string();
}

// A libical time's wall clock as milliseconds "as if UTC" (time::Zone::FromLocal's input); its
// date alone for a DATE value. false when the fields are not a real date and time.
bool WallClock(const icaltimetype& t, time::Millis* local);
bool CivilDay(const icaltimetype& t, time::CivilDate* date);

// A floating libical time (no zone) holding `local`'s wall clock; a DATE value when `date_only`.
icaltimetype FloatingTime(time::Millis local, bool date_only);

}  // namespace rendezvous::calendar::ical
