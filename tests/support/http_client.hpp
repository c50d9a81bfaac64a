// A blocking HTTP client for tests (libcurl). One connection cache per client object.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rendezvous::testing {

struct HttpResult {
  long status = 0;                              // 0 when the request failed at the transport level
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string error;                            // transport error text
  long connects = 0;                            // new connections this request opened

  nlohmann::json Json() const;                  // parsed body (null when not JSON)
  std::string Header(const std::string& lower_name) const;
};

// How a client reaches its servers, for tests of TLS peers (nginx in front of the server).
struct HttpTransport {
  std::string ca_file;                  // PEM certificates to verify https peers with ("": the system's)
  std::vector<std::string> connect_to;  // curl's CONNECT_TO: "HOST:PORT:CONNECT-HOST:CONNECT-PORT"
  std::string local_address;            // source address of connections ("": any)
};

class HttpClient {
 public:
  HttpClient();
  explicit HttpClient(HttpTransport transport);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpResult Request(const std::string& method, const std::string& url, const std::string& body = "",
                     const std::vector<std::string>& headers = {}, long timeout_ms = 10000);
  HttpResult Get(const std::string& url, const std::vector<std::string>& headers = {}) {
    return Request("GET", url, "", headers);
  }
  HttpResult PostJson(const std::string& url, const nlohmann::json& body, const std::vector<std::string>& headers = {});

 private:
  HttpTransport transport_;
  void* curl_;
};

}  // namespace rendezvous::testing
