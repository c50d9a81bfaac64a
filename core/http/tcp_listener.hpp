// One listening address of the HTTP layer on Pistache's TCP level: Pistache accepts connections and
// runs the reactor threads that read them; the bytes go to our Connection (framing, pipelining,
// limits), never through Pistache's HTTP parser. Refuses connections beyond its limits (in total
// and per client address) with a 503 before reading anything.
//
// Lifecycle: construct, Start (binds; throws std::runtime_error naming the address), Shutdown
// (stops accepting and reading; idempotent; the sockets stay open until destruction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "http/connection_manager.hpp"

namespace Pistache::Tcp {
class Listener;
}

namespace rendezvous::core {

struct ListenerLimits {
  size_t max_connections = 10000;         // open connections on this listener
  size_t max_connections_per_ip = 1024;   // open connections from one client address
};

class TcpListener {
 public:
  TcpListener(Listener which, std::string address, int io_threads, ListenerLimits limits,
              ConnectionManager& manager);
  ~TcpListener();
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  void Start();
  uint16_t port() const { return port_; }
  void Shutdown();

  struct State;

 private:
  const std::string address_;
  const int io_threads_;
  std::shared_ptr<State> state_;
  std::unique_ptr<Pistache::Tcp::Listener> listener_;
  uint16_t port_ = 0;
  bool stopped_ = false;
};

// Parses "host:port" ("[v6]:port" too). Throws std::runtime_error naming the value.
std::pair<std::string, uint16_t> ParseListenAddress(const std::string& listen);

}  // namespace rendezvous::core
