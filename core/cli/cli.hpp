// The `rendezvous` command line (DESIGN §3): serve, migrate, admin ...
#pragma once

namespace rendezvous::core {

// Runs the command; returns the process exit code. Success prints one JSON object on stdout;
// failure prints a message on stderr and returns non-zero.
int RunCli(int argc, char** argv);

}  // namespace rendezvous::core
