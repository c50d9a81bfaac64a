// What the load programs in bench/ share: collecting libcurl answers, form-encoding values, and
// percentiles of the latencies they measured.
#pragma once

#include <curl/curl.h>

#include <algorithm>
#include <string>
#include <vector>

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

}  // namespace bench
