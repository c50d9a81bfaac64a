// The one trust setting of every outbound TLS connection (net::ConfigureTrust, the `outbound`
// config section): the OpenSSL client context every HttpMulti shares, and the same CA file and
// folder spelled out for libcurl (SMTP), so both trust exactly the same certificates.
//
// With nothing configured, the context uses OpenSSL's default verify paths, which read
// SSL_CERT_FILE and SSL_CERT_DIR from the environment when set; the environment is read again
// whenever a context is asked for (Context(), Generation(true)), and a change makes a new one.
#pragma once

#include <cstdint>
#include <string>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_session_st SSL_SESSION;

namespace rendezvous::net::tls_trust {

// The client context for the current trust (TLS 1.2 at least, peers verified), with a reference
// the caller owns (SSL_CTX_free); nullptr with `error` set when it cannot be made.
SSL_CTX* Context(std::string& error);

// Counts the changes of trust: a client holding connections or sessions made under an older
// generation drops them (a resumed TLS session is not verified again). With `recheck_environment`
// (and nothing configured) SSL_CERT_FILE and SSL_CERT_DIR are read again first.
uint64_t Generation(bool recheck_environment);

// The CA file and folder libcurl is to use: the configured ones, else SSL_CERT_FILE and
// SSL_CERT_DIR, else OpenSSL's default file and folder; "" for one that is not set or not there.
struct Paths {
  std::string ca_file;
  std::string ca_dir;
};
Paths CurlPaths();

// What OpenSSL says of the last failure on this thread (its queue emptied), or `fallback`.
std::string TlsError(const char* fallback);

}  // namespace rendezvous::net::tls_trust

namespace rendezvous::net::tls_trust {

// What a connection set as its SSL's app data (SSL_set_app_data) to receive the sessions the
// server gives it (after the handshake; TLS 1.3 sends them later): true when it took the
// reference.
class SessionKeeper {
 public:
  virtual bool KeepSession(SSL_SESSION* session) noexcept = 0;

 protected:
  ~SessionKeeper() = default;
};

}  // namespace rendezvous::net::tls_trust
