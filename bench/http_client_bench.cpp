// What one webhook request costs the sending thread, three ways, each with a delivery's method,
// headers and 1 KB body over kept-alive connections:
//   multi  the sender's client, net::HttpMulti (the host library this program is built against);
//   curl   libcurl's multi interface driven directly on epoll (curl_multi_socket_action), its
//          handles set up once: the least a libcurl-based client costs;
//   raw    a minimal HTTP/1.1 client on epoll (the request formatted into one buffer, the answer
//          framed by the tests' framer, tests/support/http_framing.hpp, its Retry-After noted):
//          the floor.
// and what one blocking request (ping, Google, ICS, SMS: one after another on one thread) costs:
//   perform     net::Perform() (the host library's: on the thread's own HttpMulti);
//   curl_easy   the blocking client net::Perform() was before it: a libcurl easy handle kept by the
//               thread, set up for each request as it was (bounds, callbacks for the body and the
//               kept headers, TLS sessions shared) and reset after it.
//   http_client_bench multi|curl|raw|perform|curl_easy PORT REQUESTS CONNECTIONS
// (CONNECTIONS is ignored by perform and curl_easy: one request at a time.)
// PORT: a receiver on 127.0.0.1 (bench/webhook_bench drain). Prints one JSON line: requests,
// failures, seconds, requests/s and the sending thread's CPU per request (µs).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <curl/curl.h>

#include "http_framing.hpp"
#include "rendezvous/outbound.hpp"

namespace {

using rendezvous::testing::AppendHttpRequest;
using rendezvous::testing::HttpKind;
using rendezvous::testing::HttpLimits;
using rendezvous::testing::HttpMessage;
using rendezvous::testing::HttpReader;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// A delivery's body: about 1 KB of compact JSON with a distinct booking uid.
std::string Body(int n) {
  std::string pad(900, 'x');
  return R"({"triggerEvent":"BOOKING_CREATED","createdAt":"2026-11-28T00:00:00Z","payload":{"uid":"b)" +
         std::to_string(n) + R"(","title":")" + pad + R"("}})";
}

// The headers a delivery carries (plugins/webhooks/delivery_sender.cpp), with fixed signatures.
std::vector<std::string> Headers(int n) {
  return {"Content-Type: application/json",
          "webhook-id: msg_" + std::to_string(n) + "aaaaaaaaaaaaaaaaaaaa",
          "webhook-timestamp: 1795000000",
          "webhook-signature: v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
          "X-Cal-Signature-256: 2b9a19f3b4d5b0e7c4c1a0b6d8e2f1a3c5e7f9b1d3f5a7c9e1b3d5f7a9c1e3f5",
          "X-Cal-Webhook-Version: 2021-10-20",
          "Expect:",
          "Connection: keep-alive"};
}

struct Tally {
  int done = 0;
  int failed = 0;
};

Tally RunMulti(int port, int requests, int connections) {
  rendezvous::net::HttpMulti http(static_cast<size_t>(connections));
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/hook";
  int started = 0;
  Tally t;
  auto start_one = [&] {
    rendezvous::net::HttpRequest r;
    r.method = "POST";
    r.url = url;
    r.body = Body(started);
    r.headers = Headers(started);
    r.pin = {"127.0.0.1", port, "127.0.0.1"};
    r.user_agent = "Rendezvous-bench";
    r.timeout = std::chrono::milliseconds(10000);
    r.connect_timeout = r.timeout;
    r.max_response_bytes = 1 << 20;
    r.keep_response_bytes = 1024;
    r.keep_headers = {"retry-after"};
    r.detailed_error = true;
    if (http.Start(static_cast<uint64_t>(started), std::move(r))) ++started;
  };
  while (started < requests && started < connections) start_one();
  while (t.done < requests) {
    http.Poll(std::chrono::milliseconds(100));
    for (auto& [tag, response] : http.Perform()) {
      ++t.done;
      if (!response.ok() || response.status != 200) ++t.failed;
      if (started < requests) start_one();
    }
  }
  return t;
}

