// The outbound client (rendezvous/outbound.hpp) against receivers that misbehave on purpose, each a
// real peer on loopback written here: stray answers (in the same write as the answer, and later on
// an idle connection), endless headers, a 100 MB body, endless chunks, a chunk size that overflows,
// floods of interim answers, a drip of bytes, no answer at all, Content-Length with
// Transfer-Encoding, a close after the answer, and TLS that must not be trusted (a certificate of
// another CA, of another name, a private CA until it is configured). Whatever a receiver does, the
// request ends within its bounds, the connection it spoiled is never reused, and a delivery to
// another destination is recorded as that destination answered.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ca_file_in_environment.hpp"
#include "eventually.hpp"
#include "free_port.hpp"
#include "http_framing.hpp"
#include "rendezvous/outbound.hpp"
#include "tls_peer.hpp"

namespace rendezvous::net {
namespace {

using testing::HttpKind;
using testing::HttpMessage;
using testing::HttpReader;
using testing::HttpResponseText;
using testing::ListenOnLoopback;
using testing::TlsPeer;
using Clock = std::chrono::steady_clock;

// A plain HTTP peer whose every connection runs `script` on a thread of its own. The script reads
// requests and writes whatever it likes through the Link; every read waits at most 10 s, and the
// destructor shuts every socket down, so no script outlives the peer.
class HostilePeer {
 public:
  class Link {
   public:
    Link(HostilePeer& peer, int fd, int id) : peer_(peer), fd_(fd), id_(id) {}
    // The connection's number: 1 for the peer's first, in the order they came.
    int id() const { return id_; }
    // Reads one request (http_framing.hpp: its head and body), or nullopt when the client closed,
    // the peer stops, 10 s pass or the request cannot be framed.
    std::optional<HttpMessage> ReadRequest() {
      HttpReader::Result read;
      while ((read = reader_.Read(in_)) == HttpReader::Result::kNeedMore) {
        char buf[4096];
        const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) return std::nullopt;
        in_.append(buf, static_cast<size_t>(n));
      }
      if (read == HttpReader::Result::kError) return std::nullopt;
      HttpMessage request = reader_.Take();
      peer_.Record(id_, request);
      return request;
    }
    // Writes all of `data`; false once the client is gone.
    bool Write(const std::string& data) {
      size_t at = 0;
      while (at < data.size()) {
        const ssize_t n = ::send(fd_, data.data() + at, data.size() - at, MSG_NOSIGNAL);
        if (n <= 0) return false;
        at += static_cast<size_t>(n);
      }
      return true;
    }
    // Waits `pause` unless the peer stops first; false when it stops.
    bool Pause(std::chrono::milliseconds pause) { return !peer_.AwaitStop(pause); }
    bool stopping() const { return peer_.stopping_; }

   private:
    HostilePeer& peer_;
    int fd_;
    int id_;
    std::string in_;
    HttpReader reader_{HttpKind::kRequest};
  };
  using Script = std::function<void(Link&)>;

  explicit HostilePeer(Script script) : script_(std::move(script)) {
    fd_ = ListenOnLoopback(&port_, 64);
    if (fd_ < 0) ADD_FAILURE() << "no hostile peer";
    thread_ = std::thread([this] { Loop(); });
  }
  ~HostilePeer() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
    }
    stop_.notify_all();
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    for (auto& t : served_) t.join();
    ::close(fd_);
  }
  HostilePeer(const HostilePeer&) = delete;
  HostilePeer& operator=(const HostilePeer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_.load(); }
  // The requests read so far, by connection (in the order connections came).
  std::vector<std::vector<HttpMessage>> Heads() {
    std::lock_guard lock(mu_);
    std::vector<std::vector<HttpMessage>> out;
    for (const auto& [id, heads] : heads_) out.push_back(heads);
    return out;
  }
  // Scripts that finished.
  int finished() const { return finished_.load(); }

 private:
  void Loop() {
    for (int id = 1; id <= 256; ++id) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      timeval tv{10, 0};
      setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      {
        std::lock_guard lock(mu_);
        if (stopping_) {
          ::close(c);
          return;
        }
        open_.insert(c);
        heads_[id];
      }
      ++connections_;
      served_.emplace_back([this, c, id] {
        Link link(*this, c, id);
        script_(link);
        {
          std::lock_guard lock(mu_);
          open_.erase(c);
        }
        ::close(c);
        ++finished_;
      });
    }
  }
  void Record(int id, const HttpMessage& request) {
    std::lock_guard lock(mu_);
    heads_[id].push_back(request);
  }
  bool AwaitStop(std::chrono::milliseconds pause) {
    std::unique_lock lock(mu_);
    return stop_.wait_for(lock, pause, [this] { return stopping_; });
  }

  Script script_;
  int fd_ = -1;
  int port_ = 0;
  std::mutex mu_;
  std::condition_variable stop_;
  bool stopping_ = false;                          // under mu_
  std::set<int> open_;                             // under mu_: sockets being served
  std::map<int, std::vector<HttpMessage>> heads_;  // under mu_: by connection number
  std::atomic<int> connections_{0};
  std::atomic<int> finished_{0};
  std::list<std::thread> served_;
  std::thread thread_;
};

