#include "dpop_proof.hpp"

#include <cmath>
#include <memory>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/sha.h>

#include "rendezvous/crypto.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::oauth {
namespace {

constexpr size_t kP256CoordinateBytes = 32;
constexpr size_t kMinRsaBits = 2048;
constexpr size_t kMaxRsaBits = 8192;
constexpr size_t kMaxRsaExponentBytes = 8;

Status Invalid(std::string message) {
  return Status(ErrorCode::kInvalid, std::move(message));
}

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
struct ParamBldFree {
  void operator()(OSSL_PARAM_BLD* p) const { OSSL_PARAM_BLD_free(p); }
};
struct ParamFree {
  void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct BnFree {
  void operator()(BIGNUM* p) const { BN_free(p); }
};
struct EcdsaSigFree {
  void operator()(ECDSA_SIG* p) const { ECDSA_SIG_free(p); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using Bn = std::unique_ptr<BIGNUM, BnFree>;

// A base64url member of `object` decoded strictly; nullopt when absent, not a string or malformed.
std::optional<std::string> B64Member(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  Result<std::string> raw = crypto::Base64UrlDecodeStrict(it->get_ref<const std::string&>());
  if (!raw.ok()) return std::nullopt;
  return *std::move(raw);
}

// A JSON object from one base64url part; nullopt when either layer is malformed.
std::optional<nlohmann::json> JsonPart(std::string_view part) {
  Result<std::string> raw = crypto::Base64UrlDecodeStrict(part);
  if (!raw.ok()) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

Pkey KeyFromParams(const char* type, OSSL_PARAM_BLD* bld) {
  std::unique_ptr<OSSL_PARAM, ParamFree> params(OSSL_PARAM_BLD_to_param(bld));
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1) return nullptr;
  EVP_PKEY* key = nullptr;
  if (EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) return nullptr;
  return Pkey(key);
}

// A P-256 public key from its coordinates; null when the point is not on the curve.
Pkey EcKey(const std::string& x, const std::string& y) {
  std::string point = "\x04" + x + y;
  std::unique_ptr<OSSL_PARAM_BLD, ParamBldFree> bld(OSSL_PARAM_BLD_new());
  if (!bld || OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1 ||
      OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) != 1) {
    return nullptr;
  }
  // Decoding the point checks that it lies on the curve (P-256 has cofactor 1, so that is the
  // whole public-key check); a point off the curve yields no key.
  return KeyFromParams("EC", bld.get());
}

Pkey RsaKey(const std::string& n, const std::string& e) {
  Bn bn_n(BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()), static_cast<int>(n.size()), nullptr));
  Bn bn_e(BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()), static_cast<int>(e.size()), nullptr));
  std::unique_ptr<OSSL_PARAM_BLD, ParamBldFree> bld(OSSL_PARAM_BLD_new());
  if (!bn_n || !bn_e || !bld || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1) {
    return nullptr;
  }
  return KeyFromParams("RSA", bld.get());
}

// The key a checked jwk describes.
Pkey KeyOf(const nlohmann::json& jwk) {
  if (jwk.at("kty") == "EC") return EcKey(*B64Member(jwk, "x"), *B64Member(jwk, "y"));
  return RsaKey(*B64Member(jwk, "n"), *B64Member(jwk, "e"));
}

// JWS ES256 signatures are r||s (32 bytes each); OpenSSL verifies DER.
std::optional<std::string> EcdsaDer(const std::string& raw) {
  if (raw.size() != 2 * kP256CoordinateBytes) return std::nullopt;
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
  std::unique_ptr<ECDSA_SIG, EcdsaSigFree> sig(ECDSA_SIG_new());
  BIGNUM* r = BN_bin2bn(bytes, kP256CoordinateBytes, nullptr);
  BIGNUM* s = BN_bin2bn(bytes + kP256CoordinateBytes, kP256CoordinateBytes, nullptr);
  if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return std::nullopt;
  }
  unsigned char* der = nullptr;
  const int len = i2d_ECDSA_SIG(sig.get(), &der);
  if (len <= 0) return std::nullopt;
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(len));
  OPENSSL_free(der);
  return out;
}

// SHA-256 fetched once (EVP_sha256() would be looked up again in every use).
const EVP_MD* Sha256() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

