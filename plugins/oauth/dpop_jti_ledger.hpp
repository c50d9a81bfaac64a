// The ledger of the DPoP proofs' jti values accepted so far (oauth_dpop_jtis, oauth migration 5):
// Claim(key) is true for a key no instance sharing the database has claimed before. Concurrent
// claims are written together, as a database group commit does: the claims that arrive while one
// write is under way wait for it and then go in one `INSERT IGNORE … RETURNING` (at most
// kMaxBatch keys), which answers with the keys that were new and, for a ClaimResolving, the
// claimant's access token read in the same statement. A busy server so pays one statement for
// many proofs instead of two for each, and a replay is still refused on every instance (the
// primary key decides). A lone Claim is a prepared `INSERT IGNORE` answered by its affected-row
// count, and so is each claim of a batch on a server without `RETURNING` (MySQL 8: found once, by
// VERSION()), the tokens then read by one more statement. Thread-safe; Claim throws
// DatabaseUnavailable when the write fails (every claim of that write). The Database must outlive
// the ledger.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "issued_tokens.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous::oauth {

class DpopJtiLedger {
 public:
  static constexpr size_t kMaxBatch = 128;

  // keep_seconds: how long a claimed key is kept (TokenPurger deletes it after that). With
  // `returning` false, batches are written claim by claim even where RETURNING exists.
  DpopJtiLedger(Database& db, int64_t keep_seconds, bool returning = true);

  // `key`: 64 lowercase hexadecimal characters (a SHA-256); kInvalid otherwise. True when it was
  // new, false when it had been claimed before (by this call's batch too: once only).
  Result<bool> Claim(const std::string& key);

  // Claim, and with it the look-up of the live access token whose hash (SHA-256 hex) is
  // `token_hash` (IssuedTokens::LiveByHash), into `token`: the claims written together read their
  // tokens together, on the same connection, so a protected route's DPoP request costs the
  // batch's write and read rather than a look-up and a write of its own.
  Result<bool> ClaimResolving(const std::string& key, const std::string& token_hash,
                              std::optional<ResolvedToken>& token);

 private:
  struct Claimant {
    const std::string* key = nullptr;
    const std::string* token_hash = nullptr;  // with a look-up: its answer goes to `token`
    std::optional<ResolvedToken>* token = nullptr;
    bool done = false;
    bool fresh = false;
    bool looked_up = false;  // `token` is answered (by the claim's own statement)
    std::exception_ptr error;
  };

  Result<bool> Join(Claimant& mine);
  void Write(const std::vector<Claimant*>& batch);
  void WriteEach(DbConnection& conn, const std::vector<Claimant*>& batch);
  void WriteReturning(DbConnection& conn, const std::vector<Claimant*>& batch);
  void LookUp(DbConnection& conn, const std::vector<Claimant*>& batch);
  bool Returning();  // whether the server has INSERT … RETURNING (asked once)

  Database& db_;
  const int64_t keep_seconds_;
  std::atomic<int> returning_;  // 1 yes, 0 no, -1 not known yet
  std::mutex mu_;
  std::condition_variable written_;
  std::vector<Claimant*> waiting_;
  bool writing_ = false;
};

}  // namespace rendezvous::oauth