std::string Answer(int status, const std::string& body, const std::string& extra_header = "") {
  std::vector<std::string> lines = {"Content-Type: text/plain"};
  if (!extra_header.empty()) lines.push_back(extra_header);
  return HttpResponseText(status, lines, body);
}

// Drives `multi` until `count` requests have finished or 30 s have passed.
std::map<uint64_t, HttpResponse> AwaitAll(HttpMulti& multi, size_t count) {
  std::map<uint64_t, HttpResponse> done;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (done.size() < count && Clock::now() < deadline) {
    for (auto& [tag, res] : multi.Perform()) done.emplace(tag, std::move(res));
    if (done.size() < count) multi.Poll(std::chrono::milliseconds(50));
  }
  return done;
}

HttpResponse PerformOn(HttpMulti& multi, HttpRequest request) {
  static uint64_t next_tag = 0;
  const uint64_t tag = ++next_tag;
  EXPECT_TRUE(multi.Start(tag, std::move(request)));
  std::map<uint64_t, HttpResponse> done = AwaitAll(multi, 1);
  if (done.count(tag) == 0) {
    ADD_FAILURE() << "the request did not finish in 30 s";
    multi.CancelAll();
    return {};
  }
  return std::move(done[tag]);
}

HttpRequest Get(const std::string& url) {
  HttpRequest r;
  r.url = url;
  r.timeout = std::chrono::milliseconds(5000);
  return r;
}

std::string Said(const HttpResponse& r) {
  return std::string(OutcomeLabel(r.outcome)) + " " + std::to_string(r.status) + ": " + r.error + " [" +
         r.body.substr(0, 80) + "]";
}

// ---- stray answers ----

// Each request is answered with its path, and a second, unasked answer in the same write.
void AnswerAndStrayInOneWrite(HostilePeer::Link& link) {
  while (auto head = link.ReadRequest()) {
    if (!link.Write(Answer(200, "for " + head->target) + Answer(500, "stray"))) return;
  }
}

TEST(NetHostileReceiver, AStrayAnswerInTheSameWriteIsNeverReadAsTheNextAnswer) {
  HostilePeer peer(&AnswerAndStrayInOneWrite);
  HttpMulti multi(4);
  for (int i = 1; i <= 5; ++i) {
    const std::string path = "/r" + std::to_string(i);
    const HttpResponse r = PerformOn(multi, Get(peer.url() + path));
    ASSERT_TRUE(r.ok()) << Said(r);
    EXPECT_EQ(r.status, 200) << Said(r);
    EXPECT_EQ(r.body, "for " + path);
  }
  // The bytes after each answer spoiled its connection: every request came on a new one.
  EXPECT_EQ(peer.connections(), 5);
}

