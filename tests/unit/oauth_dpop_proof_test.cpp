// DPoP proofs (RFC 9449 §4.3): proofs made here with OpenSSL (ES256 on P-256, RS256 on 2048-bit
// keys), accepted, and each way a proof can be wrong refused with its reason.
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>

#include "dpop_proof.hpp"
#include "rendezvous/crypto.hpp"

namespace rendezvous::oauth {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1'800'000'000;
constexpr const char* kUrl = "https://api.example.com/v2/me";

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

std::string B64(std::string_view raw) {
  return crypto::Base64UrlEncode(raw);
}

std::string BnParam(EVP_PKEY* key, const char* name, int pad = 0) {
  BIGNUM* bn = nullptr;
  EXPECT_EQ(EVP_PKEY_get_bn_param(key, name, &bn), 1);
  std::string out(pad ? pad : BN_num_bytes(bn), '\0');
  BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(out.size()));
  BN_free(bn);
  return out;
}

// A signing key and its public JWK.
struct Key {
  Pkey pkey;
  std::string alg;
  json jwk;
};

Key EcKey() {
  Key k{Pkey(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")), "ES256", {}};
  k.jwk = {{"kty", "EC"},
           {"crv", "P-256"},
           {"x", B64(BnParam(k.pkey.get(), OSSL_PKEY_PARAM_EC_PUB_X, 32))},
           {"y", B64(BnParam(k.pkey.get(), OSSL_PKEY_PARAM_EC_PUB_Y, 32))}};
  return k;
}

Key RsaKey(size_t bits) {
  Key k{Pkey(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", bits)), "RS256", {}};
  k.jwk = {{"kty", "RSA"},
           {"n", B64(BnParam(k.pkey.get(), OSSL_PKEY_PARAM_RSA_N))},
           {"e", B64(BnParam(k.pkey.get(), OSSL_PKEY_PARAM_RSA_E))}};
  return k;
}

// Shared keys: RSA generation is slow.
const Key& Es256() {
  static const Key k = EcKey();
  return k;
}
const Key& Rs256() {
  static const Key k = RsaKey(2048);
  return k;
}

std::string Sign(const Key& key, const std::string& input) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> md(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EXPECT_EQ(EVP_DigestSignInit(md.get(), nullptr, EVP_sha256(), nullptr, key.pkey.get()), 1);
  size_t len = 0;
  EXPECT_EQ(EVP_DigestSign(md.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                           input.size()),
            1);
  std::string sig(len, '\0');
  EXPECT_EQ(EVP_DigestSign(md.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                           reinterpret_cast<const unsigned char*>(input.data()), input.size()),
            1);
  sig.resize(len);
  if (key.alg != "ES256") return sig;
  // DER -> r||s, as JWS writes ES256 signatures.
  const auto* p = reinterpret_cast<const unsigned char*>(sig.data());
  ECDSA_SIG* ecdsa = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size()));
  std::string raw(64, '\0');
  BN_bn2binpad(ECDSA_SIG_get0_r(ecdsa), reinterpret_cast<unsigned char*>(raw.data()), 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(ecdsa), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
  ECDSA_SIG_free(ecdsa);
  return raw;
}

json Header(const Key& key) {
  return {{"typ", "dpop+jwt"}, {"alg", key.alg}, {"jwk", key.jwk}};
}

json Claims() {
  return {{"jti", "e1j3V_bKic8-LAEB"}, {"htm", "GET"}, {"htu", kUrl}, {"iat", kNow}};
}

std::string Proof(const Key& key, const json& header, const json& claims) {
  const std::string input = B64(header.dump()) + "." + B64(claims.dump());
  return input + "." + B64(Sign(key, input));
}
std::string Proof(const Key& key, const json& claims = Claims()) {
  return Proof(key, Header(key), claims);
}

DpopExpectation Expect(std::string_view method = "GET", std::string_view url = kUrl,
                       std::string_view token = {}) {
  DpopExpectation e;
  e.method = method;
  e.url = url;
  e.access_token = token;
  e.now = kNow;
  e.max_age = 300;
  e.max_future = 60;
  return e;
}

// One key cache for the whole program, warm with every header the tests have sent.
DpopKeyCache& SharedCache() {
  static DpopKeyCache cache;
  return cache;
}

// The reason a proof is refused ("" when accepted). Every proof is judged twice, without and with
// the key cache (a header seen before is then not checked again): both must conclude the same.
std::string Refusal(const std::string& proof, const DpopExpectation& expect = Expect()) {
  Result<DpopProof> r = VerifyDpopProof(proof, expect);
  const std::string plain = r.ok() ? "" : r.status().message();
  for (int pass = 0; pass < 2; ++pass) {  // the second pass finds the header in the cache
    Result<DpopProof> cached = VerifyDpopProof(proof, expect, &SharedCache());
    EXPECT_EQ(cached.ok() ? "" : cached.status().message(), plain) << "pass " << pass;
    if (r.ok() && cached.ok()) {
      EXPECT_EQ(cached->jkt, r->jkt);
    }
  }
  return plain;
}

std::string Sha256B64(std::string_view data) {
  std::string digest(32, '\0');
  EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(digest.data()), nullptr, EVP_sha256(),
             nullptr);
  return B64(digest);
}

TEST(DpopProof, Es256ProofIsAcceptedWithTheRfc7638Thumbprint) {
  Result<DpopProof> r = VerifyDpopProof(Proof(Es256()), Expect());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const json& jwk = Es256().jwk;
  // RFC 7638 §3.2: the required members in lexicographic order, no whitespace.
  const std::string canonical = R"({"crv":"P-256","kty":"EC","x":")" + jwk["x"].get<std::string>() +
                                R"(","y":")" + jwk["y"].get<std::string>() + R"("})";
  EXPECT_EQ(r->jkt, Sha256B64(canonical));
  EXPECT_EQ(r->jti, "e1j3V_bKic8-LAEB");
  EXPECT_EQ(r->iat, kNow);
}

