// What the load programs in bench/ share: collecting libcurl answers, form-encoding values, one
// connection posting forms, and the tally of a run with the JSON line it prints.
#pragma once

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bench {

// CURLOPT_WRITEFUNCTION that appends to the std::string given as CURLOPT_WRITEDATA.
inline size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

inline std::string Escape(CURL* c, const std::string& s) {
  char* e = curl_easy_escape(c, s.c_str(), static_cast<int>(s.size()));
  std::string out(e);
  curl_free(e);
  return out;
}

// The p-quantile (0..1) of latencies sorted ascending; 0 when there are none.
inline double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size())))];
}

// The answer to one request: the status (0 when none came), the body and how long it took.
struct Exchange {
  bool transport_ok = false;  // libcurl completed the exchange
  long status = 0;
  std::string body;
  double ms = 0;
};

// Performs the request set up on `c` (method, body) against `url` with `headers`, at most 10 s.
inline Exchange Perform(CURL* c, curl_slist* headers, const std::string& url) {
  Exchange x;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &x.body);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
  const auto t0 = std::chrono::steady_clock::now();
  x.transport_ok = curl_easy_perform(c) == CURLE_OK;
  x.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x.status);
  return x;
}

// POSTs `body` to `url` on a reused libcurl handle (its connection kept alive) with `headers`,
// at most 10 s.
inline Exchange Post(CURL* c, curl_slist* headers, const std::string& url, const std::string& body) {
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
  return Perform(c, headers, url);
}

// GETs `url` on a reused libcurl handle (its connection kept alive while the peer keeps it) with
// `headers`, at most 10 s.
inline Exchange Get(CURL* c, curl_slist* headers, const std::string& url) {
  curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  return Perform(c, headers, url);
}

// One connection (a libcurl handle, reused) that posts application/x-www-form-urlencoded bodies to
// one URL. Not thread-safe: one per thread.
class FormPoster {
 public:
  // The answer to one post: `ok` when the exchange completed with HTTP 200 and a JSON object.
  struct Answer {
    bool ok = false;
    nlohmann::json json;
    double ms = 0;  // the time the exchange took
  };

  explicit FormPoster(std::string url)
      : url_(std::move(url)),
        curl_(curl_easy_init()),
        headers_(curl_slist_append(nullptr, "Content-Type: application/x-www-form-urlencoded")) {}
  ~FormPoster() {
    curl_slist_free_all(headers_);
    curl_easy_cleanup(curl_);
  }
  FormPoster(const FormPoster&) = delete;
  FormPoster& operator=(const FormPoster&) = delete;

  std::string Escape(const std::string& s) const { return bench::Escape(curl_, s); }

  Answer Post(const std::string& body) {
    std::string response;
    curl_easy_setopt(curl_, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers_);
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &Append);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &response);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT, 10L);
    auto t0 = std::chrono::steady_clock::now();
    CURLcode rc = curl_easy_perform(curl_);
    Answer a;
    a.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    long status = 0;
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status);
    a.json = nlohmann::json::parse(response, nullptr, false);
    a.ok = rc == CURLE_OK && status == 200 && a.json.is_object();
    return a;
  }

 private:
  const std::string url_;
  CURL* const curl_;
  curl_slist* const headers_;
};

// The counts and latencies of a run, added to by every connection.
class Tally {
 public:
  std::atomic<long> ok{0};
  std::atomic<long> failed{0};

  // Adds the latencies one connection measured. Thread-safe.
  void AddLatencies(const std::vector<double>& mine) {
    std::lock_guard lock(mu_);
    latencies_ms_.insert(latencies_ms_.end(), mine.begin(), mine.end());
  }

  // Prints {"connections","seconds","ok","failed","per_second","p50_ms","p99_ms"} on one line, the
  // rate over `seconds`; returns the exit status: 0 when nothing failed. Call after the connections
  // are done.
  template <typename Seconds>
  int Report(size_t connections, Seconds seconds) {
    std::sort(latencies_ms_.begin(), latencies_ms_.end());
    auto pct = [&](double p) { return Percentile(latencies_ms_, p); };
    nlohmann::json out = {{"connections", connections},
                          {"seconds", seconds},
                          {"ok", ok.load()},
                          {"failed", failed.load()},
                          {"per_second", static_cast<double>(ok.load()) / seconds},
                          {"p50_ms", pct(0.50)},
                          {"p99_ms", pct(0.99)}};
    std::cout << out.dump() << std::endl;
    return failed.load() == 0 ? 0 : 1;
  }

 private:
  std::mutex mu_;
  std::vector<double> latencies_ms_;
};

}  // namespace bench
