// Child processes of the tests (the server, its command line, Prometheus): started with stdin
// from /dev/null and stdout/stderr to files, and waited for with a bound.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace rendezvous::testing {

// Starts argv[0] (a path) with `argv`; stdout truncates `out_file`, stderr appends to
// `err_file`. Throws std::runtime_error when it cannot be started.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_file, const std::string& err_file);

// Waits for `pid` until the deadline; returns its exit status (128 + signal when killed by one),
// or -1 after killing it with SIGKILL.
int WaitFor(pid_t pid, std::chrono::milliseconds timeout);

// The whole file ("" when it cannot be read).
std::string ReadFile(const std::string& path);

}  // namespace rendezvous::testing
