#include "delivery_sender.hpp"

#include <algorithm>
#include <random>

#include "address_guard.hpp"
#include "retry_policy.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/time.hpp"
#include "signature.hpp"

namespace rendezvous::webhooks {
namespace {

// A claim holds a row for twice the request's timeout and this much more, before another sender
// (or this one after a restart) may take it again. A claimed delivery that waits for its
// destination is started only while a whole attempt still fits in its lease (kStartMargin to
// spare), else left to be claimed again.
constexpr int64_t kLeaseSlackSeconds = 5;
constexpr std::chrono::seconds kStartMargin{2};
// Answers are read up to this size (the rest is refused); the log keeps kMaxResponseExcerpt.
constexpr size_t kMaxResponseBytes = 256 * 1024;
constexpr std::chrono::milliseconds kWokenRetry{2};  // doubled on each of kMaxWokenRetries
constexpr int kMaxWokenRetries = 5;
// Finished attempts wait at most this long for the round that records them.
constexpr std::chrono::milliseconds kMaxRecordDelay{20};
constexpr std::chrono::seconds kFullClaimInterval{1};
// Round()'s answer when its transaction failed.
constexpr size_t kRoundFailed = static_cast<size_t>(-1);

double RandomUnit() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

int64_t UnixSeconds() { return time::Now() / 1000; }

constexpr std::chrono::seconds kHousekeepingInterval{1};
constexpr size_t kPurgeBatch = 1000;
constexpr int kPurgeBatchesPerRound = 20;

// Everything a delivery request carries (DESIGN §6): the signature headers, the checked address
// pinned for a host name, no redirects, no proxy, the timeout, the answer read up to
// kMaxResponseBytes and kept up to kMaxResponseExcerpt, its Retry-After kept.
net::HttpRequest DeliveryRequest(const Webhook& hook, const std::string& message_id, const std::string& body,
                                 const std::string& content_type, const net::Url& url, const std::string& address,
                                 const SenderOptions& options) {
  net::HttpRequest r;
  r.method = "POST";
  r.url = hook.subscriber_url;
  r.body = body;
  const int64_t timestamp = UnixSeconds();
  r.headers.reserve(9);
  r.headers.push_back("Content-Type: " + content_type);
  r.headers.push_back("webhook-id: " + message_id);
  r.headers.push_back("webhook-timestamp: " + std::to_string(timestamp));
  if (hook.secret) {
    // During a rotation's grace the old secret signs too: Standard Webhooks receivers accept any
    // one of several space-separated signatures.
    std::string signature = StandardWebhookSignature(*hook.secret, message_id, timestamp, body);
    if (hook.previous_secret) {
      signature += " " + StandardWebhookSignature(*hook.previous_secret, message_id, timestamp, body);
    }
    r.headers.push_back("webhook-signature: " + signature);
    r.headers.push_back("X-Cal-Signature-256: " + CalSignature(*hook.secret, body));
  }
  r.headers.push_back("X-Cal-Webhook-Version: 2021-10-20");
  r.headers.push_back("Expect:");
  // HTTP/1.1 keeps connections open by default, but some servers (Pistache among them) close
  // after every answer unless the request asks for keep-alive.
  r.headers.push_back("Connection: keep-alive");
  r.pin = {url.host, url.EffectivePort(), address};  // a host name connects to the checked address
  // The address was checked; the socket is checked too, so nothing but a public address is reached.
  r.block_private_networks = !options.allow_private_networks;
  r.user_agent = options.user_agent;
  r.timeout = options.timeout;
  r.connect_timeout = options.timeout;
  r.max_response_bytes = kMaxResponseBytes;
  r.keep_response_bytes = kMaxResponseExcerpt;
  r.keep_headers = {"retry-after"};
  r.detailed_error = true;
  return r;
}

// The attempt's record of an answer, or of the failure to get one: an answer too long still
// counts by its status (its excerpt kept). Returns whether a transport failure may pass on a retry.
bool Record(const net::HttpResponse& response, Attempt& attempt) {
  if (response.ok() || (response.outcome == net::HttpOutcome::kTooLarge && response.status > 0)) {
    attempt.status_code = response.status;
    attempt.response = text::SanitizeUtf8(response.body);
    if (response.status < 200 || response.status >= 300) attempt.error = "HTTP " + std::to_string(response.status);
    return false;
  }
  attempt.error = response.error;
  return response.outcome != net::HttpOutcome::kBadUrl;
}

}  // namespace

DeliverySender::DeliverySender(Database& db, DeliveryQueue& queue, Logger& logger, SenderOptions options,
                               SenderHooks hooks)
    : db_(db),
      queue_(queue),
      logger_(logger),
      options_(std::move(options)),
      hooks_(std::move(hooks)),
      http_(options_.max_in_flight) {}

DeliverySender::~DeliverySender() { Stop(); }

void DeliverySender::Start() {
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void DeliverySender::Stop() noexcept {
  stopping_ = true;
  http_.Wakeup();
  if (thread_.joinable()) thread_.join();
  http_.CancelAll();
  in_flight_.clear();
  per_host_.clear();
  waiting_.clear();
}

void DeliverySender::Wake() noexcept {
  woken_ = true;
  http_.Wakeup();
}

void DeliverySender::Loop() {
  auto next_claim = std::chrono::steady_clock::now();
  // A round (record what finished, claim more) is one transaction: with requests in flight it
  // waits until half the slots are free, so rounds stay few and large while the other half keeps
  // the receivers busy. A wake-up says work has arrived and claims at once; finished attempts wait
  // at most kMaxRecordDelay for their round.
  const size_t half = std::max<size_t>(1, options_.max_in_flight / 2);
  while (!stopping_) {
    const auto now = std::chrono::steady_clock::now();
    const bool woken = woken_.exchange(false);
    if (woken) next_claim = std::min(next_claim, now);
    StartWaiting();
    const size_t busy = in_flight_.size() + waiting_.size();
    const size_t room = busy < options_.max_in_flight ? options_.max_in_flight - busy : 0;
    const bool roomy = busy == 0 || room >= half;
    const bool claim = room > 0 && now >= next_claim && (woken || roomy || !finished_.empty());
    const bool record = !finished_.empty() && (roomy || woken || now - first_finished_ >= kMaxRecordDelay);
    if ((claim && (woken || roomy)) || record) {
      const size_t limit = claim ? room : 0;
      const size_t got = Round(limit);
      if (got == kRoundFailed) {
        next_claim = now + std::chrono::seconds(3);
      } else if (limit > 0) {
        // A full batch may mean more is due: claim again as soon as there is room. The outbox
        // consumer wakes the sender before its transaction commits, so a wake-up that finds
        // nothing looks again a few times, soon, before falling back to the poll interval.
        if (got == limit) {
          next_claim = now;
          woken_retries_ = 0;
        } else if (got == 0 && (woken || woken_retries_ > 0) && woken_retries_ < kMaxWokenRetries) {
          next_claim = now + kWokenRetry * (1 << woken_retries_);
          ++woken_retries_;
        } else {
          next_claim = now + options_.poll_interval;
          woken_retries_ = 0;
        }
      }
    }
    for (auto& [tag, response] : http_.Perform()) {
      auto it = in_flight_.find(tag);
      if (it == in_flight_.end()) continue;
      InFlight done = std::move(it->second);
      in_flight_.erase(it);
      if (--per_host_[done.destination] == 0) per_host_.erase(done.destination);
      Finish(done, response);
    }
    if (std::chrono::steady_clock::now() >= next_housekeeping_) Housekeeping();
    // Until the next round is due, or a transfer moves (curl_multi_poll returns early on
    // activity), or the poll interval.
    const auto after = std::chrono::steady_clock::now();
    const size_t busy_after = in_flight_.size() + waiting_.size();
    const size_t room_after = busy_after < options_.max_in_flight ? options_.max_in_flight - busy_after : 0;
    const bool roomy_after = busy_after == 0 || room_after >= half;
    auto due = after + options_.poll_interval;
    if (!finished_.empty()) due = std::min(due, roomy_after ? after : first_finished_ + kMaxRecordDelay);
    if (room_after > 0 && roomy_after) due = std::min(due, next_claim);
    int64_t wait = std::chrono::duration_cast<std::chrono::milliseconds>(due - after).count();
    wait = std::clamp<int64_t>(wait, 0, in_flight_.empty() ? options_.poll_interval.count() : 50);
    http_.Poll(std::chrono::milliseconds(wait));
  }
  // What finished before the stop is recorded rather than sent again after the lease.
  if (!finished_.empty()) Round(0);
}

std::vector<int64_t> DeliverySender::BusyWebhooks() const {
  std::vector<int64_t> busy;
  auto full = [&](const std::string& destination) {
    auto it = per_host_.find(destination);
    return it != per_host_.end() && it->second >= options_.max_per_host;
  };
  for (const auto& [tag, r] : in_flight_) {
    if (r.delivery.webhook && full(r.destination)) busy.push_back(r.delivery.webhook->id);
  }
  for (const Claimed& c : waiting_) {
    if (c.delivery.webhook) busy.push_back(c.delivery.webhook->id);
  }
  std::sort(busy.begin(), busy.end());
  busy.erase(std::unique(busy.begin(), busy.end()), busy.end());
  return busy;
}

size_t DeliverySender::Round(size_t limit) {
  std::vector<RecordedAttempt> batch;
  batch.reserve(finished_.size());
  for (const Finished& f : finished_) batch.push_back(RecordedAttempt{&f.delivery, f.attempt, f.outcome});
  RecordAndClaimResult round;
  bool ok = false;
  const auto started = std::chrono::steady_clock::now();
  const bool full_claim = limit > 0 && started >= next_full_claim_;
  const std::vector<int64_t> busy = limit > 0 ? BusyWebhooks() : std::vector<int64_t>{};
  try {
    round = queue_.RecordAndClaim(db_, batch, options_.disable_after_seconds, hooks_.notify_owner, limit,
                                  2 * static_cast<int64_t>(options_.timeout.count()) + kLeaseSlackSeconds,
                                  busy, full_claim ? 0 : claim_from_ms_);
    ok = true;
    if (full_claim) {
      next_full_claim_ = started + kFullClaimInterval;
      if (busy.empty()) claim_from_ms_ = round.first_due_ms;  // 0 (from the start) when nothing was due
    } else if (busy.empty() && round.first_due_ms > claim_from_ms_) {
      claim_from_ms_ = round.first_due_ms;
    }
  } catch (const std::exception& e) {
    // The leases run out and the deliveries are sent again, with the same webhook-ids.
    logger_.Warn("webhook deliveries could not be recorded and claimed",
                 {{"attempts", static_cast<int64_t>(finished_.size())}, {"error", e.what()}});
  }
  Report(ok, round.disabled);
  if (!ok) return kRoundFailed;
  const size_t got = round.claimed.size();
  const auto now = std::chrono::steady_clock::now();
  for (ClaimedDelivery& d : round.claimed) {
    Claimed c{std::move(d), std::nullopt, "", now};
    if (c.delivery.webhook) {
      Result<net::Url> url = ParseSubscriberUrl(c.delivery.webhook->subscriber_url);
      if (url.ok()) {
        c.url = std::move(*url);
      } else {
        c.url_error = url.status().message();
      }
    }
    waiting_.push_back(std::move(c));
  }
  StartWaiting();
  return got;
}

void DeliverySender::StartWaiting() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (now - it->claimed_at > options_.timeout + std::chrono::seconds(kLeaseSlackSeconds) - kStartMargin) {
      it = waiting_.erase(it);  // its lease runs out and it is claimed again
      continue;
    }
    if (it->url) {
      auto open = per_host_.find(it->url->Destination());
      if (open != per_host_.end() && open->second >= options_.max_per_host) {
        ++it;
        continue;
      }
    }
    Claimed c = std::move(*it);
    it = waiting_.erase(it);
    Begin(std::move(c));
  }
}

