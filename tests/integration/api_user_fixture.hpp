// The set-up shared by integration tests that call the API as one user: a scratch database, the
// real server over it, and the user "ada@example.com" with an API key, created once the server runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "scratch_db.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {

class ApiUserTest : public ::testing::Test {
 protected:
  // Migrates, starts the server with `options`, then creates the user named `name` (user_) and
  // its API key (key_).
  void StartServer(TestServerOptions options, const std::string& name) {
    server_ = std::make_unique<TestServer>(db_.name(), std::move(options));
    server_->Migrate();
    std::string why;
    ASSERT_TRUE(server_->Start(&why)) << why;
    user_ = server_->CreateUser("ada@example.com", name);
    key_ = server_->CreateApiKey(user_);
    ASSERT_FALSE(key_.empty());
  }

  ScratchDatabase db_;
  std::unique_ptr<TestServer> server_;
  int64_t user_ = 0;
  std::string key_;
};

}  // namespace rendezvous::testing
