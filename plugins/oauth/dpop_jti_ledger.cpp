#include "dpop_jti_ledger.hpp"

#include <algorithm>
#include <unordered_map>

namespace rendezvous::oauth {
namespace {

bool IsLowerHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool IsSha256Hex(const std::string& key) {
  return key.size() == 64 && std::all_of(key.begin(), key.end(), IsLowerHexDigit);
}

}  // namespace

DpopJtiLedger::DpopJtiLedger(Database& db, int64_t keep_seconds, bool returning)
    : db_(db), keep_seconds_(keep_seconds), returning_(returning ? -1 : 0) {}

bool DpopJtiLedger::Returning() {
  int known = returning_.load();
  if (known < 0) {
    // MariaDB has had INSERT … RETURNING since 10.5; MySQL 8 has none.
    const std::optional<DbRow> row =
        db_.Run([](DbConnection& conn) { return conn.QueryOne("SELECT VERSION()"); });
    known = row && row->String(1).find("MariaDB") != std::string::npos ? 1 : 0;
    returning_ = known;
  }
  return known == 1;
}

void DpopJtiLedger::WriteEach(DbConnection& conn, const std::vector<Claimant*>& batch) {
  // One prepared statement for each claim; a key the table had (or that an earlier claim of the
  // batch wrote) affects no row.
  for (Claimant* c : batch) {
    c->fresh = conn.Exec(
                   "INSERT IGNORE INTO oauth_dpop_jtis (jti_hash, expires_at)"
                   " VALUES (?, UTC_TIMESTAMP(3) + INTERVAL ? SECOND)",
                   {*c->key, keep_seconds_}) == 1;
  }
}

void DpopJtiLedger::LookUp(DbConnection& conn, const std::vector<Claimant*>& batch) {
  std::vector<std::string> hashes;
  for (const Claimant* c : batch) {
    if (c->token_hash && !c->looked_up) hashes.push_back(*c->token_hash);
  }
  if (hashes.empty()) return;
  std::unordered_map<std::string, ResolvedToken> live = IssuedTokens::LiveByHash(conn, hashes);
  for (Claimant* c : batch) {
    if (!c->token_hash || c->looked_up) continue;
    auto it = live.find(*c->token_hash);
    if (it != live.end()) *c->token = it->second;
  }
}

Result<bool> DpopJtiLedger::Claim(const std::string& key) {
  if (!IsSha256Hex(key)) return Status(ErrorCode::kInvalid, "a jti key is 64 hexadecimal characters");
  Claimant mine;
  mine.key = &key;
  return Join(mine);
}

Result<bool> DpopJtiLedger::ClaimResolving(const std::string& key, const std::string& token_hash,
                                           std::optional<ResolvedToken>& token) {
  if (!IsSha256Hex(key) || !IsSha256Hex(token_hash))
    return Status(ErrorCode::kInvalid, "a jti key and a token hash are 64 hexadecimal characters");
  token.reset();
  Claimant mine;
  mine.key = &key;
  mine.token_hash = &token_hash;
  mine.token = &token;
  return Join(mine);
}

Result<bool> DpopJtiLedger::Join(Claimant& mine) {
  std::unique_lock lock(mu_);
  waiting_.push_back(&mine);
  while (!mine.done) {
    if (writing_) {
      written_.wait(lock);
      continue;
    }
    // This thread writes for everyone waiting (its own claim among them, the first kMaxBatch).
    writing_ = true;
    const size_t n = std::min(waiting_.size(), kMaxBatch);
    std::vector<Claimant*> batch(waiting_.begin(), waiting_.begin() + static_cast<std::ptrdiff_t>(n));
    waiting_.erase(waiting_.begin(), waiting_.begin() + static_cast<std::ptrdiff_t>(n));
    lock.unlock();
    std::exception_ptr error;
    try {
      Write(batch);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    for (Claimant* c : batch) {
      c->error = error;
      c->done = true;
    }
    writing_ = false;
    written_.notify_all();
  }
  if (mine.error) std::rethrow_exception(mine.error);
  return mine.fresh;
}

void DpopJtiLedger::Write(const std::vector<Claimant*>& batch) {
  const bool lookups =
      std::any_of(batch.begin(), batch.end(), [](const Claimant* c) { return c->token_hash; });
  // One statement answers a batch with RETURNING, even a batch of one when it has a token to read.
  const bool returning = (batch.size() > 1 || lookups) && Returning();
  db_.Run([&](DbConnection& conn) {
    if (returning) {
      WriteReturning(conn, batch);
    } else {
      WriteEach(conn, batch);
    }
    // The tokens RETURNING did not read: every one without it, a replayed proof's with it.
    LookUp(conn, batch);
  });
}

void DpopJtiLedger::WriteReturning(DbConnection& conn, const std::vector<Claimant*>& batch) {
  // The keys and token hashes are checked hexadecimal and the interval is a number: the statement
  // is written out in full and sent unprepared, one round trip, whatever the batch's size. A new
  // key's row comes back with its claimant's token read by the same statement (a subquery keyed by
  // the key's token hash): the claim and the look-up cost one statement for the whole batch.
  std::string sql = "INSERT IGNORE INTO oauth_dpop_jtis (jti_hash, expires_at) VALUES ";
  sql.reserve(sql.size() + batch.size() * 190 + 640);
  const std::string expires = "', UTC_TIMESTAMP(3) + INTERVAL " + std::to_string(keep_seconds_) + " SECOND)";
  std::string token_of;  // CASE jti_hash WHEN key THEN its token's hash … END
  for (size_t i = 0; i < batch.size(); ++i) {
    const Claimant& c = *batch[i];
    sql += i == 0 ? "('" : ", ('";
    sql += *c.key;
    sql += expires;
    if (c.token_hash) {
      token_of += token_of.empty() ? "CASE jti_hash WHEN '" : " WHEN '";
      token_of += *c.key;
      token_of += "' THEN '";
      token_of += *c.token_hash;
      token_of += '\'';
    }
  }
  sql += " RETURNING jti_hash";
  if (!token_of.empty()) {
    token_of += " END";
    sql += ", ";
    sql += IssuedTokens::LiveTokenJson(token_of);
  }
  const std::vector<DbRow> inserted = conn.QueryUnprepared(sql);
  // A key twice in one batch is inserted once: only its first claimant gets it (and CASE gives the
  // first claimant's token hash).
  for (const DbRow& row : inserted) {
    const std::string key = row.String(1);
    for (Claimant* c : batch) {
      if (c->fresh || *c->key != key) continue;
      c->fresh = true;
      if (c->token_hash && !token_of.empty()) {
        c->looked_up = true;
        if (!row.IsNull(2)) *c->token = IssuedTokens::TokenOfJson(row.String(2));
      }
      break;
    }
  }
}

}  // namespace rendezvous::oauth