TEST(DpopProof, Rs256ProofIsAcceptedWithTheRfc7638Thumbprint) {
  Result<DpopProof> r = VerifyDpopProof(Proof(Rs256()), Expect());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const json& jwk = Rs256().jwk;
  const std::string canonical = R"({"e":")" + jwk["e"].get<std::string>() + R"(","kty":"RSA","n":")" +
                                jwk["n"].get<std::string>() + R"("})";
  EXPECT_EQ(r->jkt, Sha256B64(canonical));
}

TEST(DpopProof, MembersBeyondTheKeyDoNotChangeTheThumbprint) {
  json header = Header(Es256());
  header["jwk"]["kid"] = "my key";
  header["jwk"]["use"] = "sig";
  Result<DpopProof> with = VerifyDpopProof(Proof(Es256(), header, Claims()), Expect());
  Result<DpopProof> without = VerifyDpopProof(Proof(Es256()), Expect());
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_EQ(with->jkt, without->jkt);
}

TEST(DpopProof, AthMustBeTheAccessTokenHash) {
  const std::string token = "rdvat_abc";
  json claims = Claims();
  EXPECT_EQ(Refusal(Proof(Es256(), claims), Expect("GET", kUrl, token)),
            "the proof's ath does not match the access token");
  claims["ath"] = Sha256B64("rdvat_other");
  EXPECT_EQ(Refusal(Proof(Es256(), claims), Expect("GET", kUrl, token)),
            "the proof's ath does not match the access token");
  claims["ath"] = Sha256B64(token);
  EXPECT_EQ(Refusal(Proof(Es256(), claims), Expect("GET", kUrl, token)), "");
}

TEST(DpopProof, HtuIsComparedNormalised) {
  json claims = Claims();
  claims["htu"] = "HTTPS://API.Example.COM:443/v2/me?x=1#frag";
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "");
  EXPECT_EQ(Refusal(Proof(Es256()), Expect("GET", "https://api.example.com/v2/me?page=2")), "");
  claims["htu"] = "https://api.example.com/v2/ME";
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof's htu does not match the request URL");
  claims["htu"] = "https://api.example.com:8443/v2/me";
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof's htu does not match the request URL");
  claims["htu"] = "http://api.example.com/v2/me";
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof's htu does not match the request URL");
  claims["htu"] = "/v2/me";
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof's htu does not match the request URL");
}

TEST(DpopProof, NormalizeHtu) {
  EXPECT_EQ(NormalizeHtu("HTTP://Example.com:80"), "http://example.com/");
  EXPECT_EQ(NormalizeHtu("https://example.com:443/a/b?c#d"), "https://example.com/a/b");
  EXPECT_EQ(NormalizeHtu("https://example.com:80/a"), "https://example.com:80/a");
  EXPECT_EQ(NormalizeHtu("http://[::1]:8080/x"), "http://[::1]:8080/x");
  EXPECT_EQ(NormalizeHtu("ftp://example.com/"), std::nullopt);
  EXPECT_EQ(NormalizeHtu("not a url"), std::nullopt);
}

