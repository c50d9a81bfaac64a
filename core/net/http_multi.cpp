// net::HttpMulti: HTTP/1.1 over kept-alive connections on one epoll loop, OpenSSL for https. The
// webhook sender's many small requests cost it about a quarter of what they cost through libcurl's
// multi interface (bench/http_client_bench.cpp), so the sender's client is written here; every
// other request goes through net::Perform (libcurl).
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

namespace rendezvous::net {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxHead = 64 * 1024;  // an answer's status line and headers, or its trailers
constexpr size_t kMaxChunkLine = 1024;
constexpr size_t kKeptValueLimit = 1024;
constexpr size_t kReadBuffer = 16 * 1024;
// An idle connection is closed after this long: servers commonly close theirs after 60 s or more,
// and a request sent on a connection the server is closing is sent again on a new one anyway.
constexpr auto kIdleLimit = std::chrono::seconds(55);
constexpr int kMaxEvents = 256;

std::string SystemError(int error) {
  char buf[128];
  return strerror_r(error, buf, sizeof buf);
}

// What OpenSSL says of the last failure on this thread (its queue emptied), or `fallback`.
std::string TlsError(const char* fallback) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return fallback;
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
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

bool HasToken(std::string_view list, std::string_view token) {
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (text::EqualsIgnoreCase(text::Trim(list.substr(at, comma - at)), token)) return true;
    at = comma + 1;
  }
  return false;
}

// Reads one answer from the bytes of a connection: the status line and headers (interim 1xx
// answers skipped), then a body framed by Content-Length, chunks, or the connection's end. Counts
// the body against the request's max_response_bytes and keeps its first keep_response_bytes.
class AnswerReader {
 public:
  enum class Step { kMore, kDone, kTooLarge, kBad };

  AnswerReader(const HttpRequest& request, HttpResponse& response) : request_(request), response_(response) {}

  Step Feed(const char* p, size_t n) {
    if (n > 0) started_ = true;
    while (n > 0) {
      size_t used = 0;
      Step step = Step::kMore;
      switch (state_) {
        case State::kHead:
          step = Head(p, n, used);
          break;
        case State::kBody:
        case State::kChunkData:
          used = std::min<uint64_t>(n, remaining_);
          step = Body(p, used);
          remaining_ -= used;
          if (step == Step::kMore && remaining_ == 0) {
            if (state_ == State::kBody) {
              state_ = State::kDone;
            } else {
              state_ = State::kChunkEnd;
            }
          }
          break;
        case State::kUntilClose:
          used = n;
          step = Body(p, n);
          break;
        case State::kChunkSize:
        case State::kChunkEnd:
        case State::kTrailers:
          step = Line(p, n, used);
          break;
        case State::kDone:
          extra_ = true;  // bytes after the answer: the connection is not reused
          return Step::kDone;
      }
      if (step != Step::kMore) return step;
      if (state_ == State::kDone) {
        if (used < n) extra_ = true;
        return Step::kDone;
      }
      p += used;
      n -= used;
    }
    return state_ == State::kDone ? Step::kDone : Step::kMore;
  }

  // The peer closed the connection.
  Step End() {
    if (state_ == State::kUntilClose || state_ == State::kDone) {
      state_ = State::kDone;
      close_ = true;
      return Step::kDone;
    }
    why_ =
        started_ ? "the connection closed before the answer ended" : "the connection closed before an answer";
    return Step::kBad;
  }

  bool started() const { return started_; }
  bool reusable() const { return state_ == State::kDone && !close_ && !extra_; }
  const std::string& why() const { return why_; }

 private:
  enum class State { kHead, kBody, kUntilClose, kChunkSize, kChunkData, kChunkEnd, kTrailers, kDone };

  Step Bad(std::string why) {
    why_ = std::move(why);
    return Step::kBad;
  }

  Step Body(const char* p, size_t n) {
    received_ += n;
    if (received_ > request_.max_response_bytes) return Step::kTooLarge;
    std::string& body = response_.body;
    const size_t keep = request_.keep_response_bytes;
    if (body.size() < keep) body.append(p, std::min(n, keep - body.size()));
    return Step::kMore;
  }

  Step Head(const char* p, size_t n, size_t& used) {
    const size_t before = head_.size();
    head_.append(p, std::min(n, kMaxHead + 4 - before));
    const size_t end = head_.find("\r\n\r\n", before >= 3 ? before - 3 : 0);
    if (end == std::string::npos) {
      if (head_.size() > kMaxHead) return Bad("the answer's headers are longer than 64 KiB");
      used = head_.size() - before;
      return Step::kMore;
    }
    used = end + 4 - before;
    head_.resize(end + 2);
    Step step = ParseHead();
    head_.clear();
    return step;
  }

