// DPoP proofs (RFC 9449 §4): a JWS in compact form, signed with the key its header carries, that
// names the request it was made for. This file checks one proof on its own: form, header, key,
// signature and claims. Whether its jti was seen before is DpopVerifier's (dpop_verifier.hpp).
// Pure functions over OpenSSL 3, thread-safe; input from outside never throws.
//
// Accepted: `typ` "dpop+jwt"; `alg` ES256 (a P-256 key) or RS256 (a 2048- to 8192-bit key);
// `jwk` a public key only (a private member is refused); no `crit`. Claims: `htm` equal to the
// method, `htu` equal to the target URL once both are normalised (NormalizeHtu), `iat` no older
// than max_age and no further ahead than max_future, `jti` of 1 to kMaxDpopJtiBytes bytes, and
// `ath` = base64url(SHA-256(access token)) when an access token is presented.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "rendezvous/status.hpp"

namespace rendezvous::oauth {

inline constexpr size_t kMaxDpopProofBytes = 8192;  // a 8192-bit RSA key and signature fit
inline constexpr size_t kMaxDpopJtiBytes = 256;

enum class DpopAlg { kES256, kRS256 };

// A proof split and decoded, its header and key checked, its signature not yet verified.
struct ParsedDpopProof {
  DpopAlg alg = DpopAlg::kES256;
  nlohmann::json jwk;         // the public key's members (kty and its own)
  nlohmann::json claims;      // the payload, an object
  std::string signing_input;  // "header.payload" as sent
  std::string signature;      // raw bytes
};

// Splits and decodes a proof and checks its header and key (not the signature, not the claims).
// kInvalid with a message saying what is wrong.
Result<ParsedDpopProof> ParseDpopProof(std::string_view compact);

// The RFC 7638 SHA-256 thumbprint (base64url) of a key ParseDpopProof accepted.
std::string JwkThumbprint(const nlohmann::json& jwk);

// What a proof must name, and the clock it is judged by.
struct DpopExpectation {
  std::string_view method;        // htm: "GET", "POST", ...
  std::string_view url;           // htu: the request's URL (its query and fragment are ignored)
  std::string_view access_token;  // not empty: `ath` must be its hash (resource requests)
  int64_t now = 0;                // seconds since the epoch
  int64_t max_age = 300;          // plugins.oauth.dpop_max_age
  int64_t max_future = 60;
};

// A proof that passed every check but the replay check.
struct DpopProof {
  std::string jkt;  // JwkThumbprint of its key
  std::string jti;
  int64_t iat = 0;
};

// A proof header that passed the header and key checks: its alg, its key ready for OpenSSL (null
// when the key does not decode, which fails the signature check) and the key's thumbprint.
struct DpopHeaderKey;

// Checked proof headers by their exact base64url text, so that a client's key is decoded, built and
// hashed once rather than for every proof (a client sends the same header with each proof). Only
// what ParseDpopProof would conclude from that same text is kept: every proof's claims and
// signature are still checked. Bounded (the least recently used header goes); thread-safe.
class DpopKeyCache {
 public:
  static constexpr size_t kDefaultCapacity = 4096;
  // Longer headers (large RSA keys) are checked every time rather than kept.
  static constexpr size_t kMaxHeaderBytes = 1536;

  explicit DpopKeyCache(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  std::shared_ptr<const DpopHeaderKey> Find(std::string_view header);
  void Put(std::string_view header, std::shared_ptr<const DpopHeaderKey> key);
  size_t size() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const DpopHeaderKey>>;
  mutable std::mutex mu_;
  size_t capacity_;
  std::list<Entry> order_;                                                  // most recently used first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;  // views into order_
};

// Parses and verifies a proof against `expect`. kInvalid with the reason. With a cache, a header
// seen before is not decoded again (the result is the same).
Result<DpopProof> VerifyDpopProof(std::string_view compact, const DpopExpectation& expect,
                                  DpopKeyCache* cache = nullptr);

// An htu as RFC 9449 §4.3 compares it: scheme and host lower-cased, the scheme's default port
// dropped, an empty path as "/", no query or fragment. nullopt when `url` is not an absolute
// http(s) URL.
std::optional<std::string> NormalizeHtu(std::string_view url);

}  // namespace rendezvous::oauth
