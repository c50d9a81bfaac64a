#include "http/server.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
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
#include "http/tcp_listener.hpp"
#include "http/worker_pool.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::core {
namespace {

// Request line and fields: 8 KiB for the line, 16 KiB in all.
constexpr size_t kMaxLineBytes = 8 * 1024;
constexpr size_t kMaxHeadBytes = 16 * 1024;
constexpr size_t kMaxRequestIdBytes = 64;

const prometheus::Histogram::BucketBoundaries kDurationBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

const char* ListenerName(Listener l) {
  switch (l) {
    case Listener::kApi: return "api";
    case Listener::kApp: return "app";
    case Listener::kMetrics: return "metrics";
  }
  return "api";
}

constexpr Listener kListeners[] = {Listener::kApi, Listener::kApp, Listener::kMetrics};

bool IsValidRequestId(std::string_view id) {
  if (id.empty() || id.size() > kMaxRequestIdBytes) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

std::string NewRequestId() {
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

std::string JoinMethods(const std::vector<Method>& methods) {
  std::string out;
  for (Method m : methods) {
    if (!out.empty()) out += ", ";
    out += MethodName(m);
  }
  return out;
}

Response ErrorResponse(int status, std::string message, const Json& details = nullptr) {
  return Response::Error(status, "", std::move(message), details);
}

// Every answer of the app listener carries the pages' security headers (AddPageHeaders), whatever
// answered it: a page, a redirect, a form's JSON, the router's 404 and 405, a refusal before any
// route ran, an error. A handler's own value of one of them is kept.
void AddAppSecurityHeaders(Response& response) {
  static constexpr std::pair<const char*, const char*> kHeaders[] = {
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Content-Security-Policy", "frame-ancestors 'none'"},
      {"Referrer-Policy", "no-referrer"},
      {"Cache-Control", "no-store"},
  };
  for (const auto& wanted : kHeaders) {
    const bool present =
        std::any_of(response.headers.begin(), response.headers.end(),
                    [&](const auto& header) { return text::EqualsIgnoreCase(header.first, wanted.first); });
    if (!present) response.headers.emplace_back(wanted.first, wanted.second);
  }
}

constexpr const char* kCredentialGroup = "credential";

// Anonymous traffic, for the public pool: routes that need no credential and are limited per
// client address (they name a group, whether or not its limit is on): the public booking flow.
bool IsAnonymous(const rendezvous::Route& route) {
  return !route.auth.bearer_required && !route.auth.session_required && !route.per_address.group.empty();
}

std::string CredentialKey(const Principal& principal) {
  std::string key(1 + sizeof principal.credential_id, static_cast<char>(principal.kind));
  for (size_t i = 0; i < sizeof principal.credential_id; ++i)
    key[1 + i] = static_cast<char>(static_cast<uint64_t>(principal.credential_id) >> (8 * i));
  return key;
}

}  // namespace

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

HttpServer::Impl::Impl(ServerOptions options, Logger& logger, prometheus::Registry& registry)
    : options_(std::move(options)),
      logger_(logger),
      registry_(registry),
      manager_(context_, [this](const std::shared_ptr<Connection>& c, Connection::Item item) { OnItem(c, std::move(item)); },
               logger) {
  context_.parser.max_line_bytes = kMaxLineBytes;
  context_.parser.max_head_bytes = kMaxHeadBytes;
  context_.parser.max_body_bytes = options_.max_body_bytes;
  context_.idle_timeout = options_.idle_timeout;
  context_.header_timeout = options_.header_timeout;
  context_.body_timeout = options_.body_timeout;
  context_.buffer_budget = options_.max_buffered_bytes;

  duration_ = &prometheus::BuildHistogram()
                   .Name("http_server_request_duration_seconds")
                   .Help("Duration of HTTP server requests, by method, route template, status code and listener.")
                   .Register(registry_);
  auto& active = prometheus::BuildGauge()
                     .Name("http_server_active_requests")
                     .Help("HTTP requests being processed (queued or running), by listener.")
                     .Register(registry_);
  auto& connections = prometheus::BuildGauge()
                          .Name("http_server_open_connections")
                          .Help("Open client connections, by listener.")
                          .Register(registry_);
  rejected_ = &prometheus::BuildCounter()
                   .Name("http_server_rejected_requests_total")
                   .Help("HTTP requests and connections refused before reaching a handler, by reason.")
                   .Register(registry_);
  rate_limited_ = &prometheus::BuildCounter()
                       .Name("http_rate_limited_total")
                       .Help("Requests refused by a rate limit (429 rate_limited), by route group; "
                             "\"credential\" for the per-credential limit.")
                       .Register(registry_);
  if (options_.rate_limit_per_credential > 0) {
    credential_limit_.limiter =
        std::make_unique<RateLimiter>(options_.rate_limit_per_credential, options_.rate_limit_per_credential);
    credential_limit_.refused = &rate_limited_->Add({{"group", kCredentialGroup}});
  }
  queue_depth_ = &prometheus::BuildGauge()
                      .Name("http_server_worker_queue_depth")
                      .Help("HTTP requests waiting for a worker thread.")
                      .Register(registry_)
                      .Add({});
  buffered_bytes_ = &prometheus::BuildGauge()
                         .Name("http_server_buffered_request_bytes")
                         .Help("Request bytes held in memory across all connections (bounded by max_buffered_bytes).")
                         .Register(registry_)
                         .Add({});
  for (Listener l : kListeners) {
    active_[static_cast<int>(l)] = &active.Add({{"listener", ListenerName(l)}});
    connections_[static_cast<int>(l)] = &connections.Add({{"listener", ListenerName(l)}});
  }
  for (const char* reason : {"queue_full", "too_large", "shutting_down", "malformed", "timeout", "connection_limit",
                             "buffer_budget", "outbound_limit"})
    rejected_->Add({{"reason", reason}});

  AddBuiltinRoutes(router_, options_.metrics_path,
                   options_.metrics_listen.empty() ? Listener::kApi : Listener::kMetrics, registry_,
                   readiness_, logger_, {options_.base_url, options_.app_url});
}

void HttpServer::Impl::Start() {
  std::lock_guard lock(lifecycle_mu_);
  if (started_) throw std::logic_error("HttpServer::Start called twice");
  api_pool_ = std::make_unique<WorkerPool>(options_.worker_threads, options_.worker_queue_limit);
  app_pool_ = std::make_unique<WorkerPool>(options_.app_worker_threads, options_.worker_queue_limit);
  outbound_pool_ = std::make_unique<WorkerPool>(options_.outbound_threads, options_.worker_queue_limit);
  public_pool_ = std::make_unique<WorkerPool>(options_.public_worker_threads, options_.worker_queue_limit,
                                              options_.public_worker_nice);
  manager_.Start([this] { UpdateGauges(); });
  ListenerLimits limits{options_.max_connections, options_.max_connections_per_ip};
  try {
    api_ = std::make_unique<TcpListener>(Listener::kApi, options_.api_listen, options_.io_threads, limits, manager_);
    api_->Start();
    api_port_ = api_->port();
    app_ = std::make_unique<TcpListener>(Listener::kApp, options_.app_listen, options_.io_threads, limits, manager_);
    app_->Start();
    app_port_ = app_->port();
    if (!options_.metrics_listen.empty()) {
      metrics_ = std::make_unique<TcpListener>(Listener::kMetrics, options_.metrics_listen, 1, limits, manager_);
      metrics_->Start();
      metrics_port_ = metrics_->port();
    }
  } catch (...) {
    api_.reset();
    app_.reset();
    metrics_.reset();
    manager_.Stop();
    for (WorkerPool* pool : Pools()) pool->Stop();
    throw;
  }
  started_ = true;
  // The route table as served, one line per route (the API description's tests compare it).
  if (logger_.Enabled(LogLevel::kDebug))
    for (Listener l : kListeners)
      for (const rendezvous::Route* route : router_.Routes(l))
        logger_.Debug("route", {{"listener", ListenerName(l)},
                                {"method", MethodName(route->method)},
                                {"pattern", route->pattern}});
  logger_.Info("http listening", {{"api", options_.api_listen}, {"api_port", api_port_},
                                  {"app", options_.app_listen}, {"app_port", app_port_},
                                  {"metrics_port", metrics_port_}});
}

void HttpServer::Impl::Shutdown(std::chrono::milliseconds grace) {
  std::lock_guard lock(lifecycle_mu_);
  if (!started_ || stopped_) return;
  stopped_ = true;
  draining_ = true;
  for (const auto& connection : manager_.All()) connection->CloseIfIdle();
  auto deadline = std::chrono::steady_clock::now() + grace;
  for (WorkerPool* pool : Pools()) pool->WaitIdle(deadline);
  {
    std::unique_lock active_lock(active_mu_);
    active_cv_.wait_until(active_lock, deadline, [this] { return active_count_ == 0; });
  }
  // Stop reading, then end every connection; nothing writes to a socket after OnClosed.
  for (auto* listener : {api_.get(), app_.get(), metrics_.get()})
    if (listener) listener->Shutdown();
  for (const auto& connection : manager_.All()) {
    connection->Abort();
    connection->OnClosed();
  }
  for (WorkerPool* pool : Pools()) pool->Stop();
  manager_.Stop();
  api_.reset();
  app_.reset();
  metrics_.reset();
  logger_.Info("http stopped");
}

void HttpServer::Impl::EnterActive(Listener l) {
  active_[static_cast<int>(l)]->Increment();
  std::lock_guard lock(active_mu_);
  ++active_count_;
}

void HttpServer::Impl::LeaveActive(Listener l) {
  active_[static_cast<int>(l)]->Decrement();
  std::lock_guard lock(active_mu_);
  if (--active_count_ == 0) active_cv_.notify_all();
}

void HttpServer::Impl::UpdateGauges() {
  size_t open[3] = {0, 0, 0};
  for (const auto& connection : manager_.All()) ++open[static_cast<int>(connection->listener())];
  for (int i = 0; i < 3; ++i) connections_[i]->Set(static_cast<double>(open[i]));
  buffered_bytes_->Set(static_cast<double>(context_.buffered.load()));
}

void HttpServer::Impl::OnItem(const std::shared_ptr<Connection>& connection, Connection::Item item) {
  auto ex = std::make_shared<Exchange>(*this, connection, item.seq);
  ex->request.remote_ip = connection->remote_ip();
  if (item.error_status != 0) {
    // Refused before a request could be read: answered, and the connection closes after it.
    ex->request.request_id = NewRequestId();
    ex->keep_alive = false;
    if (item.reason) Reject(item.reason);
    return Finish(*ex, ErrorResponse(item.error_status, std::move(item.error_message)));
  }
  // An exception must not reach Pistache's reactor.
  try {
    Dispatch(ex, *item.request);
  } catch (const std::exception& e) {
    logger_.Error("request dispatch failed", {{"request_id", ex->request.request_id}, {"error", e.what()}});
    Finish(*ex, ErrorResponse(500, "internal error"));
  }
}

void HttpServer::Impl::Dispatch(const ExchangePtr& ex, ParsedRequest& parsed) {
  Request& r = ex->request;
  ex->keep_alive = parsed.keep_alive;
  CopyHeaders(parsed, r);
  r.remote_ip = options_.trusted_proxies.ClientAddress(r.remote_ip, r.Header("x-forwarded-for"));
  auto incoming_id = r.headers.find("x-request-id");
  r.request_id = incoming_id != r.headers.end() && IsValidRequestId(incoming_id->second) ? incoming_id->second
                                                                                         : NewRequestId();
  auto method = ParseMethod(parsed.method);
  if (method) {
    r.method = *method;
    ex->method_label = std::string(MethodName(*method));
    ex->head = *method == Method::kHead;
  }

  auto target = SplitTarget(parsed.target);
  if (!target) {
    ex->keep_alive = false;
    Reject("malformed");
    return Finish(*ex, ErrorResponse(400, "malformed request target"));
  }
  ex->raw_path = target->raw_path;
  ex->raw_target = target->raw_query.empty() ? target->raw_path : target->raw_path + "?" + target->raw_query;
  auto segments = net::SplitPath(target->raw_path);
  if (!segments) return Finish(*ex, ErrorResponse(400, "malformed request path"));
  r.path = "/";
  for (size_t i = 0; i < segments->size(); ++i) r.path += (i ? "/" : "") + (*segments)[i];
  auto query = net::ParseUrlEncoded(target->raw_query);
  if (!query) return Finish(*ex, ErrorResponse(400, "malformed query string"));
  for (auto& [key, value] : *query) r.query.emplace(std::move(key), std::move(value));

  Router::Match match;
  if (method) {
    match = router_.Find(ex->listener, *method, *segments);
  } else {
    match.allowed = router_.AllowedMethods(ex->listener, *segments);
    if (!IsKnownUnservedMethod(parsed.method))
      return Finish(*ex, ErrorResponse(501, "the method " + parsed.method + " is not implemented"));
    match.outcome = match.allowed.empty() ? Router::Outcome::kNotFound : Router::Outcome::kMethodNotAllowed;
  }
  if (match.outcome == Router::Outcome::kNotFound)
    return Finish(*ex, ErrorResponse(404, "no such resource: " + r.path));
  if (match.outcome == Router::Outcome::kMethodNotAllowed) {
    Response resp = ErrorResponse(405, "this method is not allowed here; allowed: " + JoinMethods(match.allowed));
    resp.headers.emplace_back("Allow", JoinMethods(match.allowed));
    return Finish(*ex, std::move(resp));
  }
  ex->route = match.route;
  ex->route_label = match.route->pattern;
  r.route = match.route->pattern;
  r.params = std::move(match.params);
  r.body = std::move(parsed.body);

  if (ex->listener == Listener::kApi && !options_.api_versions.empty()) {
    r.api_version = options_.api_versions.back();
    if (!segments->empty() && (*segments)[0] == "v2") {
      if (auto v = r.Header(options_.version_header)) {
        const auto& versions = options_.api_versions;
        if (std::find(versions.begin(), versions.end(), *v) == versions.end()) {
          std::string list;
          for (const auto& s : versions) list += (list.empty() ? "" : ", ") + s;
          return Finish(*ex, ErrorResponse(400, "unsupported " + options_.version_header + " value; supported: " + list,
                                           Json{{"header", options_.version_header}, {"supported", versions}}));
        }
        r.api_version = *v;
      }
    }
  }

  if (draining_) {
    Reject("shutting_down");
    return Finish(*ex, ErrorResponse(503, "the server is shutting down"));
  }

  if (ex->route->per_address.per_minute != 0) {
    // Before any work is queued: a refused request costs a hash and a lock.
    Limited& limited = address_limits_.find(ex->route->per_address.group)->second;
    if (auto refused = TakeToken(*ex, limited, AddressKey(r.remote_ip))) return Finish(*ex, std::move(*refused));
  }

  if (ex->route->inline_handler) return Execute(*ex);

  WorkerPool* pool = ex->route->outbound              ? outbound_pool_.get()
                     : ex->listener == Listener::kApp ? app_pool_.get()
                     : IsAnonymous(*ex->route)        ? public_pool_.get()
                                                      : api_pool_.get();
  WorkerPool::Task task = [ex] { ex->impl.Execute(*ex); };
  if (!pool->TrySubmit(task)) {
    Reject("queue_full");
    return Finish(*ex, ErrorResponse(503, "the server is busy, try again later"));
  }
  size_t queued = 0;
  for (const WorkerPool* p : Pools()) queued += p->queued();
  queue_depth_->Set(static_cast<double>(queued));
}

void HttpServer::Impl::AddRateLimitGroup(const RateLimit& limit, const std::string& pattern) {
  if (limit.group.empty() || limit.group == kCredentialGroup || limit.per_minute < 1 || limit.burst < 1)
    throw std::logic_error("bad rate limit on " + pattern + ": a group name and per_minute, burst >= 1");
  auto it = address_limits_.find(limit.group);
  if (it != address_limits_.end()) {
    if (it->second.limiter->per_minute() != limit.per_minute || it->second.limiter->burst() != limit.burst)
      throw std::logic_error("rate limit group " + limit.group + " given other numbers on " + pattern);
    return;
  }
  Limited& limited = address_limits_[limit.group];
  limited.limiter = std::make_unique<RateLimiter>(limit.per_minute, limit.burst);
  limited.refused = &rate_limited_->Add({{"group", limit.group}});
}

std::optional<Response> HttpServer::Impl::TakeToken(Exchange& ex, Limited& limited, std::string_view key) {
  RateLimiter::Decision d = limited.limiter->Take(key, std::chrono::steady_clock::now());
  // Under two limits, the headers describe the one nearer to refusing.
  if (!ex.rate_limit || !d.allowed || d.remaining < ex.rate_limit->remaining) ex.rate_limit = d;
  if (d.allowed) return std::nullopt;
  limited.refused->Increment();
  return Response::FromStatus(Status::RateLimited(
      "too many requests; try again in " + std::to_string(d.retry_after_seconds) + " s", d.retry_after_seconds));
}

bool HttpServer::Impl::AcquireOutbound(const std::string& key) {
  std::lock_guard lock(outbound_mu_);
  int& in_use = outbound_in_use_[key];
  if (in_use >= options_.outbound_per_user) return false;
  ++in_use;
  return true;
}

void HttpServer::Impl::ReleaseOutbound(const std::string& key) {
  std::lock_guard lock(outbound_mu_);
  auto it = outbound_in_use_.find(key);
  if (it != outbound_in_use_.end() && --it->second <= 0) outbound_in_use_.erase(it);
}

Response HttpServer::Impl::RunHandler(Exchange& ex) {
  if (auto denied = CheckRouteAuth(ex.route->auth, ex.request, ex.raw_target, bearer_, session_, dpop_))
    return *denied;
  if (credential_limit_.limiter && ex.route->auth.bearer_required && ex.request.principal) {
    if (auto refused = TakeToken(ex, credential_limit_, CredentialKey(*ex.request.principal))) return *refused;
  }
  if (!ex.route->outbound) return ex.route->handler(ex.request);
  const Request& r = ex.request;
  std::string key = r.principal ? "user:" + std::to_string(r.principal->user_id) : "ip:" + r.remote_ip;
  if (!AcquireOutbound(key)) {
    Reject("outbound_limit");
    Response busy = Response::Error(429, "rate_limited",
                                    "too many requests to outside services at once; wait for the others to finish");
    busy.headers.emplace_back("Retry-After", "1");
    return busy;
  }
  struct Release {
    Impl& impl;
    const std::string& key;
    ~Release() { impl.ReleaseOutbound(key); }
  } release{*this, key};
  return ex.route->handler(ex.request);
}

void HttpServer::Impl::Execute(Exchange& ex) {
  Response response;
  try {
    response = RunHandler(ex);
  } catch (const DatabaseUnavailable& e) {
    logger_.Warn("database unavailable", {{"request_id", ex.request.request_id}, {"error", e.what()}});
    response = ErrorResponse(503, "the database is unavailable, try again later");
  } catch (const std::exception& e) {
    logger_.Error("handler failed", {{"request_id", ex.request.request_id}, {"route", ex.route_label}, {"error", e.what()}});
    response = ErrorResponse(500, "internal error");
  } catch (...) {
    logger_.Error("handler failed", {{"request_id", ex.request.request_id}, {"route", ex.route_label}});
    response = ErrorResponse(500, "internal error");
  }
  Finish(ex, std::move(response));
}

void HttpServer::Impl::Finish(Exchange& ex, Response response) {
  if (ex.finished) return;
  ex.finished = true;
  if (response.status < 200 || response.status > 599) {
    logger_.Error("handler returned a bad status", {{"request_id", ex.request.request_id}, {"status", response.status}});
    response = ErrorResponse(500, "internal error");
  }
  if (ex.rate_limit) {
    response.headers.emplace_back("X-RateLimit-Limit", std::to_string(ex.rate_limit->limit));
    response.headers.emplace_back("X-RateLimit-Remaining", std::to_string(ex.rate_limit->remaining));
    response.headers.emplace_back("X-RateLimit-Reset", std::to_string(ex.rate_limit->reset_seconds));
  }
  if (ex.listener == Listener::kApp) AddAppSecurityHeaders(response);
  const bool keep_alive = ex.keep_alive && !draining_;
  std::string dropped;
  std::string bytes = SerializeResponse(response, {ex.request.request_id, keep_alive, ex.head}, &dropped);
  if (!dropped.empty())
    logger_.Warn("response header dropped", {{"request_id", ex.request.request_id}, {"header", dropped}});

  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - ex.start).count();
  duration_
      ->Add({{"http_request_method", ex.method_label},
             {"http_route", ex.route_label},
             {"http_response_status_code", std::to_string(response.status)},
             {"listener", ListenerName(ex.listener)}},
            kDurationBuckets)
      .Observe(seconds);
  if (logger_.Enabled(LogLevel::kInfo)) {
    logger_.Info("request", {{"request_id", ex.request.request_id},
                             {"listener", ListenerName(ex.listener)},
                             {"method", ex.method_label},
                             {"route", ex.route_label},
                             {"path", ex.raw_path},
                             {"status", response.status},
                             {"duration_ms", seconds * 1000.0},
                             {"remote_ip", ex.request.remote_ip}});
  }
  // Counted and logged before it is sent: a client that reads its answer and then scrapes the
  // metrics sees its request there.
  Connection::Items next = ex.connection->Complete(ex.seq, std::move(bytes), !keep_alive);
  // Pipelined requests that waited for this answer.
  manager_.Dispatch(ex.connection, std::move(next));
}

HttpServer::HttpServer(ServerOptions options, Logger& logger, prometheus::Registry& registry)
    : impl_(std::make_unique<Impl>(std::move(options), logger, registry)) {}

HttpServer::~HttpServer() = default;

void HttpServer::AddRoute(rendezvous::Route route) { impl_->AddRoute(std::move(route)); }

void HttpServer::SetBearerAuthenticator(std::function<std::optional<Principal>(std::string_view)> fn) {
  impl_->bearer_ = std::move(fn);
}

void HttpServer::SetDpopAuthenticator(
    std::function<DpopResolution(std::string_view, std::string_view, std::string_view, std::string_view)>
        fn) {
  impl_->dpop_ = std::move(fn);
}

void HttpServer::SetSessionChecker(std::function<bool(const Request&)> fn) { impl_->session_ = std::move(fn); }

void HttpServer::SetReadinessCheck(std::function<bool()> fn) { impl_->readiness_ = std::move(fn); }

void HttpServer::Start() { impl_->Start(); }

uint16_t HttpServer::api_port() const { return impl_->api_port_; }

uint16_t HttpServer::app_port() const { return impl_->app_port_; }

uint16_t HttpServer::metrics_port() const { return impl_->metrics_port_; }

void HttpServer::Shutdown(std::chrono::milliseconds grace) { impl_->Shutdown(grace); }

}  // namespace rendezvous::core
