#include "http_tls.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "rendezvous/address_policy.hpp"

namespace rendezvous::net {
namespace {

// OpenSSL's own socket BIO writes with write(2), which raises SIGPIPE on a connection the peer
// has closed; this one sends with MSG_NOSIGNAL, so the client is safe in any process.
// The BIO's data is the connection's socket (a pointer to Connection::fd).
int BioFd(BIO* b) {
  return *static_cast<const int*>(BIO_get_data(b));
}

int BioWrite(BIO* b, const char* data, int len) {
  BIO_clear_retry_flags(b);
  const ssize_t n = ::send(BioFd(b), data, static_cast<size_t>(len), MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) BIO_set_retry_write(b);
  return static_cast<int>(n);
}

int BioRead(BIO* b, char* data, int len) {
  BIO_clear_retry_flags(b);
  const ssize_t n = ::recv(BioFd(b), data, static_cast<size_t>(len), 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) BIO_set_retry_read(b);
  return static_cast<int>(n);
}

long BioControl(BIO*, int cmd, long, void*) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

int BioCreate(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

// Never freed: shared by every client of the process.
const BIO_METHOD* SocketBio() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "rendezvous socket");
    if (m != nullptr) {
      BIO_meth_set_write(m, &BioWrite);
      BIO_meth_set_read(m, &BioRead);
      BIO_meth_set_ctrl(m, &BioControl);
      BIO_meth_set_create(m, &BioCreate);
    }
    return m;
  }();
  return method;
}

}  // namespace

SSL* NewTlsClient(SSL_CTX* ctx, int* fd, const std::string& host, SSL_SESSION* session,
                  tls_trust::SessionKeeper* keeper, std::string& error) {
  SSL* ssl = SSL_new(ctx);
  SSL_CTX_free(ctx);  // the connection's SSL holds its own reference
  if (ssl == nullptr) {
    error = "TLS is not available: " + tls_trust::TlsError("no context");
    return nullptr;
  }
  BIO* bio = SocketBio() != nullptr ? BIO_new(SocketBio()) : nullptr;
  if (bio == nullptr) {
    error = "TLS is not available: " + tls_trust::TlsError("no socket BIO");
    SSL_free(ssl);
    return nullptr;
  }
  BIO_set_data(bio, fd);
  SSL_set_bio(ssl, bio, bio);
  SSL_set_app_data(ssl, keeper);
  SSL_set_connect_state(ssl);
  if (session != nullptr) SSL_set_session(ssl, session);
  if (IsAddressLiteral(host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, host.c_str());
    SSL_set1_host(ssl, host.c_str());
  }
  return ssl;
}

std::string HandshakeFailure(SSL* ssl, int why) {
  const long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    std::string said =
        std::string("the server's certificate is not trusted: ") + X509_verify_cert_error_string(verify);
    ERR_clear_error();
    return said;
  }
  return tls_trust::TlsError(why == SSL_ERROR_SYSCALL ? "the connection closed" : "failed");
}

}  // namespace rendezvous::net
