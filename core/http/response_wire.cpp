#include "http/response_wire.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <string>

#include "rendezvous/time.hpp"

namespace rendezvous::core {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x >= 'A' && x <= 'Z' ? x + 32 : x) == (y >= 'A' && y <= 'Z' ? y + 32 : y);
         });
}

bool IsHeaderName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

bool IsHeaderValue(std::string_view value) {
  return std::none_of(value.begin(), value.end(), [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
}

// IMF-fixdate of the current second, formatted once a second per thread.
std::string_view HttpDate() {
  thread_local std::time_t cached_second = 0;
  thread_local std::string text;
  std::time_t now = std::time(nullptr);
  if (now != cached_second || text.empty()) {
    text = time::FormatHttpDate(static_cast<time::Millis>(now) * 1000);
    cached_second = now;
  }
  return text;
}

void AppendField(std::string& out, std::string_view name, std::string_view value) {
  out.append(name).append(": ").append(value).append("\r\n");
}

}  // namespace

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

bool IsReservedResponseHeader(std::string_view name) {
  for (std::string_view reserved :
       {"connection", "content-length", "transfer-encoding", "date", "x-request-id", "content-type"})
    if (EqualsIgnoreCase(name, reserved)) return true;
  return false;
}

std::string SerializeResponse(const Response& response, const WireContext& context, std::string* dropped) {
  const int status = response.status;
  const bool bodiless = status < 200 || status == 204 || status == 304;
  std::string out;
  out.reserve(192 + response.body.size() + response.headers.size() * 48);
  out.append("HTTP/1.1 ")
      .append(std::to_string(status))
      .append(" ")
      .append(ReasonPhrase(status))
      .append("\r\n");
  AppendField(out, "X-Request-Id", context.request_id);
  AppendField(out, "Date", HttpDate());
  if (!response.content_type.empty() && !bodiless && IsHeaderValue(response.content_type))
    AppendField(out, "Content-Type", response.content_type);
  for (const auto& [name, value] : response.headers) {
    if (!IsHeaderName(name) || !IsHeaderValue(value) || IsReservedResponseHeader(name)) {
      if (dropped) dropped->append(dropped->empty() ? "" : ", ").append(name);
      continue;
    }
    AppendField(out, name, value);
  }
  if (!bodiless) AppendField(out, "Content-Length", std::to_string(response.body.size()));
  AppendField(out, "Connection", context.keep_alive ? "keep-alive" : "close");
  out.append("\r\n");
  if (!bodiless && !context.head) out.append(response.body);
  return out;
}

}  // namespace rendezvous::core
