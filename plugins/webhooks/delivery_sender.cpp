#include "delivery_sender.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <mutex>
#include <random>

#include "address_guard.hpp"
#include "retry_policy.hpp"
#include "rendezvous/net.hpp"
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
// Round()'s answer when its transaction failed.
constexpr size_t kRoundFailed = static_cast<size_t>(-1);
// Easy handles kept for reuse once their transfer is done.
constexpr size_t kMaxIdleHandles = 64;

double RandomUnit() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

int64_t UnixSeconds() { return time::Now() / 1000; }

constexpr std::chrono::seconds kHousekeepingInterval{1};
constexpr size_t kPurgeBatch = 1000;
constexpr int kPurgeBatchesPerRound = 20;

// Where a delivery goes: "host:port", "" when its webhook is gone or its URL does not parse.
std::string Destination(const ClaimedDelivery& d) {
  if (!d.webhook) return "";
  Result<SubscriberUrl> url = ParseSubscriberUrl(d.webhook->subscriber_url);
  return url.ok() ? url->host + ":" + std::to_string(url->port) : "";
}

// Everything a delivery request carries (DESIGN §6) but its answer's callbacks: the signature
// headers, the checked address pinned for a host name, no redirects, no proxy, the timeout.
void SetUpRequest(CURL* e, const Webhook& hook, const std::string& message_id, const std::string& body,
                  const std::string& content_type, const SubscriberUrl& url, const std::string& address,
                  const SenderOptions& options, curl_slist*& headers, curl_slist*& resolve) {
  const int64_t timestamp = UnixSeconds();
  headers = curl_slist_append(headers, ("Content-Type: " + content_type).c_str());
  headers = curl_slist_append(headers, ("webhook-id: " + message_id).c_str());
  headers = curl_slist_append(headers, ("webhook-timestamp: " + std::to_string(timestamp)).c_str());
  if (hook.secret) {
    // During a rotation's grace the old secret signs too: Standard Webhooks receivers accept any
    // one of several space-separated signatures.
    std::string signature = StandardWebhookSignature(*hook.secret, message_id, timestamp, body);
    if (hook.previous_secret) {
      signature += " " + StandardWebhookSignature(*hook.previous_secret, message_id, timestamp, body);
    }
    headers = curl_slist_append(headers, ("webhook-signature: " + signature).c_str());
    headers = curl_slist_append(headers, ("X-Cal-Signature-256: " + CalSignature(*hook.secret, body)).c_str());
  }
  headers = curl_slist_append(headers, "X-Cal-Webhook-Version: 2021-10-20");
  headers = curl_slist_append(headers, "Expect:");
  // HTTP/1.1 keeps connections open by default, but some servers (Pistache among them) close
  // after every answer unless the request asks for keep-alive.
  headers = curl_slist_append(headers, "Connection: keep-alive");
  if (!net::IsAddressLiteral(url.host)) {  // a name: pin it to the checked address
    resolve = curl_slist_append(resolve, net::CurlResolveEntry(url.host, url.port, address).c_str());
    curl_easy_setopt(e, CURLOPT_RESOLVE, resolve);
  }
  curl_easy_setopt(e, CURLOPT_URL, hook.subscriber_url.c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(e, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(e, CURLOPT_POST, 1L);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_PROXY, "");
  curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout.count() * 1000));
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.timeout.count() * 1000));
}

}  // namespace

struct DeliverySender::Transfer {
  ClaimedDelivery delivery;
  std::string destination;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  curl_slist* resolve = nullptr;
  std::string response;
  size_t received = 0;
  std::string retry_after;
  char error[CURL_ERROR_SIZE] = {0};
  int64_t started_ms = 0;
  std::chrono::steady_clock::time_point started;

  ~Transfer() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
    curl_slist_free_all(resolve);
  }

  static size_t OnBody(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t len = size * n;
    t->received += len;
    if (t->received > kMaxResponseBytes) return 0;
    if (t->response.size() < kMaxResponseExcerpt) {
      t->response.append(data, std::min(len, kMaxResponseExcerpt - t->response.size()));
    }
    return len;
  }
  static size_t OnHeader(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const std::string_view line(data, size * n);
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos && text::EqualsIgnoreCase(text::Trim(line.substr(0, colon)), "retry-after")) {
      t->retry_after = std::string(text::Trim(line.substr(colon + 1)));
    }
    return size * n;
  }
};

DeliverySender::DeliverySender(Database& db, DeliveryQueue& queue, Logger& logger, SenderOptions options,
                               SenderHooks hooks)
    : db_(db), queue_(queue), logger_(logger), options_(std::move(options)), hooks_(std::move(hooks)) {
  static std::once_flag curl_once;
  std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  multi_ = curl_multi_init();
  // Without a fixed size the connection cache follows the number of transfers open (four per
  // transfer), so it shrinks, closing receivers' connections, each time the transfers drain.
  if (multi_ != nullptr) {
    curl_multi_setopt(static_cast<CURLM*>(multi_), CURLMOPT_MAXCONNECTS, static_cast<long>(options_.max_in_flight));
  }
}

