// A real nginx (Debian's `nginx`, found on PATH, in /usr/sbin, or named by $RDV_NGINX) for
// integration tests: one master and one worker in the foreground, on a loopback port probed free,
// with its main configuration, logs, pid file and temporary files in a folder of its own removed
// at the end. The caller gives the http-level configuration (the shipped site file, rendered for
// the port). Not thread-safe.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

namespace rendezvous::testing {

class NginxServer {
 public:
  NginxServer();
  ~NginxServer();
  NginxServer(const NginxServer&) = delete;
  NginxServer& operator=(const NginxServer&) = delete;

  // The folder nginx writes to (logs named in the site configuration may go here).
  const std::string& dir() const { return dir_; }

  // Starts nginx with `site(port)` included in its http {} block, and waits (bounded) until the
  // port accepts connections. `site` is called again with another port when the probed one was
  // taken meanwhile. False, with the reason and nginx's error log in `why`, when it failed.
  bool Start(const std::function<std::string(int port)>& site, std::string* why);
  // SIGQUIT (graceful), then SIGKILL after a bound.
  void Stop();

  int port() const { return port_; }
  // nginx's own error log (start-up messages; the site may name other log files).
  std::string ErrorLog() const;

 private:
  bool StartOn(int port, const std::string& site, std::string* why);

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// The nginx binary ("" when there is none).
std::string NginxBinary();

}  // namespace rendezvous::testing
