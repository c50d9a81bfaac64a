// DPoP proofs as the token endpoint and the protected routes accept them (RFC 9449 §4.3, §7.1,
// §11.1): a proof that passes VerifyDpopProof (dpop_proof.hpp) and whose jti was not accepted
// before. The jti of every accepted proof is kept in oauth_dpop_jtis (oauth migration 5) until
// no proof with it could pass the iat window any more, so a replay is refused on every instance
// sharing the database; TokenPurger deletes the rows past that. Cost: one signature verification,
// the key's import and thumbprint once per header (DpopKeyCache), and the jti's INSERT: at the
// token endpoint a share of one (concurrent proofs' jti values are written together,
// DpopJtiLedger), on a protected route the same share, the token's look-up riding with it
// (Check, then ClaimResolving).
// Thread-safe; Accept may throw DatabaseUnavailable. The Database must outlive it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dpop_jti_ledger.hpp"
#include "dpop_proof.hpp"
#include "rendezvous/database.hpp"

namespace rendezvous::oauth {

class DpopVerifier {
 public:
  // max_age: plugins.oauth.dpop_max_age (seconds); proofs may also be up to 60 s ahead.
  DpopVerifier(Database& db, int64_t max_age);

  // The key thumbprint (jkt) of a valid proof for `method` and `url` (and `access_token`'s ath
  // when not empty) seen for the first time; kInvalid with the reason otherwise (a replayed jti
  // included).
  Result<std::string> Accept(std::string_view proof, std::string_view method, std::string_view url,
                             std::string_view access_token = {});

  // The checks of Accept but the replay check, which ClaimResolving then makes.
  Result<DpopProof> Check(std::string_view proof, std::string_view method, std::string_view url,
                          std::string_view access_token = {});
  // The replay check of a proof Check accepted: true when its jti is new.
  Result<bool> Claim(const DpopProof& proof);
  // The replay check of a proof Check accepted (true: its jti is new) together with the look-up
  // of the live access token whose hash is `token_hash`, into `token` (DpopJtiLedger).
  Result<bool> ClaimResolving(const DpopProof& proof, const std::string& token_hash,
                              std::optional<ResolvedToken>& token);

  int64_t max_age() const { return max_age_; }

 private:
  int64_t max_age_;
  DpopJtiLedger jtis_;
  DpopKeyCache keys_;  // the keys of the headers seen, built once each
};

}  // namespace rendezvous::oauth
