#include "delivery_sender.hpp"

#include <pthread.h>

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "rendezvous/text.hpp"
#include "rendezvous/time.hpp"
#include "retry_policy.hpp"

namespace rendezvous::webhooks {
namespace {

// Finished attempts wait at most this long for the round that records them.
constexpr std::chrono::milliseconds kMaxRecordDelay{20};
// Round()'s answer when its transaction failed.
constexpr size_t kRoundFailed = static_cast<size_t>(-1);

constexpr std::chrono::seconds kHousekeepingInterval{1};
constexpr size_t kPurgeBatch = 1000;
constexpr int kPurgeBatchesPerRound = 20;

}  // namespace

DeliverySender::DeliverySender(Database& db, DeliveryQueue& queue, Logger& logger, SenderOptions options,
                               SenderHooks hooks)
    : db_(db),
      queue_(queue),
      logger_(logger),
      options_(std::move(options)),
      hooks_(std::move(hooks)),
      http_(options_.max_in_flight) {
  // Of the 2 * max_in_flight deliveries the sender holds, one owner may hold all but an eighth of
  // max_in_flight (at least one): that room is always there for the others' rows. Of the
  // max_in_flight requests open, one owner may have as many less the same reserve.
  const size_t budget = 2 * options_.max_in_flight;
  const size_t reserve = std::max<size_t>(1, options_.max_in_flight / 8);
  per_owner_ = budget - std::min(budget - 1, reserve);
  per_owner_open_ = options_.max_in_flight - std::min(options_.max_in_flight - 1, reserve);
}

DeliverySender::~DeliverySender() {
  Stop();
}

void DeliverySender::Start() {
  stopping_ = false;
  send_thread_ = std::thread([this] { SendLoop(); });
  store_thread_ = std::thread([this] { StoreLoop(); });
  render_thread_ = std::thread([this] { RenderLoop(); });
}

void DeliverySender::Stop() noexcept {
  stopping_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    store_cv_.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(render_mu_);
    render_cv_.notify_all();
  }
  http_.Wakeup();
  if (send_thread_.joinable()) send_thread_.join();
  if (store_thread_.joinable()) store_thread_.join();
  if (render_thread_.joinable()) render_thread_.join();
  // What finished before the stop is recorded rather than sent again after the lease.
  Publish();
  if (!finished_.empty()) Round(0);
  http_.CancelAll();
  in_flight_.clear();
  per_host_.clear();
  per_owner_open_now_.clear();
  waiting_.clear();
  inbox_.clear();
  destinations_.clear();
  webhooks_held_.clear();
  owners_held_.clear();
  to_render_.clear();
  render_turns_.clear();
  held_ = 0;
}

void DeliverySender::Wake() noexcept {
  woken_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  store_cv_.notify_all();
}

void DeliverySender::WakeFrom(int64_t due_ms) noexcept {
  int64_t earliest = rewind_ms_.load();
  while (due_ms < earliest && !rewind_ms_.compare_exchange_weak(earliest, due_ms)) {
  }
  Wake();
}

void DeliverySender::SendLoop() {
  pthread_setname_np(pthread_self(), "rdv-wh-send");  // for top -H and perf
  while (!stopping_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      while (!inbox_.empty()) {
        waiting_.push_back(std::move(inbox_.front()));
        inbox_.pop_front();
      }
    }
    StartWaiting();
    for (auto& [tag, response] : http_.Perform()) {
      auto it = in_flight_.find(tag);
      if (it == in_flight_.end()) continue;
      InFlight done = std::move(it->second);
      in_flight_.erase(it);
      if (--per_host_[done.destination] == 0) per_host_.erase(done.destination);
      if (done.delivery.webhook) {
        auto mine = per_owner_open_now_.find(done.delivery.webhook->user_id);
        if (mine != per_owner_open_now_.end() && --mine->second == 0) per_owner_open_now_.erase(mine);
      }
      Finish(done, response);
    }
    StartWaiting();  // into the slots that just freed up
    Publish();
    // Until a transfer moves (Poll returns early on activity), the store thread hands
    // over a batch (Wakeup), or a waiting delivery may start.
    const int64_t wait = in_flight_.empty() && waiting_.empty() ? options_.poll_interval.count() : 50;
    http_.Poll(std::chrono::milliseconds(wait));
  }
}

void DeliverySender::Publish() {
  if (done_.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_.empty()) first_finished_ = std::chrono::steady_clock::now();
  for (Finished& f : done_) finished_.push_back(std::move(f));
  done_.clear();
  store_cv_.notify_all();
}

