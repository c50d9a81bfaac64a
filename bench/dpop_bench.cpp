// DPoP (RFC 9449) against a running server, with its bearer twin measured by the same client so
// that the ratio compares the server's work only: N connections, each with its own managed-user
// grant and its own ES256 key.
//   dpop_bench me|refresh dpop|dpop-presigned|bearer|apikey BASE_URL CLIENT_ID CLIENT_SECRET SECONDS
//   TOKENS_FILE
// me: each connection refreshes its grant once (with a proof in the DPoP modes: its tokens become
// bound), then GETs /v2/me in a loop, with `Authorization: DPoP` and a fresh proof per request
// (dpop, dpop-presigned) or `Authorization: Bearer` (bearer). dpop-presigned signs every
// connection's proofs (each with its own jti) before the clock starts, so that the client's ECDSA
// signing does not take the shared cores from the server while it is measured; a connection that
// runs out of proofs counts a failure. refresh: each connection rotates its refresh token in a
// loop, with a fresh proof per grant (dpop) or without. apikey (me only): the same GET /v2/me
// loop with `Authorization: Bearer $BENCH_API_KEY` instead of the grant's access token (the
// yardstick of the token path, no refresh). TOKENS_FILE: one refresh token per line,
// one connection per line. The grants and proofs are made before the measured seconds start.
// Prints one JSON line (bench::Tally). DPOP_BENCH_TOKEN_PATH and DPOP_BENCH_ME_PATH replace the
// paths of the token endpoint and /v2/me (another server's, for a reference).
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include <curl/curl.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "load_support.hpp"

