// UTC instants as milliseconds since the Unix epoch, and their two text forms: ISO 8601 for the
// API ("2026-05-04T09:30:00.000Z") and DATETIME(3) for MariaDB ("2026-05-04 09:30:00.000").
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rendezvous::bookings {

using Millis = int64_t;

// Accepts "YYYY-MM-DDTHH:MM[:SS[.f...]]" followed by "Z" or "+HH:MM"/"-HH:MM" (also "+HHMM"),
// years 1970..9999. nullopt for anything else (including impossible dates).
std::optional<Millis> ParseIsoTime(std::string_view text);
// "YYYY-MM-DDTHH:MM:SS.mmmZ".
std::string FormatIsoTime(Millis t);
// "YYYY-MM-DD HH:MM:SS.mmm" (UTC), for DATETIME(3) parameters.
std::string FormatSqlTime(Millis t);
// Reads a DATETIME value as the connector prints it ("YYYY-MM-DD HH:MM:SS[.fff]"); nullopt when
// it is not one.
std::optional<Millis> ParseSqlTime(std::string_view text);
// The current time.
Millis NowMillis();

}  // namespace rendezvous::bookings
