// Authorization-code exchange throughput against a running server: N connections take codes
// from a shared counter and exchange each once, until the time is up or the codes run out.
//   code_bench URL CLIENT_ID CLIENT_SECRET REDIRECT_URI SECONDS CONNECTIONS CODE_PREFIX CODE_COUNT
// The codes are CODE_PREFIX1 .. CODE_PREFIX<CODE_COUNT>, pre-created in oauth_codes by bench/run.sh.
// Prints one JSON line; the rate is over the time actually spent.
#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "load_support.hpp"

using bench::Append;
using bench::Escape;

int main(int argc, char** argv) {
  if (argc != 9) {
    std::cerr << "usage: code_bench URL CLIENT_ID CLIENT_SECRET REDIRECT_URI SECONDS CONNECTIONS CODE_PREFIX CODE_COUNT\n";
    return 2;
  }
  const std::string url = argv[1], client_id = argv[2], secret = argv[3], redirect_uri = argv[4];
  const int seconds = std::stoi(argv[5]);
  const int connections = std::stoi(argv[6]);
  const std::string prefix = argv[7];
  const long count = std::stol(argv[8]);
  curl_global_init(CURL_GLOBAL_ALL);
  std::atomic<long> next{1}, ok{0}, failed{0};
  std::mutex mu;
  std::vector<double> latencies_ms;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::seconds(seconds);
  std::vector<std::thread> threads;
  for (int t = 0; t < connections; ++t) {
    threads.emplace_back([&] {
      CURL* c = curl_easy_init();
      std::vector<double> mine;
      curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/x-www-form-urlencoded");
      const std::string fixed = "grant_type=authorization_code&client_id=" + Escape(c, client_id) +
                                "&client_secret=" + Escape(c, secret) + "&redirect_uri=" + Escape(c, redirect_uri) +
                                "&code=";
      while (std::chrono::steady_clock::now() < deadline) {
        const long i = next++;
        if (i > count) break;
        const std::string body = fixed + Escape(c, prefix + std::to_string(i));
        std::string response;
        curl_easy_setopt(c, CURLOPT_URL, url.c_str());
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &Append);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &response);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
        auto t0 = std::chrono::steady_clock::now();
        CURLcode rc = curl_easy_perform(c);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        auto j = nlohmann::json::parse(response, nullptr, false);
        if (rc != CURLE_OK || status != 200 || !j.is_object() || !j.contains("access_token")) {
          ++failed;
          continue;
        }
        mine.push_back(ms);
        ++ok;
      }
      curl_slist_free_all(headers);
      curl_easy_cleanup(c);
      std::lock_guard lock(mu);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  auto pct = [&](double p) {
    return bench::Percentile(latencies_ms, p);
  };
  nlohmann::json out = {{"connections", connections}, {"seconds", elapsed}, {"ok", ok.load()},
                        {"failed", failed.load()}, {"per_second", static_cast<double>(ok.load()) / elapsed},
                        {"p50_ms", pct(0.50)}, {"p99_ms", pct(0.99)}};
  std::cout << out.dump() << std::endl;
  return failed.load() == 0 ? 0 : 1;
}
