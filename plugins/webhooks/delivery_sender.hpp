// Sends due deliveries (DESIGN §6) with three threads, so that the requests never wait on the
// database and the database never waits on a request:
// - the sending thread drives every request at once through the host's outbound client
//   (net::HttpMulti: HTTP/1.1 on one epoll loop) — not a thread per request —, so connections to a
//   receiver are reused and a slow receiver holds one slot, not a thread. At most `max_in_flight`
//   requests are open, at most `max_per_host` of them to one destination (host and port), so a
//   slow or dead receiver never holds up the others. Each request has `timeout`, follows no
//   redirect, uses no proxy, and connects only to the address the guard checked for this attempt.
// - the store thread works in rounds of one transaction each (DeliveryQueue::RecordAndClaim):
//   it records the outcomes of the attempts that finished meanwhile, with the retry policy
//   applied, in a few multi-row statements, and claims the next batch, which it hands to the
//   sending thread. It claims ahead: up to `max_in_flight` deliveries wait, claimed, beside those
//   in flight, so the next batch is there when slots free up. A claim leaves out the webhooks of
//   destinations with `max_per_host` requests open and as many deliveries waiting: their rows stay
//   in the table for later claims. The same thread purges the delivery log past `retention` and
//   measures the backlog.
// - the render thread runs the filter script on the deliveries that await it (kFilterAtSend: one
//   it turns down is deleted when recorded, never sent) and renders those whose body is made for
//   their webhook (a template or the render script) from their event's text, one at a time,
//   taking webhook owners (users) in turns: one delivery of each owner with deliveries waiting,
//   round-robin, so a user whose filters or renders are many or slow delays another's by one
//   filter and render at most. A delivery that needs neither goes straight to the sending thread.
// Fairness between users: of the `2 * max_in_flight` deliveries the sender holds, a claim gives each
// owner at most all but a reserve of an eighth of max_in_flight (ClaimShares), and passes over the
// rows of an owner whose share is full, so that the reserve is always there for the other users'
// rows whatever one user's backlog; a claim that fills an owner's share is followed at once by one
// that passes over it, so that claims alternate between a heavy owner's rows and the others'. One
// owner may have all the requests open but as many.
//
// Start()/Stop() once each, from one thread; Wake() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "address_guard.hpp"
#include "delivery_queue.hpp"
#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"
#include "rendezvous/outbound.hpp"
#include "webhook_metrics.hpp"

namespace rendezvous::webhooks {

struct SenderOptions {
  bool allow_private_networks = false;
  std::chrono::seconds timeout{10};
  std::vector<long> retry_schedule{5, 300, 1800, 7200, 18000, 36000};
  size_t max_in_flight = 16;
  size_t max_per_host = 8;
  int64_t disable_after_seconds = 432000;
  int64_t retention_seconds = 2592000;
  std::chrono::milliseconds poll_interval{250};
  // How often a claim walks the due index from its start rather than from where the last claim
  // ended (DeliverySender::claim_after_): it finds rows that landed behind that place.
  std::chrono::milliseconds full_claim_interval{1000};
  std::string user_agent = "Rendezvous-Webhooks";
};

// What the sender calls a finished attempt (the outcome label of its metrics and log lines):
// "succeeded", "retry" (tried again later), "failed" (not tried again) or "gone" (the receiver
// answered 410). WebhookMetrics exports each at zero from start-up.
constexpr const char* kAttemptOutcomes[] = {"succeeded", "retry", "failed", "gone"};
// Why the sender sets a webhook inactive: "gone" (410) or "failing" (every delivery failed for
// disable_after).
constexpr const char* kDisableReasons[] = {"gone", "failing"};

// Where the sender reports (metrics) and what it asks of its owner. Every member may be empty.
struct SenderHooks {
  // Attempts, first successes, webhooks set inactive and, about once a second, the backlog.
  WebhookMetrics* metrics = nullptr;
  // Inside the transaction that sets a failing webhook inactive (the owner's mail).
  DisabledHandler notify_owner;
};

// A claim holds a row for twice the request's timeout and this much more, before another sender
// (or this one after a restart) may take it again. A claimed delivery that waits for its
// destination is started only while a whole attempt still fits in its lease (kStartMargin to
// spare), else left to be claimed again.
inline constexpr int64_t kLeaseSlackSeconds = 5;

class DeliverySender {
 public:
  DeliverySender(Database& db, DeliveryQueue& queue, Logger& logger, SenderOptions options,
                 SenderHooks hooks = {});
  ~DeliverySender();
  DeliverySender(const DeliverySender&) = delete;
  DeliverySender& operator=(const DeliverySender&) = delete;

  void Start();
  // Stops the thread; requests still open are dropped (their leases run out, and they are sent
  // again with the same webhook-id).
  void Stop() noexcept;
  // Deliveries may be due: claim now rather than at the next poll.
  void Wake() noexcept;
  // Deliveries due from `due_ms` on (Unix ms by the database's clock) have committed: claim now,
  // and walk the due index from before that time at the latest. A claim that ran while they
  // committed may have passed over some of them (still locked: skipped) and taken later ones, so
  // that the place where claims start is past them.
  void WakeFrom(int64_t due_ms) noexcept;

