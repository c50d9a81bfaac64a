#include "http/server_impl.hpp"

namespace rendezvous::core {
namespace {

// Request line and fields: 8 KiB for the line, 16 KiB in all.
constexpr size_t kMaxLineBytes = 8 * 1024;
constexpr size_t kMaxHeadBytes = 16 * 1024;

constexpr Listener kListeners[] = {Listener::kApi, Listener::kApp, Listener::kMetrics};

}  // namespace

using http_server_internal::ErrorResponse;
using http_server_internal::kCredentialGroup;
using http_server_internal::ListenerName;
using http_server_internal::NewRequestId;

HttpServer::Impl::Impl(ServerOptions options, Logger& logger, prometheus::Registry& registry)
    : options_(std::move(options)),
      logger_(logger),
      registry_(registry),
      manager_(
          context_,
          [this](const std::shared_ptr<Connection>& c, Connection::Item item) { OnItem(c, std::move(item)); },
          logger) {
  context_.parser.max_line_bytes = kMaxLineBytes;
  context_.parser.max_head_bytes = kMaxHeadBytes;
  context_.parser.max_body_bytes = options_.max_body_bytes;
  context_.idle_timeout = options_.idle_timeout;
  context_.header_timeout = options_.header_timeout;
  context_.body_timeout = options_.body_timeout;
  context_.buffer_budget = options_.max_buffered_bytes;

  duration_ =
      &prometheus::BuildHistogram()
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
                       .Help(
                           "Requests refused by a rate limit (429 rate_limited), by route group; "
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
  buffered_bytes_ =
      &prometheus::BuildGauge()
           .Name("http_server_buffered_request_bytes")
           .Help("Request bytes held in memory across all connections (bounded by max_buffered_bytes).")
           .Register(registry_)
           .Add({});
  for (Listener l : kListeners) {
    active_[static_cast<int>(l)] = &active.Add({{"listener", ListenerName(l)}});
    connections_[static_cast<int>(l)] = &connections.Add({{"listener", ListenerName(l)}});
  }
  for (const char* reason : {"queue_full", "too_large", "shutting_down", "malformed", "timeout",
                             "connection_limit", "buffer_budget", "outbound_limit"})
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
    api_ = std::make_unique<TcpListener>(Listener::kApi, options_.api_listen, options_.io_threads, limits,
                                         manager_);
    api_->Start();
    api_port_ = api_->port();
    app_ = std::make_unique<TcpListener>(Listener::kApp, options_.app_listen, options_.io_threads, limits,
                                         manager_);
    app_->Start();
    app_port_ = app_->port();
    if (!options_.metrics_listen.empty()) {
      metrics_ =
          std::make_unique<TcpListener>(Listener::kMetrics, options_.metrics_listen, 1, limits, manager_);
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
  logger_.Info("http listening", {{"api", options_.api_listen},
                                  {"api_port", api_port_},
                                  {"app", options_.app_listen},
                                  {"app_port", app_port_},
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

HttpServer::HttpServer(ServerOptions options, Logger& logger, prometheus::Registry& registry)
    : impl_(std::make_unique<Impl>(std::move(options), logger, registry)) {}

HttpServer::~HttpServer() = default;

void HttpServer::AddRoute(rendezvous::Route route) {
  impl_->AddRoute(std::move(route));
}

void HttpServer::SetBearerAuthenticator(std::function<std::optional<Principal>(std::string_view)> fn) {
  impl_->bearer_ = std::move(fn);
}

void HttpServer::SetDpopAuthenticator(
    std::function<DpopResolution(std::string_view, std::string_view, std::string_view, std::string_view)>
        fn) {
  impl_->dpop_ = std::move(fn);
}

void HttpServer::SetSessionChecker(std::function<bool(const Request&)> fn) {
  impl_->session_ = std::move(fn);
}

void HttpServer::SetReadinessCheck(std::function<bool()> fn) {
  impl_->readiness_ = std::move(fn);
}

void HttpServer::Start() {
  impl_->Start();
}

uint16_t HttpServer::api_port() const {
  return impl_->api_port_;
}

uint16_t HttpServer::app_port() const {
  return impl_->app_port_;
}

uint16_t HttpServer::metrics_port() const {
  return impl_->metrics_port_;
}

void HttpServer::Shutdown(std::chrono::milliseconds grace) {
  impl_->Shutdown(grace);
}

}  // namespace rendezvous::core