std::vector<int64_t> DeliverySender::BusyWebhooksLocked() const {
  std::vector<int64_t> busy;
  for (const auto& [id, load] : webhooks_held_) {
    auto it = destinations_.find(load.destination);
    // Full: all its slots open and as many deliveries waiting. One with free slots is not busy,
    // whatever waits for it: the sending thread is only behind in starting them.
    if (it != destinations_.end() && it->second.open >= options_.max_per_host &&
        it->second.waiting >= options_.max_per_host) {
      busy.push_back(id);
    }
  }
  return busy;  // in id order: webhooks_held_ is a map
}

void DeliverySender::StoreLoop() {
  auto next_claim = std::chrono::steady_clock::now();
  // Claims keep up to `max_in_flight` deliveries waiting beside those in flight, and are made
  // when at least half of that room is free (or a wake-up says work has arrived), so rounds stay
  // few and large. Finished attempts are recorded by the next round, at most kMaxRecordDelay
  // after the first of them finished.
  pthread_setname_np(pthread_self(), "rdv-wh-store");
  const size_t budget = 2 * options_.max_in_flight;
  const size_t half = std::max<size_t>(1, options_.max_in_flight / 2);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const auto now = std::chrono::steady_clock::now();
    const bool woken = woken_.exchange(false);
    if (woken) next_claim = std::min(next_claim, now);
    const size_t room = held_ < budget ? budget - held_ : 0;
    const bool roomy = room >= half;
    // An owner whose share is full: the room left is for the others, claimed at the poll's pace
    // (their new rows come with wake-ups). One whose share was full after the last claim and that
    // has room again is claimed for at once.
    bool any_full = false;
    bool freed = false;
    for (const auto& [owner, held] : owners_held_) any_full = any_full || held >= per_owner_;
    for (int64_t owner : full_after_claim_) {
      auto it = owners_held_.find(owner);
      freed = freed || it == owners_held_.end() || it->second < per_owner_;
    }
    const bool claim = room > 0 && (now >= next_claim || freed) && (woken || roomy || any_full);
    const bool record = !finished_.empty() && (finished_.size() >= half || woken || roomy ||
                                               now - first_finished_ >= kMaxRecordDelay);
    if (claim || record) {
      lock.unlock();
      const size_t limit = claim ? room : 0;
      const size_t got = Round(limit);
      const auto after = std::chrono::steady_clock::now();
      if (got == kRoundFailed) {
        next_claim = after + std::chrono::seconds(3);
      } else if (limit > 0) {
        // A full batch may mean more is due: claim again as soon as there is room. Wake-ups
        // come after the commit of what they announce (the outbox consumer's from its
        // after-commit callback), so one that finds nothing has nothing to wait for.
        next_claim = got == limit ? after : after + options_.poll_interval;
      }
      lock.lock();
      continue;
    }
    if (now >= next_housekeeping_) {
      lock.unlock();
      Housekeeping();
      lock.lock();
      continue;
    }
    auto due = std::min(now + options_.poll_interval, next_housekeeping_);
    if (!finished_.empty()) due = std::min(due, first_finished_ + kMaxRecordDelay);
    if (roomy || any_full) due = std::min(due, next_claim);
    store_cv_.wait_until(lock, due, [&] {
      return stopping_ || woken_ || (!finished_.empty() && finished_.size() >= half) ||
             (held_ < budget && budget - held_ >= half && !roomy);
    });
  }
}

