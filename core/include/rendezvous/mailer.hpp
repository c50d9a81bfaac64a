// Outgoing e-mail. Send() writes the message into the outbox within the caller's transaction; the
// core's mail consumer delivers it (SMTP through libcurl when `mail.smtp_url` is set, otherwise a
// line appended to the mail log file), so a mail is sent if and only if its change commits.
#pragma once

#include <string>

#include "rendezvous/database.hpp"

namespace rendezvous {

struct Mail {
  std::string to;
  std::string subject;
  std::string text;  // plain-text body
};

class Mailer {
 public:
  virtual ~Mailer() = default;
  virtual void Send(DbConnection& tx, const Mail& mail) = 0;
};

}  // namespace rendezvous
