// The one outbound client of the server and its plugins (libcurl inside, never in sight, but for
// HttpMulti's own HTTP/1.1 on epoll and OpenSSL): HTTP(S) requests to Google, ICS feeds, webhook receivers
// and SMS gateways, and SMTP submissions.
//
// Every HTTP request is bounded (timeouts, response size), follows no redirect, speaks http/https
// only and, unless it asks for the environment's proxy, goes straight to its host. Two guards of
// the address policy (rendezvous/net.hpp) are at hand: `block_private_networks` checks the address
// of every connection the request opens (so no DNS answer gets around it), and `pin`
// sends the connection to the address the caller checked (ResolveChecked) and to nothing else.
//
// Perform() blocks the calling thread; each thread keeps its handles for reuse, so a thread that
// calls the same host again reuses the connection (never across the address check: connections
// opened under it serve only requests under it), and TLS sessions are shared by all threads.
// HttpMulti drives many requests at once from one thread (the webhook sender's: written here, it
// costs a request about a quarter of libcurl's CPU). SendSmtp() submits one mail.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rendezvous::net {

struct HttpRequest {
  std::string method = "GET";  // GET, POST, PATCH, PUT, DELETE...: POST/PATCH/PUT send `body`
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::chrono::milliseconds timeout{10000};  // the whole exchange
  std::chrono::milliseconds connect_timeout{5000};
  // An answer longer than this is refused: kTooLarge (its status and what was kept stay).
  size_t max_response_bytes = 1 << 20;
  // How much of the answer's body is kept; the rest (up to max_response_bytes) is read and dropped.
  size_t keep_response_bytes = std::numeric_limits<size_t>::max();
  // Refuse (kBlocked) to connect to any address that is not public.
  bool block_private_networks = false;
  // Connects to `address` (numeric text: ResolveChecked's answer) for the host name `host` at
  // `port` of the URL, and to nothing else. Empty: the name resolves as usual.
  struct Pin {
    std::string host;
    int port = 0;
    std::string address;
  };
  Pin pin;
  std::string user_agent;  // "" sends none
  bool accept_encoding = false;   // offer every content encoding libcurl decodes
  bool environment_proxy = false;  // use the proxy of http_proxy/https_proxy/no_proxy
  // Response headers to keep (lower-case names), from the final answer, at most 1 KiB each.
  std::vector<std::string> keep_headers;
  // HttpResponse::error in libcurl's own words (they name the host and port) rather than short.
  bool detailed_error = false;
};

enum class HttpOutcome {
  kOk,  // an HTTP answer arrived (any status)
  kTimeout,
  kConnectFailed,  // refused, or the name did not resolve
  kTooLarge,       // the answer exceeded max_response_bytes
  kBlocked,        // block_private_networks refused the address
  kBadUrl,         // malformed URL or a scheme other than http/https
  kError,          // any other transport failure
};

// Short label of an outcome for metrics and logs ("ok", "timeout", "connect_failed", "too_large",
// "blocked", "bad_url", "error").
const char* OutcomeLabel(HttpOutcome outcome);

struct HttpResponse {
  HttpOutcome outcome = HttpOutcome::kError;
  long status = 0;  // also set for kTooLarge when the answer's head had arrived
  std::string body;  // at most keep_response_bytes
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;  // the kept ones, lower-case names
  std::string error;  // why it failed; never the URL's query
  std::chrono::milliseconds duration{0};

  bool ok() const { return outcome == HttpOutcome::kOk; }
  // A kept header's value; "" when absent.
  std::string Header(std::string_view lower_name) const;
};

// Performs one request on the calling thread. Never throws. Thread-safe.
HttpResponse Perform(const HttpRequest& request) noexcept;

// Many requests at once, driven by one thread: Start() them, call Perform() to move them on and
// collect the finished ones, and Poll() to wait for activity. HTTP/1.1 over connections kept open
// for reuse (at most `max_connections` open at once; a request beyond waits for one), https
// verified against the system's CAs (OpenSSL's default paths: SSL_CERT_FILE and SSL_CERT_DIR
// when set) and the URL's host. It resolves no names: the URL's host is an address literal or
// `pin` gives the address (kConnectFailed otherwise). No proxy, no content decoding: it asks for
// none (`environment_proxy` and `accept_encoding` are Perform()'s alone). A request that finds its
// reused connection closed by the server before any answer is sent once more on a new one.
// Everything but Wakeup() from the driving thread only.
class HttpMulti {
 public:
  explicit HttpMulti(size_t max_connections);
  ~HttpMulti();
  HttpMulti(const HttpMulti&) = delete;
  HttpMulti& operator=(const HttpMulti&) = delete;

  // Starts `request`; Perform() hands its response back with `tag`, failures found at once (a bad
  // URL, a blocked address) included. False only when the client itself could not be set up.
  bool Start(uint64_t tag, HttpRequest request);
  // Moves every request on; returns those that finished.
  std::vector<std::pair<uint64_t, HttpResponse>> Perform();
  // Waits at most `wait` for activity on the requests or a Wakeup().
  void Poll(std::chrono::milliseconds wait);
  // Ends a Poll() early. Any thread.
  void Wakeup() noexcept;
  // Drops every request still open.
  void CancelAll();
  size_t open() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One mail for an SMTP server: smtp:// upgrades with STARTTLS (required when credentials are
// given), smtps:// is TLS from the start.
struct SmtpRequest {
  std::string url;  // smtp://host[:port] or smtps://host[:port]
  std::string user;      // "" = no authentication
  std::string password;  // never logged
  std::string mail_from;  // "<address>"
  std::string rcpt_to;    // "<address>"
  std::string message;    // the RFC 5322 message, CRLF line ends
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds timeout{30000};
};

struct SmtpResult {
  bool sent = false;
  long reply = 0;     // the server's last reply code, when there was one
  std::string error;  // why it was not sent
};

// Submits one mail. Never throws. Thread-safe.
SmtpResult SendSmtp(const SmtpRequest& request) noexcept;

}  // namespace rendezvous::net