void DeliverySender::Begin(Claimed c) {
  ClaimedDelivery& d = c.delivery;
  Attempt attempt;
  attempt.at_ms = time::Now();
  if (!d.webhook || !d.webhook->active) {
    attempt.error = "the webhook is inactive or was deleted";
    Complete(std::move(d), attempt, Outcome{Outcome::kFailed}, "failed");
    return;
  }
  const Webhook& w = *d.webhook;
  if (w.secret_unreadable) {
    attempt.error = "the webhook's secret cannot be decrypted with the server's current key";
    Complete(std::move(d), attempt, Outcome{Outcome::kFailed}, "failed");
    return;
  }
  if (!c.url) {
    attempt.error = c.url_error;
    Complete(std::move(d), attempt, Outcome{Outcome::kFailed}, "failed");
    return;
  }
  // Checked again at every send (DNS may have changed since create), and the connection goes to
  // the address checked here.
  AddressRefusal refusal = AddressRefusal::kNone;
  Result<std::string> address = CheckedAddress(*c.url, options_.allow_private_networks, &refusal);
  if (!address.ok()) {
    attempt.error = address.status().message();
    // A name that does not resolve may resolve later; a refused address will not change.
    std::optional<int64_t> delay =
        refusal == AddressRefusal::kUnresolved
            ? NextDelayMillis(options_.retry_schedule, static_cast<size_t>(d.round_attempts) + 1, RandomUnit())
            : std::nullopt;
    if (delay) {
      Complete(std::move(d), attempt, Outcome{Outcome::kRetryLater, *delay}, "retry");
    } else {
      Complete(std::move(d), attempt, Outcome{Outcome::kFailed}, "failed");
    }
    return;
  }
  const uint64_t tag = ++next_tag_;
  if (!http_.Start(tag, DeliveryRequest(w, d.message_id, d.body, d.content_type, *c.url, *address, options_))) {
    logger_.Error("webhook delivery: the request could not be started");
    return;  // the lease runs out and the delivery is tried again
  }
  InFlight& r = in_flight_[tag];
  r.destination = c.url->Destination();
  r.started_ms = attempt.at_ms;
  r.delivery = std::move(d);
  ++per_host_[r.destination];
}

