#include "http_fetch.hpp"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <mutex>

#include "rendezvous/net.hpp"

namespace rendezvous::calendar {
namespace {

struct Sink {
  std::string* body;
  size_t max;
  bool too_large = false;
};

size_t Write(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t bytes = size * n;
  if (sink->body->size() + bytes > sink->max) {
    sink->too_large = true;
    return 0;  // aborts the transfer
  }
  sink->body->append(data, bytes);
  return bytes;
}

// Keeps the ETag and Last-Modified headers of the final response (bounded: 1 KiB each).
size_t Header(char* data, size_t size, size_t n, void* user) {
  auto* result = static_cast<FetchResult*>(user);
  const std::string_view line(data, size * n);
  const size_t colon = line.find(':');
  if (line.rfind("HTTP/", 0) == 0) result->etag.clear(), result->last_modified.clear();
  if (colon == std::string_view::npos) return size * n;
  std::string name(line.substr(0, colon));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.remove_suffix(1);
  if (value.size() > 1024) return size * n;
  if (name == "etag") result->etag.assign(value);
  if (name == "last-modified") result->last_modified.assign(value);
  return size * n;
}

struct SocketGuard {
  bool block = false;
  std::string blocked;  // why the address was refused
};

// Why the address curl is about to connect to is not public (rendezvous/net.hpp); empty if it is.
std::string NonPublic(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) {
    return net::ClassifyIpv4(ntohl(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr));
  }
  if (sa->sa_family == AF_INET6) {
    std::uint8_t bytes[16];
    std::memcpy(bytes, reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr.s6_addr, 16);
    return net::ClassifyIpv6(bytes);
  }
  return "not an IP address";
}

// The check is on the socket curl opens for the connection, so the address checked is the address
// connected to, whatever a name resolved to before.
curl_socket_t OpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* guard = static_cast<SocketGuard*>(user);
  if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
  if (guard->block) {
    std::string why = NonPublic(&address->addr);
    if (!why.empty()) {
      guard->blocked = std::move(why);
      return CURL_SOCKET_BAD;
    }
  }
  return ::socket(address->family, address->socktype, address->protocol);
}

}  // namespace

const char* OutcomeLabel(FetchOutcome outcome) {
  switch (outcome) {
    case FetchOutcome::kOk:
      return "ok";
    case FetchOutcome::kTimeout:
      return "timeout";
    case FetchOutcome::kConnectFailed:
      return "connect_failed";
    case FetchOutcome::kTooLarge:
      return "too_large";
    case FetchOutcome::kBlocked:
      return "blocked";
    case FetchOutcome::kBadUrl:
      return "bad_url";
    case FetchOutcome::kError:
      return "error";
  }
  return "error";
}

FetchResult Fetch(const FetchRequest& request) noexcept {
  static std::once_flag curl_once;
  std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  FetchResult result;
  try {
    CURL* curl = curl_easy_init();
    if (!curl) {
      result.error = "could not create an HTTP client";
      return result;
    }
    Sink sink{&result.body, request.max_response_bytes};
    SocketGuard guard{request.block_private_networks, {}};
    curl_slist* headers = nullptr;
    for (const std::string& h : request.headers) headers = curl_slist_append(headers, h.c_str());
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_PROXY, "");
    curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
    curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(request.max_response_bytes));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Write);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &Header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &result);
    curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, &OpenSocket);
    curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, &guard);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "rendezvous-calendar/1");
    if (request.method == "POST" || request.method == "PATCH") {
      curl_easy_setopt(curl, CURLOPT_POST, 1L);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    }
    if (request.method != "GET" && request.method != "POST") {
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    const CURLcode rc = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.status);
    char* type = nullptr;
    if (curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type) result.content_type = type;
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    if (rc == CURLE_OK) {
      result.outcome = FetchOutcome::kOk;
    } else if (sink.too_large || rc == CURLE_FILESIZE_EXCEEDED) {
      result.outcome = FetchOutcome::kTooLarge;
      result.error = "the response is larger than " + std::to_string(request.max_response_bytes) + " bytes";
    } else if (!guard.blocked.empty()) {
      result.outcome = FetchOutcome::kBlocked;
      result.error = "the address is not public (" + guard.blocked + ")";
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
      result.outcome = FetchOutcome::kTimeout;
      result.error = "timed out";
    } else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST) {
      result.outcome = FetchOutcome::kConnectFailed;
      result.error = curl_easy_strerror(rc);
    } else if (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL) {
      result.outcome = FetchOutcome::kBadUrl;
      result.error = curl_easy_strerror(rc);
    } else {
      result.outcome = FetchOutcome::kError;
      result.error = curl_easy_strerror(rc);
    }
    if (!result.ok()) result.body.clear();
  } catch (const std::exception& e) {
    result = FetchResult{};
    result.error = e.what();
  }
  return result;
}

}  // namespace rendezvous::calendar
