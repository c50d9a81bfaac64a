// net::HttpMulti: HTTP/1.1 over kept-alive connections on one epoll loop, OpenSSL for https. A
// request costs it about a quarter of what it costs through libcurl (bench/http_client_bench.cpp),
// so every HTTP request of the server goes through it (net::Perform drives one of its own per
// thread: outbound.cpp). Answers are read by ResponseReader (response_reader.hpp), the TLS trust
// is the process's one (tls_trust.hpp). This file is its event loop: each connection driven through
// connect, TLS handshake, send and receive, and the client's public calls; the connection pool is
// http_connection_pool.cpp, TLS setup http_tls.cpp.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <unordered_map>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "http_multi_impl.hpp"
#include "http_tls.hpp"
#include "rendezvous/address_policy.hpp"
#include "rendezvous/outbound.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::net {

void HttpMulti::Impl::Interest(Connection& c, uint32_t events) {
  if (c.interest == events) return;
  c.interest = events;
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = &c;
  epoll_ctl(epoll, EPOLL_CTL_MOD, c.fd, &ev);
}

void HttpMulti::Impl::Connected(Connection& c) {
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
  const auto kept = sessions.find(c.key);
  c.ssl = NewTlsClient(ctx, &c.fd, t->host, kept != sessions.end() ? kept->second : nullptr, &c, why);
  if (c.ssl == nullptr) {
    Fail(c, HttpOutcome::kError, why);
    return;
  }
  c.stage = Stage::kHandshake;
  Handshake(c);
}

void HttpMulti::Impl::Handshake(Connection& c) {
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
  const std::string said = HandshakeFailure(c.ssl, why);
  const std::string host = c.transfer != nullptr ? c.transfer->host : "";
  if (auto kept = sessions.find(c.key); kept != sessions.end()) {  // its next connection starts afresh
    SSL_SESSION_free(kept->second);
    sessions.erase(kept);
  }
  Fail(c, HttpOutcome::kError, "TLS handshake with " + host + " failed: " + said);
}

void HttpMulti::Impl::Send(Connection& c, Transfer* t) {
  c.transfer = t;
  t->connection = &c;
  c.stage = Stage::kSending;
  c.sent = 0;
  t->reader.emplace(t->request, t->response);
  Flush(c);
}

void HttpMulti::Impl::Flush(Connection& c) {
  const std::string& wire = c.transfer->wire;
  while (c.sent < wire.size()) {
    const size_t left = wire.size() - c.sent;
    if (c.ssl != nullptr) {
      ERR_clear_error();
      const int n = SSL_write(c.ssl, wire.data() + c.sent, static_cast<int>(std::min<size_t>(left, 1 << 30)));
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

void HttpMulti::Impl::Receive(Connection& c) {
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

void HttpMulti::Impl::Handle(Connection& c, uint32_t events) {
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
