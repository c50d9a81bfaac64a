// One client connection of the HTTP layer: the bytes it sends, the requests framed from them
// (RequestParser), and their answers written back in request order, so pipelined requests are all
// answered, in order, whichever thread finishes them first.
//
// Bounds: the bytes buffered for requests count against a budget shared by every connection (over
// it: 503 and close; its last sixteenth only for connections holding at most 64 KiB, so large
// stalled uploads cannot lock ordinary requests out); at most kMaxPipelined requests of one connection are in flight, later ones
// wait in the buffer, as they do while 256 KiB of answers wait for the client to read them; a refused request (framing error, body over the limit) is answered and the
// connection closes without reading another byte as a request.
//
// Closing: the server never closes a socket itself. It shuts its sending side down after the last
// answer (the client sees the end, and the bytes it may still be sending are read and dropped for
// a short linger) or shuts both sides down to abort; Pistache's reactor then sees the end and
// reports the disconnection (OnClosed), after which nothing touches the socket, so a reused file
// descriptor is never written to.
//
// Thread-safety: every member is safe from any thread (one mutex per connection). Items returned
// by OnInput/Complete/CheckDeadline must be dispatched by the caller outside any lock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http/request_parser.hpp"
#include "rendezvous/http.hpp"

namespace rendezvous::core {

using SteadyClock = std::chrono::steady_clock;

// What every connection shares: limits, the request-bytes budget and the socket-writability poller.
struct ConnectionContext {
  RequestParser::Limits parser;
  std::chrono::milliseconds idle_timeout{60000};
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds body_timeout{30000};
  std::chrono::milliseconds linger{2000};  // after the last answer of a closing connection
  size_t buffer_budget = 128u << 20;       // request bytes buffered across all connections
  std::atomic<size_t> buffered{0};
  int write_poll_fd = -1;                  // epoll set told when a stalled socket can take bytes
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  static constexpr size_t kMaxPipelined = 16;

  // A framed request, or a refusal the server must answer (error_status != 0), with its place in
  // the answer order.
  struct Item {
    uint64_t seq = 0;
    std::optional<ParsedRequest> request;
    int error_status = 0;
    std::string error_message;
    const char* reason = nullptr;  // refusals: the label of http_server_rejected_requests_total
  };
  using Items = std::vector<Item>;

  Connection(uint64_t id, int fd, Listener listener, std::string remote_ip, ConnectionContext& context);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  uint64_t id() const { return id_; }
  Listener listener() const { return listener_; }
  const std::string& remote_ip() const { return remote_ip_; }

  // Bytes from the client (reactor thread).
  Items OnInput(const char* data, size_t size);
  // The answer to item `seq`, serialized. With close, the connection ends after it: later items'
  // answers are dropped and no further request is read.
  Items Complete(uint64_t seq, std::string bytes, bool close);
  // A refusal before any request (too many connections): answered as item 0, then closed.
  Item Refuse(int status, std::string message, const char* reason);
  // The socket can take more bytes (the writability poller). Returns requests that waited for
  // the client to read its earlier answers.
  Items OnWritable();
  // The reactor saw the end of the connection; the socket is about to be closed.
  void OnClosed();
  // Enforces the idle, header, body, write and linger deadlines: closes the connection, or returns
  // the 408 to answer.
  Items CheckDeadline(SteadyClock::time_point now);
  // Shuts the socket down both ways now.
  void Abort();
  // Closes the connection when it waits for nothing (between requests); for shutdown.
  void CloseIfIdle();

 private:
  enum class Phase { kIdle, kHead, kBody };

  void ParseLocked(Items& items);
  void FlushLocked();
  void ArmWritableLocked();
  void AbortLocked();
  void SyncBudgetLocked();
  void StopReadingLocked();

  const uint64_t id_;
  const int fd_;
  const Listener listener_;
  const std::string remote_ip_;
  ConnectionContext& context_;

  mutable std::mutex mu_;
  bool open_ = true;        // false once the reactor reported the end
  bool aborted_ = false;
  bool reading_ = true;     // false: input is dropped (refused request, Connection: close)
  bool closing_ = false;    // the last answer is queued; shut down after writing it
  bool write_shut_ = false;
  bool poll_registered_ = false;
  RequestParser parser_;
  std::string in_;
  size_t budget_held_ = 0;
  Phase phase_ = Phase::kIdle;
  SteadyClock::time_point phase_since_;
  SteadyClock::time_point write_stalled_since_{};
  SteadyClock::time_point linger_until_{};
  uint64_t next_seq_ = 0;
  uint64_t next_send_ = 0;
  std::map<uint64_t, std::pair<std::string, bool>> ready_;  // answers waiting for earlier ones
  std::map<uint64_t, size_t> item_bytes_;  // request bytes of items not yet answered
  size_t items_held_ = 0;
  std::string out_;
  size_t out_sent_ = 0;
  bool continue_sent_ = false;
};

}  // namespace rendezvous::core