// `data`'s SHA-256 into `out` (SHA256_DIGEST_LENGTH bytes) with the fetched digest (OpenSSL's
// one-shot SHA256() looks it up by name on every call).
bool Sha256Of(std::string_view data, unsigned char* out) {
  return Sha256() != nullptr && EVP_Digest(data.data(), data.size(), out, nullptr, Sha256(), nullptr) == 1;
}

// A verification context for `key` with SHA-256 as the signature's digest, made once per key: a
// proof's verification duplicates it (no provider look-up, no key export) instead of setting one
// up (EVP_DigestVerifyInit fetches the signature algorithm and walks the provider's names each
// time). Null when OpenSSL refuses the key.
std::shared_ptr<EVP_PKEY_CTX> VerifyContext(EVP_PKEY* key) {
  if (key == nullptr || Sha256() == nullptr) return nullptr;
  std::shared_ptr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key, nullptr), EVP_PKEY_CTX_free);
  if (!ctx || EVP_PKEY_verify_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_signature_md(ctx.get(), Sha256()) != 1) {
    return nullptr;
  }
  return ctx;
}

// `prepared` is VerifyContext(key): only read here (duplicated), so one serves every thread.
bool VerifySignature(DpopAlg alg, EVP_PKEY* key, EVP_PKEY_CTX* prepared, const std::string& raw_signature,
                     std::string_view signing_input) {
  if (key == nullptr || prepared == nullptr) return false;
  std::optional<std::string> der;
  if (alg == DpopAlg::kES256) {
    der = EcdsaDer(raw_signature);
    if (!der) return false;
  } else if (raw_signature.size() != static_cast<size_t>(EVP_PKEY_get_size(key))) {
    return false;
  }
  const std::string& signature = der ? *der : raw_signature;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  if (!Sha256Of(signing_input, digest)) return false;
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(EVP_PKEY_CTX_dup(prepared));
  return ctx && EVP_PKEY_verify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                                signature.size(), digest, sizeof digest) == 1;
}

// The public key of the header: its own members checked, private ones refused. Returns the
// members RFC 7638 hashes (the thumbprint's input) plus nothing else of use.
Result<nlohmann::json> CheckJwk(const nlohmann::json& header, DpopAlg alg) {
  auto it = header.find("jwk");
  if (it == header.end() || !it->is_object()) return Invalid("the proof's header has no jwk object");
  const nlohmann::json& jwk = *it;
  for (const char* member : {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}) {
    if (jwk.contains(member)) return Invalid("the proof's jwk holds a private key member");
  }
  auto kty = jwk.find("kty");
  if (kty == jwk.end() || !kty->is_string()) return Invalid("the proof's jwk has no kty");
  if (alg == DpopAlg::kES256) {
    if (*kty != "EC") return Invalid("ES256 needs an EC key");
    auto crv = jwk.find("crv");
    if (crv == jwk.end() || *crv != "P-256") return Invalid("ES256 needs a P-256 key");
    std::optional<std::string> x = B64Member(jwk, "x");
    std::optional<std::string> y = B64Member(jwk, "y");
    if (!x || !y || x->size() != kP256CoordinateBytes || y->size() != kP256CoordinateBytes) {
      return Invalid("the proof's EC key has malformed coordinates");
    }
    return nlohmann::json{{"crv", "P-256"}, {"kty", "EC"}, {"x", jwk.at("x")}, {"y", jwk.at("y")}};
  }
  if (*kty != "RSA") return Invalid("RS256 needs an RSA key");
  std::optional<std::string> n = B64Member(jwk, "n");
  std::optional<std::string> e = B64Member(jwk, "e");
  if (!n || !e || n->empty() || e->empty() || e->size() > kMaxRsaExponentBytes) {
    return Invalid("the proof's RSA key is malformed");
  }
  // RFC 7518 §6.3.1: no leading zero octets, so that one key has one thumbprint.
  if ((*n)[0] == '\0' || (*e)[0] == '\0') return Invalid("the proof's RSA key has leading zero octets");
  size_t bits = n->size() * 8;
  for (auto top = static_cast<unsigned char>((*n)[0]); (top & 0x80) == 0; top <<= 1) --bits;
  if (bits < kMinRsaBits) return Invalid("the proof's RSA key is shorter than 2048 bits");
  if (bits > kMaxRsaBits) return Invalid("the proof's RSA key is longer than 8192 bits");
  if ((static_cast<unsigned char>(e->back()) & 1) == 0) return Invalid("the proof's RSA key is malformed");
  return nlohmann::json{{"e", jwk.at("e")}, {"kty", "RSA"}, {"n", jwk.at("n")}};
}

