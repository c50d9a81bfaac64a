// net::HttpMulti: HTTP/1.1 over kept-alive connections on one epoll loop, OpenSSL for https. A
// request costs it about a quarter of what it costs through libcurl (bench/http_client_bench.cpp),
// so every HTTP request of the server goes through it (net::Perform drives one of its own per
// thread: outbound.cpp). Answers are read by ResponseReader (response_reader.hpp), the TLS trust
// is the process's one (tls_trust.hpp).
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <unordered_map>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "rendezvous/net.hpp"
#include "rendezvous/outbound.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/url.hpp"
#include "response_reader.hpp"
#include "tls_trust.hpp"

namespace rendezvous::net {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadBuffer = 16 * 1024;
// An idle connection is closed after this long: servers commonly close theirs after 60 s or more,
// and a request sent on a connection the server is closing is sent again on a new one anyway.
constexpr auto kIdleLimit = std::chrono::seconds(55);
constexpr int kMaxEvents = 256;

std::string SystemError(int error) {
  char buf[128];
  return strerror_r(error, buf, sizeof buf);
}

// OpenSSL's own socket BIO writes with write(2), which raises SIGPIPE on a connection the peer
// has closed; this one sends with MSG_NOSIGNAL, so the client is safe in any process.
// The BIO's data is the connection's socket (a pointer to Connection::fd).
int BioFd(BIO* b) {
  return *static_cast<const int*>(BIO_get_data(b));
}

int BioWrite(BIO* b, const char* data, int len) {
  BIO_clear_retry_flags(b);
  const ssize_t n = ::send(BioFd(b), data, static_cast<size_t>(len), MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) BIO_set_retry_write(b);
  return static_cast<int>(n);
}

int BioRead(BIO* b, char* data, int len) {
  BIO_clear_retry_flags(b);
  const ssize_t n = ::recv(BioFd(b), data, static_cast<size_t>(len), 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) BIO_set_retry_read(b);
  return static_cast<int>(n);
}

long BioControl(BIO*, int cmd, long, void*) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

int BioCreate(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

// Never freed: shared by every client of the process.
const BIO_METHOD* SocketBio() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "rendezvous socket");
    if (m != nullptr) {
      BIO_meth_set_write(m, &BioWrite);
      BIO_meth_set_read(m, &BioRead);
      BIO_meth_set_ctrl(m, &BioControl);
      BIO_meth_set_create(m, &BioCreate);
    }
    return m;
  }();
  return method;
}

}  // namespace

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

  explicit Impl(size_t max) : max_connections(std::max<size_t>(1, max)) {
    epoll = epoll_create1(EPOLL_CLOEXEC);
    wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll >= 0 && wake >= 0) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = nullptr;
      epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &ev);
    }
  }

  ~Impl() {
    for (auto& c : connections) Release(*c);
    for (auto& [key, session] : sessions) SSL_SESSION_free(session);
    if (wake >= 0) ::close(wake);
    if (epoll >= 0) ::close(epoll);
  }

  // ---- transfers ----

  void Finish(Transfer* t, HttpOutcome outcome, std::string error) {
    if (t->connection != nullptr) {
      t->connection->transfer = nullptr;
      t->connection = nullptr;
    }
    if (t->queued) {
      waiting.erase(std::find(waiting.begin(), waiting.end(), t));
      t->queued = false;
    }
    HttpResponse& out = t->response;
    out.outcome = outcome;
    if (outcome != HttpOutcome::kOk) out.error = std::move(error);
    if (outcome == HttpOutcome::kTooLarge) {
      out.error = "the response is larger than " + std::to_string(t->request.max_response_bytes) + " bytes";
    } else if (outcome != HttpOutcome::kOk) {
      out.status = 0;
    }
    out.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t->started);
    done.emplace_back(t->tag, std::move(out));
    auto it = std::find_if(transfers.begin(), transfers.end(), [&](const auto& p) { return p.get() == t; });
    if (it != transfers.end()) {
      std::swap(*it, transfers.back());
      transfers.pop_back();
    }
  }

  // Puts `t` on a connection: an idle one to its destination, a new one while there is room (an
  // idle one elsewhere closed to make it), else it waits.
  void Assign(Transfer* t, bool first_in_line = false) {
    FollowTrust(tls_trust::Generation(false));
    for (auto found = idle.find(t->key); found != idle.end() && !found->second.empty();) {
      Connection* c = found->second.back();
      found->second.pop_back();
      if (!Quiet(*c)) {                // unasked bytes, or the server closed it: never read as this answer
        c->stage = Stage::kReceiving;  // already off the idle list
        Close(*c, false);
        found = idle.find(t->key);
        continue;
      }
      if (found->second.empty()) idle.erase(found);
      Send(*c, t);
      return;
    }
    if (connections.size() - closed.size() >= max_connections) {
      Connection* oldest = nullptr;
      for (auto& c : connections) {
        if (!c->dead && c->stage == Stage::kIdle &&
            (oldest == nullptr || c->idle_since < oldest->idle_since)) {
          oldest = c.get();
        }
      }
      if (oldest == nullptr) {
        t->queued = true;
        if (first_in_line) {
          waiting.push_front(t);
        } else {
          waiting.push_back(t);
        }
        return;
      }
      Close(*oldest);
    }
    Open(t);
  }

  // ---- connections ----

  // Nothing arrived on an idle connection since its last answer, and the server has not closed it.
  // Over TLS, records that carry no data (a late session ticket) do not count.
  static bool Quiet(Connection& c) {
    if (c.ssl == nullptr) {
      char byte;
      const ssize_t n = ::recv(c.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
    if (SSL_pending(c.ssl) > 0) return false;
    ERR_clear_error();
    char byte;
    const int n = SSL_read(c.ssl, &byte, 1);
    const bool quiet = n <= 0 && SSL_get_error(c.ssl, n) == SSL_ERROR_WANT_READ;
    ERR_clear_error();
    return quiet;
  }

  // Drops what was made under an older trust than `generation`: TLS sessions (a resumed session
  // is not verified again) and idle TLS connections.
  void FollowTrust(uint64_t generation) {
    if (generation == trust_generation) return;
    trust_generation = generation;
    for (auto& [key, session] : sessions) SSL_SESSION_free(session);
    sessions.clear();
    std::vector<Connection*> old;
    for (auto& c : connections) {
      if (!c->dead && c->ssl != nullptr && c->stage == Stage::kIdle) old.push_back(c.get());
    }
    for (Connection* c : old) Close(*c);
  }

  void Open(Transfer* t) {
    addrinfo hints{};
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const std::string port = std::to_string(t->port);
    if (getaddrinfo(t->address.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) {
      Finish(t, HttpOutcome::kConnectFailed,
             "could not connect to " + t->address + ": not a numeric address");
      return;
    }
    const int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int rc = -1;
    int error = errno;
    if (fd >= 0) {
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      rc = ::connect(fd, res->ai_addr, res->ai_addrlen);
      error = errno;
    }
    freeaddrinfo(res);
    if (fd < 0 || (rc != 0 && error != EINPROGRESS)) {
      if (fd >= 0) ::close(fd);
      Finish(t, HttpOutcome::kConnectFailed, ConnectError(*t, error));
      return;
    }
    auto c = std::make_unique<Connection>();
    c->owner = this;
    c->fd = fd;
    c->key = t->key;
    c->transfer = t;
    t->connection = c.get();
    epoll_event ev{};
    ev.events = EPOLLOUT;
    ev.data.ptr = c.get();
    c->interest = EPOLLOUT;
    epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &ev);
    connections.push_back(std::move(c));
  }

  static std::string ConnectError(const Transfer& t, int error) {
    return "could not connect to " + t.host + " port " + std::to_string(t.port) + ": " + SystemError(error);
  }

  void Interest(Connection& c, uint32_t events) {
    if (c.interest == events) return;
    c.interest = events;
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = &c;
    epoll_ctl(epoll, EPOLL_CTL_MOD, c.fd, &ev);
  }

  // `clean`: nothing went wrong on the connection, so TLS says goodbye (close_notify, without
  // waiting for the answer); OpenSSL keeps the session resumable only then.
  void Release(Connection& c, bool clean = true) {
    if (c.ssl != nullptr && clean && SSL_is_init_finished(c.ssl)) {
      ERR_clear_error();
      SSL_shutdown(c.ssl);
      ERR_clear_error();
    }
    if (c.ssl != nullptr) SSL_free(c.ssl);
    c.ssl = nullptr;
    if (c.fd >= 0) ::close(c.fd);  // leaves the epoll set with it
    c.fd = -1;
  }

  void Close(Connection& c, bool clean = true) {
    if (c.dead) return;
    c.dead = true;
    if (c.stage == Stage::kIdle) {
      auto& list = idle[c.key];
      list.erase(std::remove(list.begin(), list.end(), &c), list.end());
      if (list.empty()) idle.erase(c.key);
    }
    Release(c, clean);
    closed.push_back(&c);
  }

  // A failure of `c` while it carries its transfer: a request on a reused connection that got no
  // answer at all goes once more on a new one (the server closed the idle connection meanwhile).
  void Fail(Connection& c, HttpOutcome outcome, std::string error) {
    Transfer* t = c.transfer;
    const bool stale = t != nullptr && c.answers > 0 && !t->retried && (!t->reader || !t->reader->started());
    Close(c, false);
    if (t == nullptr) return;
    t->connection = nullptr;
    if (stale) {
      t->retried = true;
      t->reader.reset();
      t->response = HttpResponse{};
      Assign(t);
      return;
    }
    Finish(t, outcome, std::move(error));
  }

  void FreeClosed() {
    if (closed.empty()) return;
    connections.erase(
        std::remove_if(connections.begin(), connections.end(), [](const auto& c) { return c->dead; }),
        connections.end());
    closed.clear();
  }

  void Connected(Connection& c) {
    int error = 0;
    socklen_t len = sizeof error;
    if (getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) error = errno;
    if (error != 0) {
      Transfer* t = c.transfer;
      Fail(c, HttpOutcome::kConnectFailed, t != nullptr ? ConnectError(*t, error) : "");
      return;
    }
    Transfer* t = c.transfer;
    if (t == nullptr) {
      Close(c);
      return;
    }
    if (!t->tls) {
      Send(c, t);
      return;
    }
    std::string why;
    SSL_CTX* ctx = tls_trust::Context(why);
    if (ctx == nullptr) {
      Fail(c, HttpOutcome::kError, "TLS is not available: " + why);
      return;
    }
    FollowTrust(tls_trust::Generation(false));
    c.ssl = SSL_new(ctx);
    SSL_CTX_free(ctx);  // the connection's SSL holds its own reference
    if (c.ssl == nullptr) {
      Fail(c, HttpOutcome::kError, "TLS is not available: " + tls_trust::TlsError("no context"));
      return;
    }
    BIO* bio = SocketBio() != nullptr ? BIO_new(SocketBio()) : nullptr;
    if (bio == nullptr) {
      Fail(c, HttpOutcome::kError, "TLS is not available: " + tls_trust::TlsError("no socket BIO"));
      return;
    }
    BIO_set_data(bio, &c.fd);
    SSL_set_bio(c.ssl, bio, bio);
    SSL_set_app_data(c.ssl, static_cast<tls_trust::SessionKeeper*>(&c));
    SSL_set_connect_state(c.ssl);
    if (auto kept = sessions.find(c.key); kept != sessions.end()) SSL_set_session(c.ssl, kept->second);
    if (IsAddressLiteral(t->host)) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c.ssl), t->host.c_str());
    } else {
      SSL_set_tlsext_host_name(c.ssl, t->host.c_str());
      SSL_set1_host(c.ssl, t->host.c_str());
    }
    c.stage = Stage::kHandshake;
    Handshake(c);
  }

  void Handshake(Connection& c) {
    ERR_clear_error();
    const int rc = SSL_connect(c.ssl);
    if (rc == 1) {
      Send(c, c.transfer);
      return;
    }
    const int why = SSL_get_error(c.ssl, rc);
    if (why == SSL_ERROR_WANT_READ) {
      Interest(c, EPOLLIN);
      return;
    }
    if (why == SSL_ERROR_WANT_WRITE) {
      Interest(c, EPOLLOUT);
      return;
    }
    std::string said;
    const long verify = SSL_get_verify_result(c.ssl);
    if (verify != X509_V_OK) {
      said = std::string("the server's certificate is not trusted: ") + X509_verify_cert_error_string(verify);
      ERR_clear_error();
    } else {
      said = tls_trust::TlsError(why == SSL_ERROR_SYSCALL ? "the connection closed" : "failed");
    }
    const std::string host = c.transfer != nullptr ? c.transfer->host : "";
    if (auto kept = sessions.find(c.key); kept != sessions.end()) {  // its next connection starts afresh
      SSL_SESSION_free(kept->second);
      sessions.erase(kept);
    }
    Fail(c, HttpOutcome::kError, "TLS handshake with " + host + " failed: " + said);
  }

  void Send(Connection& c, Transfer* t) {
    c.transfer = t;
    t->connection = &c;
    c.stage = Stage::kSending;
    c.sent = 0;
    t->reader.emplace(t->request, t->response);
    Flush(c);
  }

  void Flush(Connection& c) {
    const std::string& wire = c.transfer->wire;
    while (c.sent < wire.size()) {
      const size_t left = wire.size() - c.sent;
      if (c.ssl != nullptr) {
        ERR_clear_error();
        const int n =
            SSL_write(c.ssl, wire.data() + c.sent, static_cast<int>(std::min<size_t>(left, 1 << 30)));
        if (n > 0) {
          c.sent += static_cast<size_t>(n);
          continue;
        }
        const int why = SSL_get_error(c.ssl, n);
        if (why == SSL_ERROR_WANT_WRITE || why == SSL_ERROR_WANT_READ) {
          Interest(c, why == SSL_ERROR_WANT_WRITE ? EPOLLOUT : EPOLLIN);
          return;
        }
        Fail(c, HttpOutcome::kError,
             "could not send the request: " + tls_trust::TlsError("the connection closed"));
        return;
      }
      const ssize_t n = ::send(c.fd, wire.data() + c.sent, left, MSG_NOSIGNAL);
      if (n > 0) {
        c.sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        Interest(c, EPOLLOUT);
        return;
      }
      Fail(c, HttpOutcome::kError, "could not send the request: " + SystemError(n < 0 ? errno : EPIPE));
      return;
    }
    c.stage = Stage::kReceiving;
    Interest(c, EPOLLIN);
  }

  void Receive(Connection& c) {
    char buf[kReadBuffer];
    for (int round = 0; round < 64; ++round) {
      ssize_t n = 0;
      if (c.ssl != nullptr) {
        ERR_clear_error();
        const int got = SSL_read(c.ssl, buf, sizeof buf);
        if (got <= 0) {
          const int why = SSL_get_error(c.ssl, got);
          if (why == SSL_ERROR_WANT_READ) return;
          if (why == SSL_ERROR_WANT_WRITE) {
            Interest(c, EPOLLOUT);
            return;
          }
          if (why != SSL_ERROR_ZERO_RETURN) {
            Fail(c, HttpOutcome::kError,
                 "could not read the answer: " + tls_trust::TlsError("the connection closed"));
            return;
          }
          n = 0;
        } else {
          n = got;
        }
      } else {
        n = ::recv(c.fd, buf, sizeof buf, 0);
        if (n < 0) {
          if (errno == EAGAIN || errno == EINTR) return;
          Fail(c, HttpOutcome::kError, "could not read the answer: " + SystemError(errno));
          return;
        }
      }
      Transfer* t = c.transfer;
      const ResponseReader::Step step =
          n == 0 ? t->reader->End() : t->reader->Feed(buf, static_cast<size_t>(n));
      if (step == ResponseReader::Step::kMore) {
        if (c.ssl == nullptr && static_cast<size_t>(n) < sizeof buf) return;  // drained
        continue;
      }
      if (step == ResponseReader::Step::kBad) {
        Fail(c, HttpOutcome::kError, t->reader->why());
        return;
      }
      if (step == ResponseReader::Step::kTooLarge) {
        Close(c);
        Finish(t, HttpOutcome::kTooLarge, "");
        return;
      }
      ++c.answers;
      const bool reuse = t->reader->reusable();
      Finish(t, HttpOutcome::kOk, "");
      if (!reuse) {
        Close(c);
        return;
      }
      c.stage = Stage::kIdle;
      c.idle_since = Clock::now();
      Interest(c, EPOLLIN);
      idle[c.key].push_back(&c);
      return;
    }
  }

  void Handle(Connection& c, uint32_t events) {
    if (c.dead) return;
    switch (c.stage) {
      case Stage::kConnecting:
        Connected(c);
        break;
      case Stage::kHandshake:
        Handshake(c);
        break;
      case Stage::kSending:
        Flush(c);
        break;
      case Stage::kReceiving:
        if (c.interest == EPOLLOUT) Interest(c, EPOLLIN);  // TLS wanted to write while reading
        Receive(c);
        break;
      case Stage::kIdle:
        // The server closed it, or said something unasked (over TLS: unless all it sent was
        // records without data, such as a late session ticket).
        (void)events;
        if (!Quiet(c)) Close(c, false);
        break;
    }
  }

  // Ends what ran out of time; closes connections idle for too long; starts waiting transfers.
  void Sweep() {
    const auto now = Clock::now();
    std::vector<Transfer*> late;
    for (auto& t : transfers) {
      const bool connecting = t->connection != nullptr && (t->connection->stage == Stage::kConnecting ||
                                                           t->connection->stage == Stage::kHandshake);
      if (now >= t->done_by || (connecting && now >= t->connect_by)) late.push_back(t.get());
    }
    for (Transfer* t : late) {
      if (t->connection != nullptr) Close(*t->connection);
      Finish(t, HttpOutcome::kTimeout, "timed out");
    }
    if (now >= next_sweep) {
      next_sweep = now + std::chrono::seconds(1);
      std::vector<Connection*> old;
      for (auto& c : connections) {
        if (!c->dead && c->stage == Stage::kIdle && now - c->idle_since > kIdleLimit) old.push_back(c.get());
      }
      for (Connection* c : old) Close(*c);
    }
    while (!waiting.empty()) {
      Transfer* t = waiting.front();
      waiting.pop_front();
      t->queued = false;
      const size_t before = waiting.size();
      Assign(t, true);
      if (waiting.size() > before && waiting.front() == t) break;  // still no room
    }
  }

  // How long Poll() may wait at most: until the nearest deadline.
  int WaitMs(std::chrono::milliseconds wait) const {
    if (!done.empty()) return 0;
    auto until = Clock::now() + wait;
    for (const auto& t : transfers) {
      until = std::min(until, t->done_by);
      if (t->connection != nullptr &&
          (t->connection->stage == Stage::kConnecting || t->connection->stage == Stage::kHandshake)) {
        until = std::min(until, t->connect_by);
      }
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count() + 1;
    return static_cast<int>(std::clamp<int64_t>(ms, 0, wait.count()));
  }
};

