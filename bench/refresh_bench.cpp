// Refresh-grant throughput against a running server: N connections, each rotating its own
// refresh token in a loop (every grant rotates, so each connection follows its own chain).
//   refresh_bench URL CLIENT_ID CLIENT_SECRET SECONDS TOKENS_FILE
// TOKENS_FILE: one refresh token per line; one connection per line. Prints one JSON line.
#include <curl/curl.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "load_support.hpp"

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
  bench::Tally tally;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::vector<std::thread> threads;
  for (std::string token : tokens) {
    threads.emplace_back([&, token]() mutable {
      bench::FormPoster poster(url);
      std::vector<double> mine;
      while (std::chrono::steady_clock::now() < deadline) {
        bench::FormPoster::Answer a =
            poster.Post("grant_type=refresh_token&client_id=" + poster.Escape(client_id) +
                        "&client_secret=" + poster.Escape(secret) + "&refresh_token=" + poster.Escape(token));
        if (!a.ok || !a.json.contains("refresh_token")) {
          ++tally.failed;
          break;  // the chain is broken; this connection stops
        }
        token = a.json["refresh_token"].get<std::string>();
        mine.push_back(a.ms);
        ++tally.ok;
      }
      tally.AddLatencies(mine);
    });
  }
  for (auto& t : threads) t.join();
  return tally.Report(tokens.size(), seconds);
}
