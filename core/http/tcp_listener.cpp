#include "http/tcp_listener.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include <pistache/listener.h>
#include <pistache/net.h>
#include <pistache/peer.h>
#include <pistache/tcp.h>

namespace rendezvous::core {
namespace {

constexpr const char* kConnectionKey = "rdv.connection";
// Pistache defaults to 128: a burst of connects beyond it waits for SYN retransmits (1 s+).
constexpr int kListenBacklog = 1024;

}  // namespace

struct TcpListener::State {
  State(Listener which, ListenerLimits limits, ConnectionManager& manager)
      : which(which), limits(limits), manager(manager) {}
  Listener which;
  ListenerLimits limits;
  ConnectionManager& manager;
  std::mutex mu;
  size_t total = 0;
  std::unordered_map<std::string, size_t> per_ip;
};

namespace {

class FrontHandler final : public Pistache::Tcp::Handler {
 public:
  PROTOTYPE_OF(Pistache::Tcp::Handler, FrontHandler)

  explicit FrontHandler(std::shared_ptr<TcpListener::State> state) : state_(std::move(state)) {}

  void onConnection(const std::shared_ptr<Pistache::Tcp::Peer>& peer) override {
    try {
      std::string ip = peer->address().host();
      auto connection = state_->manager.Open(peer->fd(), state_->which, ip);
      peer->putData(kConnectionKey, connection);
      bool over = false;
      {
        std::lock_guard lock(state_->mu);
        size_t& from_ip = state_->per_ip[ip];
        over = ++state_->total > state_->limits.max_connections || ++from_ip > state_->limits.max_connections_per_ip;
      }
      if (over)
        state_->manager.Dispatch(connection,
                                 {connection->Refuse(503, "too many connections; try again later", "connection_limit")});
    } catch (const std::exception& e) {
      state_->manager.logger().Error("connection set-up failed", {{"error", e.what()}});
    }
  }

  void onInput(const char* buffer, size_t length, const std::shared_ptr<Pistache::Tcp::Peer>& peer) override {
    auto connection = Find(peer);
    if (!connection) return;
    try {
      state_->manager.Dispatch(connection, connection->OnInput(buffer, length));
    } catch (const std::exception& e) {
      state_->manager.logger().Error("request framing failed", {{"error", e.what()}});
      connection->Abort();
    }
  }

  void onDisconnection(const std::shared_ptr<Pistache::Tcp::Peer>& peer) override {
    auto connection = Find(peer);
    if (!connection) return;
    connection->OnClosed();
    {
      std::lock_guard lock(state_->mu);
      --state_->total;
      auto it = state_->per_ip.find(connection->remote_ip());
      if (it != state_->per_ip.end() && --it->second == 0) state_->per_ip.erase(it);
    }
    state_->manager.Remove(connection->id());
  }

 private:
  static std::shared_ptr<Connection> Find(const std::shared_ptr<Pistache::Tcp::Peer>& peer) {
    return std::static_pointer_cast<Connection>(peer->tryGetData(kConnectionKey));
  }

  std::shared_ptr<TcpListener::State> state_;
};

}  // namespace

std::pair<std::string, uint16_t> ParseListenAddress(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size())
    throw std::runtime_error("bad listen address \"" + listen + "\": expected host:port");
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::string port_text = listen.substr(colon + 1);
  if (port_text.size() > 5 || !std::all_of(port_text.begin(), port_text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw std::runtime_error("bad listen address \"" + listen + "\": bad port");
  unsigned long port = std::stoul(port_text);
  if (port > 65535) throw std::runtime_error("bad listen address \"" + listen + "\": port above 65535");
  return {host, static_cast<uint16_t>(port)};
}

TcpListener::TcpListener(Listener which, std::string address, int io_threads, ListenerLimits limits,
                         ConnectionManager& manager)
    : address_(std::move(address)),
      io_threads_(std::max(1, io_threads)),
      state_(std::make_shared<State>(which, limits, manager)) {}

TcpListener::~TcpListener() {
  Shutdown();
  listener_.reset();
}

void TcpListener::Start() {
  auto [host, port] = ParseListenAddress(address_);
  const char* name = state_->which == Listener::kApi   ? "rdv-api-io"
                     : state_->which == Listener::kApp ? "rdv-app-io"
                                                       : "rdv-metrics-io";
  try {
    listener_ = std::make_unique<Pistache::Tcp::Listener>(Pistache::Address(host, Pistache::Port(port)));
    listener_->init(static_cast<size_t>(io_threads_),
                    Pistache::Flags<Pistache::Tcp::Options>(Pistache::Tcp::Options::ReuseAddr) |
                        Pistache::Tcp::Options::NoDelay,
                    name, kListenBacklog);
    listener_->setHandler(std::make_shared<FrontHandler>(state_));
    listener_->bind();
    listener_->runThreaded();
    port_ = static_cast<uint16_t>(listener_->getPort());
  } catch (const std::exception& e) {
    listener_.reset();
    throw std::runtime_error("cannot listen on " + address_ + ": " + e.what());
  }
}

void TcpListener::Shutdown() {
  if (!listener_ || stopped_) return;
  stopped_ = true;
  listener_->shutdown();
}

}  // namespace rendezvous::core
