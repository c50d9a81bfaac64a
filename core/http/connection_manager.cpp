#include "http/connection_manager.hpp"

#include <deque>
#include <stdexcept>

#include <sys/epoll.h>
#include <unistd.h>

namespace rendezvous::core {
namespace {

constexpr int kTickMs = 100;
constexpr int kMaxEvents = 64;

}  // namespace

ConnectionManager::ConnectionManager(ConnectionContext& context, ItemSink sink, Logger& logger)
    : context_(context), sink_(std::move(sink)), logger_(logger) {}

ConnectionManager::~ConnectionManager() { Stop(); }

void ConnectionManager::Start(std::function<void()> on_tick) {
  on_tick_ = std::move(on_tick);
  context_.write_poll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (context_.write_poll_fd < 0) throw std::runtime_error("epoll_create1 failed");
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void ConnectionManager::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (context_.write_poll_fd >= 0) {
    ::close(context_.write_poll_fd);
    context_.write_poll_fd = -1;
  }
}

std::shared_ptr<Connection> ConnectionManager::Open(int fd, Listener listener, std::string remote_ip) {
  auto connection = std::make_shared<Connection>(next_id_++, fd, listener, std::move(remote_ip), context_);
  std::lock_guard lock(mu_);
  connections_.emplace(connection->id(), connection);
  return connection;
}

void ConnectionManager::Remove(uint64_t id) {
  std::lock_guard lock(mu_);
  connections_.erase(id);
}

std::vector<std::shared_ptr<Connection>> ConnectionManager::All() const {
  std::vector<std::shared_ptr<Connection>> out;
  std::lock_guard lock(mu_);
  out.reserve(connections_.size());
  for (const auto& [id, connection] : connections_) out.push_back(connection);
  return out;
}

void ConnectionManager::Dispatch(const std::shared_ptr<Connection>& connection, Connection::Items items) const {
  // Answering one item can free the next pipelined ones, which are dispatched from inside that
  // answer: queue them for the outermost call on this thread instead of recursing, so a long
  // pipeline of inline requests cannot grow the stack.
  using Pending = std::deque<std::pair<std::shared_ptr<Connection>, Connection::Item>>;
  thread_local Pending* active = nullptr;
  if (active) {
    for (auto& item : items) active->emplace_back(connection, std::move(item));
    return;
  }
  Pending pending;
  for (auto& item : items) pending.emplace_back(connection, std::move(item));
  active = &pending;
  struct Reset {
    ~Reset() { active = nullptr; }
  } reset;
  while (!pending.empty()) {
    auto [owner, item] = std::move(pending.front());
    pending.pop_front();
    sink_(owner, std::move(item));
  }
}

void ConnectionManager::Run() {
  epoll_event events[kMaxEvents];
  auto next_scan = SteadyClock::now();
  while (!stop_) {
    int n = ::epoll_wait(context_.write_poll_fd, events, kMaxEvents, kTickMs);
    for (int i = 0; i < n; ++i) {
      std::shared_ptr<Connection> connection;
      {
        std::lock_guard lock(mu_);
        auto it = connections_.find(events[i].data.u64);
        if (it != connections_.end()) connection = it->second;
      }
      if (connection) Dispatch(connection, connection->OnWritable());
    }
    auto now = SteadyClock::now();
    if (now < next_scan) continue;
    next_scan = now + std::chrono::milliseconds(kTickMs);
    for (const auto& connection : All()) {
      try {
        Dispatch(connection, connection->CheckDeadline(now));
      } catch (const std::exception& e) {
        logger_.Error("connection deadline check failed", {{"error", e.what()}});
      }
    }
    if (on_tick_) on_tick_();
  }
}

}  // namespace rendezvous::core
