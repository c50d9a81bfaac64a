// The API keeps serving under abuse: a sign-in flood, a thousand stalled uploads, a hanging ICS
// host. Real binary, real MariaDB, loopback only; every loop is bounded in count and time.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "api_user_fixture.hpp"
#include "eventually.hpp"
#include "fake_google.hpp"
#include "http_client.hpp"
#include "loopback_http_server.hpp"
#include "raw_http.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

using rdv_test::Clock;
using rdv_test::Conn;
using rdv_test::RequestText;
using namespace std::chrono_literals;

// Peak and current resident memory of a process, in bytes (from /proc).
struct Memory {
  long peak = 0;
  long now = 0;
};

Memory ReadMemory(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  Memory m;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) m.peak = std::atol(line.c_str() + 6) * 1024;
    if (line.rfind("VmRSS:", 0) == 0) m.now = std::atol(line.c_str() + 6) * 1024;
  }
  return m;
}

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(p * static_cast<double>(values.size() - 1));
  return values[index];
}

// Sequential GET /v2/me on one keep-alive connection; the duration of each in milliseconds.
std::vector<double> TimeMe(int port, const std::string& key, int count, int* failures) {
  std::vector<double> ms;
  Conn c(static_cast<uint16_t>(port));
  for (int i = 0; i < count; ++i) {
    auto start = Clock::now();
    bool ok = c.Send(RequestText("GET", "/v2/me", {"Authorization: Bearer " + key}));
    auto r = ok ? c.Read(false, 5s) : std::nullopt;
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!r || r->status != 200) {
      ++*failures;
      c.Close();
      c.Connect();
    }
  }
  return ms;
}

void RaiseFileLimit(rlim_t want) {
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  if (lim.rlim_cur < want) {
    lim.rlim_cur = std::min(lim.rlim_max, want);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
  }
  ASSERT_GE(lim.rlim_cur, want) << "cannot raise RLIMIT_NOFILE";
}

class HttpAbuseTest : public ApiUserTest {
 protected:
  void Start(TestServerOptions options) { StartServer(std::move(options), "Ada"); }
};