size_t DeliverySender::Round(size_t limit) {
  std::vector<Finished> recording;
  std::vector<int64_t> busy;
  ClaimShares shares;
  shares.per_owner = per_owner_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    recording.swap(finished_);
    if (limit > 0) {
      busy = BusyWebhooksLocked();
      shares.held = owners_held_;
      for (const auto& [owner, held] : owners_held_) {
        if (held >= per_owner_) shares.skip_owners.push_back(owner);  // in order: a map
      }
    }
  }
  std::vector<RecordedAttempt> batch;
  batch.reserve(recording.size());
  for (const Finished& f : recording) batch.push_back(RecordedAttempt{&f.delivery, f.attempt, f.outcome});
  RecordAndClaimResult round;
  bool ok = false;
  // The WakeFrom()s since the last round move the place back before the earliest. Taken before
  // this round's claim: one that comes during it (rows committing while the claim ran) is applied
  // by the next round, after this claim has moved the place forward.
  const int64_t rewind = rewind_ms_.exchange(kNoRewind);
  if (rewind != kNoRewind) {
    const ClaimCursor back{rewind - 1, 0};  // rows due at `rewind` or later come after it
    if (std::tie(claim_after_.due_ms, claim_after_.id) > std::tie(back.due_ms, back.id)) claim_after_ = back;
    if (std::tie(skip_after_.due_ms, skip_after_.id) > std::tie(back.due_ms, back.id)) skip_after_ = back;
  }
  // A claim that passes over full owners starts where the last such claim ended, if that is
  // further: the rows between, those owners', were walked already (their share is still full).
  const bool skipping = !shares.skip_owners.empty();
  const auto started = std::chrono::steady_clock::now();
  const bool full_claim = limit > 0 && started >= next_full_claim_;
  ClaimCursor start = full_claim ? ClaimCursor{} : claim_after_;
  // A claim from the start that passes over full owners walks only up to the main place: past it
  // lie those owners' rows, walked by the claims from skip_after_ (a straggler among them is
  // reached in turn as their rows are claimed). Such a claim moves no place.
  const bool bounded = full_claim && skipping && claim_after_.due_ms > 0;
  if (bounded) shares.until_ms = claim_after_.due_ms;
  if (skipping && !bounded &&
      std::tie(skip_after_.due_ms, skip_after_.id) > std::tie(start.due_ms, start.id)) {
    start = skip_after_;
  }
  // The batch: the room, but no more than the fullest owner below its share has left, so that a
  // lone owner's claim reads no row past its share (the others' rows count in it as they come).
  size_t batch_limit = limit;
  if (limit > 0) {
    size_t fullest = 0;
    for (const auto& [owner, held] : shares.held) {
      if (held < per_owner_) fullest = std::max(fullest, held);
    }
    batch_limit = std::max<size_t>(1, std::min(limit, per_owner_ - fullest));
  }
  try {
    round = queue_.RecordAndClaim(
        db_, batch, options_.disable_after_seconds, hooks_.notify_owner, batch_limit,
        2 * static_cast<int64_t>(options_.timeout.count()) + kLeaseSlackSeconds, busy, start, &shares);
    ok = true;
    if (full_claim) next_full_claim_ = started + options_.full_claim_interval;
    if (limit > 0 && !bounded) {
      // How far the walk got: its last claimed row, or, past rows of an owner's full share, just
      // before the first of them (they stay due, for that owner's next claim).
      ClaimCursor reached = round.last;
      if (round.first_passed) reached = ClaimCursor{round.first_passed->due_ms, round.first_passed->id - 1};
      if (skipping) {
        // Past the full owners' rows: to the last row it returned, or, when it reached the end of
        // what is due, to the database's time at the walk. Nothing else moves the place before it.
        ClaimCursor walked = round.walked_to;
        if (!round.walk_full && round.walk_time_ms > 0)
          walked = ClaimCursor{round.walk_time_ms - 1, INT64_MAX};
        if (round.first_passed) walked = reached;
        if (full_claim || std::tie(walked.due_ms, walked.id) > std::tie(skip_after_.due_ms, skip_after_.id)) {
          skip_after_ = walked;
        }
      } else if (busy.empty()) {
        // Rows left behind (a busy destination) stay before the place: it moves only past a claim
        // that left nothing behind but an owner's rows past its share, and only up to them.
        if (full_claim) {
          claim_after_ = reached;  // {0, 0} (from the start) when nothing was due
        } else if (!round.claimed.empty()) {
          claim_after_ = reached;  // after claim_after_: the claim started there
        }
      }
    }
  } catch (const std::exception& e) {
    // The leases run out and the deliveries are sent again, with the same webhook-ids.
    logger_.Warn("webhook deliveries could not be recorded and claimed",
                 {{"attempts", static_cast<int64_t>(recording.size())}, {"error", e.what()}});
  }
  Report(recording, ok, round.disabled);
  if (!ok) return kRoundFailed;
  const size_t got = round.claimed.size();
  // An owner's share filled up and left rows behind: other users' rows may be behind them, so the
  // next claim (which passes over that owner's) comes at once, as after a full batch.
  // A full batch may mean more is due, and one that filled an owner's share or passed over rows
  // (batch_limit) may leave other users' rows behind that owner's: the sender claims again at
  // once (StoreLoop), passing over the owners now full.
  const size_t answer = round.passed_over || (batch_limit > 0 && got >= batch_limit) ? limit : got;
  if (limit > 0) {
    std::map<int64_t, size_t> after = shares.held;
    for (const ClaimedDelivery& d : round.claimed) {
      if (d.webhook) ++after[d.webhook->user_id];
    }
    full_after_claim_.clear();
    for (const auto& [owner, held] : after) {
      if (held >= per_owner_) full_after_claim_.push_back(owner);
    }
  }
  if (got == 0) return answer;
  const auto now = std::chrono::steady_clock::now();
  std::vector<Claimed> claimed;
  claimed.reserve(got);
  // Each webhook's URL is parsed once a round, whatever the number of its deliveries.
  struct ParsedUrl {
    std::optional<net::Url> url;
    std::string url_error;
    std::string destination;
  };
  std::unordered_map<const Webhook*, ParsedUrl> parsed_urls;
  for (ClaimedDelivery& d : round.claimed) {
    Claimed c{std::move(d), std::nullopt, "", "", now, ""};
    if (c.delivery.webhook) {
      auto [at, fresh] = parsed_urls.try_emplace(c.delivery.webhook.get());
      ParsedUrl& parsed = at->second;
      if (fresh) {
        Result<net::Url> url = ParseSubscriberUrl(c.delivery.webhook->subscriber_url);
        if (url.ok()) {
          parsed.url = std::move(*url);
          parsed.destination = parsed.url->Destination();
        } else {
          parsed.url_error = url.status().message();
        }
      }
      c.url = parsed.url;
      c.url_error = parsed.url_error;
      c.destination = parsed.destination;
    }
    claimed.push_back(std::move(c));
  }
  // The deliveries that await the filter script or whose body is made for their webhook go to the
  // render thread, the others (the event's text as it is, or a body of their own) straight to the
  // sending thread.
  std::vector<Claimed> ready;
  std::vector<Claimed> to_render;
  ready.reserve(claimed.size());
  const ScriptHooks& hooks = queue_.hooks();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Claimed& c : claimed) {
      ++held_;
      if (c.delivery.webhook) ++owners_held_[c.delivery.webhook->user_id];
      if (!c.destination.empty()) {
        ++destinations_[c.destination].waiting;
        WebhookLoad& load = webhooks_held_[c.delivery.webhook->id];
        load.destination = c.destination;
        ++load.held;
      }
      ClaimedDelivery& d = c.delivery;
      if (d.render && d.webhook && !d.body_gone &&
          (hooks.has_render() || d.webhook->payload_template || (d.filter && hooks.has_filter()))) {
        to_render.push_back(std::move(c));
      } else {
        if (d.render) d.content_type = "application/json";  // the event's text, as it is
        ready.push_back(std::move(c));
      }
    }
  }
  if (!to_render.empty()) {
    std::lock_guard<std::mutex> lock(render_mu_);
    for (Claimed& c : to_render) {
      const int64_t owner = c.delivery.webhook->user_id;
      std::deque<Claimed>& queue = to_render_[owner];
      // An owner being rendered takes its turn again once that render is done.
      if (queue.empty() && owner != rendering_) render_turns_.push_back(owner);
      queue.push_back(std::move(c));
    }
    render_cv_.notify_one();
  }
  if (!ready.empty()) Hand(std::move(ready));
  return answer;
}