// One keep-alive connection of the minimal client.
struct Conn {
  int fd = -1;
  std::string out;
  size_t sent = 0;
  std::string in;
  HttpReader reader{HttpKind::kResponse, HttpLimits{64 * 1024, 1 << 20}};
  bool busy = false;
};

// The request of delivery `n` into `out` (its storage kept): the lines every request has, then
// the delivery's own.
void Format(std::string& out, int n, const std::vector<std::string>& fixed_lines) {
  std::vector<std::string> lines = Headers(n);
  std::erase_if(lines, [](const std::string& h) {
    return h.back() == ':';
  });  // "Expect:" removes a header in libcurl's terms
  lines.insert(lines.begin(), fixed_lines.begin(), fixed_lines.end());
  out.clear();
  AppendHttpRequest(out, "POST", "/hook", lines, Body(n));
}

Tally RunRaw(int port, int requests, int connections) {
  const std::vector<std::string> fixed_lines = {"Host: 127.0.0.1:" + std::to_string(port),
                                                "User-Agent: Rendezvous-bench", "Accept: */*"};
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  std::vector<Conn> conns(static_cast<size_t>(connections));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  int started = 0;
  Tally t;
  auto send_some = [&](Conn& c) {
    while (c.sent < c.out.size()) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n <= 0) return n < 0 && errno == EAGAIN;
      c.sent += static_cast<size_t>(n);
    }
    return true;
  };
  auto start_one = [&](Conn& c) {
    Format(c.out, started++, fixed_lines);
    c.sent = 0;
    c.in.clear();
    c.busy = true;
    send_some(c);
  };
  for (size_t i = 0; i < conns.size(); ++i) {
    Conn& c = conns[i];
    c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(c.fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS) {
      std::perror("connect");
      std::exit(1);
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLET;
    ev.data.u64 = i;
    epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
  }
  std::vector<epoll_event> events(64);
  char buf[16384];
  while (t.done < requests) {
    const int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), 100);
    for (int k = 0; k < n; ++k) {
      Conn& c = conns[events[static_cast<size_t>(k)].data.u64];
      if (!c.busy) {
        if (started < requests) start_one(c);
        continue;
      }
      if (c.sent < c.out.size()) send_some(c);
      for (;;) {
        const ssize_t got = ::recv(c.fd, buf, sizeof buf, 0);
        if (got <= 0) break;
        c.in.append(buf, static_cast<size_t>(got));
      }
      const HttpReader::Result read = c.reader.Read(c.in);
      if (read == HttpReader::Result::kNeedMore) continue;
      ++t.done;
      const HttpMessage& answer = c.reader.message();
      [[maybe_unused]] const std::string retry_after = answer.Header("retry-after");
      if (read == HttpReader::Result::kError || answer.status != 200) ++t.failed;
      c.busy = false;
      if (started < requests) start_one(c);
    }
  }
  for (Conn& c : conns) ::close(c.fd);
  ::close(ep);
  return t;
}

// libcurl driven directly: handles set up once and kept (only the body and headers change), the
// multi driven by its socket interface on epoll: the least libcurl itself costs.
struct CurlMin {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  long timeout_ms = -1;
  static int OnSocket(CURL*, curl_socket_t s, int what, void* user, void*) {
    auto* self = static_cast<CurlMin*>(user);
    epoll_event ev{};
    ev.data.fd = s;
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(self->ep, EPOLL_CTL_DEL, s, nullptr);
      return 0;
    }
    ev.events = ((what & CURL_POLL_IN) != 0 ? static_cast<uint32_t>(EPOLLIN) : 0U) |
                ((what & CURL_POLL_OUT) != 0 ? static_cast<uint32_t>(EPOLLOUT) : 0U);
    if (epoll_ctl(self->ep, EPOLL_CTL_MOD, s, &ev) != 0) epoll_ctl(self->ep, EPOLL_CTL_ADD, s, &ev);
    return 0;
  }
  static int OnTimer(CURLM*, long ms, void* user) {
    static_cast<CurlMin*>(user)->timeout_ms = ms;
    return 0;
  }
};

