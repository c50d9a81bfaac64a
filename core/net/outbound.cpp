#include "rendezvous/outbound.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include <curl/curl.h>

#include "rendezvous/address_policy.hpp"
#include "rendezvous/url.hpp"
#include "tls_trust.hpp"

namespace rendezvous::net {
namespace {

using Clock = std::chrono::steady_clock;

// Connections a thread keeps for its Perform() calls (to as many destinations); a new one beyond
// closes the longest idle.
constexpr size_t kThreadConnections = 8;
// Addresses of a name tried in turn while connections are refused.
constexpr size_t kMaxAddressesTried = 4;

HttpResponse Failed(HttpOutcome outcome, std::string error, Clock::time_point started) {
  HttpResponse r;
  r.outcome = outcome;
  r.error = std::move(error);
  r.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return r;
}

// Runs `request` (its address given) alone on `multi` to its end. The client's own deadlines end
// it; the bound here only guards against a client that never finishes.
HttpResponse Drive(HttpMulti& multi, HttpRequest request, Clock::time_point started) {
  const auto give_up = started + request.timeout + std::chrono::seconds(5);
  if (!multi.Start(1, std::move(request)))
    return Failed(HttpOutcome::kError, "could not create an HTTP client", started);
  while (Clock::now() < give_up) {
    auto done = multi.Perform();
    if (!done.empty()) return std::move(done.front().second);
    multi.Poll(std::chrono::milliseconds(1000));
  }
  multi.CancelAll();
  return Failed(HttpOutcome::kTimeout, "timed out", started);
}

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
  const auto started = Clock::now();
  try {
    Result<Url> url = ParseUrl(request.url);
    if (!url.ok() || (url->scheme != "http" && url->scheme != "https")) {
      return Failed(HttpOutcome::kBadUrl,
                    url.ok() ? "the URL's scheme is not http or https" : url.status().message(), started);
    }
    const int port = url->EffectivePort();
    std::vector<std::string> addresses;
    if (!request.pin.address.empty() && request.pin.host == url->host && request.pin.port == port) {
      addresses.push_back(request.pin.address);
    } else if (IsAddressLiteral(url->host)) {
      addresses.push_back(url->host);
    } else {
      Result<std::vector<std::string>> resolved = ResolveHost(url->host);
      if (!resolved.ok() || resolved->empty()) {
        return Failed(HttpOutcome::kConnectFailed, "could not resolve host " + url->host, started);
      }
      addresses = std::move(*resolved);
    }
    if (request.block_private_networks) {
      // Every address of the name, not only the one connected to: a name that also points inside
      // is refused whichever address would be tried.
      for (const std::string& a : addresses) {
        const std::optional<std::string> why = ClassifyAddress(a);
        if (!why || !why->empty()) {
          return Failed(HttpOutcome::kBlocked,
                        "the address is not public (" + (why ? *why : std::string("not an IP address")) + ")",
                        started);
        }
      }
    }
    if (addresses.size() > kMaxAddressesTried) addresses.resize(kMaxAddressesTried);

    thread_local HttpMulti multi(kThreadConnections);
    tls_trust::Generation(true);  // the environment's CAs as they are now
    multi.Perform();              // kept connections that received anything unasked are dropped now
    HttpResponse response;
    for (const std::string& address : addresses) {
      HttpRequest one = request;
      one.pin = {url->host, port, address};
      const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
      if (spent >= request.timeout) return Failed(HttpOutcome::kTimeout, "timed out", started);
      one.timeout = request.timeout - spent;
      one.connect_timeout = std::min(request.connect_timeout, one.timeout);
      response = Drive(multi, std::move(one), started);
      if (response.outcome != HttpOutcome::kConnectFailed) break;
    }
    if (!request.detailed_error && response.outcome == HttpOutcome::kConnectFailed) {
      response.error = "could not connect";
    }
    response.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    return response;
  } catch (const std::exception& e) {
    return Failed(HttpOutcome::kError, e.what(), started);
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

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
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
    // The HTTP client's trust, spelled out: libcurl reads neither the configuration nor
    // SSL_CERT_FILE / SSL_CERT_DIR by itself.
    const tls_trust::Paths trust = tls_trust::CurlPaths();
    curl_easy_setopt(c, CURLOPT_CAINFO, trust.ca_file.empty() ? nullptr : trust.ca_file.c_str());
    curl_easy_setopt(c, CURLOPT_CAPATH, trust.ca_dir.empty() ? nullptr : trust.ca_dir.c_str());
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
