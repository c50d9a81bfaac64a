#include "rendezvous/outbound.hpp"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "rendezvous/net.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::net {
namespace {

constexpr size_t kMaxKeptHeader = 1024;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// TLS sessions are shared by every handle of the process, so a reconnection to a server resumes
// its session whichever thread made the first one. (Connections are not: libcurl does not support
// sharing them between threads.) Never freed: handles of exiting threads may still use it.
std::mutex* ShareLocks() {
  static auto* locks = new std::mutex[CURL_LOCK_DATA_LAST];
  return locks;
}

void LockShare(CURL*, curl_lock_data data, curl_lock_access, void*) { ShareLocks()[data].lock(); }
void UnlockShare(CURL*, curl_lock_data data, void*) { ShareLocks()[data].unlock(); }

CURLSH* TlsSessions() {
  static CURLSH* share = [] {
    CURLSH* s = curl_share_init();
    if (s != nullptr) {
      curl_share_setopt(s, CURLSHOPT_LOCKFUNC, &LockShare);
      curl_share_setopt(s, CURLSHOPT_UNLOCKFUNC, &UnlockShare);
      curl_share_setopt(s, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    }
    return s;
  }();
  return share;
}

// One request's state while libcurl runs it: the callbacks' target.
struct Exchange {
  const HttpRequest* request = nullptr;
  HttpResponse response;
  curl_slist* headers = nullptr;
  curl_slist* resolve = nullptr;
  size_t received = 0;
  bool too_large = false;
  std::string blocked;  // why the address was refused
  char error[CURL_ERROR_SIZE] = {0};
  std::chrono::steady_clock::time_point started;

  Exchange() = default;
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  ~Exchange() {
    curl_slist_free_all(headers);
    curl_slist_free_all(resolve);
  }
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const size_t len = size * n;
  x->received += len;
  if (x->received > x->request->max_response_bytes) {
    x->too_large = true;
    return 0;  // aborts the transfer
  }
  std::string& body = x->response.body;
  const size_t keep = x->request->keep_response_bytes;
  if (body.size() < keep) body.append(data, std::min(len, keep - body.size()));
  return len;
}

// Keeps the wanted headers of the final answer (a new status line forgets those of an interim one).
size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const size_t len = size * n;
  const std::string_view line(data, len);
  auto& kept = x->response.headers;
  if (line.rfind("HTTP/", 0) == 0) {
    kept.clear();
    return len;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return len;
  const std::string_view name = text::Trim(line.substr(0, colon));
  const auto& wanted = x->request->keep_headers;  // lower case
  const auto match = std::find_if(wanted.begin(), wanted.end(),
                                  [&](const std::string& w) { return text::EqualsIgnoreCase(w, name); });
  if (match == wanted.end()) return len;
  const std::string_view value = text::Trim(line.substr(colon + 1));
  if (value.size() > kMaxKeptHeader) return len;
  auto it = std::find_if(kept.begin(), kept.end(), [&](const auto& h) { return h.first == *match; });
  if (it != kept.end()) {
    it->second.assign(value);
  } else {
    kept.emplace_back(*match, std::string(value));
  }
  return len;
}

// Why the address curl is about to connect to is not public (rendezvous/net.hpp); empty if it is.
std::string NonPublic(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) {
    return ClassifyIpv4(ntohl(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr));
  }
  if (sa->sa_family == AF_INET6) {
    std::uint8_t bytes[16];
    std::memcpy(bytes, reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr.s6_addr, 16);
    return ClassifyIpv6(bytes);
  }
  return "not an IP address";
}

// The check is on the socket curl opens for the connection, so the address checked is the address
// connected to, whatever a name resolved to before.
curl_socket_t OpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* x = static_cast<Exchange*>(user);
  if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
  std::string why = NonPublic(&address->addr);
  if (!why.empty()) {
    x->blocked = std::move(why);
    return CURL_SOCKET_BAD;
  }
  return ::socket(address->family, address->socktype, address->protocol);
}

void SetUp(CURL* e, Exchange& x) {
  const HttpRequest& r = *x.request;
  for (const std::string& h : r.headers) x.headers = curl_slist_append(x.headers, h.c_str());
  if (!r.pin.address.empty() && !IsAddressLiteral(r.pin.host)) {
    x.resolve = curl_slist_append(x.resolve, CurlResolveEntry(r.pin.host, r.pin.port, r.pin.address).c_str());
    curl_easy_setopt(e, CURLOPT_RESOLVE, x.resolve);
  }
  curl_easy_setopt(e, CURLOPT_SHARE, TlsSessions());
  curl_easy_setopt(e, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, x.headers);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  if (!r.environment_proxy) {
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
  }
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout.count()));
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(r.connect_timeout.count()));
  if (r.max_response_bytes < static_cast<size_t>(std::numeric_limits<curl_off_t>::max())) {
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(r.max_response_bytes));
  }
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &x);
  if (!r.keep_headers.empty()) {
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &OnHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &x);
  }
  if (r.block_private_networks) {
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &OpenSocket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, &x);
  }
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x.error);
  if (r.accept_encoding) curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
  if (!r.user_agent.empty()) curl_easy_setopt(e, CURLOPT_USERAGENT, r.user_agent.c_str());
  if (r.method == "POST" || r.method == "PATCH" || r.method == "PUT") {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
  }
  if (r.method != "GET" && r.method != "POST") curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r.method.c_str());
  x.started = std::chrono::steady_clock::now();
}