TEST(DpopProof, ClaimsAreChecked) {
  EXPECT_EQ(Refusal(Proof(Es256()), Expect("POST")), "the proof's htm does not match the request method");
  json claims = Claims();
  claims["htm"] = "get";
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof's htm does not match the request method");

  claims = Claims();
  claims["iat"] = kNow - 301;
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof is too old (iat)");
  claims["iat"] = kNow - 300;
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "");
  claims["iat"] = kNow + 61;
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof's iat is in the future");
  claims["iat"] = kNow + 60.5;
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "");
  claims["iat"] = "1800000000";
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof has no iat");
  claims.erase("iat");
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof has no iat");

  claims = Claims();
  claims.erase("jti");
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof's jti is missing or too long");
  claims["jti"] = "";
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof's jti is missing or too long");
  claims["jti"] = std::string(kMaxDpopJtiBytes + 1, 'j');
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof's jti is missing or too long");
  claims["jti"] = std::string(kMaxDpopJtiBytes, 'j');
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "");
  claims = Claims();
  claims.erase("htu");
  EXPECT_EQ(Refusal(Proof(Es256(), claims)), "the proof has no htu");
}

TEST(DpopProof, HeaderIsChecked) {
  json header = Header(Es256());
  header["typ"] = "JWT";
  EXPECT_EQ(Refusal(Proof(Es256(), header, Claims())), "the proof's typ is not dpop+jwt");
  header = Header(Es256());
  header.erase("typ");
  EXPECT_EQ(Refusal(Proof(Es256(), header, Claims())), "the proof's typ is not dpop+jwt");
  for (const char* alg : {"none", "HS256", "ES384", "PS256", "EdDSA"}) {
    header = Header(Es256());
    header["alg"] = alg;
    EXPECT_EQ(Refusal(Proof(Es256(), header, Claims())), "the proof's alg is not supported (ES256, RS256)")
        << alg;
  }
  header = Header(Es256());
  header["crit"] = {"exp"};
  EXPECT_EQ(Refusal(Proof(Es256(), header, Claims())), "the proof's header has crit parameters");
  header = Header(Es256());
  header.erase("jwk");
  EXPECT_EQ(Refusal(Proof(Es256(), header, Claims())), "the proof's header has no jwk object");
  // An RSA key under ES256 and the other way round.
  header = Header(Es256());
  header["jwk"] = Rs256().jwk;
  EXPECT_EQ(Refusal(Proof(Es256(), header, Claims())), "ES256 needs an EC key");
  header = Header(Rs256());
  header["jwk"] = Es256().jwk;
  EXPECT_EQ(Refusal(Proof(Rs256(), header, Claims())), "RS256 needs an RSA key");
}

TEST(DpopProof, PrivateKeyMembersAreRefused) {
  for (const char* member : {"d", "p", "q", "dp", "dq", "qi"}) {
    json header = Header(Rs256());
    header["jwk"][member] = "AQAB";
    EXPECT_EQ(Refusal(Proof(Rs256(), header, Claims())), "the proof's jwk holds a private key member")
        << member;
  }
  json header = Header(Es256());
  header["jwk"]["d"] = "AQAB";
  EXPECT_EQ(Refusal(Proof(Es256(), header, Claims())), "the proof's jwk holds a private key member");
}

TEST(DpopProof, WeakAndMalformedKeysAreRefused) {
  Key small = RsaKey(1024);
  EXPECT_EQ(Refusal(Proof(small)), "the proof's RSA key is shorter than 2048 bits");

  json header = Header(Es256());
  header["jwk"]["crv"] = "P-384";
  EXPECT_EQ(Refusal(Proof(Es256(), header, Claims())), "ES256 needs a P-256 key");
  header = Header(Es256());
  header["jwk"]["x"] = B64(std::string(31, 'x'));
  EXPECT_EQ(Refusal(Proof(Es256(), header, Claims())), "the proof's EC key has malformed coordinates");
  // A point off the curve: the key is refused when the signature is checked.
  header = Header(Es256());
  header["jwk"]["x"] = B64(std::string(32, '\x01'));
  EXPECT_EQ(Refusal(Proof(Es256(), header, Claims())), "the proof's signature does not verify");
  header = Header(Rs256());
  header["jwk"]["n"] = "AA" + header["jwk"]["n"].get<std::string>().substr(2);
  EXPECT_EQ(Refusal(Proof(Rs256(), header, Claims())), "the proof's RSA key has leading zero octets");
}

