// Outgoing text messages (SMS) as the rest of the core sees them: Send() writes the message into
// the outbox within the caller's transaction, so it is sent if and only if its change commits.
// Header only: areas that send (identity) depend on this interface, not on the delivery code.
#pragma once

#include <string>
#include <string_view>

#include "rendezvous/database.hpp"

namespace rendezvous::core {

inline constexpr size_t kMaxSmsTextBytes = 1600;  // ten concatenated segments at most

struct Sms {
  std::string to;    // E.164, e.g. "+15551234567"
  std::string text;  // plain text, UTF-8
};

// True for an E.164 number: '+', a first digit 1-9, then 6 to 14 more digits (7..15 in all), and
// nothing else (no spaces, dashes or brackets).
inline bool IsE164PhoneNumber(std::string_view phone) {
  if (phone.size() < 8 || phone.size() > 16 || phone[0] != '+' || phone[1] < '1' || phone[1] > '9')
    return false;
  for (size_t i = 2; i < phone.size(); ++i) {
    if (phone[i] < '0' || phone[i] > '9') return false;
  }
  return true;
}

class SmsSender {
 public:
  virtual ~SmsSender() = default;
  // Publishes `sms` with `tx`. Throws std::invalid_argument (failing the caller's transaction)
  // for a message that cannot be sent: callers check their input first.
  virtual void Send(DbConnection& tx, const Sms& sms) = 0;
};

}  // namespace rendezvous::core
