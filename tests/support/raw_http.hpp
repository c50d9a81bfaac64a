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

#include "rendezvous/http.hpp"
#include "rendezvous/log.hpp"

namespace rdv_test {

using Clock = std::chrono::steady_clock;

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
  Conn(Conn&& o) noexcept : port_(o.port_), fd_(o.fd_), buf_(std::move(o.buf_)) { o.fd_ = -1; }

  bool Connect() {
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

  // Reads one response (Content-Length framed). nullopt on EOF, error or deadline.
  std::optional<Reply> Read(bool head_request = false, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto deadline = Clock::now() + timeout;
    size_t header_end;
    while ((header_end = buf_.find("\r\n\r\n")) == std::string::npos)
      if (!Fill(deadline)) return std::nullopt;
    Reply reply;
    std::string head = buf_.substr(0, header_end);
    size_t line_end = head.find("\r\n");
    std::string status_line = head.substr(0, line_end);
    if (status_line.size() < 12) return std::nullopt;
    reply.status = std::atoi(status_line.c_str() + 9);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t end = head.find("\r\n", pos);
      if (end == std::string::npos) end = head.size();
      std::string line = head.substr(pos, end - pos);
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        size_t v = colon + 1;
        while (v < line.size() && line[v] == ' ') ++v;
        reply.headers.emplace(name, line.substr(v));
      }
      pos = end + 2;
    }
    size_t length = 0;
    if (auto it = reply.headers.find("content-length"); it != reply.headers.end() && !head_request)
      length = std::stoul(it->second);
    buf_.erase(0, header_end + 4);
    while (buf_.size() < length)
      if (!Fill(deadline)) return std::nullopt;
    reply.body = buf_.substr(0, length);
    buf_.erase(0, length);
    return reply;
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
      if (n <= 0) return true;
      buf_.append(tmp, static_cast<size_t>(n));
    }
    return false;
  }

 private:
  bool Fill(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char tmp[16384];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }

  uint16_t port_;
  int fd_ = -1;
  std::string buf_;
};

// Builds a request. Content-Length is added when there is a body.
inline std::string RequestText(const std::string& method, const std::string& target,
                               const std::vector<std::string>& headers = {}, const std::string& body = "") {
  std::string out = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& h : headers) out += h + "\r\n";
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH")
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += "\r\n" + body;
  return out;
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