TEST(DpopProof, SignatureIsVerified) {
  const std::string good = Proof(Es256());
  // Payload changed after signing.
  json claims = Claims();
  claims["htm"] = "POST";
  const std::string forged =
      good.substr(0, good.find('.') + 1) + B64(claims.dump()) + good.substr(good.rfind('.'));
  EXPECT_EQ(Refusal(forged, Expect("POST")), "the proof's signature does not verify");
  // Signed by another key than the one in the header.
  Key other = EcKey();
  EXPECT_EQ(Refusal(Proof(other, Header(Es256()), Claims())), "the proof's signature does not verify");
  // RS256 with a truncated signature.
  const std::string input = B64(Header(Rs256()).dump()) + "." + B64(Claims().dump());
  EXPECT_EQ(Refusal(input + "." + B64(Sign(Rs256(), input).substr(0, 255))),
            "the proof's signature does not verify");
  EXPECT_EQ(Refusal(input + "." + B64(Sign(Rs256(), input))), "");
  // ES256 signature of the wrong length.
  EXPECT_EQ(Refusal(good + "AAAA"), "the proof's signature does not verify");
}

TEST(DpopProof, KeyCacheKeepsHeadersNotVerdicts) {
  DpopKeyCache cache(2);
  const std::string good = Proof(Es256());
  Result<DpopProof> first = VerifyDpopProof(good, Expect(), &cache);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(cache.size(), 1U);
  // The same header, another payload signed by another key: the cached key refuses it.
  Key other = EcKey();
  EXPECT_EQ(VerifyDpopProof(Proof(other, Header(Es256()), Claims()), Expect(), &cache).status().message(),
            "the proof's signature does not verify");
  json claims = Claims();
  claims["htm"] = "POST";
  const std::string forged =
      good.substr(0, good.find('.') + 1) + B64(claims.dump()) + good.substr(good.rfind('.'));
  EXPECT_EQ(VerifyDpopProof(forged, Expect("POST"), &cache).status().message(),
            "the proof's signature does not verify");
  EXPECT_FALSE(VerifyDpopProof(good, Expect("POST"), &cache).ok());
  EXPECT_EQ(cache.size(), 1U);
  // Bounded: the least recently used header goes.
  ASSERT_TRUE(VerifyDpopProof(Proof(other), Expect(), &cache).ok());
  ASSERT_TRUE(VerifyDpopProof(Proof(Rs256()), Expect(), &cache).ok());
  EXPECT_EQ(cache.size(), 2U);
  Result<DpopProof> again = VerifyDpopProof(good, Expect(), &cache);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->jkt, first->jkt);
  EXPECT_EQ(cache.size(), 2U);
  // A key that does not decode is not kept.
  json header = Header(Es256());
  header["jwk"]["x"] = B64(std::string(32, '\x01'));
  EXPECT_EQ(VerifyDpopProof(Proof(Es256(), header, Claims()), Expect(), &cache).status().message(),
            "the proof's signature does not verify");
  EXPECT_EQ(cache.size(), 2U);
}

TEST(DpopProof, CompactFormIsStrict) {
  const std::string good = Proof(Es256());
  EXPECT_EQ(Refusal(""), "the DPoP proof is empty");
  EXPECT_EQ(Refusal(std::string(kMaxDpopProofBytes + 1, 'a')), "the DPoP proof is too long");
  EXPECT_EQ(Refusal(good.substr(0, good.rfind('.'))), "the DPoP proof is not a JWS in compact form");
  EXPECT_EQ(Refusal(good + ".x"), "the DPoP proof is not a JWS in compact form");
  EXPECT_EQ(Refusal("=" + good), "the proof's header is not base64url JSON");
  EXPECT_EQ(Refusal(B64("[1]") + good.substr(good.find('.'))), "the proof's header is not base64url JSON");
  const size_t dot = good.find('.');
  EXPECT_EQ(Refusal(good.substr(0, dot + 1) + "!" + good.substr(dot + 1)),
            "the proof's payload is not base64url JSON");
  EXPECT_EQ(Refusal(good.substr(0, good.rfind('.') + 1)), "the proof's signature is not base64url");
  EXPECT_EQ(Refusal(good + "="), "the proof's signature is not base64url");
}

TEST(Base64UrlDecodeStrict, RefusesPaddingOtherAlphabetsAndNonCanonicalText) {
  EXPECT_EQ(*crypto::Base64UrlDecodeStrict("-_8"), "\xfb\xff");
  EXPECT_FALSE(crypto::Base64UrlDecodeStrict("+/8").ok());
  EXPECT_FALSE(crypto::Base64UrlDecodeStrict("QQ==").ok());
  EXPECT_TRUE(crypto::Base64UrlDecodeStrict("QQ").ok());
  EXPECT_FALSE(crypto::Base64UrlDecodeStrict("QR").ok());  // the unused bits must be zero
  EXPECT_FALSE(crypto::Base64UrlDecodeStrict("Q").ok());
}

}  // namespace
}  // namespace rendezvous::oauth