void DeliverySender::Finish(InFlight& r, const net::HttpResponse& response) {
  Attempt attempt;
  attempt.at_ms = r.started_ms;
  attempt.duration_ms = response.duration.count();
  const bool transport_retryable = Record(response, attempt);
  Outcome outcome;
  std::string name;
  switch (Classify(attempt.status_code, transport_retryable)) {
    case Verdict::kSucceeded:
      outcome.kind = Outcome::kSucceeded;
      name = "succeeded";
      break;
    case Verdict::kGone:
      outcome.kind = Outcome::kFailed;
      outcome.disable_webhook = true;
      name = "gone";
      break;
    case Verdict::kFailed:
      outcome.kind = Outcome::kFailed;
      name = "failed";
      break;
    case Verdict::kRetry: {
      std::optional<int64_t> retry_after;
      if (const std::string header = response.Header("retry-after"); !header.empty()) {
        retry_after = ParseRetryAfter(header, UnixSeconds());
      }
      std::optional<int64_t> delay = NextDelayMillis(
          options_.retry_schedule, static_cast<size_t>(r.delivery.round_attempts) + 1, RandomUnit(), retry_after);
      outcome.kind = delay ? Outcome::kRetryLater : Outcome::kFailed;
      outcome.retry_in_ms = delay.value_or(0);
      name = delay ? "retry" : "failed";
      break;
    }
  }
  Complete(std::move(r.delivery), attempt, outcome, std::move(name));
}