HttpMulti::HttpMulti(size_t max_connections) : impl_(std::make_unique<Impl>(max_connections)) {}

HttpMulti::~HttpMulti() = default;

bool HttpMulti::Start(uint64_t tag, HttpRequest request) {
  if (impl_->epoll < 0) return false;
  auto owned = std::make_unique<Impl::Transfer>();
  Impl::Transfer* t = owned.get();
  t->tag = tag;
  t->request = std::move(request);
  t->started = Clock::now();
  t->done_by = t->started + t->request.timeout;
  t->connect_by = t->started + t->request.connect_timeout;
  impl_->transfers.push_back(std::move(owned));
  const HttpRequest& r = t->request;
  Result<Url> parsed = ParseUrl(r.url);
  if (!parsed.ok() || (parsed->scheme != "http" && parsed->scheme != "https")) {
    impl_->Finish(t, HttpOutcome::kBadUrl,
                  parsed.ok() ? "the URL's scheme is not http or https" : parsed.status().message());
    return true;
  }
  const Url& url = *parsed;
  t->host = url.host;
  t->port = url.EffectivePort();
  t->tls = url.scheme == "https";
  if (!r.pin.address.empty() && r.pin.host == url.host && r.pin.port == t->port) {
    t->address = r.pin.address;
  } else if (IsAddressLiteral(url.host)) {
    t->address = url.host;
  } else {
    impl_->Finish(
        t, HttpOutcome::kConnectFailed,
        "could not connect to " + url.host + ": its address was not given (this client resolves no names)");
    return true;
  }
  if (r.block_private_networks) {
    const std::optional<std::string> why = ClassifyAddress(t->address);
    if (!why || !why->empty()) {
      impl_->Finish(t, HttpOutcome::kBlocked,
                    "the address is not public (" + (why ? *why : std::string("not an IP address")) + ")");
      return true;
    }
  }
  t->key = std::string(t->tls ? "https " : "http ") + t->address + " " + std::to_string(t->port) + " " +
           t->host + (r.block_private_networks ? " checked" : "");
  // The request: what libcurl would send for it (Host, User-Agent, Accept), the caller's headers
  // ("Name:" with nothing after it drops a header), a Content-Length with a body.
  const bool has_body = r.method == "POST" || r.method == "PATCH" || r.method == "PUT";
  std::string& w = t->wire;
  w.reserve(512 + r.body.size());
  w += r.method;
  w += ' ';
  w += url.path.empty() ? "/" : url.path;
  if (url.query) {
    w += '?';
    w += *url.query;
  }
  w += " HTTP/1.1\r\n";
  auto given = [&](std::string_view name) {
    return std::any_of(r.headers.begin(), r.headers.end(), [&](const std::string& h) {
      return h.size() > name.size() && h[name.size()] == ':' &&
             text::EqualsIgnoreCase(h.substr(0, name.size()), name);
    });
  };
  if (!given("Host")) {
    w += "Host: ";
    w += url.HostInUrl();
    if (url.port && *url.port != (t->tls ? 443 : 80)) {
      w += ':';
      w += std::to_string(*url.port);
    }
    w += "\r\n";
  }
  if (!r.user_agent.empty() && !given("User-Agent")) {
    w += "User-Agent: ";
    w += r.user_agent;
    w += "\r\n";
  }
  if (!given("Accept")) w += "Accept: */*\r\n";
  for (const std::string& h : r.headers) {
    const size_t colon = h.find(':');
    if (colon == std::string::npos || text::Trim(std::string_view(h).substr(colon + 1)).empty()) continue;
    if (h.find_first_of("\r\n") != std::string::npos) continue;
    w += h;
    w += "\r\n";
  }
  if (has_body) {
    w += "Content-Length: ";
    w += std::to_string(r.body.size());
    w += "\r\n\r\n";
    w += r.body;
  } else {
    w += "\r\n";
  }
  impl_->Assign(t);
  return true;
}