TEST(NetHostileReceiver, AStrayAnswerOnAnIdleConnectionDropsIt) {
  std::atomic<int> strays{0};
  std::atomic<int> stray_on{0};  // the connection that is to send a stray answer
  HostilePeer peer([&](HostilePeer::Link& link) {
    while (auto head = link.ReadRequest()) {
      if (!link.Write(Answer(200, "for " + head->target))) return;
      // Later, unasked, while the connection is idle in the client's pool.
      for (int i = 0; i < 200 && stray_on != link.id() && !link.stopping(); ++i) {
        link.Pause(std::chrono::milliseconds(50));
      }
      if (stray_on == link.id()) {
        link.Write(Answer(500, "stray"));
        stray_on = 0;
        ++strays;
      }
    }
  });
  HttpMulti multi(4);
  HttpResponse r = PerformOn(multi, Get(peer.url() + "/first"));
  ASSERT_TRUE(r.ok()) << Said(r);
  EXPECT_EQ(r.body, "for /first");
  stray_on = 1;
  ASSERT_TRUE(
      testing::Eventually("the stray was written", {std::chrono::seconds(10)}, [&] { return strays == 1; }));
  r = PerformOn(multi, Get(peer.url() + "/second"));
  ASSERT_TRUE(r.ok()) << Said(r);
  EXPECT_EQ(r.status, 200) << Said(r);
  EXPECT_EQ(r.body, "for /second");
  EXPECT_EQ(peer.connections(), 2);

  // The same through Perform(): its thread's kept connection is dropped, not read.
  r = Perform(Get(peer.url() + "/third"));
  ASSERT_TRUE(r.ok()) << Said(r);
  stray_on = 3;
  ASSERT_TRUE(
      testing::Eventually("the stray was written", {std::chrono::seconds(10)}, [&] { return strays == 2; }));
  const int before = peer.connections();
  r = Perform(Get(peer.url() + "/fourth"));
  ASSERT_TRUE(r.ok()) << Said(r);
  EXPECT_EQ(r.status, 200) << Said(r);
  EXPECT_EQ(r.body, "for /fourth");
  EXPECT_EQ(peer.connections(), before + 1);
}

// Acceptance: two destinations at once in one client, one of them spraying stray answers after
// each of its answers and while idle: every request to the other gets the other's own answer.
TEST(NetHostileReceiver, StrayAnswersNeverChangeTheOutcomeOfAnotherDestinationsRequest) {
  HostilePeer hostile([](HostilePeer::Link& link) {
    while (auto head = link.ReadRequest()) {
      std::string out = Answer(200, "hostile " + head->target);
      for (int i = 0; i < 3; ++i) out += Answer(500 + i, "stray");
      if (!link.Write(out)) return;
      link.Write("HTTP/1.1 418 Stray\r\nContent-Length: 5\r\n\r\nstray");
    }
  });
  std::atomic<int> honest_answers{0};
  HostilePeer honest([&](HostilePeer::Link& link) {
    while (auto head = link.ReadRequest()) {
      ++honest_answers;
      if (!link.Write(Answer(201, "honest " + head->target, "Connection: keep-alive"))) return;
    }
  });
  // Few connections: destinations take turns on them, idle ones closed to make room.
  HttpMulti multi(3);
  constexpr uint64_t kEach = 40;
  for (uint64_t i = 0; i < kEach; ++i) {
    HttpRequest h = Get(hostile.url() + "/h" + std::to_string(i));
    h.method = "POST";
    h.body = "{}";
    ASSERT_TRUE(multi.Start(2 * i, std::move(h)));
    HttpRequest o = Get(honest.url() + "/o" + std::to_string(i));
    o.method = "POST";
    o.body = "{}";
    ASSERT_TRUE(multi.Start(2 * i + 1, std::move(o)));
  }
  std::map<uint64_t, HttpResponse> done = AwaitAll(multi, 2 * kEach);
  ASSERT_EQ(done.size(), 2 * kEach);
  for (uint64_t i = 0; i < kEach; ++i) {
    const HttpResponse& o = done[2 * i + 1];
    ASSERT_TRUE(o.ok()) << i << ": " << Said(o);
    EXPECT_EQ(o.status, 201) << i << ": " << Said(o);
    EXPECT_EQ(o.body, "honest /o" + std::to_string(i));
    // The hostile one's own requests end within their bounds, whatever they were answered.
    const HttpResponse& h = done[2 * i];
    EXPECT_TRUE(h.outcome == HttpOutcome::kOk || h.outcome == HttpOutcome::kError) << i << ": " << Said(h);
    if (h.ok() && h.status == 200) {
      EXPECT_EQ(h.body, "hostile /h" + std::to_string(i));
    }
  }
  EXPECT_EQ(honest_answers, static_cast<int>(kEach));
  // No honest connection carried a request of the hostile destination, nor the other way round.
  for (const auto& heads : honest.Heads()) {
    for (const HttpMessage& request : heads) EXPECT_EQ(request.target.substr(0, 2), "/o") << request.head;
  }
  for (const auto& heads : hostile.Heads()) {
    for (const HttpMessage& request : heads) EXPECT_EQ(request.target.substr(0, 2), "/h") << request.head;
  }
}

