// The mail service without a database: message rendering, refusal of header injection, the
// outbox round trip through a fake outbox, the mail log, and SMTP against a fake server on
// loopback.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "log/logger.hpp"
#include "notify/mail_service.hpp"
#include "notify_test_support.hpp"

namespace rendezvous::core {
namespace {

namespace fs = std::filesystem;

const auto kDate = std::chrono::system_clock::from_time_t(1751371200);  // 2025-07-01 12:00:00 UTC

Mail GoodMail() {
  return Mail{"owner@example.com", "Your OAuth client was approved", "Hello.\nBye."};
}

TEST(MailValidation, AcceptsAPlainMail) {
  EXPECT_TRUE(ValidateMail(GoodMail()).ok());
}

TEST(MailValidation, RefusesHeaderInjectionAndBadAddresses) {
  const std::vector<std::string> bad_to = {
      "",
      "owner@example.com\r\nBcc: victim@example.com",
      "owner@example.com\nBcc: victim@example.com",
      "a@b.c, d@e.f",
      "a@b.c;d@e.f",
      "Owner <owner@example.com>",
      "no-at-sign",
      "@example.com",
      "owner@",
      "a@b@c",
      "with space@example.com",
      std::string(250, 'a') + "@b.cc",  // 255 characters
  };
  for (const auto& to : bad_to) {
    Mail m = GoodMail();
    m.to = to;
    Status s = ValidateMail(m);
    EXPECT_EQ(s.code(), ErrorCode::kInvalid) << to;
  }
  Mail max = GoodMail();
  max.to = std::string(248, 'a') + "@b.cc";  // 254
  EXPECT_TRUE(ValidateMail(max).ok());

  for (const std::string& subject : std::vector<std::string>{
           "Hi\r\nBcc: victim@example.com", "Hi\nX: y", "Hi\rX", std::string("a\0b", 3), std::string()}) {
    Mail m = GoodMail();
    m.subject = subject;
    EXPECT_EQ(ValidateMail(m).code(), ErrorCode::kInvalid) << subject;
  }
  Mail big = GoodMail();
  big.text = std::string(64 * 1024 + 1, 'x');
  EXPECT_EQ(ValidateMail(big).code(), ErrorCode::kInvalid);
  big.text.pop_back();
  EXPECT_TRUE(ValidateMail(big).ok());
  Mail bad_utf8 = GoodMail();
  bad_utf8.text = "\xc3\x28";
  EXPECT_EQ(ValidateMail(bad_utf8).code(), ErrorCode::kInvalid);
}

TEST(MailAddress, FromValues) {
  EXPECT_EQ(MailAddressOf("Rendezvous <rendezvous@localhost>"), "rendezvous@localhost");
  EXPECT_EQ(MailAddressOf("a@b.c"), "a@b.c");
  EXPECT_EQ(MailAddressOf("Name <a@b.c"), "");
  EXPECT_EQ(MailAddressOf("Name"), "");
}

// Splits the rendered message into its header block and body.
std::pair<std::string, std::string> Split(const std::string& message) {
  const size_t blank = message.find("\r\n\r\n");
  EXPECT_NE(blank, std::string::npos);
  return {message.substr(0, blank + 2), message.substr(blank + 4)};
}

TEST(MailRendering, Rfc5322Headers) {
  const std::string m =
      RenderMailMessage(GoodMail(), "Rendezvous <rendezvous@localhost>", kDate, "abc@localhost");
  auto [headers, body] = Split(m);
  EXPECT_EQ(headers,
            "Date: Tue, 01 Jul 2025 12:00:00 +0000\r\n"
            "From: Rendezvous <rendezvous@localhost>\r\n"
            "To: owner@example.com\r\n"
            "Subject: Your OAuth client was approved\r\n"
            "Message-ID: <abc@localhost>\r\n"
            "MIME-Version: 1.0\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            "Content-Transfer-Encoding: quoted-printable\r\n");
  EXPECT_EQ(body, "Hello.\r\nBye.\r\n");
  // Every line ends in CRLF, no bare LF or CR.
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] == '\n') {
      EXPECT_TRUE(i > 0 && m[i - 1] == '\r') << i;
    }
    if (m[i] == '\r') {
      EXPECT_TRUE(i + 1 < m.size() && m[i + 1] == '\n') << i;
    }
  }
}

