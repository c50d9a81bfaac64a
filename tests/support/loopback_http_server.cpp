#include "loopback_http_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <stdexcept>

#include "free_port.hpp"
#include "http_framing.hpp"

namespace rendezvous::testing {
namespace {

constexpr size_t kMaxHead = 64 * 1024;
constexpr size_t kMaxBody = 8 * 1024 * 1024;
constexpr auto kConnectionBudget = std::chrono::seconds(10);

// Reads until `fd` has more data or the deadline passes; false on EOF, error or timeout.
bool ReadSome(int fd, std::string& buf, std::chrono::steady_clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
  char chunk[16384];
  const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
  if (n <= 0) return false;
  buf.append(chunk, static_cast<size_t>(n));
  return true;
}

void SendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

}  // namespace

std::string UrlDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string PeerRequest::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

std::string PeerRequest::Query(const std::string& name) const {
  return QueryParameter(target, name);
}

std::string QueryParameter(const std::string& target, const std::string& name) {
  const auto q = target.find('?');
  if (q == std::string::npos) return "";
  const std::string query = target.substr(q + 1);
  size_t start = 0;
  while (start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    const std::string pair = query.substr(start, end - start);
    const auto eq = pair.find('=');
    if (UrlDecode(pair.substr(0, eq)) == name) return eq == std::string::npos ? "" : UrlDecode(pair.substr(eq + 1));
    start = end + 1;
  }
  return "";
}

LoopbackHttpServer::LoopbackHttpServer(PeerHandler handler) : handler_(std::move(handler)) {
  listen_fd_ = ListenOnLoopback(&port_);
  if (listen_fd_ < 0) throw std::runtime_error("bind/listen failed");
  thread_ = std::thread([this] { Loop(); });
}

LoopbackHttpServer::~LoopbackHttpServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  ::shutdown(listen_fd_, SHUT_RDWR);
  thread_.join();
  ::close(listen_fd_);
}

void LoopbackHttpServer::SetHandler(PeerHandler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  handler_ = std::move(handler);
}

std::vector<PeerRequest> LoopbackHttpServer::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

bool LoopbackHttpServer::AwaitRequests(size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return requests_.size() >= count; });
}

void LoopbackHttpServer::Loop() {
  for (;;) {
    pollfd p{listen_fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    if (ready <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    Serve(fd);
    ::close(fd);
  }
}

void LoopbackHttpServer::Serve(int fd) {
  const auto deadline = std::chrono::steady_clock::now() + kConnectionBudget;
  HttpReader reader(HttpKind::kRequest, HttpLimits{kMaxHead, kMaxBody});
  std::string buf;
  HttpReader::Result read;
  while ((read = reader.Read(buf)) == HttpReader::Result::kNeedMore) {
    if (!ReadSome(fd, buf, deadline)) return;
  }
  if (read == HttpReader::Result::kError) {
    SendAll(fd, HttpResponseText(400, {"Content-Type: text/plain", "Connection: close"}, reader.reason()));
    return;
  }
  HttpMessage message = reader.Take();
  PeerRequest req;
  req.method = std::move(message.method);
  req.target = std::move(message.target);
  req.path = req.target.substr(0, req.target.find('?'));
  for (auto& [name, value] : message.headers) req.headers[name] = std::move(value);
  req.body = std::move(message.body);

  PeerHandler handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    handler = handler_;
  }
  PeerResponse res = handler ? handler(req) : PeerResponse{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(req);
  }
  cv_.notify_all();
  if (res.delay.count() > 0) {
    // Answer late, but give up early when the client hangs up (its timeout fired).
    const auto until = std::chrono::steady_clock::now() + res.delay;
    while (std::chrono::steady_clock::now() < until) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0) {
        char c;
        if (::recv(fd, &c, 1, MSG_PEEK) <= 0) return;
      }
    }
  }
  std::vector<std::string> lines = {"Content-Type: " + res.content_type};
  for (const auto& [k, v] : res.headers) lines.push_back(k + ": " + v);
  lines.emplace_back("Connection: close");
  const std::string out = HttpResponseText(res.status, lines, res.body);
  SendAll(fd, out);
}

}  // namespace rendezvous::testing
