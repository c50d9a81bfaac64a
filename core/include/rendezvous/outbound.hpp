// The one outbound client of the server and its plugins: HTTP(S) requests to Google, ICS feeds,
// webhook receivers and SMS gateways, all on HttpMulti (HTTP/1.1 written here on epoll and
// OpenSSL), and SMTP submissions (libcurl inside, never in sight: mail is not HTTP). Every TLS
// connection of either trusts the same CAs (ConfigureTrust, the `outbound` config section).
//
// Every HTTP request is bounded (timeouts, response size), follows no redirect, speaks http/https
// only, asks for no content encoding and goes straight to its host: no proxy, from the environment
// or elsewhere. Two guards of the address policy (rendezvous/address_policy.hpp) are at hand:
// `block_private_networks` refuses a request when any address its host resolves to is not public
// (and checks the address of every connection it opens), and `pin` sends the connection to the
// address the caller checked (ResolveChecked) and to nothing else.
//
// Connections are kept open for reuse by destination (scheme, address, port, host name, and
// whether the address check applies): a connection never carries a request to another
// destination. A kept connection that receives anything unasked (or the server closes) is
// dropped, and so is one whose answer is followed by more bytes than its framing says.
//
// Perform() blocks the calling thread on a client of that thread's own (its kept connections
// serve that thread's next requests). HttpMulti drives many requests at once from one thread (the
// webhook sender's). SendSmtp() submits one mail.
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

#include "rendezvous/status.hpp"

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
  // Response headers to keep (lower-case names), from the final answer, at most 1 KiB each.
  std::vector<std::string> keep_headers;
  // HttpResponse::error names the host and port for a connection that failed (and what TLS said
  // of a certificate) rather than only what went wrong.
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
  long status = 0;   // also set for kTooLarge when the answer's head had arrived
  std::string body;  // at most keep_response_bytes
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;  // the kept ones, lower-case names
  std::string error;                                         // why it failed; never the URL's query
  std::chrono::milliseconds duration{0};

  bool ok() const { return outcome == HttpOutcome::kOk; }
  // A kept header's value; "" when absent.
  std::string Header(std::string_view lower_name) const;
};

// Which CAs every outbound TLS connection trusts, HTTP and SMTP alike. Empty: OpenSSL's default
// verify paths, which are SSL_CERT_FILE and SSL_CERT_DIR when set in the environment (else the
// system's store). A file or folder given replaces those (it is not added to them).
struct TrustOptions {
  std::string ca_file;  // PEM certificates
  std::string ca_dir;   // a folder of hashed certificate names (c_rehash, update-ca-certificates)
};

// Sets the trust of the connections opened from now on (kept connections and TLS sessions made
// under the old one are dropped, not reused). kInvalid when the CAs cannot be loaded (the old
// trust stays). Thread-safe; the server calls it once at start-up.
Status ConfigureTrust(const TrustOptions& trust);

// Performs one request on the calling thread (on an HttpMulti of the thread's own, its host name
// resolved first: every address tried in turn while connections are refused). Never throws.
// Thread-safe.
HttpResponse Perform(const HttpRequest& request) noexcept;

// Many requests at once, driven by one thread: Start() them, call Perform() to move them on and
// collect the finished ones, and Poll() to wait for activity. HTTP/1.1 over connections kept open
// for reuse (at most `max_connections` open at once; a request beyond waits for one), https
// verified against the configured trust (ConfigureTrust) and the URL's host. It resolves no names:
// the URL's host is an address literal or `pin` gives the address (kConnectFailed otherwise). A
// request that finds its reused connection closed by the server before any answer is sent once
// more on a new one. Everything but Wakeup() from the driving thread only.
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
  std::string url;        // smtp://host[:port] or smtps://host[:port]
  std::string user;       // "" = no authentication
  std::string password;   // never logged
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

// Submits one mail, verifying the server's certificate against the trust of ConfigureTrust.
// Never throws. Thread-safe.
SmtpResult SendSmtp(const SmtpRequest& request) noexcept;

}  // namespace rendezvous::net
