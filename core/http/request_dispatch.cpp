// The HTTP server's dispatch of one request (server_impl.hpp): its route found, its limits and
// credentials checked, its handler run on the route's worker pool, its answer finished (envelope,
// headers, access log, metrics).
#include <cctype>

#include "http/server_impl.hpp"

namespace rendezvous::core {
namespace {

constexpr size_t kMaxRequestIdBytes = 64;

const prometheus::Histogram::BucketBoundaries kDurationBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

bool IsValidRequestId(std::string_view id) {
  if (id.empty() || id.size() > kMaxRequestIdBytes) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

std::string JoinMethods(const std::vector<Method>& methods) {
  std::string out;
  for (Method m : methods) {
    if (!out.empty()) out += ", ";
    out += MethodName(m);
  }
  return out;
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

using http_server_internal::ErrorResponse;
using http_server_internal::kCredentialGroup;
using http_server_internal::ListenerName;
using http_server_internal::NewRequestId;

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
    Response resp =
        ErrorResponse(405, "this method is not allowed here; allowed: " + JoinMethods(match.allowed));
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
          return Finish(
              *ex, ErrorResponse(400, "unsupported " + options_.version_header + " value; supported: " + list,
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
    if (auto refused = TakeToken(*ex, limited, AddressKey(r.remote_ip)))
      return Finish(*ex, std::move(*refused));
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
  return Response::FromStatus(
      Status::RateLimited("too many requests; try again in " + std::to_string(d.retry_after_seconds) + " s",
                          d.retry_after_seconds));
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
    if (auto refused = TakeToken(ex, credential_limit_, CredentialKey(*ex.request.principal)))
      return *refused;
  }
  if (!ex.route->outbound) return ex.route->handler(ex.request);
  const Request& r = ex.request;
  std::string key = r.principal ? "user:" + std::to_string(r.principal->user_id) : "ip:" + r.remote_ip;
  if (!AcquireOutbound(key)) {
    Reject("outbound_limit");
    Response busy = Response::Error(
        429, "rate_limited", "too many requests to outside services at once; wait for the others to finish");
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
    logger_.Error("handler failed",
                  {{"request_id", ex.request.request_id}, {"route", ex.route_label}, {"error", e.what()}});
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
    logger_.Error("handler returned a bad status",
                  {{"request_id", ex.request.request_id}, {"status", response.status}});
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

}  // namespace rendezvous::core
