// The ledger of the DPoP proofs' jti values accepted so far (oauth_dpop_jtis, oauth migration 5):
// Claim(key) is true for a key no instance sharing the database has claimed before. Concurrent
// claims are written together, as a database group commit does: the claims that arrive while one
// write is under way wait for it and then go in one `INSERT IGNORE … RETURNING` (at most
// kMaxBatch keys), which answers with the keys that were new; a lone claim is written at once. A
// busy server so pays one statement for many proofs instead of one for each, and a replay is still
// refused on every instance (the primary key decides). Thread-safe; Claim throws
// DatabaseUnavailable when the write fails (every claim of that write). The Database must outlive
// the ledger.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::oauth {

class DpopJtiLedger {
 public:
  static constexpr size_t kMaxBatch = 128;

  // keep_seconds: how long a claimed key is kept (TokenPurger deletes it after that).
  DpopJtiLedger(Database& db, int64_t keep_seconds);

  // `key`: 64 lowercase hexadecimal characters (a SHA-256); kInvalid otherwise. True when it was
  // new, false when it had been claimed before (by this call's batch too: once only).
  Result<bool> Claim(const std::string& key);

 private:
  struct Claimant {
    const std::string* key = nullptr;
    bool done = false;
    bool fresh = false;
    std::exception_ptr error;
  };

  void Write(const std::vector<Claimant*>& batch);

  Database& db_;
  const int64_t keep_seconds_;
  std::mutex mu_;
  std::condition_variable written_;
  std::vector<Claimant*> waiting_;
  bool writing_ = false;
};

}  // namespace rendezvous::oauth
