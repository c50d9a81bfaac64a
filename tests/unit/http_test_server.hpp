// The base fixture of the HttpServer tests over real sockets: a server on loopback ports the OS
// picks, a logger that keeps every line, the registry of its metrics, and two gates for a slow
// handler. Tear-down opens the handler's gate and shuts the server down, so no handler outlives
// its test.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "http/server.hpp"
#include "raw_http.hpp"

namespace rendezvous::core {

// The raw-socket client's names, as the HTTP tests use them.
using rdv_test::Conn;
using rdv_test::Fetch;
using rdv_test::Gate;
using rdv_test::MakeRoute;
using rdv_test::RequestText;
using rdv_test::StatusOf;

// `r` is the JSON error envelope with this status and code, and a request id the server made.
inline void ExpectEnvelope(const rdv_test::Reply& r, int status, const std::string& code) {
  EXPECT_EQ(r.status, status);
  EXPECT_EQ(r.Header("content-type"), "application/json");
  EXPECT_EQ(r.Json()["status"], "error") << r.body;
  EXPECT_EQ(r.Json()["error"]["code"], code) << r.body;
  EXPECT_EQ(r.Header("x-request-id").size(), 16u);
}

class HttpServerFixture : public ::testing::Test {
 protected:
  // Both listeners on 127.0.0.1, one I/O thread and two API workers.
  static ServerOptions LoopbackOptions(size_t max_body_bytes) {
    ServerOptions o;
    o.api_listen = "127.0.0.1:0";
    o.app_listen = "127.0.0.1:0";
    o.io_threads = 1;
    o.worker_threads = 2;
    o.max_body_bytes = max_body_bytes;
    return o;
  }

  // A server with these options; the test adds its routes and checks, then calls Listen().
  void Create(ServerOptions options) {
    server_ = std::make_unique<HttpServer>(std::move(options), logger_, registry_);
  }

  // Starts the server and keeps the ports it got.
  void Listen() {
    server_->Start();
    port_ = server_->api_port();
    app_port_ = server_->app_port();
  }

  void TearDown() override {
    gate_.Open();
    if (server_) server_->Shutdown(std::chrono::seconds(2));
  }

  rdv_test::MemoryLogger logger_;
  prometheus::Registry registry_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  uint16_t app_port_ = 0;
  Gate gate_;     // a slow handler waits on it
  Gate entered_;  // a slow handler opens it on entry
};

}  // namespace rendezvous::core
