// Internal to the HTTP server (http/server.hpp): its state, shared by its lifecycle and the
// reading of requests (server.cpp) and the dispatch of each request to its route (request_dispatch.cpp).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "http/builtin_routes.hpp"
#include "http/connection_manager.hpp"
#include "http/envelope.hpp"
#include "http/incoming_request.hpp"
#include "http/rate_limiter.hpp"
#include "http/response_wire.hpp"
#include "http/route_auth.hpp"
#include "http/router.hpp"
#include "http/server.hpp"
#include "http/tcp_listener.hpp"
#include "http/worker_pool.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::core {
namespace http_server_internal {

inline const char* ListenerName(Listener l) {
  switch (l) {
    case Listener::kApi:
      return "api";
    case Listener::kApp:
      return "app";
    case Listener::kMetrics:
      return "metrics";
  }
  return "api";
}

inline std::string NewRequestId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  uint64_t v = rng();
  std::string id(16, '0');
  for (int i = 15; i >= 0; --i) {
    id[static_cast<size_t>(i)] = kHex[v & 0xF];
    v >>= 4;
  }
  return id;
}

inline Response ErrorResponse(int status, std::string message, const Json& details = nullptr) {
  return Response::Error(status, "", std::move(message), details);
}

inline constexpr const char* kCredentialGroup = "credential";

}  // namespace http_server_internal

class HttpServer::Impl {
 public:
  Impl(ServerOptions options, Logger& logger, prometheus::Registry& registry);
  ~Impl() { Shutdown(std::chrono::milliseconds(0)); }

  void AddRoute(rendezvous::Route route) {
    if (started_) throw std::logic_error("HttpServer::AddRoute after Start: " + route.pattern);
    if (route.per_address.per_minute != 0) AddRateLimitGroup(route.per_address, route.pattern);
    router_.Add(std::move(route));
  }
  void Start();
  void Shutdown(std::chrono::milliseconds grace);

  BearerAuthenticator bearer_;
  DpopAuthenticator dpop_;
  SessionChecker session_;
  std::function<bool()> readiness_;
  uint16_t api_port_ = 0;
  uint16_t app_port_ = 0;
  uint16_t metrics_port_ = 0;

 private:
  // One request on its way: built where its bytes were framed, finished on whichever thread runs
  // it. Counts as active from creation to destruction (a dropped task included).
  struct Exchange {
    Exchange(Impl& impl, std::shared_ptr<Connection> connection, uint64_t seq)
        : impl(impl), connection(std::move(connection)), seq(seq), listener(this->connection->listener()) {
      impl.EnterActive(listener);
    }
    ~Exchange() { impl.LeaveActive(listener); }
    Impl& impl;
    std::shared_ptr<Connection> connection;
    uint64_t seq;
    Listener listener;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    Request request;
    const rendezvous::Route* route = nullptr;
    std::string route_label = "unmatched";
    std::string method_label = "_OTHER";
    std::string raw_path;
    std::string raw_target;  // raw path and query, for the login redirect's next=
    bool head = false;
    bool keep_alive = true;
    bool finished = false;
    // The rate limit that applies to this request (its X-RateLimit-* headers), once taken.
    std::optional<RateLimiter::Decision> rate_limit;
  };
  using ExchangePtr = std::shared_ptr<Exchange>;

  void OnItem(const std::shared_ptr<Connection>& connection, Connection::Item item);
  void Dispatch(const ExchangePtr& ex, ParsedRequest& parsed);
  void Execute(Exchange& ex);
  Response RunHandler(Exchange& ex);
  // A token bucket table and its refusals counter.
  struct Limited {
    std::unique_ptr<RateLimiter> limiter;
    prometheus::Counter* refused = nullptr;
  };
  void AddRateLimitGroup(const RateLimit& limit, const std::string& pattern);
  // nullopt: go on (ex.rate_limit is set); else the 429 to answer.
  std::optional<Response> TakeToken(Exchange& ex, Limited& limited, std::string_view key);
  bool AcquireOutbound(const std::string& key);
  void ReleaseOutbound(const std::string& key);
  void Finish(Exchange& ex, Response response);
  void EnterActive(Listener l);
  void LeaveActive(Listener l);
  void Reject(const char* reason) { rejected_->Add({{"reason", reason}}).Increment(); }
  void UpdateGauges();
  // The four pools, for what is done to each alike (stop, drain, the queue-depth gauge).
  std::array<WorkerPool*, 4> Pools() const {
    return {api_pool_.get(), app_pool_.get(), outbound_pool_.get(), public_pool_.get()};
  }

  ServerOptions options_;
  Logger& logger_;
  prometheus::Registry& registry_;
  Router router_;

  prometheus::Family<prometheus::Histogram>* duration_;
  prometheus::Family<prometheus::Counter>* rejected_;
  prometheus::Family<prometheus::Counter>* rate_limited_;
  std::map<std::string, Limited, std::less<>> address_limits_;  // by group; filled before Start
  Limited credential_limit_;  // limiter null without server.rate_limit.per_credential
  prometheus::Gauge* queue_depth_;
  prometheus::Gauge* active_[3];
  prometheus::Gauge* connections_[3];
  prometheus::Gauge* buffered_bytes_;

  std::mutex lifecycle_mu_;
  bool started_ = false;
  bool stopped_ = false;
  std::atomic<bool> draining_{false};

  std::mutex active_mu_;
  std::condition_variable active_cv_;
  int active_count_ = 0;

  std::mutex outbound_mu_;
  std::unordered_map<std::string, int> outbound_in_use_;

  ConnectionContext context_;
  ConnectionManager manager_;
  std::unique_ptr<TcpListener> api_;
  std::unique_ptr<TcpListener> app_;
  std::unique_ptr<TcpListener> metrics_;  // only with options_.metrics_listen
  std::unique_ptr<WorkerPool> api_pool_;
  std::unique_ptr<WorkerPool> app_pool_;
  std::unique_ptr<WorkerPool> outbound_pool_;
  std::unique_ptr<WorkerPool> public_pool_;
};

}  // namespace rendezvous::core