// A destination is the scheme, address, port and host name: two names on one address and port
// never share a connection (a name's Host header and TLS name go with its connection).
TEST(NetHostileReceiver, AConnectionServesOnlyItsOwnDestination) {
  HostilePeer peer([](HostilePeer::Link& link) {
    while (auto head = link.ReadRequest()) {
      if (!link.Write(Answer(200, "ok"))) return;
    }
  });
  HttpMulti multi(8);
  const std::string port = std::to_string(peer.port());
  for (int i = 0; i < 6; ++i) {
    const std::string host = i % 2 == 0 ? "a.example.test" : "b.example.test";
    HttpRequest r = Get("http://" + host + ":" + port + "/" + host);
    r.pin = {host, peer.port(), "127.0.0.1"};
    const HttpResponse res = PerformOn(multi, r);
    ASSERT_TRUE(res.ok()) << Said(res);
  }
  // Under the address check and without it: two more destinations.
  HttpRequest unchecked = Get(peer.url() + "/plain");
  ASSERT_TRUE(PerformOn(multi, unchecked).ok());
  ASSERT_TRUE(PerformOn(multi, unchecked).ok());
  EXPECT_EQ(peer.connections(), 3);
  for (const auto& heads : peer.Heads()) {
    ASSERT_FALSE(heads.empty());
    std::set<std::string> hosts;
    for (const HttpMessage& request : heads) hosts.insert(request.Header("host"));
    EXPECT_EQ(hosts.size(), 1u) << "one connection carried requests for several hosts";
    EXPECT_EQ(heads.size(), 3u - (hosts.count("127.0.0.1:" + port) ? 1u : 0u));
  }
}

// ---- unbounded answers ----

TEST(NetHostileReceiver, EndlessHeadersEndAt64KiB) {
  HostilePeer peer([](HostilePeer::Link& link) {
    if (!link.ReadRequest()) return;
    link.Write("HTTP/1.1 200 OK\r\n");
    const std::string line = "X-Filler: " + std::string(1000, 'x') + "\r\n";
    for (int i = 0; i < 100000 && !link.stopping(); ++i) {
      if (!link.Write(line)) return;
    }
  });
  const HttpResponse r = Perform(Get(peer.url() + "/headers"));
  EXPECT_EQ(r.outcome, HttpOutcome::kError) << Said(r);
  EXPECT_NE(r.error.find("64 KiB"), std::string::npos) << Said(r);
}