TEST(MailRendering, NonAsciiSubjectIsEncodedAndBodyIsQuotedPrintable) {
  Mail mail{"a@b.c", "Client « Café » approuvé", "Café = bon\n.\nend \n" + std::string(100, 'x')};
  const std::string m = RenderMailMessage(mail, "Équipe <team@b.c>", kDate, "id@b.c");
  auto [headers, body] = Split(m);
  EXPECT_NE(headers.find("Subject: =?UTF-8?B?"), std::string::npos) << headers;
  EXPECT_NE(headers.find("From: =?UTF-8?B?w4lxdWlwZQ==?= <team@b.c>\r\n"), std::string::npos) << headers;
  for (char c : m) EXPECT_LT(static_cast<unsigned char>(c), 0x80) << "8-bit byte in the message";
  EXPECT_EQ(body.substr(0, 24), "Caf=C3=A9 =3D bon\r\n=2E\r\n");  // '=' and a lone '.' encoded
  EXPECT_NE(body.find("end=20\r\n"), std::string::npos) << body;  // trailing space kept visible
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 77u) << line;  // 76 + '\r'
}

TEST(MailRendering, LongSubjectIsFolded) {
  Mail mail{"a@b.c", std::string(990, 's'), "x"};
  const std::string m = RenderMailMessage(mail, "a@b.c", kDate, "id@b.c");
  std::istringstream lines(m);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 999u);
}

using mail_test::FakeOutbox;
using mail_test::NullConnection;
using mail_test::ReadJsonLines;
using mail_test::SentCount;
using mail_test::TempDir;
using MailUnderTest = mail_test::ServiceUnderTest<MailService>;

TEST(MailService, SendPublishesAndTheConsumerWritesTheLog) {
  TempDir dir;
  MailOptions o;
  o.log_file = dir.path() + "/var/mail.log";  // the folder does not exist yet
  MailUnderTest t(o);
  MailService& mail = t.service;
  FakeOutbox& outbox = t.outbox;
  mail.Register();
  EXPECT_EQ(outbox.consumer, "core.mail");
  EXPECT_EQ(outbox.topics, std::vector<std::string>{"mail"});

  NullConnection tx;
  mail.Send(tx, GoodMail());
  Mail injected = GoodMail();
  injected.subject = "x\r\nBcc: victim@example.com";
  EXPECT_THROW(mail.Send(tx, injected), std::invalid_argument);
  ASSERT_EQ(outbox.events.size(), 1u);
  EXPECT_EQ(outbox.events[0].topic, "mail");
  EXPECT_EQ(outbox.events[0].type, "MAIL");

  // A poisoned event (tampered payload) is dropped; the good one is delivered.
  OutboxEvent poisoned;
  poisoned.id = 99;
  poisoned.payload = std::make_shared<const nlohmann::json>(
      nlohmann::json{{"to", "a@b.c\r\nBcc: x@y.z"}, {"subject", "s"}, {"text", "t"}});
  std::vector<OutboxEvent> batch = {poisoned, outbox.events[0]};
  outbox.handler(tx, batch);
  auto lines = ReadJsonLines(o.log_file);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["to"], "owner@example.com");
  EXPECT_EQ(lines[0]["subject"], "Your OAuth client was approved");
  EXPECT_EQ(lines[0]["text"], "Hello.\nBye.");
  EXPECT_TRUE(lines[0]["at"].is_string());
  // The poisoned and the delivered event are both blanked in the consumer's transaction.
  EXPECT_EQ(tx.statements, std::vector<std::string>(2, "UPDATE outbox_events SET payload = ? WHERE id = ?"));
  EXPECT_EQ(MailService::Blanked(*outbox.events[0].payload),
            (nlohmann::json{{"to", "owner@example.com"}, {"delivered", true}}));

  outbox.handler(tx, {outbox.events[0]});
  EXPECT_EQ(ReadJsonLines(o.log_file).size(), 2u);  // appended

  EXPECT_EQ(SentCount(t.registry, "mail_sent_total", "logged"), 2);
  EXPECT_EQ(SentCount(t.registry, "mail_sent_total", "failed"), 1);
}

