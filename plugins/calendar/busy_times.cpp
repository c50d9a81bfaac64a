#include "busy_times.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "json_fields.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::calendar {
namespace {

constexpr size_t kMaxFreeBusyItems = 50;

// dateFrom/dateTo: a date (YYYY-MM-DD, in `zone`; dateTo's whole day is included) or an RFC 3339
// timestamp.
std::optional<time::Millis> ParseBound(const std::string& text, const time::Zone& zone, bool end) {
  if (auto d = time::ParseDate(text)) {
    time::CivilDate day = *d;
    if (end) day = time::CivilFromDays(time::DaysFromCivil(day) + 1);
    return zone.StartOfDay(day);
  }
  std::string fixed = text;
  // RFC 3339 also allows a lower-case 't' or a space between date and time.
  if (fixed.size() > 10 && (fixed[10] == 't' || fixed[10] == ' ')) fixed[10] = 'T';
  // An unencoded '+' of an offset arrives as a space after query decoding; take it back.
  const size_t space = fixed.find(' ', 11);
  if (space != std::string::npos) fixed[space] = '+';
  return time::ParseIso(fixed);
}

// Google's free/busy answer: {"calendars": {"<id>": {"busy": [{"start", "end"}, ..]}, ..}}.
void AddGoogleBusy(const Json& answer, int64_t credential_id, std::vector<BusyPeriod>& busy) {
  if (!answer.contains("calendars") || !answer["calendars"].is_object()) return;
  for (const auto& [id, entry] : answer["calendars"].items()) {
    if (!entry.is_object() || !entry.contains("busy") || !entry["busy"].is_array()) continue;
    for (const Json& b : entry["busy"]) {
      auto s = time::ParseIso(StringField(b, "start"));
      auto e = time::ParseIso(StringField(b, "end"));
      if (!s || !e || *e <= *s) continue;
      busy.push_back(BusyPeriod{*s, *e, "google_calendar", credential_id, id});
    }
  }
}

void SortPeriods(std::vector<BusyPeriod>& busy) {
  std::sort(busy.begin(), busy.end(), [](const BusyPeriod& a, const BusyPeriod& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
}

}  // namespace

std::string BusyFailureCode(const Status& s) {
  if (!s.reason().empty()) return s.reason();
  return s.code() == ErrorCode::kUpstreamTimeout ? "gateway_timeout" : "bad_gateway";
}

BusyTimes::BusyTimes(Database& db, Logger& logger, const GoogleApi& google, const CalendarOptions& options,
                     GoogleCredentials& credentials, CalendarList& calendars, IcsFetcher& fetcher,
                     BusyCache& busy_cache, MemoryTrimmer& trimmer, CalendarMetrics& metrics)
    : db_(db),
      logger_(logger),
      google_(google),
      options_(options),
      credentials_(credentials),
      calendars_(calendars),
      fetcher_(fetcher),
      busy_cache_(busy_cache),
      trimmer_(trimmer),
      metrics_(metrics) {}

Result<std::string> BusyTimes::Answer(int64_t user_id, const std::optional<std::string>& date_from,
                                      const std::optional<std::string>& date_to,
                                      const std::optional<std::string>& time_zone) {
  std::optional<time::Zone> zone = time::Zone::Utc();
  if (time_zone && !time_zone->empty()) {
    zone = time::Zone::Find(*time_zone);
    if (!zone) return Status::Invalid("timeZone", "timeZone is not a known IANA time zone");
  }
  if (!date_from || date_from->empty())
    return Status::Invalid("dateFrom", "dateFrom is required (YYYY-MM-DD or ISO 8601)");
  if (!date_to || date_to->empty()) return Status::Invalid("dateTo", "dateTo is required (YYYY-MM-DD or ISO 8601)");
  auto from = ParseBound(*date_from, *zone, false);
  if (!from) return Status::Invalid("dateFrom", "dateFrom must be YYYY-MM-DD or an ISO 8601 timestamp with offset");
  auto to = ParseBound(*date_to, *zone, true);
  if (!to) return Status::Invalid("dateTo", "dateTo must be YYYY-MM-DD or an ISO 8601 timestamp with offset");
  if (*to <= *from) return Status::Invalid("dateTo", "dateTo must be after dateFrom");
  if (*to - *from > kMaxBusyRangeSeconds * 1000) return Status::Invalid("dateTo", "the range may span at most 93 days");

  const CollectedBusy busy = CollectBusy(user_id, *from, *to, *zone, kRequestBudget);
  // With nothing answered there is nothing to show: the (first) failure is the answer.
  if (!busy.failures.empty() && busy.failures.size() == busy.sources) return busy.failures.front().status;
  // Written straight out: an answer may hold tens of thousands of periods, and a JSON value per
  // period would take several times the text's memory.
  std::string body = "{\"status\":\"success\",\"data\":[";
  // Reserved once: an ICS period takes about 100 bytes, and a string that outgrows its reservation
  // doubles (twice the answer's memory for as long as it is sent).
  size_t expected = body.size() + 2 + 4096;
  for (const BusyPeriod& b : busy.periods) expected += 112 + b.external_id.size() * 2;
  body.reserve(expected);
  bool first = true;
  for (const BusyPeriod& b : busy.periods) {
    body += first ? "{\"start\":\"" : ",{\"start\":\"";
    first = false;
    body += time::FormatIsoSeconds(std::max(b.start, *from));
    body += "\",\"end\":\"";
    body += time::FormatIsoSeconds(std::min(b.end, *to));
    body += "\",\"source\":";
    body += Json(b.source).dump();
    body += ",\"credentialId\":";
    body += std::to_string(b.source_id);
    if (!b.external_id.empty()) {
      body += ",\"externalId\":";
      body += Json(b.external_id).dump(-1, ' ', false, Json::error_handler_t::replace);
    }
    body += '}';
  }
  body += ']';
  if (!busy.failures.empty()) {
    Json failed = Json::array();
    for (const BusySourceError& f : busy.failures) {
      failed.push_back({{"source", f.source},
                        {"credentialId", f.source_id},
                        {"code", BusyFailureCode(f.status)},
                        {"message", f.status.message()}});
    }
    body += ",\"failedSources\":" + failed.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  body += '}';
  // The periods and this answer (freed once sent) are large work too.
  trimmer_.Note(body.size() + busy.periods.size() * sizeof(BusyPeriod));
  return body;
}

CollectedBusy BusyTimes::SlotBusy(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone) {
  const auto now = BusyCache::Clock::now();
  if (std::optional<CollectedBusy> cached = busy_cache_.Fresh(user_id, from, to, now)) return *cached;
  // Called on the API's request threads: the refreshes run on the plugin's own pool, and only a
  // few requests at once wait for them (briefly); the others answer with what is known.
  struct WaitSlot {
    std::atomic<int>& waiters;
    const bool held;
    explicit WaitSlot(std::atomic<int>& w) : waiters(w), held(w.fetch_add(1) < kMaxSlotWaiters) {}
    ~WaitSlot() { waiters.fetch_sub(1); }
  } slot(slot_waiters_);
  Waits w;
  w.max_wait = std::min(std::chrono::milliseconds(options_.busy_timeout), kSlotWait);
  w.deadline = now + (slot.held ? w.max_wait : std::chrono::milliseconds(0));
  w.fresh = options_.busy_cache_fresh;
  w.refresh_budget = options_.busy_timeout;
  w.expand_by = now + options_.busy_timeout;
  w.shared_google = true;
  w.stand_ins = true;
  CollectedBusy busy = Collect(user_id, from, to, zone, w);
  // What a failing source said last stands in for it; it stays named as failed.
  std::map<std::pair<std::string, int64_t>, BusyCache::Clock::time_point> stand_ins;
  for (const BusySourceError& f : busy.failures) {
    if (f.stood_in) continue;
    std::optional<BusyCache::Known> last = busy_cache_.LastKnown(user_id, f.source, f.source_id, from, to, now);
    if (!last) continue;
    busy.periods.insert(busy.periods.end(), last->periods.begin(), last->periods.end());
    stand_ins[{f.source, f.source_id}] = last->said_at;
  }
  if (!stand_ins.empty()) SortPeriods(busy.periods);
  // An answer made while a refresh still runs is not kept: the next request gets the refresh's.
  if (!busy.pending) busy_cache_.Put(user_id, from, to, busy, now, stand_ins);
  return busy;
}

void BusyTimes::Failed(int64_t user_id, BusySourceError failure, CollectedBusy& out) {
  const std::string code = BusyFailureCode(failure.status);
  logger_.Warn("a busy-time source could not be read; its busy times are left out",
               {{"user_id", user_id},
                {"source", failure.source},
                {"source_id", failure.source_id},
                {"code", code},
                {"error", failure.status.message()}});
  metrics_.BusySourceFailed(failure.source, code);
  out.failures.push_back(std::move(failure));
}

CollectedBusy BusyTimes::CollectBusy(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone,
                                     std::chrono::milliseconds budget) {
  Waits w;
  w.deadline = std::chrono::steady_clock::now() + budget;
  w.max_wait = budget;
  w.fresh = std::chrono::seconds(0);  // asked directly: every feed is asked again (conditionally)
  w.refresh_budget = budget;
  w.expand_by = w.deadline;
  return Collect(user_id, from, to, zone, w);
}

CollectedBusy BusyTimes::Collect(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone,
                                 const Waits& w) {
  CollectedBusy out;
  if (w.shared_google)
    CollectSharedGoogleBusy(user_id, from, to, w, out);
  else
    CollectGoogleBusy(user_id, from, to, w.deadline, out);
  CollectIcsBusy(user_id, from, to, zone, w, out);
  SortPeriods(out.periods);
  return out;
}

void BusyTimes::CollectSharedGoogleBusy(int64_t user_id, time::Millis from, time::Millis to, const Waits& w,
                                        CollectedBusy& out) {
  const std::vector<GoogleCalendar> calendars = calendars_.LoadCalendars(user_id);
  if (calendars.empty()) return;
  ++out.sources;
  const int64_t credential_id = calendars.front().credential_id;
  auto not_yet = [&](const std::string& why) {
    out.failures.push_back({"google_calendar", credential_id, Status(ErrorCode::kUpstreamTimeout, why)});
    out.pending = true;
  };
  std::unique_lock<std::mutex> lock(google_mu_);
  // Bounded: each round waits for a refresh of another window or starts this window's own.
  for (int round = 0; round < 4; ++round) {
    std::shared_ptr<GoogleFlight>& running = google_flights_[user_id];
    std::shared_ptr<GoogleFlight> f = running;
    if (!f) {
      f = std::make_shared<GoogleFlight>();
      f->started = std::chrono::steady_clock::now();
      f->from = from;
      f->to = to;
      running = f;
      lock.unlock();
      const bool started = refresh_pool_.Submit([this, user_id, f] {
        CollectedBusy got;
        try {
          CollectGoogleBusy(user_id, f->from, f->to, f->started + options_.busy_timeout, got);
        } catch (const std::exception& e) {
          got.failures.push_back(
              {"google_calendar", 0, Status(ErrorCode::kUpstreamFailed, std::string("Google was not asked: ") + e.what())});
        }
        {
          std::lock_guard<std::mutex> done_lock(google_mu_);
          f->busy = std::move(got);
          f->done = true;
          auto it = google_flights_.find(user_id);
          if (it != google_flights_.end() && it->second == f) google_flights_.erase(it);
        }
        google_cv_.notify_all();
      });
      lock.lock();
      if (!started) {
        auto it = google_flights_.find(user_id);
        if (it != google_flights_.end() && it->second == f) google_flights_.erase(it);
        return not_yet("Google was not asked: too many calendars are being read at once");
      }
    }
    const Deadline until = std::min(w.deadline, f->started + w.max_wait);
    google_cv_.wait_until(lock, until, [&] { return f->done; });
    if (!f->done) return not_yet("Google did not answer in time");
    if (f->from <= from && to <= f->to) {
      for (const BusyPeriod& p : f->busy.periods) {
        if (p.start < to && p.end > from) out.periods.push_back(p);
      }
      for (BusySourceError e : f->busy.failures) {
        if (e.source_id == 0) e.source_id = credential_id;
        out.failures.push_back(std::move(e));
      }
      return;
    }
    if (std::chrono::steady_clock::now() >= until) break;
  }
  not_yet("Google did not answer in time");
}

void BusyTimes::CollectGoogleBusy(int64_t user_id, time::Millis from, time::Millis to, Deadline deadline,
                                  CollectedBusy& out) {
  const std::vector<GoogleCalendar> calendars = calendars_.LoadCalendars(user_id);
  if (calendars.empty()) return;
  ++out.sources;
  const int64_t credential_id = calendars.front().credential_id;
  auto loaded = credentials_.Load(user_id);
  if (!loaded.ok()) return Failed(user_id, {"google_calendar", credential_id, loaded.status()}, out);
  std::optional<GoogleCredential>& cred = *loaded;
  if (!cred) return;  // disconnected meanwhile
  Json items = Json::array();
  for (const GoogleCalendar& c : calendars) {
    if (items.size() >= kMaxFreeBusyItems) break;
    items.push_back({{"id", c.external_id}});
  }
  const Json body = {{"timeMin", time::FormatIsoSeconds(from)},
                     {"timeMax", time::FormatIsoSeconds(to)},
                     {"timeZone", "UTC"},
                     {"items", items}};
  auto call = credentials_.WithGoogle(*cred, [&](const std::string& token) {
    const std::chrono::milliseconds left = IcsFetcher::TimeLeft(deadline);
    if (left.count() == 0) {
      GoogleCall none;
      none.transport = FetchOutcome::kTimeout;
      none.transport_error = "no time was left to ask";
      return none;
    }
    return google_.FreeBusy(token, body, left);
  });
  if (!call.ok()) return Failed(user_id, {"google_calendar", cred->id, call.status()}, out);
  if (!call->ok()) return Failed(user_id, {"google_calendar", cred->id, GoogleFailure(*call, "the free/busy query")}, out);
  AddGoogleBusy(call->body, cred->id, out.periods);
}

IcsFeedCache::Download BusyTimes::RefreshFeed(int64_t user_id, int64_t feed_id, const std::string& url,
                                              const std::optional<IcsFeedCache::Validators>& validators,
                                              Deadline deadline) {
  IcsFeedCache::Download out;
  const std::chrono::milliseconds timeout = IcsFetcher::TimeLeft(deadline);
  if (timeout.count() == 0) {
    out.failure = Status(ErrorCode::kUpstreamTimeout, "was not asked: no time was left");
  } else {
    IcsDownload d = fetcher_.FetchFeed(url, timeout, validators ? &*validators : nullptr);
    const FetchResult& r = d.fetch;
    if (d.not_modified) {
      out.kind = IcsFeedCache::Download::Kind::kNotModified;
      return out;
    }
    if (d.calendar) {
      out.kind = IcsFeedCache::Download::Kind::kParsed;
      out.calendar = std::make_shared<const CompactIcs>(CompactIcsCalendar(std::move(*d.calendar)));
      out.bytes = d.bytes;
      out.held_bytes = HeldBytes(*out.calendar);
      out.validators = {r.Header("etag"), r.Header("last-modified")};
      return out;
    }
    out.failure = r.outcome == FetchOutcome::kTimeout || d.parse_timed_out
                      ? Status(ErrorCode::kUpstreamTimeout, "did not answer in time")
                      : Status(ErrorCode::kUpstreamFailed,
                               "could not be read: " +
                                   (!r.ok() ? r.error : r.status != 200 ? "HTTP " + std::to_string(r.status) : d.why));
  }
  // Logged and counted once per attempt, whoever waits for it.
  CollectedBusy scratch;
  Failed(user_id,
         {"ics_feed", feed_id, Status(out.failure.code(), "the ICS feed " + std::to_string(feed_id) + " " + out.failure.message())},
         scratch);
  return out;
}

void BusyTimes::CollectIcsBusy(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone,
                               const Waits& w, CollectedBusy& out) {
  struct Feed {
    int64_t id;
    std::string url_enc;
  };
  std::vector<Feed> feeds = db_.Run([&](DbConnection& c) {
    std::vector<Feed> found;
    for (const DbRow& r : c.Query("SELECT id, url_enc FROM calendar_ics_feeds WHERE user_id = ? ORDER BY id", {user_id}))
      found.push_back(Feed{r.Int(1), r.String(2)});
    return found;
  });
  // Every refresh needed is started first, so that they run side by side; then each is waited for.
  struct Wanted {
    int64_t id;
    IcsFeedCache::Ticket ticket;
  };
  std::vector<Wanted> wanted;
  size_t user_bytes_left = kMaxIcsBytesPerUser;
  for (const Feed& f : feeds) {
    ++out.sources;
    auto failed = [&](Status s) { Failed(user_id, {"ics_feed", f.id, s.WithDetails(Json{{"credentialId", f.id}})}, out); };
    const std::string feed = "the ICS feed " + std::to_string(f.id);
    if (Status s = RequireEncryption(options_.encryption_key); !s.ok()) {
      failed(s);
      continue;
    }
    auto url = crypto::Decrypt(options_.encryption_key, f.url_enc);
    if (!url.ok()) {
      failed(ReconnectRequired(feed + " cannot be read any more; save it again"));
      continue;
    }
    const std::string key = crypto::Sha256Hex(*url);
    const size_t bytes = feed_cache_.KnownBytes(key).value_or(kMaxIcsBytes);
    if (bytes > user_bytes_left) {
      Status over(ErrorCode::kUpstreamFailed, feed + " was left out: this user's feeds together are larger than " +
                                                  std::to_string(kMaxIcsBytesPerUser >> 20) + " MiB");
      // Logged when the user asks; a public page asking again and again only names it.
      if (w.stand_ins)
        out.failures.push_back({"ics_feed", f.id, std::move(over).WithDetails(Json{{"credentialId", f.id}})});
      else
        failed(std::move(over));
      continue;
    }
    user_bytes_left -= bytes;
    const int64_t feed_id = f.id;
    wanted.push_back(Wanted{
        f.id, feed_cache_.Start(key, w.fresh, w.refresh_budget,
                                [this, user_id, feed_id, u = *url](const std::optional<IcsFeedCache::Validators>& v,
                                                                    Deadline deadline) {
                                  return RefreshFeed(user_id, feed_id, u, v, deadline);
                                })});
  }
  for (const Wanted& f : wanted) {
    IcsFeedCache::Answer a = feed_cache_.Await(f.ticket, w.deadline, w.max_wait);
    out.pending = out.pending || a.pending;
    const std::string feed = "the ICS feed " + std::to_string(f.id);
    // The deadline covers the expansion too: none starts after it.
    if (a.calendar && std::chrono::steady_clock::now() > w.expand_by) {
      out.failures.push_back({"ics_feed", f.id,
                              Status(ErrorCode::kUpstreamTimeout, feed + " was not read: no time was left")
                                  .WithDetails(Json{{"credentialId", f.id}})});
      out.pending = true;
      continue;
    }
    // Asked directly, a feed answers live or not at all: what it said before stands in for slots only.
    if (!w.stand_ins && (a.failure || a.pending)) a.calendar.reset();
    if (a.calendar) {
      // Sorted by start; overlapping intervals of the feed are one busy period.
      const size_t first = out.periods.size();
      for (const BusyInterval& b : IcsBusyTimes(*a.calendar, from, to, zone)) {
        if (out.periods.size() > first && b.start < out.periods.back().end) {
          out.periods.back().end = std::max(out.periods.back().end, b.end);
          continue;
        }
        out.periods.push_back(BusyPeriod{b.start, b.end, "ics_feed", f.id, ""});
      }
    }
    if (a.failure) {
      Status why(a.failure->code(), feed + " " + a.failure->message());
      out.failures.push_back(
          {"ics_feed", f.id, std::move(why).WithDetails(Json{{"credentialId", f.id}}), a.calendar != nullptr});
    }
  }
}

}  // namespace rendezvous::calendar