size_t Drop(char*, size_t size, size_t n, void*) {
  return size * n;
}

Tally RunCurl(int port, int requests, int connections) {
  CurlMin m;
  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &CurlMin::OnSocket);
  curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, &m);
  curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &CurlMin::OnTimer);
  curl_multi_setopt(multi, CURLMOPT_TIMERDATA, &m);
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(connections));
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/hook";
  struct Slot {
    CURL* e = nullptr;
    curl_slist* headers = nullptr;
    std::string body;
  };
  std::vector<Slot> slots(static_cast<size_t>(connections));
  int started = 0;
  Tally t;
  auto start_one = [&](Slot& s) {
    curl_slist_free_all(s.headers);
    s.headers = nullptr;
    for (const std::string& h : Headers(started)) s.headers = curl_slist_append(s.headers, h.c_str());
    s.body = Body(started);
    curl_easy_setopt(s.e, CURLOPT_HTTPHEADER, s.headers);
    curl_easy_setopt(s.e, CURLOPT_POSTFIELDS, s.body.c_str());
    curl_easy_setopt(s.e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(s.body.size()));
    curl_multi_add_handle(multi, s.e);
    ++started;
  };
  for (Slot& s : slots) {
    s.e = curl_easy_init();
    curl_easy_setopt(s.e, CURLOPT_URL, url.c_str());
    curl_easy_setopt(s.e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(s.e, CURLOPT_USERAGENT, "Rendezvous-bench");
    curl_easy_setopt(s.e, CURLOPT_WRITEFUNCTION, &Drop);
    curl_easy_setopt(s.e, CURLOPT_PRIVATE, &s);
    curl_easy_setopt(s.e, CURLOPT_POST, 1L);
    if (started < requests) start_one(s);
  }
  int running = 0;
  curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
  std::vector<epoll_event> events(64);
  while (t.done < requests) {
    const int wait = m.timeout_ms < 0 ? 100 : static_cast<int>(std::min<long>(m.timeout_ms, 100));
    const int n = epoll_wait(m.ep, events.data(), static_cast<int>(events.size()), wait);
    if (n == 0) curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
    for (int k = 0; k < n; ++k) {
      const epoll_event& ev = events[static_cast<size_t>(k)];
      const int mask =
          (ev.events & EPOLLIN ? CURL_CSELECT_IN : 0) | (ev.events & EPOLLOUT ? CURL_CSELECT_OUT : 0);
      curl_multi_socket_action(multi, ev.data.fd, mask, &running);
    }
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      Slot* s = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &s);
      long status = 0;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
      ++t.done;
      if (msg->data.result != CURLE_OK || status != 200) ++t.failed;
      curl_multi_remove_handle(multi, s->e);
      if (started < requests) start_one(*s);
    }
  }
  for (Slot& s : slots) {
    curl_easy_cleanup(s.e);
    curl_slist_free_all(s.headers);
  }
  curl_multi_cleanup(multi);
  ::close(m.ep);
  return t;
}

// ---- one blocking request at a time ----

rendezvous::net::HttpRequest BlockingRequest(int port, int n) {
  rendezvous::net::HttpRequest r;
  r.method = "POST";
  r.url = "http://127.0.0.1:" + std::to_string(port) + "/hook";
  r.body = Body(n);
  r.headers = Headers(n);
  r.user_agent = "Rendezvous-bench";
  r.timeout = std::chrono::milliseconds(10000);
  r.connect_timeout = r.timeout;
  r.max_response_bytes = 1 << 20;
  r.keep_response_bytes = 1024;
  r.keep_headers = {"retry-after"};
  r.detailed_error = true;
  return r;
}

Tally RunPerform(int port, int requests) {
  Tally t;
  for (int i = 0; i < requests; ++i) {
    const rendezvous::net::HttpResponse r = rendezvous::net::Perform(BlockingRequest(port, i));
    ++t.done;
    if (!r.ok() || r.status != 200) ++t.failed;
  }
  return t;
}

