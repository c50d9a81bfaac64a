#include "tls_peer.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "free_port.hpp"
#include "http_framing.hpp"

namespace rendezvous::testing {
// Named apart: in a unity build this file shares its anonymous namespace with the other helpers.
namespace tls_peer_impl {
namespace {

constexpr size_t kMaxHead = 64 * 1024;
constexpr size_t kMaxBody = 1024 * 1024;
constexpr size_t kMaxOpenConnections = 64;
// How long a connection may wait for the client's next bytes (or for its own to be taken).
constexpr int kIdleSeconds = 30;

struct KeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct CertFree {
  void operator()(X509* p) const { X509_free(p); }
};
struct CtxFree {
  void operator()(SSL_CTX* p) const { SSL_CTX_free(p); }
};
struct BnFree {
  void operator()(BIGNUM* p) const { BN_free(p); }
};
struct BioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};

[[noreturn]] void Fail(const std::string& what) {
  std::string why = what;
  if (const unsigned long e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    why += ": ";
    why += text;
  }
  ERR_clear_error();
  throw std::runtime_error("TlsPeer: " + why);
}

// A fresh P-256 key and a self-signed certificate for 127.0.0.1 and localhost, its own CA.
std::pair<std::unique_ptr<EVP_PKEY, KeyFree>, std::unique_ptr<X509, CertFree>> MakeIdentity() {
  std::unique_ptr<EVP_PKEY, KeyFree> key(EVP_EC_gen("P-256"));
  if (!key) Fail("EC key generation failed");
  std::unique_ptr<X509, CertFree> cert(X509_new());
  if (!cert || X509_set_version(cert.get(), X509_VERSION_3) != 1) Fail("X509_new failed");

  std::unique_ptr<BIGNUM, BnFree> serial(BN_new());
  if (!serial || BN_rand(serial.get(), 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()))) {
    Fail("serial number failed");
  }
  if (!X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60 * 60) ||
      !X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 60 * 60)) {
    Fail("validity failed");
  }
  if (X509_set_pubkey(cert.get(), key.get()) != 1) Fail("X509_set_pubkey failed");
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>("Rendezvous tests"), -1, -1,
                                 0) != 1 ||
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0) != 1 ||
      X509_set_issuer_name(cert.get(), name) != 1) {
    Fail("subject name failed");
  }

  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, cert.get(), cert.get(), nullptr, nullptr, 0);
  // The subject key identifier before the authority key identifier, which copies it.
  const std::pair<int, const char*> extensions[] = {
      {NID_basic_constraints, "critical,CA:TRUE"}, {NID_key_usage, "critical,digitalSignature,keyCertSign"},
      {NID_ext_key_usage, "serverAuth"},           {NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"},
      {NID_subject_key_identifier, "hash"},        {NID_authority_key_identifier, "keyid:always"},
  };
  for (const auto& [nid, value] : extensions) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, nid, value);
    if (!ext) Fail(std::string("extension failed: ") + value);
    const int added = X509_add_ext(cert.get(), ext, -1);
    X509_EXTENSION_free(ext);
    if (added != 1) Fail(std::string("X509_add_ext failed: ") + value);
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) <= 0) Fail("X509_sign failed");
  return {std::move(key), std::move(cert)};
}

bool ReadMore(SSL* ssl, std::string& buf) {
  char chunk[16384];
  const int n = SSL_read(ssl, chunk, sizeof chunk);
  if (n <= 0) return false;
  buf.append(chunk, static_cast<size_t>(n));
  return true;
}

bool WriteAll(SSL* ssl, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    const size_t piece = std::min<size_t>(data.size() - off, 1 << 20);
    const int n = SSL_write(ssl, data.data() + off, static_cast<int>(piece));
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

enum class Next {
  kMore,    // the connection stays open for the next request
  kClose,   // the protocol ends it: close cleanly
  kBroken,  // the client went away (or was too slow)
};

// The answer to a request that cannot be framed.
int RefusalStatus(HttpFramingError error) {
  switch (error) {
    case HttpFramingError::kHeadTooLarge:
      return 431;
    case HttpFramingError::kBodyTooLarge:
      return 413;
    case HttpFramingError::kUnsupported:
      return 501;
    default:
      return 400;
  }
}

// Reads one request off the connection (`buf` holds what came and is not read yet), answers it
// with the handler's text.
Next ServeRequest(SSL* ssl, std::string& buf, HttpReader& reader, const TlsHandler& handler,
                  std::atomic<int>& requests) {
  bool continued = false;
  HttpReader::Result read;
  while ((read = reader.Read(buf)) == HttpReader::Result::kNeedMore) {
    if (reader.HeadRead() && !continued) {
      continued = true;
      std::string expect = reader.message().Header("expect");
      std::transform(expect.begin(), expect.end(), expect.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (expect == "100-continue" && !WriteAll(ssl, HttpResponseText(100))) return Next::kBroken;
    }
    if (!ReadMore(ssl, buf)) return Next::kBroken;
  }
  if (read == HttpReader::Result::kError) {
    WriteAll(ssl, TlsPeer::Answer(RefusalStatus(reader.error()), reader.reason()));
    return Next::kClose;
  }
  const HttpMessage request = reader.Take();
  bool close_after = request.ClosesConnection();

  ++requests;
  std::string answer;
  try {
    answer = handler ? handler(request.method, request.target, request.body) : TlsPeer::Answer(404, "");
  } catch (const std::exception& e) {
    answer = TlsPeer::Answer(500, e.what());
    close_after = true;
  }
  if (!WriteAll(ssl, answer)) return Next::kBroken;
  // The answer's own `Connection: close` (a body until the close, say) ends the connection too.
  // (Read for its head only: whatever its body, the handler meant it.)
  HttpReader answered(HttpKind::kResponse, HttpLimits{kMaxHead, std::numeric_limits<size_t>::max()});
  answered.Read(answer);
  if (answered.HeadRead() && answered.message().ClosesConnection()) {
    close_after = true;
  }
  return close_after ? Next::kClose : Next::kMore;
}

}  // namespace
}  // namespace tls_peer_impl