TEST_F(HttpAbuseTest, SignInFloodWithRandomEmailsDoesNotSlowTheApi) {
  RaiseFileLimit(4096);
  TestServerOptions o;
  // Every sign-in costs a password hash here: the per-address throttle is set out of the way, so
  // what keeps the API serving is the hash pool and the separate listener pools.
  o.top_extra = "security: { login_failures_per_ip: 1000000 }\n";
  Start(o);
  const uint16_t app = static_cast<uint16_t>(std::stoi(server_->app().substr(server_->app().rfind(':') + 1)));

  // A CSRF cookie and token pair, as any client can get one.
  Conn page(app);
  ASSERT_TRUE(page.Send(RequestText("GET", "/auth/login")));
  auto login_page = page.Read();
  ASSERT_TRUE(login_page);
  std::string cookie = login_page->Header("set-cookie");
  ASSERT_EQ(cookie.rfind("rdv_csrf=", 0), 0u) << cookie;
  std::string token = cookie.substr(9, cookie.find(';') - 9);

  constexpr int kThreads = 4;
  constexpr int kConnsPerThread = 32;  // 128 connections
  std::atomic<bool> stop{false};
  std::atomic<int> sent{0};
  std::atomic<int> answered{0};
  std::atomic<int> refused{0};  // 429: the hash queue was full
  std::vector<std::thread> flood;
  for (int t = 0; t < kThreads; ++t) {
    flood.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<uint64_t>(t) * 7919 + 1);
      std::vector<std::unique_ptr<Conn>> conns;
      for (int i = 0; i < kConnsPerThread; ++i) conns.push_back(std::make_unique<Conn>(app));
      auto deadline = Clock::now() + 150s;
      for (int round = 0; round < 200 && !stop && Clock::now() < deadline; ++round) {
        for (auto& c : conns) {
          std::string body = "email=flood" + std::to_string(rng()) + "%40example.com&password=not-the-password&csrf_token=" +
                             token;
          if (!c->ok()) c->Connect();
          if (c->Send(RequestText("POST", "/auth/login",
                                  {"Content-Type: application/x-www-form-urlencoded", "Cookie: rdv_csrf=" + token}, body)))
            ++sent;
        }
        for (auto& c : conns) {
          auto r = c->Read(false, 10s);
          if (!r) {
            c->Close();
            continue;
          }
          ++answered;
          if (r->status == 429) ++refused;
        }
      }
    });
  }
  // Measure once the flood is under way, for as long as it takes the server to answer a sign-in on
  // every flood connection (each a password hash), bounded in count and time.
  auto started = Clock::now() + 10s;
  while (sent.load() < kThreads * kConnsPerThread && Clock::now() < started) std::this_thread::yield();
  ASSERT_GE(sent.load(), kThreads * kConnsPerThread);
  int failures = 0;
  std::vector<double> ms;
  auto until = Clock::now() + 120s;
  while (answered.load() < kThreads * kConnsPerThread && ms.size() < 400000 && Clock::now() < until) {
    auto batch = TimeMe(server_->api_port(), key_, 50, &failures);
    ms.insert(ms.end(), batch.begin(), batch.end());
  }
  const int answered_while_measuring = answered.load();
  stop = true;
  for (auto& t : flood) t.join();

  double p99 = Percentile(ms, 0.99);
  std::printf("sign-in flood: %d sent, %d answered (%d refused 429); %zu /v2/me meanwhile, p50 %.2f ms, p99 %.2f ms\n",
              sent.load(), answered.load(), refused.load(), ms.size(), Percentile(ms, 0.5), p99);
  EXPECT_EQ(failures, 0);
  EXPECT_LT(p99, 200.0);
  EXPECT_GE(answered_while_measuring, kThreads * kConnsPerThread);
  // Two hash threads at 32 MiB each, not one per connection.
  Memory m = ReadMemory(server_->pid());
  std::printf("server peak RSS %.1f MiB\n", static_cast<double>(m.peak) / 1048576.0);
  EXPECT_LT(m.peak, 200L << 20);
}