// A JSON number as whole seconds; nullopt for anything else or out of range.
std::optional<int64_t> Seconds(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < -9e15 || d > 9e15) return std::nullopt;
    return static_cast<int64_t>(std::floor(d));
  }
  return std::nullopt;
}

const std::string* StringClaim(const nlohmann::json& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_string()) return nullptr;
  return &it->get_ref<const std::string&>();
}

// The three parts of a compact JWS.
struct ProofParts {
  std::string_view header;
  std::string_view payload;
  std::string_view signature;
  std::string_view signing_input;  // "header.payload"
};

Result<ProofParts> SplitProof(std::string_view compact) {
  if (compact.empty()) return Invalid("the DPoP proof is empty");
  if (compact.size() > kMaxDpopProofBytes) return Invalid("the DPoP proof is too long");
  const size_t dot1 = compact.find('.');
  const size_t dot2 = dot1 == std::string_view::npos ? dot1 : compact.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || compact.find('.', dot2 + 1) != std::string_view::npos) {
    return Invalid("the DPoP proof is not a JWS in compact form");
  }
  return ProofParts{compact.substr(0, dot1), compact.substr(dot1 + 1, dot2 - dot1 - 1),
                    compact.substr(dot2 + 1), compact.substr(0, dot2)};
}

// A checked header: its alg and the members of its key the thumbprint hashes.
struct CheckedHeader {
  DpopAlg alg = DpopAlg::kES256;
  nlohmann::json jwk;
};

Result<CheckedHeader> CheckHeader(std::string_view part) {
  std::optional<nlohmann::json> header = JsonPart(part);
  if (!header) return Invalid("the proof's header is not base64url JSON");

  auto typ = header->find("typ");
  if (typ == header->end() || *typ != "dpop+jwt") return Invalid("the proof's typ is not dpop+jwt");
  auto alg = header->find("alg");
  if (alg == header->end() || !alg->is_string()) return Invalid("the proof has no alg");
  CheckedHeader out;
  if (*alg == "ES256") {
    out.alg = DpopAlg::kES256;
  } else if (*alg == "RS256") {
    out.alg = DpopAlg::kRS256;
  } else {
    // "none", the HMAC algorithms (a symmetric key cannot prove possession) and the rest.
    return Invalid("the proof's alg is not supported (ES256, RS256)");
  }
  if (header->contains("crit")) return Invalid("the proof's header has crit parameters");
  Result<nlohmann::json> jwk = CheckJwk(*header, out.alg);
  if (!jwk.ok()) return jwk.status();
  out.jwk = *std::move(jwk);
  return out;
}

// The payload (a JSON object) and the raw signature of a proof.
Status DecodeBody(const ProofParts& parts, nlohmann::json& claims, std::string& signature) {
  std::optional<nlohmann::json> payload = JsonPart(parts.payload);
  if (!payload) return Invalid("the proof's payload is not base64url JSON");
  claims = *std::move(payload);
  Result<std::string> raw = crypto::Base64UrlDecodeStrict(parts.signature);
  if (!raw.ok() || raw->empty()) return Invalid("the proof's signature is not base64url");
  signature = *std::move(raw);
  return Status();
}

}  // namespace

struct DpopHeaderKey {
  DpopAlg alg = DpopAlg::kES256;
  std::shared_ptr<EVP_PKEY> key;         // null when the key does not decode
  std::shared_ptr<EVP_PKEY_CTX> verify;  // VerifyContext(key): null with it
  std::string jkt;
};

std::shared_ptr<const DpopHeaderKey> DpopKeyCache::Find(std::string_view header) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(header);
  if (it == index_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->second;
}

void DpopKeyCache::Put(std::string_view header, std::shared_ptr<const DpopHeaderKey> key) {
  if (capacity_ == 0 || header.size() > kMaxHeaderBytes) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (index_.contains(header)) return;
  if (order_.size() >= capacity_) {
    index_.erase(order_.back().first);
    order_.pop_back();
  }
  order_.emplace_front(std::string(header), std::move(key));
  index_.emplace(order_.front().first, order_.begin());
}

size_t DpopKeyCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.size();
}

Result<ParsedDpopProof> ParseDpopProof(std::string_view compact) {
  Result<ProofParts> parts = SplitProof(compact);
  if (!parts.ok()) return parts.status();
  Result<CheckedHeader> header = CheckHeader(parts->header);
  if (!header.ok()) return header.status();
  ParsedDpopProof out;
  out.alg = header->alg;
  out.jwk = std::move(header->jwk);
  Status body = DecodeBody(*parts, out.claims, out.signature);
  if (!body.ok()) return body;
  out.signing_input = std::string(parts->signing_input);
  return out;
}