void Finish(CURL* e, CURLcode rc, Exchange& x) {
  HttpResponse& out = x.response;
  const HttpRequest& r = *x.request;
  out.duration =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - x.started);
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &out.status);
  char* type = nullptr;
  if (curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type != nullptr) out.content_type = type;
  const std::string words = x.error[0] != '\0' ? std::string(x.error) : curl_easy_strerror(rc);
  const std::string said = r.detailed_error ? words : curl_easy_strerror(rc);
  if (rc == CURLE_OK) {
    out.outcome = HttpOutcome::kOk;
  } else if (x.too_large || rc == CURLE_FILESIZE_EXCEEDED) {
    out.outcome = HttpOutcome::kTooLarge;
    out.error = "the response is larger than " + std::to_string(r.max_response_bytes) + " bytes";
  } else if (!x.blocked.empty()) {
    out.outcome = HttpOutcome::kBlocked;
    out.error = "the address is not public (" + x.blocked + ")";
  } else if (rc == CURLE_OPERATION_TIMEDOUT) {
    out.outcome = HttpOutcome::kTimeout;
    out.error = "timed out";
  } else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST) {
    out.outcome = HttpOutcome::kConnectFailed;
    out.error = said;
  } else if (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL) {
    out.outcome = HttpOutcome::kBadUrl;
    out.error = said;
  } else {
    out.outcome = HttpOutcome::kError;
    out.error = said;
  }
  if (out.outcome != HttpOutcome::kOk && out.outcome != HttpOutcome::kTooLarge) out.status = 0;
}

// A thread's handles for reuse (their connections, resolved names and TLS sessions stay): one for
// requests under the address check, one for the others, so a connection opened without the check
// never serves a request that has it.
struct ThreadHandles {
  CURL* checked = nullptr;
  CURL* unchecked = nullptr;
  ~ThreadHandles() {
    if (checked != nullptr) curl_easy_cleanup(checked);
    if (unchecked != nullptr) curl_easy_cleanup(unchecked);
  }
};

}  // namespace

const char* OutcomeLabel(HttpOutcome outcome) {
  switch (outcome) {
    case HttpOutcome::kOk:
      return "ok";
    case HttpOutcome::kTimeout:
      return "timeout";
    case HttpOutcome::kConnectFailed:
      return "connect_failed";
    case HttpOutcome::kTooLarge:
      return "too_large";
    case HttpOutcome::kBlocked:
      return "blocked";
    case HttpOutcome::kBadUrl:
      return "bad_url";
    case HttpOutcome::kError:
      return "error";
  }
  return "error";
}

std::string HttpResponse::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return "";
}

HttpResponse Perform(const HttpRequest& request) noexcept {
  try {
    GlobalInit();
    thread_local ThreadHandles handles;
    // A pinned request gets a handle of its own: its pin must not outlive it in a reused handle's
    // name cache.
    const bool pinned = !request.pin.address.empty();
    CURL*& slot = request.block_private_networks ? handles.checked : handles.unchecked;
    CURL* e = pinned ? curl_easy_init() : (slot != nullptr ? slot : (slot = curl_easy_init()));
    if (e == nullptr) {
      HttpResponse failed;
      failed.error = "could not create an HTTP client";
      return failed;
    }
    Exchange x;
    x.request = &request;
    SetUp(e, x);
    const CURLcode rc = curl_easy_perform(e);
    Finish(e, rc, x);
    if (pinned) {
      curl_easy_cleanup(e);
    } else {
      curl_easy_reset(e);
    }
    return std::move(x.response);
  } catch (const std::exception& e) {
    HttpResponse failed;
    failed.error = e.what();
    return failed;
  }
}

// ---- SMTP ----

namespace {

struct Upload {
  const std::string* data = nullptr;
  size_t pos = 0;
};

size_t ReadUpload(char* buffer, size_t size, size_t count, void* user) {
  auto* up = static_cast<Upload*>(user);
  const size_t n = std::min(size * count, up->data->size() - up->pos);
  std::memcpy(buffer, up->data->data() + up->pos, n);
  up->pos += n;
  return n;
}

}  // namespace

SmtpResult SendSmtp(const SmtpRequest& request) noexcept {
  SmtpResult result;
  try {
    GlobalInit();
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
    if (!curl) {
      result.error = "could not create an SMTP client";
      return result;
    }
    CURL* c = curl.get();
    std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> rcpts(
        curl_slist_append(nullptr, request.rcpt_to.c_str()), &curl_slist_free_all);
    Upload upload{&request.message, 0};
    char error[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
    if (!request.user.empty()) {
      curl_easy_setopt(c, CURLOPT_USERNAME, request.user.c_str());
      curl_easy_setopt(c, CURLOPT_PASSWORD, request.password.c_str());
      // Credentials never cross the network in clear: smtp:// must upgrade with STARTTLS.
      curl_easy_setopt(c, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_ALL));
    } else {
      curl_easy_setopt(c, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_TRY));
    }
    curl_easy_setopt(c, CURLOPT_MAIL_FROM, request.mail_from.c_str());
    curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpts.get());
    curl_easy_setopt(c, CURLOPT_READFUNCTION, &ReadUpload);
    curl_easy_setopt(c, CURLOPT_READDATA, &upload);
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.message.size()));
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
    const CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &result.reply);
    result.sent = rc == CURLE_OK;
    if (!result.sent) result.error = error[0] != '\0' ? std::string(error) : curl_easy_strerror(rc);
  } catch (const std::exception& e) {
    result.sent = false;
    result.error = e.what();
  }
  return result;
}

}  // namespace rendezvous::net
