// Internal to the outbound client (net::HttpMulti, rendezvous/outbound.hpp): its transfers and
// connections. The connection pool (http_connection_pool.cpp) puts transfers on connections,
// opens, closes and reuses them; the event loop (http_multi.cpp) drives each connection through
// connect, TLS handshake (http_tls.hpp), send and receive (response_reader.hpp).
#pragma once

#include <sys/epoll.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <openssl/ssl.h>

#include "rendezvous/outbound.hpp"
#include "response_reader.hpp"
#include "tls_trust.hpp"

namespace rendezvous::net {

using Clock = std::chrono::steady_clock;

inline constexpr size_t kReadBuffer = 16 * 1024;
// An idle connection is closed after this long: servers commonly close theirs after 60 s or more,
// and a request sent on a connection the server is closing is sent again on a new one anyway.
inline constexpr auto kIdleLimit = std::chrono::seconds(55);
inline constexpr int kMaxEvents = 256;

inline std::string SystemError(int error) {
  char buf[128];
  return strerror_r(error, buf, sizeof buf);
}

struct HttpMulti::Impl {
  struct Connection;

  struct Transfer {
    uint64_t tag = 0;
    HttpRequest request;
    HttpResponse response;
    std::string wire;     // the request as sent
    std::string host;     // the URL's host: the name TLS checks
    std::string address;  // numeric: where the connection goes
    int port = 0;
    bool tls = false;
    std::string key;  // the connections that may carry it
    Clock::time_point started, connect_by, done_by;
    std::optional<ResponseReader> reader;
    Connection* connection = nullptr;
    bool queued = false;
    bool retried = false;  // sent again once after a reused connection turned out closed
  };

  enum class Stage { kConnecting, kHandshake, kSending, kReceiving, kIdle };

  struct Connection final : tls_trust::SessionKeeper {
    Impl* owner = nullptr;
    int fd = -1;
    SSL* ssl = nullptr;
    std::string key;
    Stage stage = Stage::kConnecting;
    uint32_t interest = 0;
    size_t sent = 0;
    Transfer* transfer = nullptr;
    int answers = 0;  // answers read on it: a reused connection may have been closed by the server
    Clock::time_point idle_since;
    bool dead = false;

    // A session the server gave this connection: kept as its destination's, replacing the one
    // before, so that a new connection to it resumes instead of a full handshake.
    bool KeepSession(SSL_SESSION* session) noexcept override {
      if (owner == nullptr || owner->trust_generation != tls_trust::Generation(false)) return false;
      auto [at, fresh] = owner->sessions.try_emplace(key, session);
      if (!fresh) {
        SSL_SESSION_free(at->second);
        at->second = session;
      }
      return true;  // the reference is ours
    }
  };

  size_t max_connections;
  int epoll = -1;
  int wake = -1;
  uint64_t trust_generation = 0;  // of the trust its TLS sessions and connections were made under
  // The last TLS session each destination gave, so that a new connection to it resumes instead of
  // a full handshake.
  std::unordered_map<std::string, SSL_SESSION*> sessions;
  std::vector<std::unique_ptr<Connection>> connections;
  std::vector<Connection*> closed;  // freed once the events in hand are handled
  std::unordered_map<std::string, std::vector<Connection*>> idle;
  std::vector<std::unique_ptr<Transfer>> transfers;
  std::deque<Transfer*> waiting;  // for a connection
  std::vector<std::pair<uint64_t, HttpResponse>> done;
  epoll_event ready[kMaxEvents];
  int ready_count = 0;
  Clock::time_point next_sweep;

  // ---- the connection pool (http_connection_pool.cpp) ----
  explicit Impl(size_t max);
  ~Impl();
  void Finish(Transfer* t, HttpOutcome outcome, std::string error);
  // Puts `t` on a connection: an idle one to its destination, a new one while there is room (an
  // idle one elsewhere closed to make it), else it waits.
  void Assign(Transfer* t, bool first_in_line = false);
  // Nothing arrived on an idle connection since its last answer, and the server has not closed it.
  // Over TLS, records that carry no data (a late session ticket) do not count.
  static bool Quiet(Connection& c);
  // Drops what was made under an older trust than `generation`: TLS sessions (a resumed session
  // is not verified again) and idle TLS connections.
  void FollowTrust(uint64_t generation);
  void Open(Transfer* t);
  static std::string ConnectError(const Transfer& t, int error);
  // `clean`: nothing went wrong on the connection, so TLS says goodbye (close_notify, without
  // waiting for the answer); OpenSSL keeps the session resumable only then.
  void Release(Connection& c, bool clean = true);
  void Close(Connection& c, bool clean = true);
  // A failure of `c` while it carries its transfer: a request on a reused connection that got no
  // answer at all goes once more on a new one (the server closed the idle connection meanwhile).
  void Fail(Connection& c, HttpOutcome outcome, std::string error);
  void FreeClosed();
  // Ends what ran out of time; closes connections idle for too long; starts waiting transfers.
  void Sweep();
  // How long Poll() may wait at most: until the nearest deadline.
  int WaitMs(std::chrono::milliseconds wait) const;

  // ---- the event loop (http_multi.cpp) ----
  void Interest(Connection& c, uint32_t events);
  void Connected(Connection& c);
  void Handshake(Connection& c);
  void Send(Connection& c, Transfer* t);
  void Flush(Connection& c);
  void Receive(Connection& c);
  void Handle(Connection& c, uint32_t events);
};

}  // namespace rendezvous::net