TEST_F(HttpAbuseTest, AThousandStalledUploadsStayWithinTheMemoryBudget) {
  RaiseFileLimit(8192);
  TestServerOptions o;
  constexpr long kBudget = 64L << 20;
  o.server_extra = "max_buffered_bytes: " + std::to_string(kBudget) + "\nmax_connections_per_ip: 5000\n";
  Start(o);
  const long baseline = ReadMemory(server_->pid()).now;

  // Each sends its headers and 900 KB of a 1 MB body, then stalls.
  const std::string chunk(900 * 1024, 'x');
  const std::string head = "POST /v2/me HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1048000\r\n\r\n";
  std::vector<std::unique_ptr<Conn>> stalled;
  int refused = 0;
  for (int i = 0; i < 1000; ++i) {
    auto c = std::make_unique<Conn>(static_cast<uint16_t>(server_->api_port()));
    ASSERT_TRUE(c->ok()) << i;
    timeval tv{2, 0};  // a refused connection stops reading: never block on it for long
    setsockopt(c->fd(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (!c->Send(head + chunk)) ++refused;
    stalled.push_back(std::move(c));
  }
  // The API answers while they hang: the stalled uploads may not take the budget's reserve. Until
  // the server has read what the flood sent, connections still in their first 64 KiB may hold it
  // for a moment, so wait (bounded) for the first answer.
  int settling = 0;
  Eventually("the first answer while uploads hang", {15s, 50ms}, [&] {
    int failed = 0;
    TimeMe(server_->api_port(), key_, 1, &failed);
    settling += failed;
    return failed == 0;
  });
  int failures = 0;
  std::vector<double> ms = TimeMe(server_->api_port(), key_, 50, &failures);

  Memory m = ReadMemory(server_->pid());
  // Most of them were refused with the JSON 503 (they could not fit in the budget).
  int answered_503 = 0;
  for (auto& c : stalled) {
    auto r = c->Read(false, 50ms);
    if (r && r->status == 503) ++answered_503;
  }
  char summary[256];
  std::snprintf(summary, sizeof summary,
                "stalled uploads: baseline %.1f MiB, peak %.1f MiB, now %.1f MiB; %d sends refused, %d answered 503; "
                "%d requests refused while settling; /v2/me p99 %.2f ms",
                baseline / 1048576.0, m.peak / 1048576.0, m.now / 1048576.0, refused, answered_503, settling,
                Percentile(ms, 0.99));
  std::printf("%s\n", summary);
  EXPECT_EQ(failures, 0) << summary;
  // The documented ceiling: RSS at rest, the budget, and a few KiB per open connection.
  EXPECT_LT(m.peak, baseline + kBudget + 1000L * 32 * 1024 + (32L << 20)) << summary;
  EXPECT_GT(answered_503, 500) << summary;
  auto metrics = HttpClient().Get(server_->api() + "/metrics");
  EXPECT_NE(metrics.body.find("http_server_rejected_requests_total{reason=\"buffer_budget\"}"), std::string::npos);
}

TEST_F(HttpAbuseTest, AHangingIcsHostDelaysOnlyItsOwnUser) {
  FakeGoogle google;
  TestServerOptions o;
  o.plugins = google.PluginConfig(true);
  o.server_extra = "outbound_per_user: 2\n";
  Start(o);
  const int64_t bob = server_->CreateUser("bob@example.com", "Bob");
  const std::string bob_key = server_->CreateApiKey(bob);
  HttpClient http;

  // Ada's feed answers when she saves it, then hangs.
  LoopbackHttpServer feed([](const PeerRequest&) {
    PeerResponse r;
    r.content_type = "text/calendar";
    r.body = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nEND:VCALENDAR\r\n";
    return r;
  });
  auto saved = http.Request("POST", server_->api() + "/v2/calendars/ics-feed/save",
                            nlohmann::json{{"urls", {feed.url() + "/ada.ics"}}}.dump(),
                            {"Authorization: Bearer " + key_, "Content-Type: application/json"});
  ASSERT_EQ(saved.status, 201) << saved.body;
  feed.SetHandler([](const PeerRequest&) {
    PeerResponse r;
    r.delay = 4s;
    return r;
  });

  const std::string busy = "/v2/calendars/busy-times?dateFrom=2030-01-01&dateTo=2030-01-02";
  std::vector<std::future<HttpResult>> ada;
  for (int i = 0; i < 6; ++i)
    ada.push_back(std::async(std::launch::async, [&] {
      return HttpClient().Get(server_->api() + busy, {"Authorization: Bearer " + key_});
    }));
  ASSERT_TRUE(feed.AwaitRequests(2, 10s));  // the save, then a hanging fetch

  auto start = Clock::now();
  auto me = http.Get(server_->api() + "/v2/me", {"Authorization: Bearer " + bob_key});
  auto bob_busy = http.Get(server_->api() + busy, {"Authorization: Bearer " + bob_key});
  double bob_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  EXPECT_EQ(me.status, 200);
  EXPECT_EQ(bob_busy.status, 200) << bob_busy.body;
  std::printf("bob's two requests took %.1f ms while ada's feed hangs\n", bob_ms);
  EXPECT_LT(bob_ms, 1000.0);

  int limited = 0;
  for (auto& f : ada) {
    HttpResult r = f.get();
    if (r.status == 429) ++limited;
  }
  // Ada had at most two outbound requests at once; the rest were refused at once.
  EXPECT_GE(limited, 1);
}

}  // namespace
}  // namespace rendezvous::testing
