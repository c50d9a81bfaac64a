// Webhook delivery against a running server: a local receiver (keep-alive, one thread on epoll) that answers
// 200 to every request and notes, for each POST, when it arrived, the booking uid in its body and the
// event's createdAt.
//   webhook_bench drain PORT EXPECTED SECONDS
//     Receives until EXPECTED distinct bookings have arrived (then answers 2 s more), SECONDS have
//     passed or SIGTERM.
//   webhook_bench latency PORT BOOKINGS_URL EVENT_TYPE_IDS RATE SECONDS FIRST_START SLOT_MINUTES
//     Also posts public bookings at RATE a second for SECONDS, round robin over the event types
//     (comma-separated ids), each event type's bookings one after another from FIRST_START (ISO,
//     UTC) every SLOT_MINUTES; then waits (bounded) for every created booking's delivery.
// PORT comes from the caller (a free one the kernel picked). Prints one JSON line: what arrived
// (received, distinct, duplicates, unreadable bodies, the span from the first to the last arrival)
// and, for latency, the posts (created, failed, their p50/p99) and the delivery latency
// (arrival − createdAt: p50, p99, max) with the created bookings that never arrived ("missing").
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "http_framing.hpp"
#include "load_support.hpp"

namespace {

using Clock = std::chrono::system_clock;
using rendezvous::testing::HttpKind;
using rendezvous::testing::HttpLimits;
using rendezvous::testing::HttpMessage;
using rendezvous::testing::HttpReader;
using rendezvous::testing::HttpResponseText;

double NowMs() { return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count(); }

// "YYYY-MM-DDTHH:MM:SS[.mmm]Z" → Unix milliseconds; -1 when it is not that.
double ParseIsoMs(const std::string& s) {
  std::tm tm{};
  const char* rest = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return -1;
  double ms = static_cast<double>(timegm(&tm)) * 1000.0;
  if (*rest == '.') ms += std::atof(rest) * 1000.0;
  return ms;
}

std::string FormatIso(time_t seconds) {
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The string value of the first `"key":"…"` in a compact JSON text (the server sends its events
// compact; "uid" occurs once, in payload). Enough for a receiver that must stay cheap.
std::string StringMember(const std::string& body, const std::string& key) {
  const std::string needle = "\"" + key + "\":\"";
  const size_t at = body.find(needle);
  if (at == std::string::npos) return "";
  const size_t from = at + needle.size();
  const size_t to = body.find('"', from);
  return to == std::string::npos ? "" : body.substr(from, to - from);
}

struct Arrival {
  double at_ms;
  double created_ms;
  std::string uid;
};

// What the receiver saw. Thread-safe.
class Arrivals {
 public:
  void Add(Arrival a) {
    std::lock_guard lock(mu_);
    if (a.uid.empty()) {
      ++unreadable_;
      return;
    }
    if (!uids_.insert(a.uid).second) ++duplicates_;
    all_.push_back(std::move(a));
  }
  size_t Distinct() {
    std::lock_guard lock(mu_);
    return uids_.size();
  }
  bool HasAll(const std::vector<std::string>& uids) {
    std::lock_guard lock(mu_);
    return std::all_of(uids.begin(), uids.end(), [&](const std::string& u) { return uids_.count(u) > 0; });
  }
  // received, distinct, duplicates, unreadable, first/last arrival and the span between them.
  nlohmann::json Summary() {
    std::lock_guard lock(mu_);
    double first = 0, last = 0;
    for (const Arrival& a : all_) {
      first = first == 0 ? a.at_ms : std::min(first, a.at_ms);
      last = std::max(last, a.at_ms);
    }
    const double span_s = (last - first) / 1000.0;
    return {{"received", all_.size() + unreadable_},
            {"distinct", uids_.size()},
            {"duplicates", duplicates_},
            {"unreadable", unreadable_},
            {"arrival_span_s", span_s},
            {"arrivals_per_second", span_s > 0 ? static_cast<double>(all_.size()) / span_s : 0.0}};
  }
  // The first arrival of each booking, by uid.
  std::unordered_map<std::string, Arrival> FirstByUid() {
    std::lock_guard lock(mu_);
    std::unordered_map<std::string, Arrival> out;
    for (const Arrival& a : all_) out.emplace(a.uid, a);
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<Arrival> all_;
  std::unordered_set<std::string> uids_;
  size_t duplicates_ = 0;
  size_t unreadable_ = 0;
};

// The receiver: one thread, non-blocking sockets on epoll, HTTP/1.1 with keep-alive, each request
// answered 200 "ok". It stands in for receivers on other machines, so it is kept as cheap as it can
// be (a request costs it a read and a write): what it spends comes out of the cores the server
// and MariaDB share with it. It frames requests with the tests' framer (tests/support/
// http_framing.hpp: a Content-Length or chunked body, "Expect: 100-continue" answered); a request
// it cannot frame or an oversized one gets 400 and the connection closed.
class Receiver {
 public:
  Receiver(int port, Arrivals& arrivals) : arrivals_(arrivals) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener_, 1024) != 0) {
      if (listener_ >= 0) ::close(listener_);
      throw std::runtime_error("the receiver cannot listen on port " + std::to_string(port));
    }
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    Watch(listener_, EPOLLIN);
    thread_ = std::thread([this] { Loop(); });
  }
  ~Receiver() {
    stop_ = true;
    thread_.join();
    for (auto& [fd, c] : connections_) ::close(fd);
    ::close(epoll_);
    ::close(listener_);
  }

 private:
  static constexpr size_t kMaxHead = 64 * 1024;
  static constexpr size_t kMaxBody = 16 * 1024 * 1024;
  struct Connection {
    HttpReader reader{HttpKind::kRequest, HttpLimits{kMaxHead, kMaxBody}};
    std::string in;
    std::string out;
    bool continued = false;  // "100 Continue" sent for the request being read
    bool closing = false;    // close once `out` is written
    bool writable = false;   // EPOLLOUT asked for
  };

  void Watch(int fd, uint32_t events, int op = EPOLL_CTL_ADD) {
    epoll_event e{};
    e.events = events;
    e.data.fd = fd;
    ::epoll_ctl(epoll_, op, fd, &e);
  }

  void Loop() {
    epoll_event events[64];
    while (!stop_) {
      const int n = ::epoll_wait(epoll_, events, 64, 50);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == listener_) {
          Accept();
        } else {
          Serve(fd, events[i].events);
        }
      }
    }
  }

  void Accept() {
    for (;;) {
      const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      connections_[fd];
      Watch(fd, EPOLLIN | EPOLLRDHUP);
    }
  }

  void Close(int fd) {
    ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    connections_.erase(fd);
  }

  void Serve(int fd, uint32_t events) {
    auto it = connections_.find(fd);
    if (it == connections_.end()) return;
    Connection& c = it->second;
    bool peer_closed = (events & (EPOLLHUP | EPOLLERR)) != 0;
    if ((events & EPOLLIN) != 0) {
      char buf[16384];
      for (;;) {
        const ssize_t got = ::read(fd, buf, sizeof buf);
        if (got > 0) {
          c.in.append(buf, static_cast<size_t>(got));
          continue;
        }
        if (got == 0 || (errno != EAGAIN && errno != EINTR)) peer_closed = true;
        if (got < 0 && errno == EINTR) continue;
        break;
      }
      Answer(c);
    }
    if (!Flush(fd, c) || (c.closing && c.out.empty()) || (peer_closed && c.out.empty())) Close(fd);
  }

  // Answers every whole request in `c.in`.
  void Answer(Connection& c) {
    while (!c.closing) {
      const HttpReader::Result read = c.reader.Read(c.in);
      if (read == HttpReader::Result::kError) {
        c.out += HttpResponseText(400, {"Connection: close"});
        c.closing = true;
        return;
      }
      if (read == HttpReader::Result::kNeedMore) {
        if (c.reader.HeadRead() && !c.continued && c.reader.message().Count("expect") > 0) {
          c.out += HttpResponseText(100);
          c.continued = true;
        }
        return;
      }
      const HttpMessage& request = c.reader.message();
      if (request.method == "POST") {
        arrivals_.Add({NowMs(), ParseIsoMs(StringMember(request.body, "createdAt")),
                       StringMember(request.body, "uid")});
      }
      c.out += ok_;
      c.continued = false;
    }
  }

  // Writes what it can of `c.out`; asks for EPOLLOUT while some is left. False on a write error.
  bool Flush(int fd, Connection& c) {
    size_t sent = 0;
    while (sent < c.out.size()) {
      const ssize_t n = ::send(fd, c.out.data() + sent, c.out.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && errno == EAGAIN) {
        break;
      } else {
        return false;
      }
    }
    c.out.erase(0, sent);
    if (c.out.empty() == c.writable) {  // EPOLLOUT wanted exactly while something is left
      c.writable = !c.out.empty();
      Watch(fd, EPOLLIN | EPOLLRDHUP | (c.writable ? static_cast<uint32_t>(EPOLLOUT) : 0u), EPOLL_CTL_MOD);
    }
    return true;
  }

  const std::string ok_ = HttpResponseText(200, {"Content-Type: text/plain"}, "ok");
  Arrivals& arrivals_;
  int listener_ = -1;
  int epoll_ = -1;
  std::atomic<bool> stop_{false};
  std::unordered_map<int, Connection> connections_;
  std::thread thread_;
};

