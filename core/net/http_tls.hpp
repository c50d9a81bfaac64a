// TLS for the outbound client's connections (http_multi_impl.hpp): a client SSL on a connection's
// socket, checking the server's name or address, resuming a kept session; and what a failed
// handshake says.
#pragma once

#include <string>

#include <openssl/ssl.h>

#include "tls_trust.hpp"

namespace rendezvous::net {

// A client SSL over the socket at `*fd` (read when it sends and receives: it must outlive the SSL),
// taking `ctx`'s reference, checking `host` (a name or an address literal), resuming `session` when
// not null, its sessions kept by `keeper`. Null, with `error` set, when OpenSSL cannot make one.
SSL* NewTlsClient(SSL_CTX* ctx, int* fd, const std::string& host, SSL_SESSION* session,
                  tls_trust::SessionKeeper* keeper, std::string& error);

// Why the handshake on `ssl` failed, `why` being SSL_get_error's answer.
std::string HandshakeFailure(SSL* ssl, int why);

}  // namespace rendezvous::net