  Step ParseHead() {
    const std::string_view head(head_);
    // "HTTP/1.x NNN reason"
    if (head.size() < 12 || head.compare(0, 7, "HTTP/1.") != 0 || (head[7] != '0' && head[7] != '1') ||
        head[8] != ' ' || !std::isdigit(static_cast<unsigned char>(head[9])) ||
        !std::isdigit(static_cast<unsigned char>(head[10])) ||
        !std::isdigit(static_cast<unsigned char>(head[11]))) {
      return Bad("the answer is not HTTP/1.x");
    }
    const bool http10 = head[7] == '0';
    const int status = (head[9] - '0') * 100 + (head[10] - '0') * 10 + (head[11] - '0');
    response_.headers.clear();
    response_.content_type.clear();
    if (status >= 100 && status < 200) {
      if (status == 101) return Bad("the server switched protocols");
      return Step::kMore;  // an interim answer: the final one follows
    }
    if (status < 100) return Bad("the answer's status is not valid");
    response_.status = status;
    bool keep_alive = false;
    bool chunked = false;
    bool encoded = false;
    std::optional<uint64_t> length;
    size_t at = head.find("\r\n") + 2;
    while (at < head.size()) {
      const size_t eol = head.find("\r\n", at);
      const std::string_view line = head.substr(at, eol - at);
      at = eol + 2;
      const size_t colon = line.find(':');
      if (colon == std::string_view::npos || colon == 0) continue;
      const std::string_view name = line.substr(0, colon);
      const std::string_view value = text::Trim(line.substr(colon + 1));
      if (text::EqualsIgnoreCase(name, "content-length")) {
        uint64_t v = 0;
        if (value.empty() || value.size() > 18 ||
            !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          return Bad("the answer's Content-Length is not valid");
        }
        for (char c : value) v = v * 10 + static_cast<uint64_t>(c - '0');
        if (length && *length != v) return Bad("the answer has two different Content-Lengths");
        length = v;
      } else if (text::EqualsIgnoreCase(name, "transfer-encoding")) {
        encoded = true;
        const size_t last = value.rfind(',');
        chunked = text::EqualsIgnoreCase(
            text::Trim(last == std::string_view::npos ? value : value.substr(last + 1)), "chunked");
      } else if (text::EqualsIgnoreCase(name, "connection")) {
        if (HasToken(value, "close")) close_ = true;
        if (HasToken(value, "keep-alive")) keep_alive = true;
      } else if (text::EqualsIgnoreCase(name, "content-type")) {
        response_.content_type.assign(value);
      }
      Keep(name, value);
    }
    if (http10 && !keep_alive) close_ = true;
    if (request_.method == "HEAD" || status == 204 || status == 304) {
      state_ = State::kDone;
    } else if (encoded) {
      if (chunked) {
        state_ = State::kChunkSize;
      } else {
        state_ = State::kUntilClose;
        close_ = true;
      }
    } else if (length) {
      if (*length > request_.max_response_bytes) return Step::kTooLarge;
      remaining_ = *length;
      state_ = *length == 0 ? State::kDone : State::kBody;
    } else {
      state_ = State::kUntilClose;
      close_ = true;
    }
    return Step::kMore;
  }

  void Keep(std::string_view name, std::string_view value) {
    const auto& wanted = request_.keep_headers;  // lower case
    const auto match = std::find_if(wanted.begin(), wanted.end(),
                                    [&](const std::string& w) { return text::EqualsIgnoreCase(w, name); });
    if (match == wanted.end() || value.size() > kKeptValueLimit) return;
    auto& kept = response_.headers;
    auto it = std::find_if(kept.begin(), kept.end(), [&](const auto& h) { return h.first == *match; });
    if (it != kept.end()) {
      it->second.assign(value);
    } else {
      kept.emplace_back(*match, std::string(value));
    }
  }

