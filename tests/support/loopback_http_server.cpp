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

namespace rendezvous::testing {
namespace {

constexpr size_t kMaxHead = 64 * 1024;
constexpr size_t kMaxBody = 8 * 1024 * 1024;
constexpr auto kConnectionBudget = std::chrono::seconds(10);

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 302: return "Found";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

// Reads until `fd` has more data or the deadline passes; false on EOF, error or timeout.
bool ReadSome(int fd, std::string& buf, std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
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
  std::string buf;
  size_t head_end;
  while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
    if (buf.size() > kMaxHead || !ReadSome(fd, buf, deadline)) return;
  }
  PeerRequest req;
  const std::string head = buf.substr(0, head_end);
  size_t line_end = head.find("\r\n");
  const std::string request_line = head.substr(0, line_end);
  const auto sp1 = request_line.find(' ');
  const auto sp2 = request_line.find(' ', sp1 + 1);
  if (sp1 == std::string::npos || sp2 == std::string::npos) return;
  req.method = request_line.substr(0, sp1);
  req.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  req.path = req.target.substr(0, req.target.find('?'));
  size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string::npos) end = head.size();
    const std::string line = head.substr(pos, end - pos);
    const auto colon = line.find(':');
    if (colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      req.headers[Lower(line.substr(0, colon))] = value;
    }
    pos = end + 2;
  }
  size_t length = 0;
  if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
    length = std::stoul(it->second);
    if (length > kMaxBody) return;
  }
  std::string rest = buf.substr(head_end + 4);
  while (rest.size() < length) {
    if (!ReadSome(fd, rest, deadline)) return;
  }
  req.body = rest.substr(0, length);

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
  std::string out = "HTTP/1.1 " + std::to_string(res.status) + " " + Reason(res.status) + "\r\n";
  out += "Content-Type: " + res.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  for (const auto& [k, v] : res.headers) out += k + ": " + v + "\r\n";
  out += "Connection: close\r\n\r\n";
  out += res.body;
  SendAll(fd, out);
}

}  // namespace rendezvous::testing