// Waits until `done()` holds, `seconds` pass, or SIGTERM/SIGINT (blocked by main) arrives,
// looking every 20 ms. False on timeout or signal.
template <typename Done>
bool WaitUntil(Done done, double seconds, const sigset_t& signals) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  const timespec tick{0, 20 * 1000 * 1000};
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (sigtimedwait(&signals, nullptr, &tick) > 0) return false;
  }
  return true;
}

// The posting half of `latency`: open loop, request i due at i / rate seconds from the start, so
// a slow answer does not slow the offered rate down (up to Posters() outstanding at once).
struct Posts {
  std::vector<std::string> created_uids;
  std::vector<double> latencies_ms;
  long failed = 0;
  long behind = 0;  // requests that started more than 50 ms late (all posters busy)
};

// Posting threads (requests outstanding at once): WEBHOOK_BENCH_POSTERS, default 16.
int Posters() {
  const char* v = std::getenv("WEBHOOK_BENCH_POSTERS");
  const int n = v != nullptr ? std::atoi(v) : 0;
  return n >= 1 && n <= 256 ? n : 16;
}

Posts PostBookings(const std::string& url, const std::vector<std::string>& event_types, double rate, int seconds,
                   time_t first_start, int slot_minutes) {
  const long total = static_cast<long>(rate * seconds);
  std::atomic<long> next{0};
  Posts all;
  std::mutex mu;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int p = 0, posters = Posters(); p < posters; ++p) {
    threads.emplace_back([&] {
      Posts mine;
      CURL* c = curl_easy_init();
      curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
      for (long i = next++; i < total; i = next++) {
        const auto due = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(static_cast<double>(i) / rate));
        std::this_thread::sleep_until(due);
        if (std::chrono::steady_clock::now() - due > std::chrono::milliseconds(50)) ++mine.behind;
        const size_t h = static_cast<size_t>(i) % event_types.size();
        const long k = i / static_cast<long>(event_types.size());
        const std::string body = R"({"start":")" + FormatIso(first_start + k * slot_minutes * 60) +
                                 R"(","eventTypeId":)" + event_types[h] +
                                 R"(,"attendee":{"name":"Bench Attendee","email":"attendee)" + std::to_string(i) +
                                 R"(@bench.example.com","timeZone":"UTC"}})";
        const bench::Exchange x = bench::Post(c, headers, url, body);
        mine.latencies_ms.push_back(x.ms);
        const nlohmann::json j = nlohmann::json::parse(x.body, nullptr, false);
        const std::string uid = j.is_object() && j.contains("data") && j["data"].is_object()
                                    ? j["data"].value("uid", "")
                                    : "";
        if (x.transport_ok && x.status == 201 && !uid.empty()) {
          mine.created_uids.push_back(uid);
        } else {
          if (mine.failed++ < 3) std::cerr << "post " << i << ": HTTP " << x.status << " " << x.body << "\n";
        }
      }
      curl_slist_free_all(headers);
      curl_easy_cleanup(c);
      std::lock_guard lock(mu);
      all.created_uids.insert(all.created_uids.end(), mine.created_uids.begin(), mine.created_uids.end());
      all.latencies_ms.insert(all.latencies_ms.end(), mine.latencies_ms.begin(), mine.latencies_ms.end());
      all.failed += mine.failed;
      all.behind += mine.behind;
    });
  }
  for (std::thread& t : threads) t.join();
  std::sort(all.latencies_ms.begin(), all.latencies_ms.end());
  return all;
}

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