// 100 MB offered three ways: refused at max_response_bytes (here 1 MiB), and the connection is
// dropped, so the peer cannot write the rest.
TEST(NetHostileReceiver, AHundredMegabyteBodyIsRefusedAtTheLimitAndTheConnectionDropped) {
  constexpr size_t kHundredMb = 100u * 1000 * 1000;
  std::atomic<size_t> written_most{0};
  HostilePeer peer([&](HostilePeer::Link& link) {
    auto head = link.ReadRequest();
    if (!head) return;
    const std::string path = head->target;
    if (path == "/length") {
      link.Write("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kHundredMb) + "\r\n\r\n");
    } else if (path == "/chunked") {
      link.Write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    } else {
      link.Write("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
    }
    const std::string block(64 * 1024, 'z');
    char size_line[32];
    std::snprintf(size_line, sizeof size_line, "%zx\r\n", block.size());
    size_t written = 0;
    while (written < kHundredMb && !link.stopping()) {
      const bool ok = path == "/chunked" ? link.Write(size_line + block + "\r\n") : link.Write(block);
      if (!ok) break;
      written += block.size();
    }
    size_t seen = written_most.load();
    while (written > seen && !written_most.compare_exchange_weak(seen, written)) {
    }
  });
  for (const char* path : {"/length", "/chunked", "/until-close"}) {
    HttpRequest req = Get(peer.url() + path);
    req.max_response_bytes = 1 << 20;
    req.keep_response_bytes = 16;
    const HttpResponse r = Perform(req);
    EXPECT_EQ(r.outcome, HttpOutcome::kTooLarge) << path << ": " << Said(r);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_LE(r.body.size(), 16u) << path;
  }
  ASSERT_TRUE(testing::Eventually("the peer's writes ended", {std::chrono::seconds(20)},
                                  [&] { return peer.finished() == 3; }));
  EXPECT_LT(written_most.load(), kHundredMb / 4) << "the client kept reading after the limit";
  EXPECT_EQ(peer.connections(), 3);
}

TEST(NetHostileReceiver, EndlessChunksEndAtTheLimit) {
  HostilePeer peer([](HostilePeer::Link& link) {
    if (!link.ReadRequest()) return;
    link.Write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    std::string many;
    for (int i = 0; i < 1000; ++i) many += "1;ext=x\r\na\r\n";
    for (int i = 0; i < 100000 && !link.stopping(); ++i) {
      if (!link.Write(many)) return;
    }
  });
  HttpRequest req = Get(peer.url() + "/chunks");
  req.max_response_bytes = 64 * 1024;
  const HttpResponse r = Perform(req);
  EXPECT_EQ(r.outcome, HttpOutcome::kTooLarge) << Said(r);
}

TEST(NetHostileReceiver, AChunkSizeThatOverflowsIsRefused) {
  HostilePeer peer([](HostilePeer::Link& link) {
    while (auto head = link.ReadRequest()) {
      const std::string path = head->target;
      const std::string size = path == "/sixteen" ? "1000000000000000"
                               : path == "/huge"  ? "ffffffffffffffffff1"
                                                  : "-1";
      link.Write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + size + "\r\nabc\r\n0\r\n\r\n");
    }
  });
  for (const char* path : {"/sixteen", "/huge", "/negative"}) {
    const HttpResponse r = Perform(Get(peer.url() + path));
    EXPECT_EQ(r.outcome, HttpOutcome::kError) << path << ": " << Said(r);
    EXPECT_NE(r.error.find("chunk"), std::string::npos) << path << ": " << Said(r);
  }
}

TEST(NetHostileReceiver, AFloodOfInterimAnswersIsRefused) {
  HostilePeer peer([](HostilePeer::Link& link) {
    if (!link.ReadRequest()) return;
    std::string flood;
    for (int i = 0; i < 1000; ++i) flood += "HTTP/1.1 100 Continue\r\nX-N: " + std::to_string(i) + "\r\n\r\n";
    for (int i = 0; i < 1000 && !link.stopping(); ++i) {
      if (!link.Write(flood)) return;
    }
  });
  const auto started = Clock::now();
  const HttpResponse r = Perform(Get(peer.url() + "/flood"));
  EXPECT_EQ(r.outcome, HttpOutcome::kError) << Said(r);
  EXPECT_NE(r.error.find("interim"), std::string::npos) << Said(r);
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(4)) << "ended by the timeout, not the bound";
}

// ---- slow or silent ----

TEST(NetHostileReceiver, ADripOfBytesEndsAtTheRequestsTimeout) {
  HostilePeer peer([](HostilePeer::Link& link) {
    if (!link.ReadRequest()) return;
    const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + std::string(100000, 'd');
    for (char c : answer) {
      if (!link.Write(std::string(1, c)) || !link.Pause(std::chrono::milliseconds(20))) return;
    }
  });
  HttpRequest req = Get(peer.url() + "/drip");
  req.timeout = std::chrono::milliseconds(600);
  const auto started = Clock::now();
  const HttpResponse r = Perform(req);
  EXPECT_EQ(r.outcome, HttpOutcome::kTimeout) << Said(r);
  EXPECT_LT(Clock::now() - started, std::chrono::milliseconds(3000));
  EXPECT_GE(r.duration.count(), 550);
}

TEST(NetHostileReceiver, NoAnswerEndsAtTheRequestsTimeout) {
  HostilePeer peer([](HostilePeer::Link& link) {
    if (!link.ReadRequest()) return;
    link.Pause(std::chrono::seconds(20));
  });
  HttpRequest req = Get(peer.url() + "/silence");
  req.timeout = std::chrono::milliseconds(400);
  const HttpResponse r = Perform(req);
  EXPECT_EQ(r.outcome, HttpOutcome::kTimeout) << Said(r);
  EXPECT_EQ(r.status, 0);
}

// ---- framing ----