void DeliverySender::Hand(std::vector<Claimed> claimed) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Claimed& c : claimed) inbox_.push_back(std::move(c));
  }
  http_.Wakeup();
}

void DeliverySender::ReleaseOwnerLocked(const ClaimedDelivery& d) {
  if (!d.webhook) return;
  auto it = owners_held_.find(d.webhook->user_id);
  if (it != owners_held_.end() && --it->second == 0) owners_held_.erase(it);
}

void DeliverySender::RenderLoop() {
  pthread_setname_np(pthread_self(), "rdv-wh-render");
  // The last event parsed: the deliveries of one event to several webhooks come together.
  int64_t parsed_id = 0;
  Json parsed;
  std::unique_lock<std::mutex> lock(render_mu_);
  while (!stopping_) {
    if (render_turns_.empty()) {
      render_cv_.wait_for(lock, options_.poll_interval, [&] { return stopping_ || !render_turns_.empty(); });
      continue;
    }
    // One render of the owner whose turn it is. The owner goes to the back once it is done (while
    // it has more), behind the owners that came meanwhile.
    const int64_t owner = render_turns_.front();
    render_turns_.pop_front();
    auto queue = to_render_.find(owner);
    if (queue == to_render_.end() || queue->second.empty()) continue;
    Claimed c = std::move(queue->second.front());
    queue->second.pop_front();
    if (queue->second.empty()) to_render_.erase(queue);
    rendering_ = owner;
    lock.unlock();
    ClaimedDelivery& d = c.delivery;
    try {
      if (d.event_id == 0 || d.event_id != parsed_id) {
        parsed_id = 0;
        parsed = Json::parse(d.body);
        parsed_id = d.event_id;
      }
      if (d.filter && !queue_.FilterForSend(*d.webhook, parsed)) {
        c.filtered_out = true;
      } else {
        RenderedBody body = queue_.RenderForSend(*d.webhook, d.body, &parsed);
        d.body = std::move(body.body);
        d.content_type = std::move(body.content_type);
      }
    } catch (const std::exception& e) {
      parsed_id = 0;
      c.render_error = std::string("the event could not be rendered: ") + e.what();
    }
    std::vector<Claimed> one;
    one.push_back(std::move(c));
    Hand(std::move(one));
    lock.lock();
    rendering_ = 0;
    if (to_render_.count(owner) > 0) render_turns_.push_back(owner);
  }
}