namespace {

std::string B64Url(const std::string& raw) {
  std::string out(4 * ((raw.size() + 2) / 3) + 1, '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(raw.data()), static_cast<int>(raw.size()));
  out.resize(static_cast<size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

std::string Sha256(const std::string& data) {
  std::string digest(32, '\0');
  EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(digest.data()), nullptr, EVP_sha256(),
             nullptr);
  return digest;
}

// One connection's ES256 key: signs proofs (RFC 9449 §4.2).
class ProofKey {
 public:
  ProofKey() : key_(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")) {
    auto coordinate = [&](const char* name) {
      BIGNUM* bn = nullptr;
      EVP_PKEY_get_bn_param(key_, name, &bn);
      std::string out(32, '\0');
      BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), 32);
      BN_free(bn);
      return B64Url(out);
    };
    const nlohmann::json header = {{"typ", "dpop+jwt"},
                                   {"alg", "ES256"},
                                   {"jwk",
                                    {{"kty", "EC"},
                                     {"crv", "P-256"},
                                     {"x", coordinate(OSSL_PKEY_PARAM_EC_PUB_X)},
                                     {"y", coordinate(OSSL_PKEY_PARAM_EC_PUB_Y)}}}};
    header_ = B64Url(header.dump());
    sign_ = EVP_PKEY_CTX_new_from_pkey(nullptr, key_, nullptr);
    EVP_PKEY_sign_init(sign_);
  }
  ~ProofKey() {
    EVP_PKEY_CTX_free(sign_);
    EVP_MD_free(sha256_);
    EVP_PKEY_free(key_);
  }
  ProofKey(const ProofKey&) = delete;
  ProofKey& operator=(const ProofKey&) = delete;

  std::string Proof(const std::string& method, const std::string& url, const std::string& access_token = "") {
    std::string jti(16, '\0');
    RAND_bytes(reinterpret_cast<unsigned char*>(jti.data()), 16);
    nlohmann::json claims = {
        {"jti", B64Url(jti)}, {"htm", method}, {"htu", url}, {"iat", std::time(nullptr)}};
    if (!access_token.empty()) claims["ath"] = B64Url(Sha256(access_token));
    const std::string input = header_ + "." + B64Url(claims.dump());
    // The digest, then the signature with a context set up once for the key (duplicated per
    // proof): EVP_DigestSignInit would look the algorithms up and set the key up on every proof.
    unsigned char digest[32];
    EVP_Digest(input.data(), input.size(), digest, nullptr, sha256_, nullptr);
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_dup(sign_);
    size_t len = 0;
    EVP_PKEY_sign(ctx, nullptr, &len, digest, sizeof digest);
    std::string der(len, '\0');
    EVP_PKEY_sign(ctx, reinterpret_cast<unsigned char*>(der.data()), &len, digest, sizeof digest);
    EVP_PKEY_CTX_free(ctx);
    const auto* p = reinterpret_cast<const unsigned char*>(der.data());
    ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(len));
    std::string raw(64, '\0');
    BN_bn2binpad(ECDSA_SIG_get0_r(sig), reinterpret_cast<unsigned char*>(raw.data()), 32);
    BN_bn2binpad(ECDSA_SIG_get0_s(sig), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
    ECDSA_SIG_free(sig);
    return input + "." + B64Url(raw);
  }

 private:
  EVP_PKEY* key_;
  EVP_PKEY_CTX* sign_ = nullptr;
  EVP_MD* sha256_ = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  std::string header_;
};

// One refresh grant on `c`; the new tokens, or a null JSON on failure.
nlohmann::json Refresh(CURL* c, const std::string& token_url, const std::string& client_id,
                       const std::string& secret, const std::string& refresh_token, ProofKey* key) {
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/x-www-form-urlencoded");
  if (key) headers = curl_slist_append(headers, ("DPoP: " + key->Proof("POST", token_url)).c_str());
  const std::string body = "grant_type=refresh_token&client_id=" + bench::Escape(c, client_id) +
                           "&client_secret=" + bench::Escape(c, secret) +
                           "&refresh_token=" + bench::Escape(c, refresh_token);
  bench::Exchange x = bench::Post(c, headers, token_url, body);
  curl_slist_free_all(headers);
  nlohmann::json j = nlohmann::json::parse(x.body, nullptr, false);
  if (!x.transport_ok || x.status != 200 || !j.is_object() || !j.contains("access_token")) {
    std::cerr << "refresh grant failed: " << x.status << " " << x.body << "\n";
    return nullptr;
  }
  j["ms"] = x.ms;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::cerr << "usage: dpop_bench me|refresh dpop|dpop-presigned|bearer|apikey BASE_URL CLIENT_ID "
                 "CLIENT_SECRET SECONDS"
                 " TOKENS_FILE\n";
    return 2;
  }
  const std::string scenario = argv[1], base = argv[3], client_id = argv[4], secret = argv[5];
  const std::string mode = argv[2];
  const bool presigned = mode == "dpop-presigned";
  const bool dpop = mode == "dpop" || presigned;
  // Enough proofs for each connection to outrun what the server answers in the measured seconds.
  constexpr size_t kPresignedPerSecond = 2000;
  const int seconds = std::stoi(argv[6]);
  // Another server's paths (the oidc_provider scenario of bench/run.sh): DPOP_BENCH_TOKEN_PATH,
  // DPOP_BENCH_ME_PATH.
  auto path = [](const char* name, const char* ours) {
    const char* set = std::getenv(name);
    return std::string(set != nullptr && *set != '\0' ? set : ours);
  };
  const std::string token_url = base + path("DPOP_BENCH_TOKEN_PATH", "/v2/auth/oauth2/token"),
                    me_url = base + path("DPOP_BENCH_ME_PATH", "/v2/me");
  std::vector<std::string> tokens;
  std::ifstream in(argv[7]);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) tokens.push_back(line);
  curl_global_init(CURL_GLOBAL_ALL);
  bench::Tally tally;
  // Every connection gets ready (its first grant, its proofs), then the clock starts for all.
  std::latch ready(static_cast<std::ptrdiff_t>(tokens.size()));
  std::latch go(1);
  std::chrono::steady_clock::time_point deadline;
  std::vector<std::thread> threads;
  threads.reserve(tokens.size());
  for (const std::string& first : tokens) {
    threads.emplace_back([&, first] {
      CURL* c = curl_easy_init();
      ProofKey key;
      ProofKey* proofs = dpop ? &key : nullptr;
      std::vector<double> mine;
      std::string refresh_token = first;
      if (scenario == "refresh") {
        ready.count_down();
        go.wait();
        while (std::chrono::steady_clock::now() < deadline) {
          nlohmann::json t = Refresh(c, token_url, client_id, secret, refresh_token, proofs);
          if (t.is_null()) {
            ++tally.failed;
            break;
          }
          refresh_token = t["refresh_token"].get<std::string>();
          mine.push_back(t["ms"].get<double>());
          ++tally.ok;
        }
      } else {
        const char* api_key = mode == "apikey" ? std::getenv("BENCH_API_KEY") : nullptr;
        nlohmann::json t = api_key ? nlohmann::json{{"access_token", std::string(api_key)}}
                                   : Refresh(c, token_url, client_id, secret, refresh_token, proofs);
        const std::string access = t.is_null() ? "" : t["access_token"].get<std::string>();
        if (access.empty()) ++tally.failed;
        std::vector<std::string> signed_ahead;
        if (presigned && !access.empty()) {
          signed_ahead.resize(kPresignedPerSecond * static_cast<size_t>(seconds));
          for (std::string& proof : signed_ahead) proof = key.Proof("GET", me_url, access);
        }
        size_t next_proof = 0;
        ready.count_down();
        go.wait();
        while (!access.empty() && std::chrono::steady_clock::now() < deadline) {
          curl_slist* headers = nullptr;
          if (presigned && next_proof == signed_ahead.size()) {
            std::cerr << "a connection used up its " << signed_ahead.size() << " signed proofs\n";
            ++tally.failed;
            break;
          }
          if (dpop) {
            headers = curl_slist_append(headers, ("Authorization: DPoP " + access).c_str());
            const std::string proof =
                presigned ? std::move(signed_ahead[next_proof++]) : key.Proof("GET", me_url, access);
            headers = curl_slist_append(headers, ("DPoP: " + proof).c_str());
          } else {
            headers = curl_slist_append(headers, ("Authorization: Bearer " + access).c_str());
          }
          bench::Exchange x = bench::Get(c, headers, me_url);
          curl_slist_free_all(headers);
          if (!x.transport_ok || x.status != 200) {
            std::cerr << "GET /v2/me failed: " << x.status << " " << x.body << "\n";
            ++tally.failed;
            break;
          }
          mine.push_back(x.ms);
          ++tally.ok;
        }
      }
      tally.AddLatencies(mine);
      curl_easy_cleanup(c);
    });
  }
  ready.wait();
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  go.count_down();
  for (auto& t : threads) t.join();
  return tally.Report(tokens.size(), seconds);
}