std::vector<std::pair<uint64_t, HttpResponse>> HttpMulti::Perform() {
  Impl& m = *impl_;
  if (m.ready_count == 0 && m.epoll >= 0) {
    const int n = epoll_wait(m.epoll, m.ready, kMaxEvents, 0);
    m.ready_count = std::max(0, n);
  }
  for (int i = 0; i < m.ready_count; ++i) {
    auto* c = static_cast<Impl::Connection*>(m.ready[i].data.ptr);
    if (c == nullptr) {
      uint64_t count = 0;
      while (::read(m.wake, &count, sizeof count) > 0) {
      }
      continue;
    }
    m.Handle(*c, m.ready[i].events);
  }
  m.ready_count = 0;
  m.Sweep();
  m.FreeClosed();
  std::vector<std::pair<uint64_t, HttpResponse>> out;
  out.swap(m.done);
  return out;
}

void HttpMulti::Poll(std::chrono::milliseconds wait) {
  Impl& m = *impl_;
  if (m.epoll < 0 || m.ready_count > 0) return;
  const int n = epoll_wait(m.epoll, m.ready, kMaxEvents, m.WaitMs(wait));
  m.ready_count = std::max(0, n);
}

void HttpMulti::Wakeup() noexcept {
  if (impl_->wake < 0) return;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(impl_->wake, &one, sizeof one);
}

void HttpMulti::CancelAll() {
  Impl& m = *impl_;
  for (auto& c : m.connections) {
    if (c->transfer != nullptr) m.Close(*c);
  }
  m.transfers.clear();
  m.waiting.clear();
  m.done.clear();
  m.ready_count = 0;
  m.FreeClosed();
}

size_t HttpMulti::open() const {
  return impl_->transfers.size();
}

}  // namespace rendezvous::net
