#include "tls_trust.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "rendezvous/outbound.hpp"

namespace rendezvous::net {
namespace {

struct State {
  std::mutex mu;
  TrustOptions configured;  // under mu
  std::string key;          // what `context` was made for; under mu
  SSL_CTX* context = nullptr;
  std::atomic<uint64_t> generation{0};
};

State& Shared() {
  static auto* state = new State;  // never freed: connections of exiting threads may still use it
  return *state;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// What the context would be made from now; under mu.
std::string KeyOf(const TrustOptions& t) {
  if (!t.ca_file.empty() || !t.ca_dir.empty()) return "configured\n" + t.ca_file + "\n" + t.ca_dir;
  return "default\n" + Env(X509_get_default_cert_file_env()) + "\n" + Env(X509_get_default_cert_dir_env());
}

int OnNewSession(SSL* ssl, SSL_SESSION* session) {
  auto* keeper = static_cast<tls_trust::SessionKeeper*>(SSL_get_app_data(ssl));
  return keeper != nullptr && keeper->KeepSession(session) ? 1 : 0;
}

SSL_CTX* Make(const TrustOptions& t, std::string& error) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    error = tls_trust::TlsError("no TLS context");
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  const bool loaded =
      t.ca_file.empty() && t.ca_dir.empty()
          ? SSL_CTX_set_default_verify_paths(ctx) == 1
          : SSL_CTX_load_verify_locations(ctx, t.ca_file.empty() ? nullptr : t.ca_file.c_str(),
                                          t.ca_dir.empty() ? nullptr : t.ca_dir.c_str()) == 1;
  if (!loaded) {
    const std::string from = t.ca_file.empty() && t.ca_dir.empty() ? "OpenSSL's default paths"
                             : t.ca_file.empty()                   ? t.ca_dir
                                                                   : t.ca_file;
    const int system = ERR_GET_LIB(ERR_peek_error()) == ERR_LIB_SYS ? ERR_GET_REASON(ERR_peek_error()) : 0;
    error = "cannot load the CA certificates from " + from + ": " +
            (system != 0 ? std::string(std::strerror(system)) : tls_trust::TlsError("no certificate found"));
    ERR_clear_error();
    SSL_CTX_free(ctx);
    return nullptr;
  }
  ERR_clear_error();  // the default paths may name files that are not there
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // A server that closes without close_notify ends a body read until the close, as over TCP.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  // Sessions are kept by each client, by destination, not in OpenSSL's cache.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, &OnNewSession);
  return ctx;
}

// Makes the context again when what it is made from changed; under mu.
bool Refresh(State& s, std::string& error) {
  std::string key = KeyOf(s.configured);
  if (s.context != nullptr && key == s.key) return true;
  SSL_CTX* fresh = Make(s.configured, error);
  if (fresh == nullptr) return false;
  if (s.context != nullptr) SSL_CTX_free(s.context);
  s.context = fresh;
  s.key = std::move(key);
  s.generation.fetch_add(1);
  return true;
}

bool Readable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), R_OK) == 0;
}

}  // namespace

Status ConfigureTrust(const TrustOptions& trust) {
  State& s = Shared();
  std::string error;
  SSL_CTX* fresh = Make(trust, error);
  if (fresh == nullptr) return Status::Invalid("outbound", error);
  std::lock_guard lock(s.mu);
  if (s.context != nullptr) SSL_CTX_free(s.context);
  s.configured = trust;
  s.context = fresh;
  s.key = KeyOf(trust);
  s.generation.fetch_add(1);
  return Status::Ok();
}

namespace tls_trust {

std::string TlsError(const char* fallback) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return fallback;
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

SSL_CTX* Context(std::string& error) {
  State& s = Shared();
  std::lock_guard lock(s.mu);
  if (!Refresh(s, error)) return nullptr;
  SSL_CTX_up_ref(s.context);
  return s.context;
}

uint64_t Generation(bool recheck_environment) {
  State& s = Shared();
  if (recheck_environment) {
    std::lock_guard lock(s.mu);
    std::string ignored;
    if (s.context != nullptr && KeyOf(s.configured) != s.key) Refresh(s, ignored);
  }
  return s.generation.load();
}

Paths CurlPaths() {
  State& s = Shared();
  TrustOptions t;
  {
    std::lock_guard lock(s.mu);
    t = s.configured;
  }
  Paths p;
  if (!t.ca_file.empty() || !t.ca_dir.empty()) {
    p.ca_file = t.ca_file;
    p.ca_dir = t.ca_dir;
    return p;
  }
  // OpenSSL's default verify paths, spelled out: the environment's when set, else its defaults.
  p.ca_file = Env(X509_get_default_cert_file_env());
  if (p.ca_file.empty()) p.ca_file = X509_get_default_cert_file();
  p.ca_dir = Env(X509_get_default_cert_dir_env());
  if (p.ca_dir.empty()) p.ca_dir = X509_get_default_cert_dir();
  if (!Readable(p.ca_file)) p.ca_file.clear();
  if (!Readable(p.ca_dir)) p.ca_dir.clear();
  return p;
}

}  // namespace tls_trust
}  // namespace rendezvous::net
