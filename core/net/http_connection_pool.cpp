#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <openssl/err.h>

#include "http_multi_impl.hpp"

namespace rendezvous::net {

HttpMulti::Impl::Impl(size_t max) : max_connections(std::max<size_t>(1, max)) {
  epoll = epoll_create1(EPOLL_CLOEXEC);
  wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll >= 0 && wake >= 0) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr;
    epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &ev);
  }
}

HttpMulti::Impl::~Impl() {
  for (auto& c : connections) Release(*c);
  for (auto& [key, session] : sessions) SSL_SESSION_free(session);
  if (wake >= 0) ::close(wake);
  if (epoll >= 0) ::close(epoll);
}

void HttpMulti::Impl::Finish(Transfer* t, HttpOutcome outcome, std::string error) {
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

void HttpMulti::Impl::Assign(Transfer* t, bool first_in_line) {
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
      if (!c->dead && c->stage == Stage::kIdle && (oldest == nullptr || c->idle_since < oldest->idle_since)) {
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

bool HttpMulti::Impl::Quiet(Connection& c) {
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

void HttpMulti::Impl::FollowTrust(uint64_t generation) {
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

void HttpMulti::Impl::Open(Transfer* t) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(t->port);
  if (getaddrinfo(t->address.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) {
    Finish(t, HttpOutcome::kConnectFailed, "could not connect to " + t->address + ": not a numeric address");
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

std::string HttpMulti::Impl::ConnectError(const Transfer& t, int error) {
  return "could not connect to " + t.host + " port " + std::to_string(t.port) + ": " + SystemError(error);
}

void HttpMulti::Impl::Release(Connection& c, bool clean) {
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

void HttpMulti::Impl::Close(Connection& c, bool clean) {
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

void HttpMulti::Impl::Fail(Connection& c, HttpOutcome outcome, std::string error) {
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

void HttpMulti::Impl::FreeClosed() {
  if (closed.empty()) return;
  connections.erase(
      std::remove_if(connections.begin(), connections.end(), [](const auto& c) { return c->dead; }),
      connections.end());
  closed.clear();
}

void HttpMulti::Impl::Sweep() {
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

int HttpMulti::Impl::WaitMs(std::chrono::milliseconds wait) const {
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

}  // namespace rendezvous::net