void DeliverySender::Report(const std::vector<Finished>& finished, bool recorded,
                            const std::vector<int64_t>& disabled) {
  const int64_t now_ms = time::Now();
  for (const Finished& f : finished) {
    const ClaimedDelivery& d = f.delivery;
    const Attempt& a = f.attempt;
    if (f.outcome.kind == Outcome::kFilteredOut) continue;  // no attempt: it never existed
    if (hooks_.metrics)
      hooks_.metrics->Attempted(d.trigger, f.outcome_name, static_cast<double>(a.duration_ms) / 1000.0);
    if (recorded && f.outcome.kind == Outcome::kSucceeded && !d.delivered_before && d.event_at_ms > 0 &&
        hooks_.metrics) {
      hooks_.metrics->Delivered(static_cast<double>(std::max<int64_t>(0, now_ms - d.event_at_ms)) / 1000.0);
    }
    // Successes are the common case: logged at debug level; every other outcome at info.
    const LogLevel level = f.outcome.kind == Outcome::kSucceeded ? LogLevel::kDebug : LogLevel::kInfo;
    if (logger_.Enabled(level)) {
      logger_.Log(level, "webhook delivery attempt",
                  {{"delivery_id", d.id},
                   {"webhook_id", d.webhook ? d.webhook->id : 0},
                   {"trigger", d.trigger},
                   {"outcome", f.outcome_name},
                   {"status_code", a.status_code},
                   {"duration_ms", a.duration_ms},
                   {"error", a.error}});
    }
    if (recorded && f.outcome.disable_webhook && d.webhook) {
      logger_.Warn("webhook disabled: the receiver answered 410 Gone", {{"webhook_id", d.webhook->id}});
      if (hooks_.metrics) hooks_.metrics->Disabled("gone");
    }
  }
  for (int64_t id : disabled) {
    logger_.Warn("webhook disabled: its deliveries kept failing",
                 {{"webhook_id", id}, {"disable_after_seconds", options_.disable_after_seconds}});
    if (hooks_.metrics) hooks_.metrics->Disabled("failing");
  }
}

void DeliverySender::Housekeeping() {
  const auto now = std::chrono::steady_clock::now();
  next_housekeeping_ = now + kHousekeepingInterval;
  try {
    if (hooks_.metrics) hooks_.metrics->SetBacklog(queue_.MeasureBacklog(db_));
    if (now >= next_purge_) {
      next_purge_ =
          now + std::clamp<std::chrono::seconds>(std::chrono::seconds(options_.retention_seconds / 2),
                                                 std::chrono::seconds(1), std::chrono::seconds(60));
      size_t purged = 0;
      for (int i = 0; i < kPurgeBatchesPerRound && !stopping_; ++i) {
        const size_t n = queue_.Purge(db_, options_.retention_seconds, kPurgeBatch);
        purged += n;
        if (n < kPurgeBatch) break;
      }
      if (purged > 0)
        logger_.Info("webhook delivery log purged", {{"deliveries", static_cast<int64_t>(purged)}});
      queue_.ForgetExpiredSecrets(db_);
    }
  } catch (const std::exception& e) {
    logger_.Warn("webhook delivery housekeeping failed", {{"error", e.what()}});
  }
}

}  // namespace rendezvous::webhooks
