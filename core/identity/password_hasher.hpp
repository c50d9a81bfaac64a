// Password checks (scrypt: about 32 MiB and tens of milliseconds each) on a small pool of their own,
// so a flood of sign-ins costs at most `threads` hashes at once and never holds the threads that
// serve the API. A full queue refuses at once instead of waiting.
//
// Thread-safe: Verify from any thread (it blocks the caller until its hash is done).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "http/worker_pool.hpp"

namespace rendezvous::core {

class PasswordHasher {
 public:
  PasswordHasher(int threads, size_t queue_limit);

  // crypto::VerifyPassword(password, encoded) on a hash thread; nullopt when the queue is full.
  std::optional<bool> Verify(std::string_view password, std::string_view encoded);

 private:
  WorkerPool pool_;
};

}  // namespace rendezvous::core
