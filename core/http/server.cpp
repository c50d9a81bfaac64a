#include "http/server.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>

#include <sys/socket.h>

#include <pistache/endpoint.h>
#include <pistache/peer.h>
#include <pistache/http.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "http/envelope.hpp"
#include "http/router.hpp"
#include "http/url_codec.hpp"
#include "http/wire_header.hpp"
#include "http/worker_pool.hpp"
#include "metrics/metrics_registry.hpp"
#include "rendezvous/database.hpp"

namespace rendezvous::core {
namespace {

namespace PHttp = Pistache::Http;

// Room above max_body_bytes for the request line and headers: Pistache buffers whole requests.
constexpr size_t kHeaderRoom = 16 * 1024;
constexpr size_t kMaxBearerTokenBytes = 4096;
constexpr size_t kMaxRequestIdBytes = 64;
// Pistache defaults to 128: a burst of connects beyond it waits for SYN retransmits (1 s+).
constexpr int kListenBacklog = 1024;

const prometheus::Histogram::BucketBoundaries kDurationBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const char* ListenerName(Listener l) { return l == Listener::kApi ? "api" : "app"; }

std::optional<Method> FromPistache(PHttp::Method m) {
  switch (m) {
    case PHttp::Method::Get: return Method::kGet;
    case PHttp::Method::Head: return Method::kHead;
    case PHttp::Method::Post: return Method::kPost;
    case PHttp::Method::Put: return Method::kPut;
    case PHttp::Method::Patch: return Method::kPatch;
    case PHttp::Method::Delete: return Method::kDelete;
    case PHttp::Method::Options: return Method::kOptions;
    default: return std::nullopt;
  }
}

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

bool IsHeaderName(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

bool IsHeaderValue(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// Pistache writes these itself or decides on them by their typed form; a handler cannot set them.
bool IsReservedHeader(const std::string& lower_name) {
  return lower_name == "connection" || lower_name == "content-length" || lower_name == "transfer-encoding" ||
         lower_name == "x-request-id" || lower_name == "content-type";
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

// Parses "host:port" ("[v6]:port" too). Throws std::runtime_error naming the value.
std::pair<std::string, uint16_t> ParseListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size())
    throw std::runtime_error("bad listen address \"" + listen + "\": expected host:port");
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::string port_text = listen.substr(colon + 1);
  if (port_text.size() > 5 || !std::all_of(port_text.begin(), port_text.end(), ::isdigit))
    throw std::runtime_error("bad listen address \"" + listen + "\": bad port");
  unsigned long port = std::stoul(port_text);
  if (port > 65535) throw std::runtime_error("bad listen address \"" + listen + "\": port above 65535");
  return {host, static_cast<uint16_t>(port)};
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(ServerOptions options, Logger& logger, prometheus::Registry& registry);
  ~Impl();

  void AddRoute(rendezvous::Route route) {
    if (started_) throw std::logic_error("HttpServer::AddRoute after Start: " + route.pattern);
    router_.Add(std::move(route));
  }
  void Start();
  void Shutdown(std::chrono::milliseconds grace);

  std::function<std::optional<Principal>(std::string_view)> bearer_;
  std::function<bool(const Request&)> session_;
  std::function<bool()> readiness_;
  uint16_t api_port_ = 0;
  uint16_t app_port_ = 0;

 private:
  // One request on its way: built on the reactor thread, finished on whichever thread runs it.
  // Counts a request as active from arrival until its response is written (or dropped): held by
  // the exchange and by the write's completion callbacks, whichever goes last.
  struct ActiveToken {
    ActiveToken(Impl& impl, Listener listener) : impl(impl), listener(listener) { impl.EnterActive(listener); }
    ~ActiveToken() { impl.LeaveActive(listener); }
    Impl& impl;
    Listener listener;
  };

  struct Exchange {
    Exchange(Impl& impl, Listener listener)
        : impl(impl), listener(listener), active(std::make_shared<ActiveToken>(impl, listener)) {}
    Impl& impl;
    Listener listener;
    std::shared_ptr<ActiveToken> active;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    Request request;
    const rendezvous::Route* route = nullptr;
    std::string route_label = "unmatched";
    std::string method_label = "_OTHER";
    std::string raw_path;
    std::string raw_target;  // raw path and query, for the login redirect's next=
    bool head = false;
    bool keep_alive = true;
    std::optional<PHttp::ResponseWriter> writer;
  };

  class ListenerHandler : public PHttp::Handler {
   public:
    HTTP_PROTOTYPE(ListenerHandler)
    ListenerHandler(Impl* impl, Listener listener) : impl_(impl), listener_(listener) {}
    void onRequest(const PHttp::Request& request, PHttp::ResponseWriter writer) override {
      impl_->OnRequest(listener_, request, std::move(writer));
    }

   private:
    Impl* impl_;
    Listener listener_;
  };

  void OnRequest(Listener listener, const PHttp::Request& req, PHttp::ResponseWriter writer);
  void Dispatch(const std::shared_ptr<Exchange>& ex, const PHttp::Request& req);
  void Execute(Exchange& ex);
  std::optional<Response> Authenticate(Exchange& ex);
  void Finish(Exchange& ex, Response response);
  void EnterActive(Listener l);
  void LeaveActive(Listener l);
  void Reject(const char* reason) { rejected_->Add({{"reason", reason}}).Increment(); }
  std::unique_ptr<PHttp::Endpoint> Listen(const std::string& address, Listener listener);

  ServerOptions options_;
  Logger& logger_;
  prometheus::Registry& registry_;
  Router router_;

  prometheus::Family<prometheus::Histogram>* duration_;
  prometheus::Family<prometheus::Gauge>* active_gauge_;
  prometheus::Family<prometheus::Counter>* rejected_;
  prometheus::Gauge* queue_depth_;
  prometheus::Gauge* active_api_;
  prometheus::Gauge* active_app_;

  std::mutex lifecycle_mu_;
  bool started_ = false;
  bool stopped_ = false;
  std::atomic<bool> draining_{false};

  std::mutex active_mu_;
  std::condition_variable active_cv_;
  int active_ = 0;

  // Declared before the pool: the pool (and any task still holding a ResponseWriter) goes first.
  std::unique_ptr<PHttp::Endpoint> api_endpoint_;
  std::unique_ptr<PHttp::Endpoint> app_endpoint_;
  std::unique_ptr<WorkerPool> pool_;
};

HttpServer::Impl::Impl(ServerOptions options, Logger& logger, prometheus::Registry& registry)
    : options_(std::move(options)), logger_(logger), registry_(registry) {
  duration_ = &prometheus::BuildHistogram()
                   .Name("http_server_request_duration_seconds")
                   .Help("Duration of HTTP server requests, by method, route template, status code and listener.")
                   .Register(registry_);
  active_gauge_ = &prometheus::BuildGauge()
                       .Name("http_server_active_requests")
                       .Help("HTTP requests being processed (queued or running), by listener.")
                       .Register(registry_);
  rejected_ = &prometheus::BuildCounter()
                   .Name("http_server_rejected_requests_total")
                   .Help("HTTP requests refused before reaching a handler, by reason.")
                   .Register(registry_);
  queue_depth_ = &prometheus::BuildGauge()
                      .Name("http_server_worker_queue_depth")
                      .Help("HTTP requests waiting for a worker thread.")
                      .Register(registry_)
                      .Add({});
  active_api_ = &active_gauge_->Add({{"listener", "api"}});
  active_app_ = &active_gauge_->Add({{"listener", "app"}});
  for (const char* reason : {"queue_full", "too_large", "shutting_down"}) rejected_->Add({{"reason", reason}});

  rendezvous::Route health;
  health.listener = Listener::kApi;
  health.pattern = "/healthz";
  health.inline_handler = true;
  health.handler = [](Request&) { return Response::RawJson(200, Json{{"status", "ok"}}); };
  router_.Add(std::move(health));

  rendezvous::Route ready;
  ready.listener = Listener::kApi;
  ready.pattern = "/readyz";
  ready.handler = [this](Request&) {
    bool ok = true;
    if (readiness_) {
      try {
        ok = readiness_();
      } catch (const std::exception& e) {
        logger_.Warn("readiness check failed", {{"error", e.what()}});
        ok = false;
      }
    }
    return ok ? Response::RawJson(200, Json{{"status", "ok"}})
              : Response::RawJson(503, Json{{"status", "unavailable"}});
  };
  router_.Add(std::move(ready));

  if (!options_.metrics_path.empty()) {
    rendezvous::Route metrics;
    metrics.listener = Listener::kApi;
    metrics.pattern = options_.metrics_path;
    metrics.handler = [this](Request&) {
      return Response::Text(200, SerializeMetrics(registry_), kMetricsContentType);
    };
    router_.Add(std::move(metrics));
  }
}

HttpServer::Impl::~Impl() { Shutdown(std::chrono::milliseconds(0)); }

std::unique_ptr<PHttp::Endpoint> HttpServer::Impl::Listen(const std::string& address, Listener listener) {
  auto [host, port] = ParseListen(address);
  try {
    auto endpoint = std::make_unique<PHttp::Endpoint>(Pistache::Address(host, Pistache::Port(port)));
    auto opts = PHttp::Endpoint::options()
                    .threads(std::max(1, options_.io_threads))
                    .threadsName(listener == Listener::kApi ? "rdv-api-io" : "rdv-app-io")
                    .flags(Pistache::Tcp::Options::ReuseAddr)
                    .backlog(kListenBacklog)
                    .maxRequestSize(options_.max_body_bytes + kHeaderRoom)
                    .headerTimeout(options_.header_timeout)
                    .bodyTimeout(options_.body_timeout)
                    .keepaliveTimeout(options_.idle_timeout);
    endpoint->init(opts);
    // Endpoint::init does not hand Options::backlog to the listener in 0.0.5; set it directly.
    endpoint->initArgs(static_cast<size_t>(std::max(1, options_.io_threads)),
                       Pistache::Flags<Pistache::Tcp::Options>(Pistache::Tcp::Options::ReuseAddr),
                       std::string(listener == Listener::kApi ? "rdv-api-io" : "rdv-app-io"), kListenBacklog);
    endpoint->setHandler(PHttp::make_handler<ListenerHandler>(this, listener));
    endpoint->serveThreaded();
    return endpoint;
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot listen on " + address + ": " + e.what());
  }
}

void HttpServer::Impl::Start() {
  std::lock_guard lock(lifecycle_mu_);
  if (started_) throw std::logic_error("HttpServer::Start called twice");
  pool_ = std::make_unique<WorkerPool>(options_.worker_threads, options_.worker_queue_limit);
  try {
    api_endpoint_ = Listen(options_.api_listen, Listener::kApi);
    api_port_ = static_cast<uint16_t>(api_endpoint_->getPort());
    app_endpoint_ = Listen(options_.app_listen, Listener::kApp);
    app_port_ = static_cast<uint16_t>(app_endpoint_->getPort());
  } catch (...) {
    if (api_endpoint_) api_endpoint_->shutdown();
    pool_->Stop();
    throw;
  }
  started_ = true;
  logger_.Info("http listening", {{"api", options_.api_listen}, {"api_port", api_port_},
                                  {"app", options_.app_listen}, {"app_port", app_port_}});
}

void HttpServer::Impl::Shutdown(std::chrono::milliseconds grace) {
  std::lock_guard lock(lifecycle_mu_);
  if (!started_ || stopped_) return;
  stopped_ = true;
  draining_ = true;
  auto deadline = std::chrono::steady_clock::now() + grace;
  pool_->WaitIdle(deadline);
  {
    std::unique_lock active_lock(active_mu_);
    active_cv_.wait_until(active_lock, deadline, [this] { return active_ == 0; });
  }
  for (auto* endpoint : {api_endpoint_.get(), app_endpoint_.get()}) {
    if (!endpoint) continue;
    try {
      endpoint->shutdown();
      // The reactor is stopped; Pistache leaves its connections open. End them so clients see
      // EOF now rather than at their own timeout.
      for (const auto& peer : endpoint->getAllPeer())
        if (peer) ::shutdown(peer->fd(), SHUT_RDWR);
    } catch (const std::exception& e) {
      logger_.Warn("http listener shutdown failed", {{"error", e.what()}});
    }
  }
  pool_->Stop();
  // Destroying the endpoints closes the listening sockets and the remaining connections; no task
  // holds a ResponseWriter any more.
  api_endpoint_.reset();
  app_endpoint_.reset();
  logger_.Info("http stopped");
}

void HttpServer::Impl::EnterActive(Listener l) {
  (l == Listener::kApi ? active_api_ : active_app_)->Increment();
  std::lock_guard lock(active_mu_);
  ++active_;
}

void HttpServer::Impl::LeaveActive(Listener l) {
  (l == Listener::kApi ? active_api_ : active_app_)->Decrement();
  std::lock_guard lock(active_mu_);
  if (--active_ == 0) active_cv_.notify_all();
}

void HttpServer::Impl::OnRequest(Listener listener, const PHttp::Request& req, PHttp::ResponseWriter writer) {
  auto ex = std::make_shared<Exchange>(*this, listener);
  ex->writer.emplace(std::move(writer));

  // Pistache answers Connection: Close unless the client sent a Connection header; HTTP/1.1
  // connections are persistent by default, HTTP/1.0 ones only when asked.
  std::string connection;
  if (auto raw = req.headers().tryGetRaw("Connection")) connection = Lower(raw->value());
  bool http11 = req.version() == PHttp::Version::Http11;
  ex->keep_alive = http11 ? connection.find("close") == std::string::npos
                          : connection.find("keep-alive") != std::string::npos;
  if (draining_) ex->keep_alive = false;
  ex->writer->headers().remove<PHttp::Header::Connection>();
  ex->writer->headers().add<PHttp::Header::Connection>(ex->keep_alive ? PHttp::ConnectionControl::KeepAlive
                                                                      : PHttp::ConnectionControl::Close);

  // An exception escaping onRequest would reach Pistache, which sends what() to the client.
  try {
    Dispatch(ex, req);
  } catch (const std::exception& e) {
    logger_.Error("request dispatch failed", {{"request_id", ex->request.request_id}, {"error", e.what()}});
    Finish(*ex, ErrorResponse(500, "internal error"));
  } catch (...) {
    logger_.Error("request dispatch failed", {{"request_id", ex->request.request_id}});
    Finish(*ex, ErrorResponse(500, "internal error"));
  }
}

void HttpServer::Impl::Dispatch(const std::shared_ptr<Exchange>& ex, const PHttp::Request& req) {
  Request& r = ex->request;
  auto incoming_id = req.headers().tryGetRaw("X-Request-Id");
  r.request_id = incoming_id && IsValidRequestId(incoming_id->value()) ? incoming_id->value() : NewRequestId();
  r.remote_ip = req.address().host();
  for (const auto& [name, raw] : req.headers().rawList()) r.headers[Lower(name)] = raw.value();
  if (r.headers.count("cookie") == 0) {
    // Pistache keeps Cookie only in its cookie jar; rebuild the header for Request::Cookie.
    std::string cookies;
    for (const auto& c : req.cookies()) {
      if (!cookies.empty()) cookies += "; ";
      cookies += c.name + "=" + c.value;
    }
    if (!cookies.empty()) r.headers["cookie"] = std::move(cookies);
  }

  ex->raw_path = req.resource();
  ex->raw_target = ex->raw_path + req.query().as_str();
  auto method = FromPistache(req.method());
  if (method) {
    r.method = *method;
    ex->method_label = std::string(MethodName(*method));
    ex->head = *method == Method::kHead;
  }

  auto segments = SplitPath(ex->raw_path);
  if (!segments) return Finish(*ex, ErrorResponse(400, "malformed request path"));
  r.path = "/";
  for (size_t i = 0; i < segments->size(); ++i) r.path += (i ? "/" : "") + (*segments)[i];
  for (auto it = req.query().parameters_begin(); it != req.query().parameters_end(); ++it) {
    auto key = PercentDecode(it->first, true);
    auto value = PercentDecode(it->second, true);
    if (!key || !value) return Finish(*ex, ErrorResponse(400, "malformed query string"));
    r.query.emplace(std::move(*key), std::move(*value));
  }

  Router::Match match;
  if (method) {
    match = router_.Find(ex->listener, *method, *segments);
  } else {
    // TRACE, CONNECT: never served; 405 where the path exists.
    match.allowed = router_.AllowedMethods(ex->listener, *segments);
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

  r.body = req.body();
  if (r.body.size() > options_.max_body_bytes) {
    Reject("too_large");
    return Finish(*ex, ErrorResponse(413, "request body exceeds " + std::to_string(options_.max_body_bytes) + " bytes"));
  }

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

  if (ex->route->inline_handler) return Execute(*ex);

  WorkerPool::Task task = [ex] { ex->impl.Execute(*ex); };
  if (!pool_->TrySubmit(task)) {
    Reject("queue_full");
    return Finish(*ex, ErrorResponse(503, "the server is busy, try again later"));
  }
  queue_depth_->Set(static_cast<double>(pool_->queued()));
}

std::optional<Response> HttpServer::Impl::Authenticate(Exchange& ex) {
  const RouteAuth& auth = ex.route->auth;
  Request& r = ex.request;
  if (auth.session_required) {
    if (!session_ || !session_(r)) return Response::Redirect("/auth/login?next=" + PercentEncode(ex.raw_target, true));
  }
  if (!auth.bearer_required) return std::nullopt;

  auto unauthorized = [](std::string challenge, std::string message) {
    Response resp = ErrorResponse(401, std::move(message));
    resp.headers.emplace_back("WWW-Authenticate", std::move(challenge));
    return resp;
  };
  auto header = r.Header("authorization");
  if (!header) return unauthorized("Bearer", "missing bearer token");
  std::string_view value = *header;
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (value.size() < 7 || Lower(value.substr(0, 6)) != "bearer" || value[6] != ' ')
    return unauthorized("Bearer", "malformed Authorization header: expected Bearer <token>");
  value.remove_prefix(7);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty() || value.size() > kMaxBearerTokenBytes ||
      value.find_first_of(" \t") != std::string_view::npos)
    return unauthorized("Bearer", "malformed Authorization header: expected Bearer <token>");

  std::optional<Principal> principal;
  if (bearer_) principal = bearer_(value);
  const std::string invalid = "Bearer error=\"invalid_token\"";
  if (!principal) return unauthorized(invalid, "the bearer token is invalid, expired or revoked");
  if ((auth.accepted & principal->kind) == 0) {
    std::string kinds;
    auto add = [&](unsigned bit, const char* name) {
      if (auth.accepted & bit) kinds += (kinds.empty() ? "" : ", ") + std::string(name);
    };
    add(kApiKey, "API keys");
    add(kOAuthToken, "OAuth access tokens");
    add(kManagedUserToken, "managed-user access tokens");
    return unauthorized(invalid, "this endpoint accepts only: " + kinds);
  }
  if (!auth.scope.empty() && !principal->HasScope(auth.scope)) {
    Response resp = Response::Error(403, "insufficient_scope", "this endpoint requires the scope " + auth.scope,
                                    Json{{"scope", auth.scope}});
    resp.headers.emplace_back("WWW-Authenticate", "Bearer error=\"insufficient_scope\", scope=\"" + auth.scope + "\"");
    return resp;
  }
  r.principal = std::move(principal);
  return std::nullopt;
}

void HttpServer::Impl::Execute(Exchange& ex) {
  queue_depth_->Set(static_cast<double>(pool_ ? pool_->queued() : 0));
  Response response;
  try {
    if (auto denied = Authenticate(ex)) response = std::move(*denied);
    else response = ex.route->handler(ex.request);
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
  if (!ex.writer) return;
  if (response.status < 100 || response.status > 599) {
    logger_.Error("handler returned a bad status", {{"request_id", ex.request.request_id}, {"status", response.status}});
    response = ErrorResponse(500, "internal error");
  }
  PHttp::ResponseWriter& rw = *ex.writer;

  // One WireHeader per name with all its values, in first-seen order.
  std::vector<std::pair<std::string, std::vector<std::string>>> grouped;
  auto add = [&grouped](const std::string& name, std::string value) {
    std::string lower = Lower(name);
    for (auto& [n, values] : grouped)
      if (Lower(n) == lower) return values.push_back(std::move(value));
    grouped.push_back({name, {std::move(value)}});
  };
  add("X-Request-Id", ex.request.request_id);
  if (!response.content_type.empty() && IsHeaderValue(response.content_type)) add("Content-Type", response.content_type);
  for (auto& [name, value] : response.headers) {
    if (!IsHeaderName(name) || !IsHeaderValue(value) || IsReservedHeader(Lower(name))) {
      logger_.Warn("response header dropped", {{"request_id", ex.request.request_id}, {"header", name}});
      continue;
    }
    add(name, std::move(value));
  }
  for (auto& [name, values] : grouped) rw.headers().add(std::make_shared<WireHeader>(name, std::move(values)));

  try {
    const std::string empty;
    auto active = ex.active;
    rw.send(static_cast<PHttp::Code>(response.status), ex.head ? empty : response.body)
        .then([active](ssize_t) {}, [active](std::exception_ptr) {});
  } catch (const std::exception& e) {
    // The client went away; nothing to answer.
    logger_.Debug("response not sent", {{"request_id", ex.request.request_id}, {"error", e.what()}});
  }
  ex.writer.reset();

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
}

HttpServer::HttpServer(ServerOptions options, Logger& logger, prometheus::Registry& registry)
    : impl_(std::make_unique<Impl>(std::move(options), logger, registry)) {}

HttpServer::~HttpServer() = default;

void HttpServer::AddRoute(rendezvous::Route route) { impl_->AddRoute(std::move(route)); }

void HttpServer::SetBearerAuthenticator(std::function<std::optional<Principal>(std::string_view)> fn) {
  impl_->bearer_ = std::move(fn);
}

void HttpServer::SetSessionChecker(std::function<bool(const Request&)> fn) { impl_->session_ = std::move(fn); }

void HttpServer::SetReadinessCheck(std::function<bool()> fn) { impl_->readiness_ = std::move(fn); }

void HttpServer::Start() { impl_->Start(); }

uint16_t HttpServer::api_port() const { return impl_->api_port_; }

uint16_t HttpServer::app_port() const { return impl_->app_port_; }

void HttpServer::Shutdown(std::chrono::milliseconds grace) { impl_->Shutdown(grace); }

}  // namespace rendezvous::core
