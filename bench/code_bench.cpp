// Authorization-code exchange throughput against a running server: N connections take codes
// from a shared counter and exchange each once, until the time is up or the codes run out.
//   code_bench URL CLIENT_ID CLIENT_SECRET REDIRECT_URI SECONDS CONNECTIONS CODE_PREFIX CODE_COUNT
// The codes are CODE_PREFIX1 .. CODE_PREFIX<CODE_COUNT>, pre-created in oauth_codes by bench/run.sh.
// Prints one JSON line; the rate is over the time actually spent.
#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "load_support.hpp"

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
  std::atomic<long> next{1};
  bench::Tally tally;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::seconds(seconds);
  std::vector<std::thread> threads;
  for (int t = 0; t < connections; ++t) {
    threads.emplace_back([&] {
      bench::FormPoster poster(url);
      std::vector<double> mine;
      const std::string fixed = "grant_type=authorization_code&client_id=" + poster.Escape(client_id) +
                                "&client_secret=" + poster.Escape(secret) +
                                "&redirect_uri=" + poster.Escape(redirect_uri) + "&code=";
      while (std::chrono::steady_clock::now() < deadline) {
        const long i = next++;
        if (i > count) break;
        bench::FormPoster::Answer a = poster.Post(fixed + poster.Escape(prefix + std::to_string(i)));
        if (!a.ok || !a.json.contains("access_token")) {
          ++tally.failed;
          continue;
        }
        mine.push_back(a.ms);
        ++tally.ok;
      }
      tally.AddLatencies(mine);
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return tally.Report(connections, elapsed);
}
