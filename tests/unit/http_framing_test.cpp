// RFC 9112 framing on real sockets: pipelining in order, oversized and malformed requests answered
// in the envelope and closed, deadlines, connection and memory bounds, isolation of the pools.
#include <atomic>
#include <future>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "eventually.hpp"
#include "http_test_server.hpp"

namespace rendezvous::core {
namespace {

using namespace std::chrono_literals;

class HttpFramingTest : public HttpServerFixture {
 protected:
  static ServerOptions Options() {
    ServerOptions o = LoopbackOptions(4096);
    o.app_worker_threads = 1;
    return o;
  }

  void Start(ServerOptions options = Options()) {
    Create(std::move(options));
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/echo/:id", [](Request& r) {
      return Response::Success({{"id", r.params.at("id")}});
    }));
    server_->AddRoute(MakeRoute(Method::kPost, "/v2/json", [](Request& r) {
      auto body = r.JsonBody();
      if (!body.ok()) return Response::FromStatus(body.status());
      return Response::Success(*body, 201);
    }));
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/hit", [this](Request&) {
      ++hits_;
      return Response::Success(true);
    }));
    server_->AddRoute(MakeRoute(Method::kGet, "/v2/slow", [this](Request&) {
      entered_.Open();
      gate_.Wait();
      return Response::Success("slow");
    }));
    server_->AddRoute(MakeRoute(Method::kGet, "/slow-page", [this](Request&) {
      entered_.Open();
      gate_.Wait();
      return Response::Html(200, "<p>slow</p>");
    }, RouteAuth::Public(), Listener::kApp));
    Route outbound = MakeRoute(Method::kGet, "/v2/outbound", [this](Request&) {
      entered_.Open();
      gate_.Wait();
      return Response::Success("fetched");
    });
    outbound.outbound = true;
    outbound.auth = RouteAuth::Bearer();
    server_->AddRoute(std::move(outbound));
    server_->SetBearerAuthenticator([](std::string_view token) -> std::optional<Principal> {
      Principal p;
      p.kind = kApiKey;
      p.all_scopes = true;
      if (token == "alice") p.user_id = 1;
      else if (token == "bob") p.user_id = 2;
      else return std::nullopt;
      return p;
    });
    Listen();
  }

  double Rejected(const std::string& reason) {
    for (const auto& family : registry_.Collect()) {
      if (family.name != "http_server_rejected_requests_total") continue;
      for (const auto& m : family.metric)
        for (const auto& l : m.label)
          if (l.name == "reason" && l.value == reason) return m.counter.value;
    }
    return -1;
  }

  double Buffered() {
    for (const auto& family : registry_.Collect())
      if (family.name == "http_server_buffered_request_bytes") return family.metric.at(0).gauge.value;
    return -1;
  }

  // Waits (bounded) until the server holds at least `bytes` request bytes.
  bool AwaitBuffered(double bytes) {
    return testing::Eventually(std::to_string(bytes) + " request bytes held", {10s, 20ms},
                               [&] { return Buffered() >= bytes; });
  }

  std::atomic<int> hits_{0};
};

TEST_F(HttpFramingTest, PipelinedRequestsAreAllAnsweredInOrder) {
  Start();
  Conn c(port_);
  // A worker route held back, then an inline route, then two more worker routes: the inline one
  // finishes first but is answered second.
  ASSERT_TRUE(c.Send(RequestText("GET", "/v2/slow") + RequestText("GET", "/healthz") +
                     RequestText("GET", "/v2/echo/3") + RequestText("GET", "/v2/echo/4")));
  ASSERT_TRUE(entered_.Wait());
  gate_.Open();
  auto first = c.Read();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->Json()["data"], "slow");
  auto second = c.Read();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->Json()["status"], "ok");
  for (const char* id : {"3", "4"}) {
    auto r = c.Read();
    ASSERT_TRUE(r) << id;
    EXPECT_EQ(r->Json()["data"]["id"], id);
    EXPECT_EQ(r->Header("connection"), "keep-alive");
  }
  // The connection is still usable.
  ASSERT_TRUE(c.Send(RequestText("GET", "/v2/echo/5")));
  auto fifth = c.Read();
  ASSERT_TRUE(fifth);
  EXPECT_EQ(fifth->Json()["data"]["id"], "5");
}