  // A chunk's size line, the CRLF after its data, or a trailer line.
  Step Line(const char* p, size_t n, size_t& used) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', n));
    used = nl == nullptr ? n : static_cast<size_t>(nl - p) + 1;
    line_.append(p, used);
    const size_t limit = state_ == State::kTrailers ? kMaxHead : kMaxChunkLine;
    if (nl == nullptr) {
      if (line_.size() > limit) return Bad("the answer's chunk framing is not valid");
      return Step::kMore;
    }
    if (line_.size() < 2 || line_[line_.size() - 2] != '\r')
      return Bad("the answer's chunk framing is not valid");
    const std::string_view line(line_.data(), line_.size() - 2);
    Step step = Step::kMore;
    if (state_ == State::kChunkEnd) {
      if (!line.empty()) step = Bad("the answer's chunk framing is not valid");
      state_ = State::kChunkSize;
    } else if (state_ == State::kTrailers) {
      trailers_ += line_.size();
      if (trailers_ > kMaxHead) step = Bad("the answer's trailers are longer than 64 KiB");
      if (line.empty()) state_ = State::kDone;
    } else {
      uint64_t size = 0;
      size_t digits = 0;
      for (char c : line) {
        int v = -1;
        if (c >= '0' && c <= '9') v = c - '0';
        if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
        if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
        if (v < 0) break;
        if (++digits > 15) return Bad("the answer's chunk is too large");
        size = size * 16 + static_cast<uint64_t>(v);
      }
      if (digits == 0) {
        step = Bad("the answer's chunk framing is not valid");
      } else if (size == 0) {
        state_ = State::kTrailers;
      } else {
        remaining_ = size;
        state_ = State::kChunkData;
      }
    }
    line_.clear();
    return step;
  }

  const HttpRequest& request_;
  HttpResponse& response_;
  State state_ = State::kHead;
  std::string head_;
  std::string line_;
  uint64_t remaining_ = 0;
  uint64_t received_ = 0;
  size_t trailers_ = 0;
  bool started_ = false;
  bool close_ = false;
  bool extra_ = false;
  std::string why_;
};

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
    std::optional<AnswerReader> reader;
    Connection* connection = nullptr;
    bool queued = false;
    bool retried = false;  // sent again once after a reused connection turned out closed
  };

  enum class Stage { kConnecting, kHandshake, kSending, kReceiving, kIdle };

  struct Connection {
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
  };

  size_t max_connections;
  int epoll = -1;
  int wake = -1;
  SSL_CTX* tls = nullptr;
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
    if (tls != nullptr) SSL_CTX_free(tls);
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
    auto found = idle.find(t->key);
    if (found != idle.end() && !found->second.empty()) {
      Connection* c = found->second.back();
      found->second.pop_back();
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

  SSL_CTX* TlsContext() {
    if (tls != nullptr) return tls;
    tls = SSL_CTX_new(TLS_client_method());
    if (tls == nullptr) return nullptr;
    SSL_CTX_set_min_proto_version(tls, TLS1_2_VERSION);
    // The system's CAs (SSL_CERT_FILE / SSL_CERT_DIR when set).
    SSL_CTX_set_default_verify_paths(tls);
    SSL_CTX_set_verify(tls, SSL_VERIFY_PEER, nullptr);
    SSL_CTX_set_mode(tls, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    // A server that closes without close_notify ends a body read until the close, as over TCP.
    SSL_CTX_set_options(tls, SSL_OP_IGNORE_UNEXPECTED_EOF);
    // Sessions are kept here, by destination (NewSession), not in OpenSSL's cache.
    SSL_CTX_set_session_cache_mode(tls, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_set_app_data(tls, this);
    SSL_CTX_sess_set_new_cb(tls, &Impl::NewSession);
    return tls;
  }

  // A session the server gave a connection (after its handshake; TLS 1.3 sends them later): kept
  // as its destination's, replacing the one before.
  static int NewSession(SSL* ssl, SSL_SESSION* session) {
    auto* self = static_cast<Impl*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
    const auto* c = static_cast<const Connection*>(SSL_get_app_data(ssl));
    if (self == nullptr || c == nullptr) return 0;
    auto [at, fresh] = self->sessions.try_emplace(c->key, session);
    if (!fresh) {
      SSL_SESSION_free(at->second);
      at->second = session;
    }
    return 1;  // the reference is ours
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
    SSL_CTX* ctx = TlsContext();
    c.ssl = ctx != nullptr ? SSL_new(ctx) : nullptr;
    if (c.ssl == nullptr) {
      Fail(c, HttpOutcome::kError, "TLS is not available: " + TlsError("no context"));
      return;
    }
    BIO* bio = SocketBio() != nullptr ? BIO_new(SocketBio()) : nullptr;
    if (bio == nullptr) {
      Fail(c, HttpOutcome::kError, "TLS is not available: " + TlsError("no socket BIO"));
      return;
    }
    BIO_set_data(bio, &c.fd);
    SSL_set_bio(c.ssl, bio, bio);
    SSL_set_app_data(c.ssl, &c);
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
      said = TlsError(why == SSL_ERROR_SYSCALL ? "the connection closed" : "failed");
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
        Fail(c, HttpOutcome::kError, "could not send the request: " + TlsError("the connection closed"));
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
            Fail(c, HttpOutcome::kError, "could not read the answer: " + TlsError("the connection closed"));
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
      const AnswerReader::Step step =
          n == 0 ? t->reader->End() : t->reader->Feed(buf, static_cast<size_t>(n));
      if (step == AnswerReader::Step::kMore) {
        if (c.ssl == nullptr && static_cast<size_t>(n) < sizeof buf) return;  // drained
        continue;
      }
      if (step == AnswerReader::Step::kBad) {
        Fail(c, HttpOutcome::kError, t->reader->why());
        return;
      }
      if (step == AnswerReader::Step::kTooLarge) {
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
        // The server closed it, or said something unasked.
        (void)events;
        Close(c);
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
