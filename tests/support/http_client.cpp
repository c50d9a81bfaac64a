#include "http_client.hpp"

#include <string_view>
#include <utility>

#include <curl/curl.h>

#include "http_framing.hpp"

namespace rendezvous::testing {
namespace {

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

// libcurl frames the answer; its header lines are split as the tests' framer splits them.
size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* headers = static_cast<std::multimap<std::string, std::string>*>(user);
  const std::string_view line(data, size * n);
  std::string name, value;
  if (line.rfind("HTTP/", 0) == 0) {
    headers->clear();  // a new response (after 100-continue)
  } else if (SplitHttpHeaderLine(line, name, value)) {
    headers->emplace(std::move(name), std::move(value));
  }
  return size * n;
}

}  // namespace

nlohmann::json HttpResult::Json() const { return nlohmann::json::parse(body, nullptr, false); }

std::string HttpResult::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

HttpClient::HttpClient() : curl_(curl_easy_init()) {}
HttpClient::HttpClient(HttpTransport transport) : transport_(std::move(transport)), curl_(curl_easy_init()) {}
HttpClient::~HttpClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

HttpResult HttpClient::Request(const std::string& method, const std::string& url, const std::string& body,
                               const std::vector<std::string>& headers, long timeout_ms) {
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);
  HttpResult r;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "HEAD") curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  if (!body.empty() || method == "POST" || method == "PATCH" || method == "PUT") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  struct curl_slist* list = nullptr;
  list = curl_slist_append(list, "Expect:");
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &r.headers);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  if (!transport_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, transport_.ca_file.c_str());
  struct curl_slist* connect_to = nullptr;
  for (const auto& entry : transport_.connect_to) connect_to = curl_slist_append(connect_to, entry.c_str());
  if (connect_to) curl_easy_setopt(c, CURLOPT_CONNECT_TO, connect_to);
  if (!transport_.local_address.empty()) curl_easy_setopt(c, CURLOPT_INTERFACE, ("host!" + transport_.local_address).c_str());
  CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) {
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &r.connects);
  } else {
    r.error = curl_easy_strerror(rc);
  }
  curl_slist_free_all(list);
  curl_slist_free_all(connect_to);
  return r;
}

HttpResult HttpClient::PostJson(const std::string& url, const nlohmann::json& body,
                                const std::vector<std::string>& headers) {
  std::vector<std::string> h = headers;
  h.push_back("Content-Type: application/json");
  return Request("POST", url, body.dump(), h);
}

}  // namespace rendezvous::testing
