#include <algorithm>
#include <map>

#include "calendar_service.hpp"
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

Result<Json> CalendarService::BusyTimes(int64_t user_id, const std::optional<std::string>& date_from,
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
  Json data = Json::array();
  for (const BusyPeriod& b : busy.periods) {
    Json item = {{"start", time::FormatIsoSeconds(std::max(b.start, *from))},
                 {"end", time::FormatIsoSeconds(std::min(b.end, *to))},
                 {"source", b.source},
                 {"credentialId", b.source_id}};
    if (!b.external_id.empty()) item["externalId"] = b.external_id;
    data.push_back(std::move(item));
  }
  Json out = {{"data", std::move(data)}};
  if (!busy.failures.empty()) {
    Json failed = Json::array();
    for (const BusySourceError& f : busy.failures) {
      failed.push_back({{"source", f.source},
                        {"credentialId", f.source_id},
                        {"code", BusyFailureCode(f.status)},
                        {"message", f.status.message()}});
    }
    out["failedSources"] = std::move(failed);
  }
  return out;
}

CollectedBusy CalendarService::SlotBusy(int64_t user_id, time::Millis from, time::Millis to,
                                        const time::Zone& zone) {
  const auto now = BusyCache::Clock::now();
  if (std::optional<CollectedBusy> cached = busy_cache_.Fresh(user_id, from, to, now)) return *cached;
  CollectedBusy busy = CollectBusy(user_id, from, to, zone, options_.busy_timeout);
  // What a failing source said last stands in for it; it stays named as failed.
  std::map<std::pair<std::string, int64_t>, BusyCache::Clock::time_point> stand_ins;
  for (const BusySourceError& f : busy.failures) {
    std::optional<BusyCache::Known> last = busy_cache_.LastKnown(user_id, f.source, f.source_id, from, to, now);
    if (!last) continue;
    busy.periods.insert(busy.periods.end(), last->periods.begin(), last->periods.end());
    stand_ins[{f.source, f.source_id}] = last->said_at;
  }
  if (!stand_ins.empty()) SortPeriods(busy.periods);
  busy_cache_.Put(user_id, from, to, busy, now, stand_ins);
  return busy;
}

void CalendarService::Failed(int64_t user_id, BusySourceError failure, CollectedBusy& out) {
  const std::string code = BusyFailureCode(failure.status);
  logger_.Warn("a busy-time source could not be read; its busy times are left out",
               {{"user_id", user_id},
                {"source", failure.source},
                {"source_id", failure.source_id},
                {"code", code},
                {"error", failure.status.message()}});
  if (on_busy_failure_) on_busy_failure_(failure.source, code);
  out.failures.push_back(std::move(failure));
}

CollectedBusy CalendarService::CollectBusy(int64_t user_id, time::Millis from, time::Millis to,
                                           const time::Zone& zone, std::chrono::milliseconds budget) {
  const Deadline deadline = std::chrono::steady_clock::now() + budget;
  CollectedBusy out;
  CollectGoogleBusy(user_id, from, to, deadline, out);
  CollectIcsBusy(user_id, from, to, zone, deadline, out);
  SortPeriods(out.periods);
  return out;
}

void CalendarService::CollectGoogleBusy(int64_t user_id, time::Millis from, time::Millis to, Deadline deadline,
                                        CollectedBusy& out) {
  const std::vector<GoogleCalendar> calendars = LoadCalendars(user_id);
  if (calendars.empty()) return;
  ++out.sources;
  const int64_t credential_id = calendars.front().credential_id;
  auto loaded = LoadCredential(user_id);
  if (!loaded.ok()) return Failed(user_id, {"google_calendar", credential_id, loaded.status()}, out);
  std::optional<Credential>& cred = *loaded;
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
  auto call = WithGoogle(*cred, [&](const std::string& token) {
    const std::chrono::milliseconds left = IcsTimeLeft(deadline);
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

void CalendarService::CollectIcsBusy(int64_t user_id, time::Millis from, time::Millis to, const time::Zone& zone,
                                     Deadline deadline, CollectedBusy& out) {
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
  for (const Feed& f : feeds) {
    ++out.sources;
    const std::string feed = "the ICS feed " + std::to_string(f.id);
    if (Status s = RequireEncryption(); !s.ok()) {
      Failed(user_id, {"ics_feed", f.id, s}, out);
      continue;
    }
    const std::chrono::milliseconds timeout = IcsTimeLeft(deadline);
    if (timeout.count() == 0) {
      Failed(user_id, {"ics_feed", f.id, Status(ErrorCode::kUpstreamTimeout, feed + " was not asked: no time was left")},
             out);
      continue;
    }
    auto url = crypto::Decrypt(options_.encryption_key, f.url_enc);
    if (!url.ok()) {
      Failed(user_id, {"ics_feed", f.id, ReconnectRequired(feed + " cannot be read any more; save it again")}, out);
      continue;
    }
    const IcsDownload d = FetchIcs(*url, timeout);
    if (!d.calendar) {
      const FetchResult& r = d.fetch;
      Status why = r.outcome == FetchOutcome::kTimeout
                       ? Status(ErrorCode::kUpstreamTimeout, feed + " did not answer in time")
                       : Status(ErrorCode::kUpstreamFailed,
                                feed + " could not be read: " +
                                    (!r.ok() ? r.error : r.status != 200 ? "HTTP " + std::to_string(r.status) : d.why));
      Failed(user_id, {"ics_feed", f.id, why.WithDetails(Json{{"credentialId", f.id}})}, out);
      continue;
    }
    for (const BusyInterval& b : IcsBusyTimes(*d.calendar, from, to, zone))
      out.periods.push_back(BusyPeriod{b.start, b.end, "ics_feed", f.id, ""});
  }
}

}  // namespace rendezvous::calendar
