#include "notify/mail_service.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <openssl/rand.h>
#include <prometheus/counter.h>

#include "rendezvous/outbound.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::core {
namespace {

constexpr OutboxDelivery::Channel kMailChannel = {
    "mail",
    "MAIL",
    "core.mail",
    "mail_sent_total",
    "Mails handed to the SMTP server (sent), written to the mail log (logged) or not delivered (failed: a "
    "refused mail, or an attempt that is retried)",
    "mail log"};
constexpr size_t kQpLineLimit = 76;
constexpr size_t kEncodedWordChunk = 45;  // raw bytes per RFC 2047 word: 60 base64 chars + 12

bool HasControl(std::string_view s) {
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

bool IsAscii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

std::string Base64(std::string_view raw) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  while (i + 3 <= raw.size()) {
    const uint32_t v = (uint32_t(uint8_t(raw[i])) << 16) | (uint32_t(uint8_t(raw[i + 1])) << 8) |
                       uint32_t(uint8_t(raw[i + 2]));
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
    i += 3;
  }
  if (i < raw.size()) {
    uint32_t v = uint32_t(uint8_t(raw[i])) << 16;
    if (i + 1 < raw.size()) v |= uint32_t(uint8_t(raw[i + 1])) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < raw.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// RFC 2047 "B" encoded words, split on UTF-8 character boundaries and folded onto
// continuation lines, so no header line grows past the RFC 5322 limits.
std::string EncodeWords(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = std::min(text.size(), i + kEncodedWordChunk);
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
    if (!out.empty()) out += "\r\n ";
    out += "=?UTF-8?B?" + Base64(text.substr(i, end - i)) + "?=";
    i = end;
  }
  return out;
}

std::string HeaderText(std::string_view text) {
  // ASCII that fits on one line stays readable; anything else is encoded.
  if (IsAscii(text) && text.size() <= 900) return std::string(text);
  return EncodeWords(text);
}

std::string EncodeFrom(std::string_view from) {
  if (IsAscii(from)) return std::string(from);
  const size_t lt = from.rfind('<');
  if (lt == std::string_view::npos) return std::string(from);  // bare addresses are ASCII here
  std::string_view name = from.substr(0, lt);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  return EncodeWords(name) + " " + std::string(from.substr(lt));
}

// Quoted-printable (RFC 2045 §6.7) with CRLF line ends; any of CRLF, LF or CR in the text ends a
// line. A leading '.' is encoded too, so no line can end the SMTP DATA phase on its own.
std::string QuotedPrintable(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  size_t line_len = 0;
  auto emit = [&](const std::string& piece) {
    if (line_len + piece.size() > kQpLineLimit - 1) {
      out += "=\r\n";
      line_len = 0;
    }
    out += piece;
    line_len += piece.size();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '\r' || ch == '\n') {
      if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      out += "\r\n";
      line_len = 0;
      continue;
    }
    const auto c = static_cast<unsigned char>(ch);
    const bool at_line_end = i + 1 == text.size() || text[i + 1] == '\r' || text[i + 1] == '\n';
    const bool literal = (c >= 33 && c <= 126 && c != '=' && !(c == '.' && line_len == 0)) ||
                         ((c == ' ' || c == '\t') && !at_line_end);
    if (literal) {
      emit(std::string(1, ch));
    } else {
      emit(std::string{'=', kHex[c >> 4], kHex[c & 15]});
    }
  }
  return out;
}

std::string RfcDate(std::chrono::system_clock::time_point t) {
  return time::FormatMailDate(
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
}

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("RAND_bytes failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : raw) {
    out += kHex[static_cast<unsigned char>(c) >> 4];
    out += kHex[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

}  // namespace

Status ValidateMail(const Mail& mail) {
  if (!text::IsEmailAddress(mail.to)) {
    return Status(ErrorCode::kInvalid, "mail recipient must be one e-mail address of at most 254 characters");
  }
  if (mail.subject.empty() || mail.subject.size() > kMaxMailSubjectLength) {
    return Status(ErrorCode::kInvalid, "mail subject must have 1 to 998 bytes");
  }
  if (HasControl(mail.subject)) {
    return Status(ErrorCode::kInvalid, "mail subject must not contain line breaks or control characters");
  }
  if (!text::IsValidUtf8(mail.subject)) return Status(ErrorCode::kInvalid, "mail subject is not valid UTF-8");
  if (mail.text.size() > kMaxMailBodyBytes) {
    return Status(ErrorCode::kInvalid, "mail text must be at most 64 KiB");
  }
  if (!text::IsValidUtf8(mail.text)) return Status(ErrorCode::kInvalid, "mail text is not valid UTF-8");
  return Status::Ok();
}

std::string MailAddressOf(std::string_view from) {
  const size_t lt = from.rfind('<');
  std::string_view address = from;
  if (lt != std::string_view::npos) {
    if (from.empty() || from.back() != '>') return "";
    address = from.substr(lt + 1, from.size() - lt - 2);
  }
  while (!address.empty() && address.front() == ' ') address.remove_prefix(1);
  while (!address.empty() && address.back() == ' ') address.remove_suffix(1);
  return text::IsEmailAddress(address) ? std::string(address) : "";
}

std::string RenderMailMessage(const Mail& mail, std::string_view from,
                              std::chrono::system_clock::time_point date, std::string_view message_id) {
  std::string m;
  m += "Date: " + RfcDate(date) + "\r\n";
  m += "From: " + EncodeFrom(from) + "\r\n";
  m += "To: " + mail.to + "\r\n";
  m += "Subject: " + HeaderText(mail.subject) + "\r\n";
  m += "Message-ID: <" + std::string(message_id) + ">\r\n";
  m += "MIME-Version: 1.0\r\n";
  m += "Content-Type: text/plain; charset=utf-8\r\n";
  m += "Content-Transfer-Encoding: quoted-printable\r\n";
  m += "\r\n";
  m += QuotedPrintable(mail.text);
  if (m.size() < 2 || m.compare(m.size() - 2, 2, "\r\n") != 0) m += "\r\n";
  return m;
}

MailService::MailService(MailOptions options, Outbox& outbox, prometheus::Registry& registry, Logger& logger)
    : OutboxDelivery(kMailChannel, options.log_file, outbox, registry, logger),
      options_(std::move(options)),
      from_address_(MailAddressOf(options_.from)) {
  if (from_address_.empty() || HasControl(options_.from)) {
    throw std::invalid_argument("mail.from must be an address, e.g. \"Rendezvous <rendezvous@example.com>\"");
  }
}

void MailService::Send(DbConnection& tx, const Mail& mail) {
  if (Status s = ValidateMail(mail); !s.ok()) throw std::invalid_argument(s.message());
  Publish(tx, {{"to", mail.to}, {"subject", mail.subject}, {"text", mail.text}});
}

void MailService::HandleEvent(const OutboxEvent& event) {
  const nlohmann::json& p = *event.payload;
  Mail mail;
  bool readable = p.is_object();
  if (readable) {
    for (auto [key, field] :
         {std::pair{"to", &mail.to}, std::pair{"subject", &mail.subject}, std::pair{"text", &mail.text}}) {
      auto it = p.find(key);
      if (it == p.end() || !it->is_string()) {
        readable = false;
        break;
      }
      *field = it->get<std::string>();
    }
  }
  Status valid = readable ? ValidateMail(mail) : Status(ErrorCode::kInvalid, "unreadable payload");
  if (!valid.ok()) {
    Drop(event, valid);
    return;
  }
  Deliver(mail);
}

bool MailService::Deliver(const Mail& mail) {
  if (options_.smtp_url.empty()) {
    AppendToLog({{"to", mail.to}, {"subject", mail.subject}, {"text", mail.text}});
    return true;
  }
  return DeliverSmtp(mail);
}

bool MailService::DeliverSmtp(const Mail& mail) {
  const std::string domain = from_address_.substr(from_address_.rfind('@') + 1);
  const std::string message =
      RenderMailMessage(mail, options_.from, std::chrono::system_clock::now(), RandomHex(16) + "@" + domain);

  net::SmtpRequest request;
  request.url = options_.smtp_url;
  request.user = options_.smtp_user;
  request.password = options_.smtp_password;
  request.mail_from = "<" + from_address_ + ">";
  request.rcpt_to = "<" + mail.to + ">";
  request.message = message;
  request.connect_timeout = options_.connect_timeout;
  request.timeout = options_.total_timeout;
  const net::SmtpResult result = net::SendSmtp(request);
  if (result.sent) {
    sent_.Increment();
    return true;
  }
  const long reply = result.reply;
  failed_.Increment();
  const std::string& why = result.error;
  // 5xx refuses this mail for good, except authentication replies (530, 534, 535, 538): those
  // are the installation's problem, and retrying keeps the mails until it is fixed.
  const bool auth_reply = reply == 530 || reply == 534 || reply == 535 || reply == 538;
  if (reply >= 500 && reply < 600 && !auth_reply) {
    logger_.Error(
        "mail refused by the SMTP server; dropped",
        {{"smtp_reply", reply}, {"error", why}, {"to_domain", mail.to.substr(mail.to.rfind('@') + 1)}});
    return false;
  }
  throw std::runtime_error("SMTP delivery failed: " + why);
}

}  // namespace rendezvous::core