TEST_F(HttpFramingTest, ManyPipelinedRequestsBeyondTheInFlightCap) {
  Start();
  Conn c(port_);
  std::string burst;
  for (int i = 0; i < 50; ++i) burst += RequestText("GET", i % 3 ? "/v2/echo/" + std::to_string(i) : "/healthz");
  ASSERT_TRUE(c.Send(burst));
  for (int i = 0; i < 50; ++i) {
    auto r = c.Read();
    ASSERT_TRUE(r) << i;
    if (i % 3) {
      EXPECT_EQ(r->Json()["data"]["id"], std::to_string(i));
    } else {
      EXPECT_EQ(r->Json()["status"], "ok");
    }
  }
}

TEST_F(HttpFramingTest, ALongPipelineOfInlineRequestsIsAnsweredWhole) {
  Start();
  Conn c(port_);
  const std::string one = RequestText("GET", "/healthz");
  std::string burst;
  for (int i = 0; i < 1500; ++i) burst += one;
  ASSERT_TRUE(c.Send(burst));
  for (int i = 0; i < 1500; ++i) {
    auto r = c.Read();
    ASSERT_TRUE(r) << i;
    ASSERT_EQ(r->status, 200) << i;
  }
}

TEST_F(HttpFramingTest, OversizedBodyIs413AndItsBytesAreNeverReadAsRequests) {
  Start();
  Conn c(port_);
  // 300 KB declared; a complete request hidden past the limit.
  std::string hidden = RequestText("GET", "/v2/hit");
  std::string body = std::string(8192, 'x') + hidden + std::string(300000 - 8192 - hidden.size(), 'y');
  std::string head = "POST /v2/json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n";
  ASSERT_TRUE(c.Send(head));
  auto r = c.Read();
  ASSERT_TRUE(r);
  ExpectEnvelope(*r, 413, "payload_too_large");
  EXPECT_EQ(r->Header("connection"), "close");
  c.Send(body);  // the client keeps sending; the server drops it and closes
  EXPECT_TRUE(c.AwaitClose(10s));
  EXPECT_FALSE(c.Read(false, 200ms));  // one answer only
  // A request after it on a new connection is served, and the hidden one never was.
  EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/v2/echo/after")), 200);
  EXPECT_EQ(hits_.load(), 0);
  EXPECT_GE(Rejected("too_large"), 1);
}

TEST_F(HttpFramingTest, OversizedChunkedBodyIs413AndCloses) {
  Start();
  Conn c(port_);
  ASSERT_TRUE(c.Send("POST /v2/json HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2000\r\n" +
                     std::string(0x2000, 'a') + "\r\n" + RequestText("GET", "/v2/hit")));
  auto r = c.Read();
  ASSERT_TRUE(r);
  ExpectEnvelope(*r, 413, "payload_too_large");
  EXPECT_TRUE(c.AwaitClose(10s));
  EXPECT_EQ(hits_.load(), 0);
}

TEST_F(HttpFramingTest, ChunkedBodyAndExpectContinueAreServed) {
  Start();
  Conn c(port_);
  ASSERT_TRUE(c.Send("POST /v2/json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3;x=y\r\n:1}\r\n0\r\n\r\n"));
  auto r = c.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->Json()["data"]["a"], 1);

  Conn e(port_);
  ASSERT_TRUE(e.Send("POST /v2/json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Content-Length: 7\r\nExpect: 100-continue\r\n\r\n"));
  auto interim = e.Read();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(e.Send("{\"b\":2}"));
  auto done = e.Read();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, 201);
  EXPECT_EQ(done->Json()["data"]["b"], 2);
}

TEST_F(HttpFramingTest, MalformedRequestsAreAnsweredInTheEnvelopeAndClosed) {
  Start();
  struct Case {
    std::string text;
    int status;
    std::string code;
  };
  const std::vector<Case> cases = {
      {"GARBAGE\r\n", 400, "validation_error"},
      {"\x01\x02\x03\r\n\r\n", 400, "validation_error"},
      {"GET /healthz HTTP/1.1\r\nNoColonHeader\r\n\r\n", 400, "validation_error"},
      {"GET /healthz HTTP/1.1\r\n\r\n", 400, "validation_error"},  // no Host
      {"POST /v2/json HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello", 400,
       "validation_error"},
      {"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", 400, "validation_error"},
      {"GET /healthz HTTP/9.9\r\n\r\n", 505, "http_version_not_supported"},
  };
  for (const auto& c : cases) {
    Conn conn(port_);
    ASSERT_TRUE(conn.Send(c.text + RequestText("GET", "/v2/hit")));
    auto r = conn.Read();
    ASSERT_TRUE(r) << c.text;
    EXPECT_EQ(r->status, c.status) << c.text;
    EXPECT_EQ(r->Header("content-type"), "application/json") << c.text;
    EXPECT_EQ(r->Json()["status"], "error") << c.text;
    EXPECT_EQ(r->Json()["error"]["code"], c.code) << c.text;
    EXPECT_FALSE(r->Header("x-request-id").empty());
    EXPECT_EQ(r->Header("connection"), "close");
    EXPECT_TRUE(conn.AwaitClose(5s)) << c.text;
  }
  EXPECT_EQ(hits_.load(), 0);
  // Each refusal has its access-log line.
  size_t lines = 0;
  for (const auto& line : logger_.Lines())
    if (line.value("msg", "") == "request" && line.value("status", 0) >= 400) ++lines;
  EXPECT_GE(lines, cases.size());
  // An unknown method on a known path: 501; TRACE: 405 with Allow.
  auto brew = Fetch(port_, "BREW", "/v2/echo/1");
  ASSERT_TRUE(brew);
  ExpectEnvelope(*brew, 501, "not_implemented");
  auto trace = Fetch(port_, "TRACE", "/v2/echo/1");
  ASSERT_TRUE(trace);
  EXPECT_EQ(trace->status, 405);
  EXPECT_EQ(trace->Header("allow"), "GET, HEAD");
}