TEST(NetHostileReceiver, ContentLengthWithTransferEncodingIsRefused) {
  HostilePeer peer([](HostilePeer::Link& link) {
    while (auto head = link.ReadRequest()) {
      link.Write(
          "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: "
          "chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    }
  });
  HttpMulti multi(2);
  const HttpResponse r = PerformOn(multi, Get(peer.url() + "/both"));
  EXPECT_EQ(r.outcome, HttpOutcome::kError) << Said(r);
  EXPECT_NE(r.error.find("both Content-Length and Transfer-Encoding"), std::string::npos) << Said(r);
  EXPECT_TRUE(PerformOn(multi, Get(peer.url() + "/again")).outcome == HttpOutcome::kError);
  EXPECT_EQ(peer.connections(), 2) << "a refused answer's connection was reused";
}

TEST(NetHostileReceiver, ACloseAfterTheAnswerKeepsTheAnswerAndTheNextRequestOpensAConnection) {
  HostilePeer peer([](HostilePeer::Link& link) {
    if (auto head = link.ReadRequest()) link.Write(Answer(200, "then bye " + head->target));
  });
  HttpMulti multi(2);
  for (int i = 0; i < 3; ++i) {
    const std::string path = "/close" + std::to_string(i);
    const HttpResponse r = PerformOn(multi, Get(peer.url() + path));
    ASSERT_TRUE(r.ok()) << Said(r);
    EXPECT_EQ(r.body, "then bye " + path);
  }
  EXPECT_EQ(peer.connections(), 3);
}

TEST(NetHostileReceiver, ACloseInsideTheBodyIsAnError) {
  HostilePeer peer([](HostilePeer::Link& link) {
    if (link.ReadRequest()) link.Write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this");
  });
  const HttpResponse r = Perform(Get(peer.url() + "/cut"));
  EXPECT_EQ(r.outcome, HttpOutcome::kError) << Said(r);
  EXPECT_NE(r.error.find("closed before the answer ended"), std::string::npos) << Said(r);
}

// ---- TLS ----

// The process's trust set for as long as it lives, then back to the default.
class Trusting {
 public:
  explicit Trusting(TrustOptions trust) { EXPECT_TRUE(ConfigureTrust(trust).ok()); }
  ~Trusting() { EXPECT_TRUE(ConfigureTrust({}).ok()); }
  Trusting(const Trusting&) = delete;
  Trusting& operator=(const Trusting&) = delete;
};

std::string Pong(const std::string&, const std::string& target, const std::string&) {
  return TlsPeer::Answer(200, "pong " + target);
}

TEST(NetHostileReceiver, APrivateCaIsTrustedOnlyOnceConfiguredForPerformAndMulti) {
  TlsPeer peer(&Pong);
  HttpRequest req = Get(peer.url() + "/private");
  HttpResponse r = Perform(req);
  EXPECT_EQ(r.outcome, HttpOutcome::kError) << Said(r);
  EXPECT_NE(r.error.find("not trusted"), std::string::npos) << Said(r);
  EXPECT_EQ(peer.requests(), 0);
  {
    Trusting trust({peer.ca_file(), ""});
    r = Perform(req);
    ASSERT_TRUE(r.ok()) << Said(r);
    EXPECT_EQ(r.body, "pong /private");
    HttpMulti multi(2);
    r = PerformOn(multi, req);
    ASSERT_TRUE(r.ok()) << Said(r);
    EXPECT_EQ(peer.requests(), 2);
  }
  // Back to the default: the kept connection and the TLS session made under the CA are not reused.
  r = Perform(req);
  EXPECT_EQ(r.outcome, HttpOutcome::kError) << Said(r);
  EXPECT_EQ(peer.requests(), 2);
  // SSL_CERT_FILE names the CA: the default trust honours it, Perform and HttpMulti alike.
  {
    testing::CaFileInEnvironment env(peer.ca_file());
    r = Perform(req);
    ASSERT_TRUE(r.ok()) << Said(r);
    HttpMulti multi(2);
    r = PerformOn(multi, req);
    ASSERT_TRUE(r.ok()) << Said(r);
  }
  r = Perform(req);
  EXPECT_EQ(r.outcome, HttpOutcome::kError) << Said(r);
  // A file that holds no certificate is refused, and the trust stays what it was.
  EXPECT_FALSE(ConfigureTrust({"/nonexistent/ca.pem", ""}).ok());
  EXPECT_EQ(Perform(req).outcome, HttpOutcome::kError);
}

TEST(NetHostileReceiver, ACertificateOfAnotherCaOrAnotherNameIsRefused) {
  TlsPeer peer(&Pong);
  TlsPeer stranger(&Pong);
  {
    Trusting trust({stranger.ca_file(), ""});  // a certificate for the same names, another key
    const HttpResponse r = Perform(Get(peer.url() + "/other-ca"));
    EXPECT_EQ(r.outcome, HttpOutcome::kError) << Said(r);
    EXPECT_NE(r.error.find("not trusted"), std::string::npos) << Said(r);
  }
  Trusting trust({peer.ca_file(), ""});
  // The peer's certificate names 127.0.0.1 and localhost, not this name.
  HttpRequest req = Get("https://hooks.example.test:" + std::to_string(peer.port()) + "/wrong-name");
  req.pin = {"hooks.example.test", peer.port(), "127.0.0.1"};
  HttpResponse r = Perform(req);
  EXPECT_EQ(r.outcome, HttpOutcome::kError) << Said(r);
  EXPECT_NE(r.error.find("TLS handshake"), std::string::npos) << Said(r);
  // The name it does hold, on the same address: trusted.
  req.url = "https://localhost:" + std::to_string(peer.port()) + "/right-name";
  req.pin = {"localhost", peer.port(), "127.0.0.1"};
  r = Perform(req);
  ASSERT_TRUE(r.ok()) << Said(r);
  EXPECT_EQ(peer.requests(), 1);
  EXPECT_EQ(stranger.requests(), 0);
}

TEST(NetHostileReceiver, APlainHttpServerBehindAnHttpsUrlIsAnError) {
  HostilePeer peer([](HostilePeer::Link& link) {
    link.Write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  });
  HttpRequest req = Get("https://127.0.0.1:" + std::to_string(peer.port()) + "/tls");
  const HttpResponse r = Perform(req);
  EXPECT_EQ(r.outcome, HttpOutcome::kError) << Said(r);
  EXPECT_EQ(r.status, 0);
}

// SMTP (libcurl) follows the same trust: against an SMTPS server whose certificate is the
// TLS peer's, the handshake fails on the certificate until its CA is configured; then it passes
// and the exchange ends for another reason (the peer speaks no SMTP).
TEST(NetHostileReceiver, SmtpUsesTheSameTrust) {
  TlsPeer peer(&Pong);
  SmtpRequest mail;
  mail.url = "smtps://127.0.0.1:" + std::to_string(peer.port());
  mail.mail_from = "<a@example.com>";
  mail.rcpt_to = "<b@example.com>";
  mail.message = "Subject: x\r\n\r\nx\r\n";
  mail.connect_timeout = std::chrono::milliseconds(3000);
  mail.timeout = std::chrono::milliseconds(1500);
  SmtpResult r = SendSmtp(mail);
  EXPECT_FALSE(r.sent);
  EXPECT_NE(r.error.find("certificate"), std::string::npos) << r.error;
  {
    Trusting trust({peer.ca_file(), ""});
    r = SendSmtp(mail);
    EXPECT_FALSE(r.sent);
    EXPECT_EQ(r.error.find("certificate"), std::string::npos) << r.error;
  }
  {
    testing::CaFileInEnvironment env(peer.ca_file());
    r = SendSmtp(mail);
    EXPECT_FALSE(r.sent);
    EXPECT_EQ(r.error.find("certificate"), std::string::npos) << r.error;
  }
}

// ---- names ----

TEST(NetHostileReceiver, PerformResolvesNamesAndChecksEveryAddress) {
  HostilePeer peer([](HostilePeer::Link& link) {
    while (auto head = link.ReadRequest()) {
      if (!link.Write(Answer(200, "named"))) return;
    }
  });
  HttpRequest req = Get("http://localhost:" + std::to_string(peer.port()) + "/named");
  HttpResponse r = Perform(req);
  ASSERT_TRUE(r.ok()) << Said(r);
  EXPECT_EQ(r.body, "named");
  req.block_private_networks = true;
  r = Perform(req);
  EXPECT_EQ(r.outcome, HttpOutcome::kBlocked) << Said(r);
  req.url = "http://nothing.invalid/x";
  req.block_private_networks = false;
  r = Perform(req);
  EXPECT_EQ(r.outcome, HttpOutcome::kConnectFailed) << Said(r);
}

}  // namespace
}  // namespace rendezvous::net
