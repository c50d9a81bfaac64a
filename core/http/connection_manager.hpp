// Every open connection of the HTTP layer, and the one thread that watches them: it enforces the
// idle, header, body, write and linger deadlines (a scan every 100 ms) and resumes writes to
// sockets that were full (an epoll set of its own, so a slow reader never holds a worker).
//
// Thread-safety: Add/Remove/ForEach/Dispatch from any thread. Start/Stop from one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "http/connection.hpp"
#include "rendezvous/log.hpp"

namespace rendezvous::core {

// Where framed requests and refusals go: the server. Called from reactor, worker and the
// manager's threads; must not block.
using ItemSink = std::function<void(const std::shared_ptr<Connection>&, Connection::Item)>;

class ConnectionManager {
 public:
  ConnectionManager(ConnectionContext& context, ItemSink sink, Logger& logger);
  ~ConnectionManager();  // Stop()
  ConnectionManager(const ConnectionManager&) = delete;
  ConnectionManager& operator=(const ConnectionManager&) = delete;

  // on_tick runs on the manager's thread after each deadline scan (every 100 ms): gauges.
  void Start(std::function<void()> on_tick = {});
  void Stop();

  std::shared_ptr<Connection> Open(int fd, Listener listener, std::string remote_ip);
  void Remove(uint64_t id);
  // A snapshot of the open connections.
  std::vector<std::shared_ptr<Connection>> All() const;

  void Dispatch(const std::shared_ptr<Connection>& connection, Connection::Items items) const;
  Logger& logger() { return logger_; }

 private:
  void Run();

  ConnectionContext& context_;
  ItemSink sink_;
  Logger& logger_;
  std::atomic<uint64_t> next_id_{1};
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::shared_ptr<Connection>> connections_;
  std::function<void()> on_tick_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rendezvous::core