TEST_F(HttpFramingTest, UnknownContentTypeIsAJson415) {
  Start();
  auto r = Fetch(port_, "POST", "/v2/json", {"Content-Type: foo", "Accept: nonsense/*;;"}, "{}");
  ASSERT_TRUE(r);
  ExpectEnvelope(*r, 415, "unsupported_media_type");
}

TEST_F(HttpFramingTest, AbsoluteFormTargetIsServed) {
  Start();
  auto r = Fetch(port_, "GET", "http://127.0.0.1/v2/echo/abs?x=1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Json()["data"]["id"], "abs");
}

TEST_F(HttpFramingTest, SlowHeadersAndBodiesAre408AndClosed) {
  ServerOptions o = Options();
  o.header_timeout = 1s;
  o.body_timeout = 1s;
  Start(o);
  // Junk-free but never finished: the header deadline runs from the first byte, not the last.
  Conn head(port_);
  ASSERT_TRUE(head.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n"));
  Conn body(port_);
  ASSERT_TRUE(body.Send("POST /v2/json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{"));
  for (Conn* c : {&head, &body}) {
    auto r = c->Read(false, 8s);
    ASSERT_TRUE(r);
    ExpectEnvelope(*r, 408, "request_timeout");
    EXPECT_TRUE(c->AwaitClose(5s));
  }
  EXPECT_GE(Rejected("timeout"), 2);
}

TEST_F(HttpFramingTest, ConnectionsBeyondThePerAddressLimitAreRefused) {
  ServerOptions o = Options();
  o.max_connections_per_ip = 3;
  Start(o);
  std::vector<std::unique_ptr<Conn>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<Conn>(port_));
    ASSERT_TRUE(held.back()->Send(RequestText("GET", "/healthz")));
    ASSERT_TRUE(held.back()->Read());
  }
  Conn fourth(port_);
  auto r = fourth.Read(false, 5s);
  ASSERT_TRUE(r);
  ExpectEnvelope(*r, 503, "service_unavailable");
  EXPECT_TRUE(fourth.AwaitClose(5s));
  fourth.Close();
  // Closing one frees its place (once the server has seen it go).
  held.pop_back();
  std::optional<rdv_test::Reply> again;
  testing::Eventually("a place again after one closed", {10s, 1ms}, [&] {
    Conn c(port_);
    again = c.Send(RequestText("GET", "/healthz")) ? c.Read(false, 2s) : std::nullopt;
    return again && again->status == 200;
  });
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
}

TEST_F(HttpFramingTest, BufferedBytesStayWithinTheBudget) {
  ServerOptions o = Options();
  o.max_body_bytes = 64 * 1024;
  o.max_buffered_bytes = 100 * 1024;
  Start(o);
  // Three stalled 40 KB bodies: the third goes over the 100 KB budget and is refused.
  std::vector<std::unique_ptr<Conn>> stalled;
  std::optional<rdv_test::Reply> refused;
  for (int i = 0; i < 3 && !refused; ++i) {
    auto c = std::make_unique<Conn>(port_);
    ASSERT_TRUE(c->Send("POST /v2/json HTTP/1.1\r\nHost: x\r\nContent-Length: 45000\r\n\r\n" + std::string(40000, 'a')));
    if (i == 2) refused = c->Read(false, 5s);
    stalled.push_back(std::move(c));
  }
  ASSERT_TRUE(refused);
  ExpectEnvelope(*refused, 503, "service_unavailable");
  EXPECT_TRUE(stalled.back()->AwaitClose(5s));
  EXPECT_GE(Rejected("buffer_budget"), 1);
  // Small requests still fit.
  EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/v2/echo/1")), 200);
}

