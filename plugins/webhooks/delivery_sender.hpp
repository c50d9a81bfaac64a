// Sends due deliveries (DESIGN §6): one thread claims them in batches (DeliveryQueue::Claim) and
// drives every request at once through one libcurl multi handle — not a thread per request —, so
// connections to a receiver are reused and a slow receiver holds one slot, not a thread. At most
// `max_in_flight` requests are open; each has `timeout`, follows no redirect, uses no proxy, and
// connects only to the address the guard checked for this attempt. Outcomes go back through
// DeliveryQueue::Record with the retry policy applied.
//
// Start()/Stop() once each, from one thread; Wake() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "delivery_queue.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"

namespace rendezvous::webhooks {

struct SenderOptions {
  bool allow_private_networks = false;
  std::chrono::seconds timeout{10};
  std::vector<long> retry_schedule{5, 300, 1800, 7200, 18000, 36000};
  size_t max_in_flight = 16;
  std::chrono::milliseconds poll_interval{250};
  std::string user_agent = "Rendezvous-Webhooks";
};

// Called once per finished attempt with its trigger, outcome ("succeeded", "retry", "failed",
// "gone") and duration in seconds (metrics).
using AttemptObserver = std::function<void(const std::string& trigger, const std::string& outcome, double seconds)>;

class DeliverySender {
 public:
  DeliverySender(Database& db, DeliveryQueue& queue, Logger& logger, SenderOptions options,
                 AttemptObserver observer = nullptr);
  ~DeliverySender();
  DeliverySender(const DeliverySender&) = delete;
  DeliverySender& operator=(const DeliverySender&) = delete;

  void Start();
  // Stops the thread; requests still open are dropped (their leases run out, and they are sent
  // again with the same webhook-id).
  void Stop() noexcept;
  // Deliveries may be due: claim now rather than at the next poll.
  void Wake() noexcept;

 private:
  struct Transfer;
  void Loop();
  void Claim();
  void Begin(ClaimedDelivery delivery);
  void Finish(Transfer& transfer, int curl_code);
  void Complete(const ClaimedDelivery& delivery, const Attempt& attempt, const Outcome& outcome,
                const std::string& outcome_name);

  Database& db_;
  DeliveryQueue& queue_;
  Logger& logger_;
  const SenderOptions options_;
  AttemptObserver observer_;

  void* multi_ = nullptr;  // CURLM*
  std::vector<std::unique_ptr<Transfer>> in_flight_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> woken_{false};
  std::thread thread_;
};

}  // namespace rendezvous::webhooks
