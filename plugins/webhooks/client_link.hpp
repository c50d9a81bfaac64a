// The webhooks plugin's view of platform clients (DESIGN §10): the oauth plugin's
// "oauth.platform_clients", found when the plugin starts (absent with oauth disabled: no client
// route authenticates and no user is managed), and a memory of which client manages which user,
// so that the outbox consumer's fan-out to client webhooks costs no database round trip per event:
// a user's managing client never changes (PlatformClients::ManagingClient), so a link is kept
// until the memory is full; "no client" is kept for kUnmanagedSeconds only, in case a user's link
// is written just after the user. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "rendezvous/contracts/platform_clients.hpp"

namespace rendezvous::webhooks {

class ClientLink {
 public:
  // How many users' answers are remembered; past it the memory starts afresh.
  static constexpr size_t kMaxRemembered = 65536;
  static constexpr std::chrono::seconds kUnmanagedSeconds{60};

  void Attach(std::shared_ptr<PlatformClients> clients) {
    std::lock_guard<std::mutex> lock(mu_);
    clients_ = std::move(clients);
  }
  // Null without the oauth plugin.
  std::shared_ptr<PlatformClients> clients() const {
    std::lock_guard<std::mutex> lock(mu_);
    return clients_;
  }
  // The client managing `user_id` (nullopt: none, or no oauth plugin). May throw
  // DatabaseUnavailable (nothing is remembered then).
  std::optional<std::string> ManagingClient(int64_t user_id);

 private:
  mutable std::mutex mu_;
  std::shared_ptr<PlatformClients> clients_;
  struct Answer {
    std::optional<std::string> client;
    std::chrono::steady_clock::time_point until;  // for "no client"
  };
  std::unordered_map<int64_t, Answer> remembered_;
};

inline std::optional<std::string> ClientLink::ManagingClient(int64_t user_id) {
  std::shared_ptr<PlatformClients> clients;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!clients_) return std::nullopt;
    auto it = remembered_.find(user_id);
    if (it != remembered_.end() &&
        (it->second.client || std::chrono::steady_clock::now() < it->second.until)) {
      return it->second.client;
    }
    clients = clients_;
  }
  std::optional<std::string> client = clients->ManagingClient(user_id);  // outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  if (remembered_.size() >= kMaxRemembered) remembered_.clear();
  remembered_[user_id] = Answer{client, std::chrono::steady_clock::now() + kUnmanagedSeconds};
  return client;
}

}  // namespace rendezvous::webhooks
