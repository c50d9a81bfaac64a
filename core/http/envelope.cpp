#include "http/envelope.hpp"

#include <cctype>

#include "rendezvous/url.hpp"

namespace rendezvous {

using core::DefaultErrorCode;
using core::DumpJson;

std::string_view MethodName(Method m) {
  switch (m) {
    case Method::kGet: return "GET";
    case Method::kHead: return "HEAD";
    case Method::kPost: return "POST";
    case Method::kPut: return "PUT";
    case Method::kPatch: return "PATCH";
    case Method::kDelete: return "DELETE";
    case Method::kOptions: return "OPTIONS";
  }
  return "GET";
}

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsBlank(std::string_view s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  return true;
}

}  // namespace

std::optional<std::string> Request::Header(std::string_view name) const {
  auto it = headers.find(Lower(name));
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Request::Query(const std::string& name) const {
  auto it = query.find(name);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Request::Cookie(std::string_view name) const {
  auto it = headers.find("cookie");
  if (it == headers.end()) return std::nullopt;
  std::string_view rest = it->second;
  while (!rest.empty()) {
    size_t semi = rest.find(';');
    std::string_view pair = Trim(rest.substr(0, semi));
    size_t eq = pair.find('=');
    if (eq != std::string_view::npos && Trim(pair.substr(0, eq)) == name) {
      std::string_view value = Trim(pair.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
      return std::string(value);
    }
    if (semi == std::string_view::npos) break;
    rest.remove_prefix(semi + 1);
  }
  return std::nullopt;
}

std::string Request::ContentType() const {
  auto it = headers.find("content-type");
  if (it == headers.end()) return "";
  std::string_view v = it->second;
  v = Trim(v.substr(0, v.find(';')));
  return Lower(v);
}

Result<Json> Request::JsonBody() const {
  std::string type = ContentType();
  bool has_type = headers.count("content-type") != 0;
  if (IsBlank(body)) {
    // An empty body reads as an empty object, so handlers report the missing fields themselves.
    if (!has_type || type == "application/json") return Json::object();
  }
  if (type != "application/json")
    return Status(ErrorCode::kUnsupportedMediaType, "request body must be application/json");
  if (core::JsonNestingDepth(body, core::kMaxJsonDepth) > core::kMaxJsonDepth)
    return Status(ErrorCode::kInvalid, "request body nests deeper than " + std::to_string(core::kMaxJsonDepth) + " levels");
  Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status(ErrorCode::kInvalid, "request body is not valid JSON");
  if (!parsed.is_object()) return Status(ErrorCode::kInvalid, "request body must be a JSON object");
  return parsed;
}

Result<std::map<std::string, std::string>> Request::FormBody() const {
  std::string type = ContentType();
  bool has_type = headers.count("content-type") != 0;
  if (IsBlank(body) && !has_type) return std::map<std::string, std::string>{};
  if (type != "application/x-www-form-urlencoded")
    return Status(ErrorCode::kUnsupportedMediaType, "request body must be application/x-www-form-urlencoded");
  auto pairs = net::ParseUrlEncoded(body);
  if (!pairs) return Status(ErrorCode::kInvalid, "request body is not valid form encoding");
  std::map<std::string, std::string> out;
  for (auto& [k, v] : *pairs) out.emplace(std::move(k), std::move(v));
  return out;
}

Response Response::Success(const Json& data, int status) {
  Response r;
  r.status = status;
  r.body = "{\"status\":\"success\",\"data\":" + DumpJson(data) + "}";
  return r;
}

Response Response::SuccessWith(const Json& envelope_fields, int status) {
  Response r;
  r.status = status;
  std::string body = "{\"status\":\"success\"";
  if (envelope_fields.is_object()) {
    for (auto it = envelope_fields.begin(); it != envelope_fields.end(); ++it) {
      if (it.key() == "status") continue;
      body += "," + DumpJson(it.key()) + ":" + DumpJson(it.value());
    }
  }
  body += "}";
  r.body = std::move(body);
  return r;
}

Response Response::Error(int status, std::string code, std::string message, const Json& details) {
  Response r;
  r.status = status;
  if (code.empty()) code = std::string(DefaultErrorCode(status));
  std::string body = "{\"status\":\"error\",\"error\":{\"code\":" + DumpJson(code) + ",\"message\":" + DumpJson(message);
  if (!details.is_null()) body += ",\"details\":" + DumpJson(details);
  body += "}}";
  r.body = std::move(body);
  return r;
}

Response Response::FromStatus(const Status& status) {
  if (status.ok()) return Success(nullptr);
  const int http = core::HttpStatusFor(status.code());
  std::string code = status.reason();
  if (code.empty() && status.code() == ErrorCode::kInsufficientScope) code = "insufficient_scope";
  Json details = status.details();
  if (!status.field().empty()) {
    if (!details.is_object()) details = Json::object();
    details["field"] = status.field();
  }
  Response r = Error(http, std::move(code), status.message(), details);
  if (auto seconds = status.retry_after()) r.headers.emplace_back("Retry-After", std::to_string(*seconds));
  return r;
}

Response Response::Page(const Status& status, std::string html) {
  Response r = Html(status.ok() ? 200 : core::HttpStatusFor(status.code()), std::move(html));
  if (auto seconds = status.retry_after()) r.headers.emplace_back("Retry-After", std::to_string(*seconds));
  return r;
}

Response Response::RawJson(int status, const Json& body) {
  Response r;
  r.status = status;
  r.body = DumpJson(body);
  return r;
}

Response Response::Html(int status, std::string html) {
  Response r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::move(html);
  return r;
}

Response Response::Text(int status, std::string text, std::string content_type) {
  Response r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.body = std::move(text);
  return r;
}

Response Response::Redirect(const std::string& location, int status) {
  Response r;
  r.status = status;
  r.content_type.clear();
  r.headers.emplace_back("Location", location);
  return r;
}

}  // namespace rendezvous

namespace rendezvous::core {

int HttpStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return 200;
    case ErrorCode::kInvalid: return 400;
    case ErrorCode::kUnauthenticated: return 401;
    case ErrorCode::kForbidden: return 403;
    case ErrorCode::kInsufficientScope: return 403;
    case ErrorCode::kNotFound: return 404;
    case ErrorCode::kConflict: return 409;
    case ErrorCode::kTooLarge: return 413;
    case ErrorCode::kUnprocessable: return 422;
    case ErrorCode::kUnsupportedMediaType: return 415;
    case ErrorCode::kRateLimited: return 429;
    case ErrorCode::kUpstreamFailed: return 502;
    case ErrorCode::kUpstreamTimeout: return 504;
    case ErrorCode::kUnavailable: return 503;
    case ErrorCode::kInternal: return 500;
  }
  return 500;
}

std::string_view DefaultErrorCode(int status) {
  switch (status) {
    case 400: return "validation_error";
    case 401: return "unauthorized";
    case 403: return "forbidden";
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 409: return "conflict";
    case 413: return "payload_too_large";
    case 408: return "request_timeout";
    case 414: return "uri_too_long";
    case 415: return "unsupported_media_type";
    case 417: return "expectation_failed";
    case 422: return "unprocessable_entity";
    case 431: return "header_fields_too_large";
    case 429: return "rate_limited";
    case 500: return "internal_error";
    case 501: return "not_implemented";
    case 502: return "bad_gateway";
    case 504: return "gateway_timeout";
    case 503: return "service_unavailable";
    case 505: return "http_version_not_supported";
    default: return status >= 500 ? "internal_error" : "error";
  }
}

std::string DumpJson(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

int JsonNestingDepth(std::string_view text, int limit) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return limit + 1;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace rendezvous::core
