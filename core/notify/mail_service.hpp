// The core's outgoing mail (public interface: rendezvous/mailer.hpp).
//
// Send() checks the mail and publishes it as an outbox event (topic "mail", type "MAIL") with the
// caller's transaction, so a mail exists exactly when the change that caused it commits. The
// outbox consumer "core.mail" delivers the events:
//   - SMTP through libcurl when `mail.smtp_url` is set (smtp://host:port with STARTTLS, required
//     when credentials are configured; smtps:// for implicit TLS). Connect timeout 10 s, whole
//     transfer 30 s. A transient failure throws, so the outbox rolls the batch back and retries it
//     later (with its backoff); a permanent refusal (a 5xx reply) is logged, counted and dropped,
//     so one bad address cannot block the mails behind it.
//   - otherwise one JSON line per mail, {"at","to","subject","text"}, appended to `log_file`
//     (development and tests; the folder is created when missing).
// Delivery is at least once: when a batch is retried, mails of it already sent go out again.
//
// Metric: mail_sent_total{result="sent"|"logged"|"failed"}.
//
// Thread-safety: Send() and Deliver() may be called from any thread. Register() once, before the
// outbox starts. The service must outlive the outbox loops (stop the outbox first).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "notify/outbox_delivery.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/mailer.hpp"
#include "rendezvous/outbox.hpp"
#include "rendezvous/status.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::core {

inline constexpr size_t kMaxMailSubjectLength = 998;  // RFC 5322 line limit
inline constexpr size_t kMaxMailBodyBytes = 64 * 1024;

struct MailOptions {
  std::string smtp_url;       // "" = write the mail log instead
  std::string smtp_user;      // "" = no authentication
  std::string smtp_password;  // never logged
  std::string from = "Rendezvous <rendezvous@localhost>";
  std::string log_file;  // absolute path
  std::chrono::seconds connect_timeout{10};
  std::chrono::seconds total_timeout{30};
};

// kInvalid when `mail` cannot be sent safely: `to` not one e-mail address (text::IsEmailAddress:
// at most 254 bytes, no list, display name or comment), a CR or LF (or any other control character) in `to`
// or `subject`, an empty or longer than 998 bytes subject, a body over 64 KiB, or text that is not valid
// UTF-8.
Status ValidateMail(const Mail& mail);

// The address part of a From value: "Name <a@b>" -> "a@b", "a@b" -> "a@b". "" when malformed.
std::string MailAddressOf(std::string_view from);

// The RFC 5322 message for `mail` (CRLF line ends): Date, From, To, Subject (RFC 2047 encoded
// when not ASCII), Message-ID, MIME-Version, Content-Type text/plain; charset=utf-8,
// Content-Transfer-Encoding quoted-printable, then the body. The mail must be valid
// (ValidateMail); `from` must hold no CR/LF.
std::string RenderMailMessage(const Mail& mail, std::string_view from,
                              std::chrono::system_clock::time_point date, std::string_view message_id);

// Register() (from OutboxDelivery) subscribes the consumer "core.mail".
class MailService final : public Mailer, public OutboxDelivery {
 public:
  // `outbox`, `registry` and `logger` must outlive the service. Throws std::invalid_argument for a
  // `from` without an address.
  MailService(MailOptions options, Outbox& outbox, prometheus::Registry& registry, Logger& logger);

  // Publishes the mail with `tx`. Throws std::invalid_argument (failing the caller's transaction)
  // when ValidateMail refuses it: callers check their input first.
  void Send(DbConnection& tx, const Mail& mail) override;

  // Delivers one mail now (SMTP or the log file). Returns false for a permanent refusal (logged,
  // counted); throws std::runtime_error for a transient failure.
  bool Deliver(const Mail& mail);

 private:
  void HandleEvent(const OutboxEvent& event) override;
  bool DeliverSmtp(const Mail& mail);

  const MailOptions options_;
  const std::string from_address_;
};

}  // namespace rendezvous::core