std::string TlsPeer::Answer(int status, const std::string& body, const std::string& content_type) {
  return HttpResponseText(status, {"Content-Type: " + content_type}, body);
}

TlsPeer::TlsPeer(TlsHandler handler) : handler_(std::move(handler)) {
  auto [key, cert] = tls_peer_impl::MakeIdentity();

  ca_file_ = dir_.path() + "/ca.pem";
  {
    std::unique_ptr<BIO, tls_peer_impl::BioFree> out(BIO_new_file(ca_file_.c_str(), "w"));
    if (!out || PEM_write_bio_X509(out.get(), cert.get()) != 1)
      tls_peer_impl::Fail("writing " + ca_file_ + " failed");
  }

  std::unique_ptr<SSL_CTX, tls_peer_impl::CtxFree> ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) tls_peer_impl::Fail("SSL_CTX_new failed");
  if (SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) != 1 ||
      SSL_CTX_use_certificate(ctx.get(), cert.get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1 || SSL_CTX_check_private_key(ctx.get()) != 1) {
    tls_peer_impl::Fail("server context failed");
  }

  listen_fd_ = ListenOnLoopback(&port_);
  if (listen_fd_ < 0) throw std::runtime_error("TlsPeer: bind/listen failed");
  ctx_ = ctx.release();
  thread_ = std::thread([this] { Loop(); });
}

TlsPeer::~TlsPeer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    // Ends every blocked read, write or handshake; each thread closes its own socket.
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  ::shutdown(listen_fd_, SHUT_RDWR);
  thread_.join();
  for (Connection& c : served_) c.thread.join();
  ::close(listen_fd_);
  SSL_CTX_free(ctx_);
}

void TlsPeer::Loop() {
  // A write to a socket the client closed fails with EPIPE instead of killing the test (the
  // connection threads inherit the mask).
  sigset_t sigpipe;
  sigemptyset(&sigpipe);
  sigaddset(&sigpipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &sigpipe, nullptr);

  for (;;) {
    pollfd p{listen_fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    for (auto it = served_.begin(); it != served_.end();) {
      if (it->done) {
        it->thread.join();
        it = served_.erase(it);
      } else {
        ++it;
      }
    }
    if (ready <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++connections_;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ || open_fds_.size() >= tls_peer_impl::kMaxOpenConnections) {
        ::close(fd);
        continue;
      }
      open_fds_.insert(fd);
    }
    timeval idle{tls_peer_impl::kIdleSeconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof idle);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &idle, sizeof idle);
    Connection& c = served_.emplace_back();
    c.thread = std::thread([this, fd, &c] {
      Serve(fd);
      {
        std::lock_guard<std::mutex> lock(mu_);
        open_fds_.erase(fd);
      }
      ::close(fd);
      c.done = true;
    });
  }
}

void TlsPeer::Serve(int fd) {
  SSL* ssl = SSL_new(ctx_);
  if (!ssl) return;
  if (SSL_set_fd(ssl, fd) == 1 && SSL_accept(ssl) == 1) {
    if (SSL_session_reused(ssl) == 1) ++resumed_;
    std::string buf;
    HttpReader reader(HttpKind::kRequest, HttpLimits{tls_peer_impl::kMaxHead, tls_peer_impl::kMaxBody});
    tls_peer_impl::Next next;
    while ((next = tls_peer_impl::ServeRequest(ssl, buf, reader, handler_, requests_)) ==
           tls_peer_impl::Next::kMore) {
    }
    // close_notify: the end of a close-delimited body, told apart from a truncation.
    if (next == tls_peer_impl::Next::kClose) SSL_shutdown(ssl);
  }
  SSL_free(ssl);
  ERR_clear_error();
}

}  // namespace rendezvous::testing
