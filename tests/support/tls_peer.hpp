// A real HTTPS peer on 127.0.0.1 (port chosen by the kernel) for the outbound client's TLS tests.
// On construction it makes a fresh P-256 key and a self-signed certificate (its own CA) for
// `IP:127.0.0.1, DNS:localhost`, valid from an hour ago for a day, and writes the certificate's
// PEM to ca_file() (a temporary folder of its own) for a client to trust.
//
// Each connection is served on a thread of its own with HTTP/1.1 keep-alive: every request (read
// by http_framing.hpp: its head at most 64 KiB, a Content-Length or chunked body at most 1 MiB;
// one that cannot be framed is refused with 400, 413, 431 or 501 and the connection closed) goes
// to the handler, whose answer is the whole raw response text (status line, headers, body:
// chunked, close-delimited, anything), written as it is. The connection then reads the next
// request, until the client closes it, the request or the answer says `Connection: close`, or it
// stays idle 30 s. Bounded: at most 64 connections at once; the destructor shuts every socket
// down and joins every thread.
#pragma once

#include <atomic>
#include <functional>
#include <list>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "temp_dir.hpp"

typedef struct ssl_ctx_st SSL_CTX;

namespace rendezvous::testing {

// Returns the whole raw response for one request.
using TlsHandler =
    std::function<std::string(const std::string& method, const std::string& target, const std::string& body)>;

class TlsPeer {
 public:
  explicit TlsPeer(TlsHandler handler);
  ~TlsPeer();
  TlsPeer(const TlsPeer&) = delete;
  TlsPeer& operator=(const TlsPeer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  // The PEM of the peer's certificate, which is its own CA.
  const std::string& ca_file() const { return ca_file_; }
  // TCP connections accepted so far (whether or not their handshake succeeded).
  int connections() const { return connections_.load(); }
  // Requests handed to the handler so far.
  int requests() const { return requests_.load(); }
  // Handshakes that resumed an earlier session.
  int resumed() const { return resumed_.load(); }

  // "HTTP/1.1 <status> <reason>" with Content-Type and Content-Length, then `body`.
  static std::string Answer(int status, const std::string& body,
                            const std::string& content_type = "text/plain");

 private:
  struct Connection {
    std::thread thread;
    std::atomic<bool> done{false};
  };

  void Loop();
  void Serve(int fd);

  TlsHandler handler_;
  rdv_test::TempDir dir_{"rdv-tls-peer"};
  std::string ca_file_;
  SSL_CTX* ctx_ = nullptr;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
  std::atomic<int> resumed_{0};
  std::mutex mu_;
  bool stopping_ = false;         // under mu_
  std::set<int> open_fds_;        // under mu_: the sockets of the connections being served
  std::list<Connection> served_;  // the accepting thread's only (and the destructor's after its join)
  std::thread thread_;
};

}  // namespace rendezvous::testing