// The former net::Perform(), as it set up each request on the thread's kept handle.
struct EasyExchange {
  const rendezvous::net::HttpRequest* request = nullptr;
  rendezvous::net::HttpResponse response;
  curl_slist* headers = nullptr;
  size_t received = 0;
  char error[CURL_ERROR_SIZE] = {0};
};

size_t EasyBody(char* data, size_t size, size_t n, void* user) {
  auto* x = static_cast<EasyExchange*>(user);
  const size_t len = size * n;
  x->received += len;
  if (x->received > x->request->max_response_bytes) return 0;
  std::string& body = x->response.body;
  const size_t keep = x->request->keep_response_bytes;
  if (body.size() < keep) body.append(data, std::min(len, keep - body.size()));
  return len;
}

size_t EasyHeader(char* data, size_t size, size_t n, void* user) {
  auto* x = static_cast<EasyExchange*>(user);
  const size_t len = size * n;
  const std::string_view line(data, len);
  if (line.rfind("HTTP/", 0) == 0) {
    x->response.headers.clear();
    return len;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return len;
  for (const std::string& w : x->request->keep_headers) {
    if (colon == w.size() && strncasecmp(line.data(), w.data(), colon) == 0) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
      while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
        value.remove_suffix(1);
      }
      x->response.headers.emplace_back(w, std::string(value));
    }
  }
  return len;
}

Tally RunCurlEasy(int port, int requests) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURLSH* share = curl_share_init();
  curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  CURL* e = curl_easy_init();
  Tally t;
  for (int i = 0; i < requests; ++i) {
    const rendezvous::net::HttpRequest r = BlockingRequest(port, i);
    EasyExchange x;
    x.request = &r;
    for (const std::string& h : r.headers) x.headers = curl_slist_append(x.headers, h.c_str());
    curl_easy_setopt(e, CURLOPT_SHARE, share);
    curl_easy_setopt(e, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x.headers);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout.count()));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(r.connect_timeout.count()));
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(r.max_response_bytes));
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &EasyBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &EasyHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x.error);
    curl_easy_setopt(e, CURLOPT_USERAGENT, r.user_agent.c_str());
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
    const CURLcode rc = curl_easy_perform(e);
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    char* type = nullptr;
    if (curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type != nullptr) {
      x.response.content_type = type;
    }
    curl_easy_reset(e);
    curl_slist_free_all(x.headers);
    ++t.done;
    if (rc != CURLE_OK || status != 200) ++t.failed;
  }
  curl_easy_cleanup(e);
  curl_share_cleanup(share);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: http_client_bench multi|curl|raw|perform|curl_easy PORT REQUESTS CONNECTIONS\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int port = std::atoi(argv[2]);
  const int requests = std::atoi(argv[3]);
  const int connections = std::atoi(argv[4]);
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = ThreadCpuSeconds();
  if (mode != "multi" && mode != "curl" && mode != "raw" && mode != "perform" && mode != "curl_easy") {
    std::fprintf(stderr,
                 "usage: http_client_bench multi|curl|raw|perform|curl_easy PORT REQUESTS CONNECTIONS\n");
    return 2;
  }
  const Tally t = mode == "raw"         ? RunRaw(port, requests, connections)
                  : mode == "curl"      ? RunCurl(port, requests, connections)
                  : mode == "perform"   ? RunPerform(port, requests)
                  : mode == "curl_easy" ? RunCurlEasy(port, requests)
                                        : RunMulti(port, requests, connections);
  const double cpu = ThreadCpuSeconds() - cpu0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  std::printf(
      "{\"client\":\"%s\",\"requests\":%d,\"failed\":%d,\"seconds\":%.3f,\"per_second\":%.0f,"
      "\"cpu_us_per_request\":%.1f}\n",
      mode.c_str(), t.done, t.failed, wall, t.done / wall, cpu * 1e6 / t.done);
  return t.failed == 0 ? 0 : 1;
}