int Usage() {
  std::cerr << "usage: webhook_bench drain PORT EXPECTED SECONDS\n"
               "       webhook_bench latency PORT BOOKINGS_URL EVENT_TYPE_IDS RATE SECONDS FIRST_START SLOT_MINUTES\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (!((mode == "drain" && argc == 5) || (mode == "latency" && argc == 9))) return Usage();
  const int port = std::atoi(argv[2]);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Arrivals arrivals;
  std::optional<Receiver> receiver;
  try {
    receiver.emplace(port, arrivals);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }

  nlohmann::json out = {{"mode", mode}};
  int status = 0;
  if (mode == "drain") {
    const size_t expected = std::stoul(argv[3]);
    const bool all = WaitUntil([&] { return arrivals.Distinct() >= expected; }, std::atof(argv[4]), signals);
    out["expected"] = expected;
    out["complete"] = all;
    out.update(arrivals.Summary());
    status = all ? 0 : 1;
    // A request is counted when it arrives, before its answer goes out: keep answering a little
    // longer, so the last requests in flight are not cut off (and retried by the server).
    if (all) WaitUntil([] { return false; }, 2.0, signals);
  } else {
    curl_global_init(CURL_GLOBAL_ALL);
    const std::string url = argv[3];
    const std::vector<std::string> event_types = SplitCommas(argv[4]);
    const double rate = std::atof(argv[5]);
    const int seconds = std::atoi(argv[6]);
    const double first_ms = ParseIsoMs(argv[7]);
    const int slot_minutes = std::atoi(argv[8]);
    if (event_types.empty() || rate <= 0 || seconds <= 0 || first_ms < 0 || slot_minutes <= 0) return Usage();
    const auto t0 = std::chrono::steady_clock::now();
    Posts posts = PostBookings(url, event_types, rate, seconds, static_cast<time_t>(first_ms / 1000), slot_minutes);
    const double posting_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool all = WaitUntil([&] { return arrivals.HasAll(posts.created_uids); }, 30.0, signals);
    std::unordered_map<std::string, Arrival> first = arrivals.FirstByUid();
    std::vector<double> latencies;
    // The slowest events, each as [when it was written (s after the first event), latency ms]:
    // whether the late ones are one stall (close together) or apart.
    std::vector<std::pair<double, double>> late;
    double first_created = -1;
    long missing = 0;
    for (const std::string& uid : posts.created_uids) {
      auto it = first.find(uid);
      if (it == first.end() || it->second.created_ms < 0) {
        ++missing;
      } else {
        latencies.push_back(it->second.at_ms - it->second.created_ms);
        late.emplace_back(it->second.created_ms, latencies.back());
        if (first_created < 0 || it->second.created_ms < first_created) first_created = it->second.created_ms;
      }
    }
    std::sort(latencies.begin(), latencies.end());
    std::sort(late.begin(), late.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    nlohmann::json slowest = nlohmann::json::array();
    for (size_t i = 0; i < late.size() && i < 10; ++i) {
      slowest.push_back({(late[i].first - first_created) / 1000.0, late[i].second});
    }
    const auto over = [&](double ms) {
      return std::count_if(latencies.begin(), latencies.end(), [&](double l) { return l > ms; });
    };
    out.update({{"rate", rate},
                {"seconds", seconds},
                {"posted", posts.latencies_ms.size()},
                {"created", posts.created_uids.size()},
                {"post_failed", posts.failed},
                {"posts_late", posts.behind},
                {"created_per_second", static_cast<double>(posts.created_uids.size()) / posting_s},
                {"post_p50_ms", bench::Percentile(posts.latencies_ms, 0.50)},
                {"post_p99_ms", bench::Percentile(posts.latencies_ms, 0.99)},
                {"missing", missing},
                {"p50_ms", bench::Percentile(latencies, 0.50)},
                {"p99_ms", bench::Percentile(latencies, 0.99)},
                {"max_ms", latencies.empty() ? 0.0 : latencies.back()},
                {"over_50ms", over(50)},
                {"over_100ms", over(100)},
                {"slowest", slowest}});
    out.update(arrivals.Summary());
    status = all && posts.failed == 0 ? 0 : 1;
  }
  receiver.reset();
  std::cout << out.dump() << std::endl;
  return status;
}