TEST_F(HttpFramingTest, StalledUploadsLeaveTheBudgetsReserveToSmallRequests) {
  ServerOptions o = Options();
  o.max_body_bytes = 128 * 1024;
  o.max_buffered_bytes = 160 * 1024;  // uploads holding more than 64 KiB stop at 150 KiB
  Start(o);
  const std::string head = "POST /v2/json HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n";
  // The first upload stalls at 85,000 bytes; the second would take the budget to its last byte.
  Conn first(port_);
  ASSERT_TRUE(first.Send(head + std::string(85000, 'a')));
  ASSERT_TRUE(AwaitBuffered(85000)) << Buffered();
  Conn second(port_);
  ASSERT_TRUE(second.Send(head + std::string(o.max_buffered_bytes - 85000 - 2 * head.size(), 'b')));
  auto refused = second.Read(false, 5s);
  ASSERT_TRUE(refused);
  ExpectEnvelope(*refused, 503, "service_unavailable");
  EXPECT_TRUE(second.AwaitClose(5s));
  // Small requests on new connections are answered while the first upload hangs.
  for (int i = 0; i < 20; ++i) EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/v2/echo/1")), 200) << i;
  EXPECT_GE(Buffered(), 85000);
}

TEST_F(HttpFramingTest, OutboundRoutesAreCappedPerCallerAndDoNotHoldApiWorkers) {
  ServerOptions o = Options();
  o.worker_threads = 1;
  o.outbound_per_user = 1;
  Start(o);
  auto first = std::async(std::launch::async, [this] {
    return Fetch(port_, "GET", "/v2/outbound", {"Authorization: Bearer alice"});
  });
  ASSERT_TRUE(entered_.Wait());
  // Alice's second outbound request is refused at once; Bob's is not refused; the only API worker
  // is free for everyone else.
  auto again = Fetch(port_, "GET", "/v2/outbound", {"Authorization: Bearer alice"});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 429);
  EXPECT_EQ(again->Header("retry-after"), "1");
  auto bob = std::async(std::launch::async, [this] {
    return Fetch(port_, "GET", "/v2/outbound", {"Authorization: Bearer bob"});
  });
  EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/v2/echo/free")), 200);
  gate_.Open();
  EXPECT_EQ(StatusOf(first.get()), 200);
  EXPECT_EQ(StatusOf(bob.get()), 200);
}

TEST_F(HttpFramingTest, APageFloodDoesNotStarveTheApi) {
  ServerOptions o = Options();
  o.app_worker_threads = 1;
  o.worker_queue_limit = 2;
  Start(o);
  // The app pool is busy and its queue full ...
  std::vector<std::unique_ptr<Conn>> pages;
  for (int i = 0; i < 3; ++i) {
    pages.push_back(std::make_unique<Conn>(app_port_));
    ASSERT_TRUE(pages.back()->Send(RequestText("GET", "/slow-page")));
    if (i == 0) {
      ASSERT_TRUE(entered_.Wait());
    }
  }
  EXPECT_EQ(StatusOf(Fetch(app_port_, "GET", "/slow-page")), 503);
  // ... and the API answers.
  EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/v2/echo/api")), 200);
  gate_.Open();
  for (auto& p : pages) {
    auto page = p->Read();
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200);
  }
}

}  // namespace
}  // namespace rendezvous::core

namespace rendezvous::core {
namespace {

TEST_F(HttpFramingTest, MetricsCanHaveAListenerOfTheirOwn) {
  ServerOptions o = Options();
  o.metrics_listen = "127.0.0.1:0";
  Start(o);
  ASSERT_NE(server_->metrics_port(), 0);
  auto scraped = Fetch(server_->metrics_port(), "GET", "/metrics");
  ASSERT_TRUE(scraped);
  EXPECT_EQ(scraped->status, 200);
  EXPECT_NE(scraped->body.find("http_server_open_connections"), std::string::npos);
  // Not on the api listener any more, and nothing else on the metrics listener.
  EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/metrics")), 404);
  EXPECT_EQ(StatusOf(Fetch(server_->metrics_port(), "GET", "/v2/echo/1")), 404);
  EXPECT_EQ(StatusOf(Fetch(port_, "GET", "/healthz")), 200);
}

}  // namespace
}  // namespace rendezvous::core