void DeliverySender::Complete(ClaimedDelivery d, const Attempt& attempt, const Outcome& outcome,
                              std::string outcome_name) {
  if (finished_.empty()) first_finished_ = std::chrono::steady_clock::now();
  finished_.push_back(Finished{std::move(d), attempt, outcome, std::move(outcome_name)});
}

void DeliverySender::Report(bool recorded, const std::vector<int64_t>& disabled) {
  const int64_t now_ms = time::Now();
  for (const Finished& f : finished_) {
    const ClaimedDelivery& d = f.delivery;
    const Attempt& a = f.attempt;
    if (hooks_.metrics) hooks_.metrics->Attempted(d.trigger, f.outcome_name, static_cast<double>(a.duration_ms) / 1000.0);
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
    logger_.Warn("webhook disabled: its deliveries kept failing", {{"webhook_id", id},
                                                                   {"disable_after_seconds", options_.disable_after_seconds}});
    if (hooks_.metrics) hooks_.metrics->Disabled("failing");
  }
  finished_.clear();
}

void DeliverySender::Housekeeping() {
  const auto now = std::chrono::steady_clock::now();
  next_housekeeping_ = now + kHousekeepingInterval;
  try {
    if (hooks_.metrics) hooks_.metrics->SetBacklog(queue_.MeasureBacklog(db_));
    if (now >= next_purge_) {
      next_purge_ = now + std::clamp<std::chrono::seconds>(std::chrono::seconds(options_.retention_seconds / 2),
                                                          std::chrono::seconds(1), std::chrono::seconds(60));
      size_t purged = 0;
      for (int i = 0; i < kPurgeBatchesPerRound && !stopping_; ++i) {
        const size_t n = queue_.Purge(db_, options_.retention_seconds, kPurgeBatch);
        purged += n;
        if (n < kPurgeBatch) break;
      }
      if (purged > 0) logger_.Info("webhook delivery log purged", {{"deliveries", static_cast<int64_t>(purged)}});
      queue_.ForgetExpiredSecrets(db_);
    }
  } catch (const std::exception& e) {
    logger_.Warn("webhook delivery housekeeping failed", {{"error", e.what()}});
  }
}

Attempt SendNow(const Webhook& w, const std::string& message_id, const std::string& body,
                const std::string& content_type, const SenderOptions& options) {
  Attempt attempt;
  attempt.at_ms = time::Now();
  if (w.secret_unreadable) {
    attempt.error = "the webhook's secret cannot be decrypted with the server's current key";
    return attempt;
  }
  Result<net::Url> url = ParseSubscriberUrl(w.subscriber_url);
  if (!url.ok()) {
    attempt.error = url.status().message();
    return attempt;
  }
  Result<std::string> address = CheckedAddress(*url, options.allow_private_networks);
  if (!address.ok()) {
    attempt.error = address.status().message();
    return attempt;
  }
  const net::HttpResponse response =
      net::Perform(DeliveryRequest(w, message_id, body, content_type, *url, *address, options));
  attempt.duration_ms = response.duration.count();
  Record(response, attempt);
  return attempt;
}

}  // namespace rendezvous::webhooks
