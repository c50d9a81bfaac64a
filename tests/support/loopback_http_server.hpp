// A real HTTP/1.1 peer on 127.0.0.1 (port chosen by the kernel) for integration tests: a fake
// Google, a webhook receiver, an SMS gateway. One thread accepts connections one at a time;
// each request (read by http_framing.hpp: a Content-Length or chunked body) is handed to the
// handler and answered with `Connection: close`; one that cannot be framed is answered 400 with
// the reason. Every request is recorded. Bounded: request heads of 64 KiB, bodies of 8 MiB, 10 s
// per connection.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rendezvous::testing {

struct PeerRequest {
  std::string method;
  std::string target;                         // path and query as sent
  std::string path;                           // without the query
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  std::string Header(const std::string& lower_name) const;
  // Decoded query parameter ("" when absent).
  std::string Query(const std::string& name) const;
};

struct PeerResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::milliseconds delay{0};  // wait before answering (timeout tests)
};

using PeerHandler = std::function<PeerResponse(const PeerRequest&)>;

class LoopbackHttpServer {
 public:
  explicit LoopbackHttpServer(PeerHandler handler);
  ~LoopbackHttpServer();
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Requests received so far.
  std::vector<PeerRequest> Requests() const;
  // Waits (bounded) until at least `count` requests arrived; returns whether they did.
  bool AwaitRequests(size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;
  void SetHandler(PeerHandler handler);

 private:
  void Loop();
  void Serve(int fd);

  int listen_fd_ = -1;
  int port_ = 0;
  bool stopping_ = false;
  PeerHandler handler_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<PeerRequest> requests_;
  std::thread thread_;
};

// URL-decodes a query component (`+` is a space).
std::string UrlDecode(const std::string& s);
// Query parameter `name` of a URL or request target, decoded ("" when absent).
std::string QueryParameter(const std::string& target, const std::string& name);

}  // namespace rendezvous::testing
