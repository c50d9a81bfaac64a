// One delivery attempt of the sender (delivery_sender.hpp): a claimed delivery started when its
// destination has room, its request (signed, its address pinned), the answer recorded and the
// outcome handed back to the round that stores it; and SendNow, the same attempt run at once.
#include <algorithm>
#include <random>

#include "address_guard.hpp"
#include "delivery_sender.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/time.hpp"
#include "retry_policy.hpp"
#include "signature.hpp"

namespace rendezvous::webhooks {
namespace {

constexpr std::chrono::seconds kStartMargin{2};
// Answers are read up to this size (the rest is refused); the log keeps kMaxResponseExcerpt.
constexpr size_t kMaxResponseBytes = 256 * 1024;

double RandomUnit() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

int64_t UnixSeconds() {
  return time::Now() / 1000;
}

// Everything a delivery request carries (DESIGN §6): the signature headers, the checked address
// pinned for a host name, no redirects, no proxy, the timeout, the answer read up to
// kMaxResponseBytes and kept up to kMaxResponseExcerpt, its Retry-After kept.
net::HttpRequest DeliveryRequest(const Webhook& hook, const std::string& message_id, const std::string& body,
                                 const std::string& content_type, const net::Url& url,
                                 const std::string& address, const SenderOptions& options) {
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
  r.headers.emplace_back("X-Cal-Webhook-Version: 2021-10-20");
  r.headers.emplace_back("Expect:");
  // HTTP/1.1 keeps connections open by default, but some servers (Pistache among them) close
  // after every answer unless the request asks for keep-alive.
  r.headers.emplace_back("Connection: keep-alive");
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
    if (response.status < 200 || response.status >= 300)
      attempt.error = "HTTP " + std::to_string(response.status);
    return false;
  }
  attempt.error = response.error;
  return response.outcome != net::HttpOutcome::kBadUrl;
}

}  // namespace

void DeliverySender::StartWaiting() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = waiting_.begin(); it != waiting_.end() && in_flight_.size() < options_.max_in_flight;) {
    if (now - it->claimed_at > options_.timeout + std::chrono::seconds(kLeaseSlackSeconds) - kStartMargin) {
      // Its lease runs out and it is claimed again.
      {
        std::lock_guard<std::mutex> lock(mu_);
        --held_;
        ReleaseOwnerLocked(it->delivery);
        if (!it->destination.empty()) {
          --destinations_[it->destination].waiting;
          auto load = webhooks_held_.find(it->delivery.webhook->id);
          if (load != webhooks_held_.end() && --load->second.held == 0) webhooks_held_.erase(load);
        }
        store_cv_.notify_all();
      }
      it = waiting_.erase(it);
      continue;
    }
    if (!it->destination.empty() && !it->filtered_out) {  // one filtered out is only recorded
      auto open = per_host_.find(it->destination);
      if (open != per_host_.end() && open->second >= options_.max_per_host) {
        ++it;
        continue;
      }
      // One owner's requests leave a slot or more to the others' (per_owner_open_).
      auto mine = per_owner_open_now_.find(it->delivery.webhook->user_id);
      if (mine != per_owner_open_now_.end() && mine->second >= per_owner_open_) {
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
  if (c.filtered_out) {
    Complete(std::move(d), c.destination, false, attempt, Outcome{Outcome::kFilteredOut}, "filtered");
    return;
  }
  if (!d.webhook || !d.webhook->active) {
    attempt.error = "the webhook is inactive or was deleted";
    Complete(std::move(d), c.destination, false, attempt, Outcome{Outcome::kFailed}, "failed");
    return;
  }
  const Webhook& w = *d.webhook;
  if (w.secret_unreadable) {
    attempt.error = "the webhook's secret cannot be decrypted with the server's current key";
    Complete(std::move(d), c.destination, false, attempt, Outcome{Outcome::kFailed}, "failed");
    return;
  }
  if (d.body_gone) {
    attempt.error = "the event this delivery carries is no longer kept (the outbox's retention)";
    Complete(std::move(d), c.destination, false, attempt, Outcome{Outcome::kFailed}, "failed");
    return;
  }
  if (!c.render_error.empty()) {
    attempt.error = c.render_error;
    Complete(std::move(d), c.destination, false, attempt, Outcome{Outcome::kFailed}, "failed");
    return;
  }
  if (!c.url) {
    attempt.error = c.url_error;
    Complete(std::move(d), c.destination, false, attempt, Outcome{Outcome::kFailed}, "failed");
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
            ? NextDelayMillis(options_.retry_schedule, static_cast<size_t>(d.round_attempts) + 1,
                              RandomUnit())
            : std::nullopt;
    if (delay) {
      Complete(std::move(d), c.destination, false, attempt, Outcome{Outcome::kRetryLater, *delay}, "retry");
    } else {
      Complete(std::move(d), c.destination, false, attempt, Outcome{Outcome::kFailed}, "failed");
    }
    return;
  }
  const uint64_t tag = ++next_tag_;
  if (!http_.Start(tag,
                   DeliveryRequest(w, d.message_id, d.body, d.content_type, *c.url, *address, options_))) {
    logger_.Error("webhook delivery: the request could not be started");
    // The lease runs out and the delivery is tried again; the sender holds it no more.
    std::lock_guard<std::mutex> lock(mu_);
    --held_;
    ReleaseOwnerLocked(d);
    --destinations_[c.destination].waiting;
    auto load = webhooks_held_.find(w.id);
    if (load != webhooks_held_.end() && --load->second.held == 0) webhooks_held_.erase(load);
    return;
  }
  InFlight& r = in_flight_[tag];
  r.destination = c.destination;
  r.started_ms = attempt.at_ms;
  r.delivery = std::move(d);
  ++per_host_[r.destination];
  ++per_owner_open_now_[w.user_id];
  std::lock_guard<std::mutex> lock(mu_);
  DestinationLoad& load = destinations_[r.destination];
  --load.waiting;
  ++load.open;
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
      std::optional<int64_t> delay =
          NextDelayMillis(options_.retry_schedule, static_cast<size_t>(r.delivery.round_attempts) + 1,
                          RandomUnit(), retry_after);
      outcome.kind = delay ? Outcome::kRetryLater : Outcome::kFailed;
      outcome.retry_in_ms = delay.value_or(0);
      name = delay ? "retry" : "failed";
      break;
    }
  }
  Complete(std::move(r.delivery), r.destination, true, attempt, outcome, std::move(name));
}

void DeliverySender::Complete(ClaimedDelivery d, const std::string& destination, bool was_open,
                              const Attempt& attempt, const Outcome& outcome, std::string outcome_name) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --held_;
    ReleaseOwnerLocked(d);
    if (!destination.empty()) {
      DestinationLoad& load = destinations_[destination];
      --(was_open ? load.open : load.waiting);
      if (load.open == 0 && load.waiting == 0) destinations_.erase(destination);
      auto held = webhooks_held_.find(d.webhook->id);
      if (held != webhooks_held_.end() && --held->second.held == 0) webhooks_held_.erase(held);
    }
  }
  done_.push_back(Finished{std::move(d), attempt, outcome, std::move(outcome_name)});
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
