#include <algorithm>

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

}  // namespace

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

  Result<std::vector<BusyPeriod>> busy = CollectBusy(user_id, *from, *to, *zone);
  if (!busy.ok()) return busy.status();
  Json out = Json::array();
  for (const BusyPeriod& b : *busy) {
    Json item = {{"start", time::FormatIsoSeconds(std::max(b.start, *from))},
                 {"end", time::FormatIsoSeconds(std::min(b.end, *to))},
                 {"source", b.source},
                 {"credentialId", b.credential_id}};
    if (!b.external_id.empty()) item["externalId"] = b.external_id;
    out.push_back(std::move(item));
  }
  return out;
}

bool CalendarService::HasBusySources(int64_t user_id) {
  return db_.Run([&](DbConnection& c) {
    std::optional<DbRow> row = c.QueryOne(
        "SELECT EXISTS(SELECT 1 FROM calendar_google_calendars WHERE user_id = ?)"
        " OR EXISTS(SELECT 1 FROM calendar_ics_feeds WHERE user_id = ?)",
        {user_id, user_id});
    return row && row->Bool(1);
  });
}

Result<std::vector<BusyPeriod>> CalendarService::CollectBusy(int64_t user_id, time::Millis from, time::Millis to,
                                                            const time::Zone& zone) {
  std::vector<BusyPeriod> busy;
  const std::vector<GoogleCalendar> calendars = LoadCalendars(user_id);
  if (!calendars.empty()) {
    auto loaded = LoadCredential(user_id);
    if (!loaded.ok()) return loaded.status();
    std::optional<Credential>& cred = *loaded;
    if (cred) {
      Json items = Json::array();
      for (const GoogleCalendar& c : calendars) {
        if (items.size() >= kMaxFreeBusyItems) break;
        items.push_back({{"id", c.external_id}});
      }
      const Json body = {{"timeMin", time::FormatIsoSeconds(from)},
                         {"timeMax", time::FormatIsoSeconds(to)},
                         {"timeZone", "UTC"},
                         {"items", items}};
      auto call = WithGoogle(*cred, [&](const std::string& token) { return google_.FreeBusy(token, body); });
      if (!call.ok()) return call.status();
      if (!call->ok()) return GoogleFailure(*call, "the free/busy query");
      AddGoogleBusy(call->body, cred->id, busy);
    }
  }

  struct Feed {
    int64_t id;
    std::string url_enc;
  };
  std::vector<Feed> feeds = db_.Run([&](DbConnection& c) {
    std::vector<Feed> out;
    for (const DbRow& r : c.Query("SELECT id, url_enc FROM calendar_ics_feeds WHERE user_id = ? ORDER BY id", {user_id}))
      out.push_back(Feed{r.Int(1), r.String(2)});
    return out;
  });
  const Deadline deadline = IcsDeadline();
  for (const Feed& f : feeds) {
    if (Status s = RequireEncryption(); !s.ok()) return s;
    const std::chrono::milliseconds timeout = IcsTimeLeft(deadline);
    if (timeout.count() == 0)
      return Status(ErrorCode::kUpstreamTimeout, "the ICS feeds took too long to download")
          .WithDetails(Json{{"credentialId", f.id}});
    auto url = crypto::Decrypt(options_.encryption_key, f.url_enc);
    if (!url.ok())
      return Status::Conflict("a stored ICS feed cannot be read; save it again").WithReason("reconnect_required");
    const IcsDownload d = FetchIcs(*url, timeout);
    if (!d.calendar) {
      const FetchResult& r = d.fetch;
      if (r.outcome == FetchOutcome::kTimeout)
        return Status(ErrorCode::kUpstreamTimeout, "the ICS feed " + std::to_string(f.id) + " did not answer in time");
      std::string detail = !r.ok() ? r.error : r.status != 200 ? "HTTP " + std::to_string(r.status) : d.why;
      return Status(ErrorCode::kUpstreamFailed, "the ICS feed " + std::to_string(f.id) + " could not be read: " + detail)
          .WithDetails(Json{{"credentialId", f.id}});
    }
    for (const BusyInterval& b : IcsBusyTimes(*d.calendar, from, to, zone))
      busy.push_back(BusyPeriod{b.start, b.end, "ics_feed", f.id, ""});
  }

  std::sort(busy.begin(), busy.end(), [](const BusyPeriod& a, const BusyPeriod& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  return busy;
}

}  // namespace rendezvous::calendar