TEST(MailService, UnwritableLogThrowsSoTheBatchIsRetried) {
  MailOptions o;
  o.log_file = "/proc/no-such-dir/mail.log";
  MailUnderTest t(o);
  EXPECT_THROW(t.service.Deliver(GoodMail()), std::runtime_error);
}

// A minimal SMTP server on a loopback port: answers each command, records the envelope and the
// DATA, and replies `rcpt_reply` to RCPT TO.
class FakeSmtp {
 public:
  explicit FakeSmtp(std::string rcpt_reply = "250 OK") : rcpt_reply_(std::move(rcpt_reply)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeSmtp() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int port() const { return port_; }
  std::string mail_from, rcpt_to, data;

 private:
  void Serve() {
    const int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    auto send = [&](const std::string& s) { (void)!::write(c, s.data(), s.size()); };
    send("220 fake ESMTP\r\n");
    std::string buf;
    bool in_data = false;
    char chunk[4096];
    for (;;) {
      const ssize_t n = ::read(c, chunk, sizeof chunk);
      if (n <= 0) break;
      buf.append(chunk, static_cast<size_t>(n));
      for (;;) {
        if (in_data) {
          const size_t end = buf.find("\r\n.\r\n");
          if (end == std::string::npos) break;
          data = buf.substr(0, end + 2);
          buf.erase(0, end + 5);
          in_data = false;
          send("250 queued\r\n");
          continue;
        }
        const size_t eol = buf.find("\r\n");
        if (eol == std::string::npos) break;
        const std::string line = buf.substr(0, eol);
        buf.erase(0, eol + 2);
        if (line.rfind("EHLO", 0) == 0 || line.rfind("HELO", 0) == 0) {
          send("250 fake\r\n");
        } else if (line.rfind("MAIL FROM:", 0) == 0) {
          mail_from = line.substr(10);
          send("250 OK\r\n");
        } else if (line.rfind("RCPT TO:", 0) == 0) {
          rcpt_to = line.substr(8);
          send(rcpt_reply_ + "\r\n");
        } else if (line == "DATA") {
          in_data = true;
          send("354 go on\r\n");
        } else if (line == "QUIT") {
          send("221 bye\r\n");
          ::close(c);
          return;
        } else {
          send("502 no\r\n");
        }
      }
    }
    ::close(c);
  }

  std::string rcpt_reply_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// Options that deliver through `smtp`.
MailOptions SmtpTo(const FakeSmtp& smtp) {
  MailOptions o;
  o.smtp_url = "smtp://127.0.0.1:" + std::to_string(smtp.port());
  return o;
}

TEST(MailService, DeliversOverSmtp) {
  FakeSmtp smtp;
  MailOptions o = SmtpTo(smtp);
  o.from = "Rendezvous <rendezvous@localhost>";
  o.log_file = "/nonexistent/never-written.log";
  MailUnderTest t(o);
  Mail m = GoodMail();
  m.text = "line one\n.\nline three";
  EXPECT_TRUE(t.service.Deliver(m));
  EXPECT_EQ(smtp.mail_from.substr(0, 23), "<rendezvous@localhost>");
  EXPECT_EQ(smtp.rcpt_to, "<owner@example.com>");
  EXPECT_NE(smtp.data.find("To: owner@example.com\r\n"), std::string::npos) << smtp.data;
  EXPECT_NE(smtp.data.find("Subject: Your OAuth client was approved\r\n"), std::string::npos);
  EXPECT_NE(smtp.data.find("Message-ID: <"), std::string::npos);
  EXPECT_NE(smtp.data.find("@localhost>\r\n"), std::string::npos);
  EXPECT_NE(smtp.data.find("\r\n\r\nline one\r\n=2E\r\nline three\r\n"), std::string::npos) << smtp.data;
}

TEST(MailService, PermanentRefusalIsDroppedTransientFailureThrows) {
  {
    FakeSmtp smtp("550 no such user");
    MailUnderTest t(SmtpTo(smtp));
    EXPECT_FALSE(t.service.Deliver(GoodMail()));
  }
  {
    FakeSmtp smtp("451 try again later");
    MailUnderTest t(SmtpTo(smtp));
    EXPECT_THROW(t.service.Deliver(GoodMail()), std::runtime_error);
  }
}

}  // namespace
}  // namespace rendezvous::core
