// The HTTP layer every route of the server goes through (DESIGN §4): two listeners (api, app), our
// own router, auth checks, the API version header, envelopes, limits, worker pools for handlers
// that may block, request ids, the access log, HTTP metrics, /healthz, /readyz, /metrics.
//
// Design. Pistache provides the TCP level only: accepting, the epoll reactor threads (io_threads
// per listener) and reading sockets (tcp_listener.hpp). HTTP/1.1 framing is ours (RFC 9112,
// request_parser.hpp), because Pistache 0.0.5's HTTP layer answers only the first of pipelined
// requests and reads the rest of an oversized body as new requests. Each connection
// (connection.hpp) frames its requests, numbers them, and writes their answers in that order
// whichever thread finishes first; a refused request (malformed, too large, too slow) is answered
// in the JSON envelope and the connection is closed without reading another byte as a request.
// Responses are written straight to the socket; a socket that is full is finished by the
// connection manager's thread, which also enforces the idle/header/body deadlines
// (connection_manager.hpp).
//
// Threads and isolation: the reactor threads frame requests, route them and run inline handlers.
// Other routes (auth included: bearer resolution is database work) run on a bounded pool: one for
// the api listener (worker_threads), one for the app listener (app_worker_threads), so neither can
// starve the other, one for routes that call hosts outside (outbound_threads, with at most
// outbound_per_user requests of one caller at once), and one for anonymous routes (those that need
// no credential and are limited per client address, Route::per_address: the public booking flow;
// public_worker_threads, whose threads run at a CPU priority lowered by public_worker_nice), so a
// flood of anonymous requests holds only those threads and the CPU the others leave, and
// credentialed API calls never queue behind it. A full queue answers 503 at once.
//
// Bounds under abuse: connections per listener and per client address (beyond: 503 and close),
// request bytes buffered across all connections (max_buffered_bytes; beyond: 503 and close), at
// most 16 pipelined requests in flight per connection. Memory for requests is therefore at most
// max_buffered_bytes plus a few KiB per open connection.
//
// Lifecycle: construct, AddRoute/Set* (single-threaded, before Start), Start, Shutdown. The
// callbacks given to Set* are called from worker threads concurrently and must be thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/client_address.hpp"
#include "rendezvous/http.hpp"
#include "rendezvous/log.hpp"

namespace prometheus {
class Registry;
}

namespace rendezvous::core {

struct ServerOptions {
  std::string api_listen = "127.0.0.1:8080";  // "host:port"; port 0 = the OS picks (see api_port())
  std::string app_listen = "127.0.0.1:8081";
  int io_threads = 2;             // reactor threads per listener
  int worker_threads = 8;         // the api listener's handlers
  int app_worker_threads = 4;     // the app listener's handlers (pages): a pool of their own
  int outbound_threads = 16;      // routes marked outbound (Route::outbound)
  int outbound_per_user = 4;      // outbound requests of one caller at once; more answer 429
  int public_worker_threads = 4;  // anonymous routes (no credential, per_address): a pool of their own
  int public_worker_nice = 10;    // how much lower their threads' CPU priority is (0-19)
  size_t worker_queue_limit = 4096;  // requests waiting for a worker, per pool; beyond it 503
  size_t max_connections = 10000;        // per listener; more are answered 503 and closed
  size_t max_connections_per_ip = 1024;  // per listener and client address
  size_t max_buffered_bytes = 128u << 20;  // request bytes held across all connections; over it 503
  std::chrono::seconds idle_timeout{60};    // idle keep-alive connection closed after this
  std::chrono::seconds header_timeout{10};  // a request's headers must arrive within this
  std::chrono::seconds body_timeout{30};
  size_t max_body_bytes = 1048576;  // larger bodies answer 413
  std::string version_header = "service-api-version";
  // Supported API versions (dates). A /v2 request without the header gets the LAST one (the
  // newest); a value not listed answers 400.
  std::vector<std::string> api_versions = {"2024-04-15", "2024-06-11", "2024-06-14", "2024-08-13", "2024-09-04"};
  std::string metrics_path = "/metrics";
  // A listener of its own for the metrics path ("host:port"); "" serves it on the api listener.
  std::string metrics_listen;
  // Peers whose X-Forwarded-For names the client (Request::remote_ip); empty = the TCP peer is
  // the client. Connection limits (max_connections_per_ip) always count TCP peers.
  TrustedProxies trusted_proxies;
  // Requests a minute per credential (API key or token) on routes that need one, burst the same;
  // 0 = no limit. Routes may also limit per client address (Route::per_address).
  long rate_limit_per_credential = 0;
  // {base_url} and {app_url}, written into the API description served at /v2/openapi.json.
  std::string base_url;
  std::string app_url;
};

class HttpServer {
 public:
  // logger and registry must outlive the server. The server registers its metrics on registry
  // (http_server_request_duration_seconds, http_server_active_requests,
  // http_server_rejected_requests_total, http_server_worker_queue_depth, http_rate_limited_total
  // by rate-limit group, "credential" for the per-credential limit) and serves registry's
  // Collect() at options.metrics_path.
  HttpServer(ServerOptions options, Logger& logger, prometheus::Registry& registry);
  ~HttpServer();  // Shutdown(0) when still running
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Before Start. Throws std::logic_error for a duplicate method + pattern + listener, a bad
  // pattern, or a rate-limit group given other numbers than before (or a bad limit). The built-in routes (/healthz, /readyz, metrics path) are added by the constructor.
  void AddRoute(Route route);

  // Resolves `Authorization: Bearer <token>` for routes with auth.bearer_required; nullopt -> 401.
  // May throw DatabaseUnavailable -> 503. Runs on a worker thread.
  void SetBearerAuthenticator(std::function<std::optional<Principal>(std::string_view)> fn);
  // Resolves a token sent as `Authorization: DPoP` with its proof (route_auth.hpp): the token, the
  // proof, the method and the request's raw path. Without one, DPoP-bound tokens are refused.
  void SetDpopAuthenticator(
      std::function<DpopResolution(std::string_view, std::string_view, std::string_view, std::string_view)>
          fn);
  // For routes with auth.session_required (app pages): false -> 302 to /auth/login?next=<path+query>.
  // Without a checker every such request redirects.
  void SetSessionChecker(std::function<bool(const Request&)> fn);
  // /readyz: 200 {"status":"ok"} when fn returns true (or no check is set), else 503.
  void SetReadinessCheck(std::function<bool()> fn);

  // Binds both listeners (throws std::runtime_error naming the address on failure) and serves on
  // background threads. Returns once both accept connections.
  void Start();
  uint16_t api_port() const;  // the bound port (after Start)
  uint16_t app_port() const;
  uint16_t metrics_port() const;  // 0 without metrics_listen

  // Stops taking requests (new ones answer 503 with Connection: close), lets queued and in-flight
  // requests finish within grace, then closes the listeners and stops the workers. Idempotent;
  // safe with requests in flight. A handler still blocked after grace delays the return until it
  // ends (its answer is then dropped).
  void Shutdown(std::chrono::milliseconds grace);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rendezvous::core