DeliverySender::~DeliverySender() {
  Stop();
  for (void* e : idle_handles_) curl_easy_cleanup(static_cast<CURL*>(e));
  if (multi_ != nullptr) curl_multi_cleanup(static_cast<CURLM*>(multi_));
}

void DeliverySender::Start() {
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void DeliverySender::Stop() noexcept {
  stopping_ = true;
  if (multi_ != nullptr) curl_multi_wakeup(static_cast<CURLM*>(multi_));
  if (thread_.joinable()) thread_.join();
  for (auto& t : in_flight_) curl_multi_remove_handle(static_cast<CURLM*>(multi_), t->easy);
  in_flight_.clear();
  per_host_.clear();
  waiting_.clear();
}

void DeliverySender::Wake() noexcept {
  woken_ = true;
  if (multi_ != nullptr) curl_multi_wakeup(static_cast<CURLM*>(multi_));
}

void DeliverySender::Loop() {
  auto* multi = static_cast<CURLM*>(multi_);
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
    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                             [&](const std::unique_ptr<Transfer>& t) { return t->easy == msg->easy_handle; });
      if (it == in_flight_.end()) continue;
      std::unique_ptr<Transfer> done = std::move(*it);
      in_flight_.erase(it);
      if (--per_host_[done->destination] == 0) per_host_.erase(done->destination);
      const int code = msg->data.result;
      curl_multi_remove_handle(multi, done->easy);
      Finish(*done, code);
      Recycle(*done);
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
    curl_multi_poll(multi, nullptr, 0, static_cast<int>(wait), nullptr);
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
  for (const auto& t : in_flight_) {
    if (t->delivery.webhook && full(t->destination)) busy.push_back(t->delivery.webhook->id);
  }
  for (const auto& [d, claimed] : waiting_) {
    if (d.webhook) busy.push_back(d.webhook->id);
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
  try {
    round = queue_.RecordAndClaim(db_, batch, options_.disable_after_seconds, hooks_.notify_owner, limit,
                                  2 * static_cast<int64_t>(options_.timeout.count()) + kLeaseSlackSeconds,
                                  limit > 0 ? BusyWebhooks() : std::vector<int64_t>{});
    ok = true;
  } catch (const std::exception& e) {
    // The leases run out and the deliveries are sent again, with the same webhook-ids.
    logger_.Warn("webhook deliveries could not be recorded and claimed",
                 {{"attempts", static_cast<int64_t>(finished_.size())}, {"error", e.what()}});
  }
  Report(ok, round.disabled);
  if (!ok) return kRoundFailed;
  const size_t got = round.claimed.size();
  const auto now = std::chrono::steady_clock::now();
  for (ClaimedDelivery& d : round.claimed) waiting_.emplace_back(std::move(d), now);
  StartWaiting();
  return got;
}

void DeliverySender::StartWaiting() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (now - it->second > options_.timeout + std::chrono::seconds(kLeaseSlackSeconds) - kStartMargin) {
      it = waiting_.erase(it);  // its lease runs out and it is claimed again
      continue;
    }
    const std::string destination = Destination(it->first);
    auto open = per_host_.find(destination);
    if (!destination.empty() && open != per_host_.end() && open->second >= options_.max_per_host) {
      ++it;
      continue;
    }
    ClaimedDelivery d = std::move(it->first);
    it = waiting_.erase(it);
    Begin(std::move(d));
  }
}

void DeliverySender::Begin(ClaimedDelivery d) {
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
  Result<SubscriberUrl> url = ParseSubscriberUrl(w.subscriber_url);
  if (!url.ok()) {
    attempt.error = url.status().message();
    Complete(std::move(d), attempt, Outcome{Outcome::kFailed}, "failed");
    return;
  }
  // Checked again at every send (DNS may have changed since create), and the connection goes to
  // the address checked here.
  Result<std::string> address = CheckedAddress(*url, options_.allow_private_networks);
  if (!address.ok()) {
    attempt.error = address.status().message();
    // A name that does not resolve may resolve later; a refused address will not change.
    const bool unresolved = address.status().message().find("does not resolve") != std::string::npos;
    std::optional<int64_t> delay =
        unresolved ? NextDelayMillis(options_.retry_schedule, static_cast<size_t>(d.round_attempts) + 1, RandomUnit())
                   : std::nullopt;
    if (delay) {
      Complete(std::move(d), attempt, Outcome{Outcome::kRetryLater, *delay}, "retry");
    } else {
      Complete(std::move(d), attempt, Outcome{Outcome::kFailed}, "failed");
    }
    return;
  }

  auto t = std::make_unique<Transfer>();
  t->destination = url->host + ":" + std::to_string(url->port);
  t->delivery = std::move(d);
  if (!idle_handles_.empty()) {
    t->easy = static_cast<CURL*>(idle_handles_.back());
    idle_handles_.pop_back();
  } else {
    t->easy = curl_easy_init();
  }
  if (t->easy == nullptr) {
    logger_.Error("webhook delivery: no HTTP handle could be created");
    return;  // the lease runs out and the delivery is tried again
  }
  const ClaimedDelivery& cd = t->delivery;
  SetUpRequest(t->easy, *cd.webhook, cd.message_id, cd.body, cd.content_type, *url, *address, options_, t->headers,
               t->resolve);
  CURL* e = t->easy;
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Transfer::OnBody);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Transfer::OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
  t->started_ms = attempt.at_ms;
  t->started = std::chrono::steady_clock::now();
  if (curl_multi_add_handle(static_cast<CURLM*>(multi_), e) != CURLM_OK) {
    logger_.Error("webhook delivery: the request could not be started");
    return;
  }
  ++per_host_[t->destination];
  in_flight_.push_back(std::move(t));
}

