// A TCP port on 127.0.0.1 the kernel reports free, for peers that must be told their port on the
// command line (Prometheus, nginx). Another process may take it before the peer binds it: callers
// start the peer again on another port when it reports "address already in use".
#pragma once

namespace rendezvous::testing {

// 0 when no port could be probed.
int ProbeFreePort();

// A socket listening on 127.0.0.1 on a port the kernel picks (close-on-exec), its port in *port;
// -1 when none could be opened. For peers that live in the test's process.
int ListenOnLoopback(int* port, int backlog = 64);

}  // namespace rendezvous::testing