std::string JwkThumbprint(const nlohmann::json& jwk) {
  // nlohmann's objects keep their members sorted and dump() writes no whitespace: RFC 7638 §3.
  std::string digest(32, '\0');
  const std::string canonical = jwk.dump();
  EVP_Digest(canonical.data(), canonical.size(), reinterpret_cast<unsigned char*>(digest.data()), nullptr,
             Sha256(), nullptr);
  return crypto::Base64UrlEncode(digest);
}

Result<DpopProof> VerifyDpopProof(std::string_view compact, const DpopExpectation& expect,
                                  DpopKeyCache* cache) {
  Result<ProofParts> parts = SplitProof(compact);
  if (!parts.ok()) return parts.status();
  std::shared_ptr<const DpopHeaderKey> header_key = cache ? cache->Find(parts->header) : nullptr;
  if (!header_key) {
    Result<CheckedHeader> header = CheckHeader(parts->header);
    if (!header.ok()) return header.status();
    auto built = std::make_shared<DpopHeaderKey>();
    built->alg = header->alg;
    built->key = std::shared_ptr<EVP_PKEY>(KeyOf(header->jwk).release(), EVP_PKEY_free);
    built->verify = VerifyContext(built->key.get());
    built->jkt = JwkThumbprint(header->jwk);
    // A key that does not decode is not kept: such proofs fail below, each time.
    if (cache && built->verify) cache->Put(parts->header, built);
    header_key = std::move(built);
  }
  nlohmann::json claims;
  std::string signature;
  Status body = DecodeBody(*parts, claims, signature);
  if (!body.ok()) return body;

  const std::string* jti = StringClaim(claims, "jti");
  if (!jti || jti->empty() || jti->size() > kMaxDpopJtiBytes)
    return Invalid("the proof's jti is missing or too long");
  const std::string* htm = StringClaim(claims, "htm");
  if (!htm || *htm != expect.method) return Invalid("the proof's htm does not match the request method");
  const std::string* htu = StringClaim(claims, "htu");
  if (!htu) return Invalid("the proof has no htu");
  std::optional<std::string> proof_url = NormalizeHtu(*htu);
  std::optional<std::string> target = NormalizeHtu(expect.url);
  if (!proof_url || !target || *proof_url != *target)
    return Invalid("the proof's htu does not match the request URL");
  auto iat_it = claims.find("iat");
  std::optional<int64_t> iat = iat_it == claims.end() ? std::nullopt : Seconds(*iat_it);
  if (!iat) return Invalid("the proof has no iat");
  if (*iat < expect.now - expect.max_age) return Invalid("the proof is too old (iat)");
  if (*iat > expect.now + expect.max_future) return Invalid("the proof's iat is in the future");
  if (!expect.access_token.empty()) {
    const std::string* ath = StringClaim(claims, "ath");
    std::string digest(SHA256_DIGEST_LENGTH, '\0');
    if (!Sha256Of(expect.access_token, reinterpret_cast<unsigned char*>(digest.data()))) {
      return Invalid("the access token could not be hashed");
    }
    if (!ath || !crypto::ConstantTimeEquals(*ath, crypto::Base64UrlEncode(digest))) {
      return Invalid("the proof's ath does not match the access token");
    }
  }
  // The signature last: the checks above cost nothing, a verification does.
  if (!VerifySignature(header_key->alg, header_key->key.get(), header_key->verify.get(), signature,
                       parts->signing_input)) {
    return Invalid("the proof's signature does not verify");
  }
  return DpopProof{header_key->jkt, *jti, *iat};
}

std::optional<std::string> NormalizeHtu(std::string_view url) {
  Result<net::Url> parsed = net::ParseUrl(url);
  if (!parsed.ok() || (parsed->scheme != "http" && parsed->scheme != "https")) return std::nullopt;
  std::string out = parsed->scheme + "://" + parsed->HostInUrl();
  const int default_port = parsed->scheme == "https" ? 443 : 80;
  if (parsed->port && *parsed->port != default_port) out += ":" + std::to_string(*parsed->port);
  out += parsed->path.empty() ? "/" : parsed->path;
  return out;
}

}  // namespace rendezvous::oauth