void DeliverySender::Finish(Transfer& t, int curl_code) {
  Attempt attempt;
  attempt.at_ms = t.started_ms;
  attempt.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t.started).count();
  long status = 0;
  curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
  const auto code = static_cast<CURLcode>(curl_code);
  bool transport_retryable = false;
  if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && status > 0)) {
    attempt.status_code = status;
    attempt.response = text::SanitizeUtf8(t.response);
    if (status < 200 || status >= 300) attempt.error = "HTTP " + std::to_string(status);
  } else {
    status = 0;
    transport_retryable = code != CURLE_URL_MALFORMAT && code != CURLE_UNSUPPORTED_PROTOCOL;
    attempt.error = code == CURLE_OPERATION_TIMEDOUT ? "timed out"
                    : t.error[0] != '\0'             ? std::string(t.error)
                                                     : curl_easy_strerror(code);
  }
  Outcome outcome;
  std::string name;
  switch (Classify(status, transport_retryable)) {
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
      if (!t.retry_after.empty()) retry_after = ParseRetryAfter(t.retry_after, UnixSeconds());
      std::optional<int64_t> delay = NextDelayMillis(
          options_.retry_schedule, static_cast<size_t>(t.delivery.round_attempts) + 1, RandomUnit(), retry_after);
      outcome.kind = delay ? Outcome::kRetryLater : Outcome::kFailed;
      outcome.retry_in_ms = delay.value_or(0);
      name = delay ? "retry" : "failed";
      break;
    }
  }
  Complete(std::move(t.delivery), attempt, outcome, std::move(name));
}

void DeliverySender::Recycle(Transfer& t) {
  if (t.easy == nullptr || idle_handles_.size() >= kMaxIdleHandles) return;
  curl_easy_reset(t.easy);  // every option is set again by Begin; the multi handle keeps the connections
  idle_handles_.push_back(t.easy);
  t.easy = nullptr;
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

namespace {
struct Answer {
  std::string excerpt;
  size_t received = 0;
  static size_t OnBody(char* data, size_t size, size_t n, void* user) {
    auto* a = static_cast<Answer*>(user);
    const size_t len = size * n;
    a->received += len;
    if (a->received > kMaxResponseBytes) return 0;
    if (a->excerpt.size() < kMaxResponseExcerpt) {
      a->excerpt.append(data, std::min(len, kMaxResponseExcerpt - a->excerpt.size()));
    }
    return len;
  }
};
}  // namespace

Attempt SendNow(const Webhook& w, const std::string& message_id, const std::string& body,
                const std::string& content_type, const SenderOptions& options) {
  static std::once_flag curl_once;
  std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  Attempt attempt;
  attempt.at_ms = time::Now();
  if (w.secret_unreadable) {
    attempt.error = "the webhook's secret cannot be decrypted with the server's current key";
    return attempt;
  }
  Result<SubscriberUrl> url = ParseSubscriberUrl(w.subscriber_url);
  if (!url.ok()) {
    attempt.error = url.status().message();
    return attempt;
  }
  Result<std::string> address = CheckedAddress(*url, options.allow_private_networks);
  if (!address.ok()) {
    attempt.error = address.status().message();
    return attempt;
  }
  CURL* e = curl_easy_init();
  if (e == nullptr) {
    attempt.error = "no HTTP handle could be created";
    return attempt;
  }
  curl_slist* headers = nullptr;
  curl_slist* resolve = nullptr;
  Answer answer;
  char error[CURL_ERROR_SIZE] = {0};
  SetUpRequest(e, w, message_id, body, content_type, *url, *address, options, headers, resolve);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Answer::OnBody);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, error);
  const auto started = std::chrono::steady_clock::now();
  const CURLcode code = curl_easy_perform(e);
  attempt.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  long status = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && status > 0)) {
    attempt.status_code = status;
    attempt.response = text::SanitizeUtf8(answer.excerpt);
    if (status < 200 || status >= 300) attempt.error = "HTTP " + std::to_string(status);
  } else {
    attempt.error = code == CURLE_OPERATION_TIMEDOUT ? "timed out"
                    : error[0] != '\0'              ? std::string(error)
                                                     : curl_easy_strerror(code);
  }
  curl_easy_cleanup(e);
  curl_slist_free_all(headers);
  curl_slist_free_all(resolve);
  return attempt;
}

}  // namespace rendezvous::webhooks