 private:
  // A claimed delivery, its subscriber URL parsed once (nullopt, with url_error, when its webhook
  // is gone or the URL does not parse).
  struct Claimed {
    ClaimedDelivery delivery;
    std::optional<net::Url> url;
    std::string url_error;
    std::string destination;  // url->Destination(), "" without a URL
    std::chrono::steady_clock::time_point claimed_at;
    std::string render_error;   // the body could not be rendered: the attempt fails with this
    bool filtered_out = false;  // the filter script turned it down: deleted, never sent
  };
  // A request under way.
  struct InFlight {
    ClaimedDelivery delivery;
    std::string destination;
    int64_t started_ms = 0;
  };
  struct Finished {
    ClaimedDelivery delivery;
    Attempt attempt;
    Outcome outcome;
    std::string outcome_name;
  };
  // Deliveries of one destination the sender holds: requests open and claimed ones not started.
  struct DestinationLoad {
    size_t open = 0;
    size_t waiting = 0;
  };
  // What the sender holds of one webhook: how many deliveries, to which destination.
  struct WebhookLoad {
    std::string destination;
    size_t held = 0;
  };

  // The render thread.
  void RenderLoop();
  // Hands claimed deliveries to the sending thread (one lock for the lot).
  void Hand(std::vector<Claimed> claimed);
  // One held delivery less for its owner (mu_ held).
  void ReleaseOwnerLocked(const ClaimedDelivery& d);

  // The sending thread.
  void SendLoop();
  void StartWaiting();
  void Begin(Claimed claimed);
  void Finish(InFlight& request, const net::HttpResponse& response);
  void Complete(ClaimedDelivery delivery, const std::string& destination, bool was_open,
                const Attempt& attempt, const Outcome& outcome, std::string outcome_name);
  // Hands what finished to the store thread (one lock for the lot).
  void Publish();

  // The store thread.
  void StoreLoop();
  // One transaction: records the finished attempts and claims up to `limit` due deliveries, then
  // hands those to the sending thread. Returns how many were claimed, kRoundFailed (in the source)
  // when the transaction failed.
  size_t Round(size_t limit);
  // Metrics and logs of recorded attempts after their round (`recorded`: it committed).
  void Report(const std::vector<Finished>& finished, bool recorded, const std::vector<int64_t>& disabled);
  void Housekeeping();
  // The webhooks whose destinations have max_per_host requests open and as many deliveries
  // waiting (mu_ held).
  std::vector<int64_t> BusyWebhooksLocked() const;

  Database& db_;
  DeliveryQueue& queue_;
  Logger& logger_;
  const SenderOptions options_;
  SenderHooks hooks_;

  // The sending thread's own.
  net::HttpMulti http_;
  uint64_t next_tag_ = 0;
  std::map<uint64_t, InFlight> in_flight_;        // by the tag of its request
  std::map<std::string, size_t> per_host_;        // destination -> requests open
  std::map<int64_t, size_t> per_owner_open_now_;  // webhook owner -> requests open
  // Claimed, not started: started as their destination frees up, or dropped (left for a later
  // claim) before their lease runs out.
  std::deque<Claimed> waiting_;
  std::vector<Finished> done_;  // finished since the last Publish()

  // Between the two threads, under mu_.
  std::mutex mu_;
  std::condition_variable store_cv_;                        // the store thread waits on it
  std::deque<Claimed> inbox_;                               // claimed, not yet taken by the sending thread
  std::vector<Finished> finished_;                          // finished, not yet recorded
  std::chrono::steady_clock::time_point first_finished_{};  // when finished_ became non-empty
  size_t held_ = 0;  // claimed and not finished: inbox_, waiting_ and in flight
  std::map<std::string, DestinationLoad> destinations_;
  std::map<int64_t, WebhookLoad> webhooks_held_;
  std::map<int64_t, size_t> owners_held_;  // webhook owner (user) -> deliveries held
  size_t per_owner_ = 1;                   // the most one owner may hold (ClaimShares)
  size_t per_owner_open_ = 1;              // the most requests one owner may have open

  // Between the store and the render thread, under render_mu_: deliveries to render, by owner,
  // and the owners with some, in turn order.
  std::mutex render_mu_;
  std::condition_variable render_cv_;
  std::map<int64_t, std::deque<Claimed>> to_render_;
  std::deque<int64_t> render_turns_;
  int64_t rendering_ = 0;  // the owner whose delivery the render thread renders now (0: none)

  // The store thread's own.
  // Where claims start on the due index (DeliveryQueue::Claim's `after`): after the last row of
  // the last batch claimed with no webhook left out, since nothing committed later is due before
  // it (the outbox consumer's transactions follow one another; retries and leases are due in the
  // future). Rows that land behind it anyway (a webhook left out, a manual retry racing a claim,
  // another instance's consumer) are found by a claim from the start of the index at least every
  // full_claim_interval; the outbox consumer's new rows are found at once (WakeFrom).
  ClaimCursor claim_after_;
  // WakeFrom()'s earliest time since the last round (kNoRewind: none); the next round moves
  // claim_after_ back before it.
  static constexpr int64_t kNoRewind = INT64_MAX;
  std::atomic<int64_t> rewind_ms_{kNoRewind};
  // Where a claim that passes over owners with a full share starts, when after claim_after_: where
  // the last such claim ended (the rows before it that it passed over are those owners'). And the
  // owners whose share was full after the last claim: one with room again is claimed for at once.
  ClaimCursor skip_after_;
  std::vector<int64_t> full_after_claim_;
  std::chrono::steady_clock::time_point next_full_claim_{};
  std::chrono::steady_clock::time_point next_housekeeping_{};
  std::chrono::steady_clock::time_point next_purge_{};

  std::atomic<bool> stopping_{false};
  std::atomic<bool> woken_{false};
  std::thread send_thread_;
  std::thread store_thread_;
  std::thread render_thread_;
};

// One request now, on the calling thread, with every rule of a delivery (the address checked and
// pinned, the signatures, no redirect, the timeout): a ping. Nothing is recorded. Thread-safe.
Attempt SendNow(const Webhook& webhook, const std::string& message_id, const std::string& body,
                const std::string& content_type, const SenderOptions& options);

}  // namespace rendezvous::webhooks
