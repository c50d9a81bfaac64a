// A raw-socket HTTP/1.1 client for tests (so tests see exactly what goes
// over the wire, connection reuse included) and a logger that keeps what it is given.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_framing.hpp"
#include "rendezvous/http.hpp"
#include "rendezvous/log.hpp"

namespace rdv_test {

using Clock = std::chrono::steady_clock;
using rendezvous::testing::HttpKind;
using rendezvous::testing::HttpLimits;
using rendezvous::testing::HttpMessage;
using rendezvous::testing::HttpReader;

struct Reply {
  int status = 0;
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string body;

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
  size_t Count(const std::string& lower_name) const { return headers.count(lower_name); }
  nlohmann::json Json() const { return nlohmann::json::parse(body, nullptr, false); }
};

// One TCP connection to 127.0.0.1:port. Every wait is bounded by a deadline.
class Conn {
 public:
  explicit Conn(uint16_t port, bool connect_now = true) : port_(port) {
    if (connect_now) Connect();
  }
  ~Conn() { Close(); }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  Conn(Conn&& o) noexcept
      : port_(o.port_), fd_(o.fd_), buf_(std::move(o.buf_)), reader_(std::move(o.reader_)), ended_(o.ended_) {
    o.fd_ = -1;
  }

  bool Connect() {
    Close();
    buf_.clear();
    reader_ = HttpReader(HttpKind::kResponse, kLimits);
    ended_ = false;
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return false;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port_);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      Close();
      return false;
    }
    return true;
  }
  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  bool Send(const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads one response (framed by tests/support/http_framing: a Content-Length, chunked or
  // close-delimited body; none for a HEAD request, a 1xx, 204 or 304). nullopt on a malformed
  // answer, on EOF or an error before it is whole, or at the deadline.
  std::optional<Reply> Read(bool head_request = false,
                            std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto deadline = Clock::now() + timeout;
    if (head_request) reader_.AnswerToHead();
    for (;;) {
      HttpReader::Result r = reader_.Read(buf_);
      if (r == HttpReader::Result::kNeedMore) {
        const Got got = Fill(deadline);
        if (got == Got::kTimeout) return std::nullopt;
        if (got == Got::kEnd) r = reader_.End();
      }
      if (r == HttpReader::Result::kError) return std::nullopt;
      if (r == HttpReader::Result::kMessage) {
        HttpMessage m = reader_.Take();
        Reply reply;
        reply.status = m.status;
        for (auto& [name, value] : m.headers) reply.headers.emplace(std::move(name), std::move(value));
        reply.body = std::move(m.body);
        return reply;
      }
    }
  }

  // True when the peer closes the connection (EOF or reset) before the deadline.
  bool AwaitClose(std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      int r = ::poll(&p, 1, static_cast<int>(std::max<long>(left, 1)));
      if (r < 0) return false;
      if (r == 0) continue;
      char tmp[4096];
      ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
      if (n <= 0) {
        ended_ = true;
        return true;
      }
      buf_.append(tmp, static_cast<size_t>(n));
    }
    return false;
  }

 private:
  enum class Got { kMore, kEnd, kTimeout };
  // Appends what the socket has; kEnd on EOF or an error (then and ever after).
  Got Fill(Clock::time_point deadline) {
    if (ended_) return Got::kEnd;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Got::kTimeout;
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready == 0) return Got::kTimeout;
    if (ready < 0) return Got::kEnd;
    char tmp[16384];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
      ended_ = true;
      return Got::kEnd;
    }
    buf_.append(tmp, static_cast<size_t>(n));
    return Got::kMore;
  }

  uint16_t port_;
  int fd_ = -1;
  std::string buf_;  // received, not framed yet
  // Answers as large as the tests ask for, bounded all the same.
  static constexpr HttpLimits kLimits{64 * 1024, 64 * 1024 * 1024};
  HttpReader reader_{HttpKind::kResponse, kLimits};
  bool ended_ = false;  // the peer closed (or the socket failed)
};

// Builds a request (Host: 127.0.0.1, Content-Length when there is a body): HttpRequestText.
inline std::string RequestText(const std::string& method, const std::string& target,
                               const std::vector<std::string>& headers = {}, const std::string& body = "") {
  return rendezvous::testing::HttpRequestText(method, target, headers, body);
}

// One request on a fresh connection.
inline std::optional<Reply> Fetch(uint16_t port, const std::string& method, const std::string& target,
                                  const std::vector<std::string>& headers = {}, const std::string& body = "") {
  Conn c(port);
  if (!c.ok() || !c.Send(RequestText(method, target, headers, body))) return std::nullopt;
  return c.Read(method == "HEAD");
}

// The status of a reply, 0 when none came: EXPECT_EQ(StatusOf(Fetch(...)), 200).
inline int StatusOf(const std::optional<Reply>& reply) {
  return reply ? reply->status : 0;
}

// A route as the tests write it: handler before auth, the api listener unless told.
inline rendezvous::Route MakeRoute(rendezvous::Method method, std::string pattern, rendezvous::Handler handler,
                                   rendezvous::RouteAuth auth = rendezvous::RouteAuth::Public(),
                                   rendezvous::Listener listener = rendezvous::Listener::kApi) {
  return listener == rendezvous::Listener::kApp
             ? rendezvous::Route::Page(method, std::move(pattern), std::move(auth), std::move(handler))
             : rendezvous::Route::Api(method, std::move(pattern), std::move(auth), std::move(handler));
}

// A gate a handler waits on until the test opens it (bounded, so a failing test cannot hang).
class Gate {
 public:
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool Wait(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, limit, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Keeps every log line; thread-safe.
class MemoryLogger final : public rendezvous::Logger {
 public:
  void Log(rendezvous::LogLevel level, std::string_view message, const nlohmann::json& fields) override {
    nlohmann::json line = fields.is_object() ? fields : nlohmann::json::object();
    line["msg"] = message;
    line["level"] = static_cast<int>(level);
    std::lock_guard lock(mu_);
    lines_.push_back(std::move(line));
  }
  bool Enabled(rendezvous::LogLevel) const override { return true; }

  std::vector<nlohmann::json> Lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }
  std::string All() const {
    std::string out;
    for (const auto& l : Lines()) out += l.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<nlohmann::json> lines_;
};

}  // namespace rdv_test
