// Refresh-grant throughput against a running server: N connections, each rotating its own
// refresh token in a loop (every grant rotates, so each connection follows its own chain).
//   refresh_bench URL CLIENT_ID CLIENT_SECRET SECONDS TOKENS_FILE
// TOKENS_FILE: one refresh token per line; one connection per line. Prints one JSON line.
#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
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
  if (argc != 6) {
    std::cerr << "usage: refresh_bench URL CLIENT_ID CLIENT_SECRET SECONDS TOKENS_FILE\n";
    return 2;
  }
  const std::string url = argv[1], client_id = argv[2], secret = argv[3];
  const int seconds = std::stoi(argv[4]);
  std::vector<std::string> tokens;
  std::ifstream in(argv[5]);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) tokens.push_back(line);
  curl_global_init(CURL_GLOBAL_ALL);
  std::atomic<long> ok{0}, failed{0};
  std::mutex mu;
  std::vector<double> latencies_ms;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::vector<std::thread> threads;
  for (std::string token : tokens) {
    threads.emplace_back([&, token]() mutable {
      CURL* c = curl_easy_init();
      std::vector<double> mine;
      curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/x-www-form-urlencoded");
      while (std::chrono::steady_clock::now() < deadline) {
        std::string body = "grant_type=refresh_token&client_id=" + Escape(c, client_id) +
                           "&client_secret=" + Escape(c, secret) + "&refresh_token=" + Escape(c, token);
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
        if (rc != CURLE_OK || status != 200 || !j.is_object() || !j.contains("refresh_token")) {
          ++failed;
          break;  // the chain is broken; this connection stops
        }
        token = j["refresh_token"].get<std::string>();
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
  std::sort(latencies_ms.begin(), latencies_ms.end());
  auto pct = [&](double p) {
    return bench::Percentile(latencies_ms, p);
  };
  nlohmann::json out = {{"connections", tokens.size()}, {"seconds", seconds}, {"ok", ok.load()},
                        {"failed", failed.load()}, {"per_second", static_cast<double>(ok.load()) / seconds},
                        {"p50_ms", pct(0.50)}, {"p99_ms", pct(0.99)}};
  std::cout << out.dump() << std::endl;
  return failed.load() == 0 ? 0 : 1;
}
