#include "ics_feeds.hpp"

#include <set>

#include "rendezvous/crypto.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/time.hpp"
#include "url_policy.hpp"

namespace rendezvous::calendar {

IcsFeeds::IcsFeeds(Database& db, const CalendarOptions& options, IcsFetcher& fetcher, CalendarList& calendars,
                   BusyCache& busy_cache)
    : db_(db),
      encryption_key_(options.encryption_key),
      allow_private_networks_(options.ics_allow_private_networks),
      fetcher_(fetcher),
      calendars_(calendars),
      busy_cache_(busy_cache) {}

Result<Json> IcsFeeds::Save(int64_t user_id, const Json& body) {
  if (Status s = RequireEncryption(encryption_key_); !s.ok()) return s;
  if (!body.contains("urls") || !body["urls"].is_array() || body["urls"].empty())
    return Status::Invalid("urls", "urls must be a non-empty list of https URLs");
  const Json& urls = body["urls"];
  if (urls.size() > kMaxIcsUrlsPerRequest) return Status::Invalid("urls", "at most 10 urls per request");
  bool read_only = true;
  if (body.contains("readOnly")) {
    if (!body["readOnly"].is_boolean()) return Status::Invalid("readOnly", "readOnly must be a boolean");
    read_only = body["readOnly"].get<bool>();
  }
  struct Fetched {
    std::string url, name, time_zone;
  };
  std::vector<Fetched> fetched;
  std::set<std::string> seen;
  const Deadline deadline = std::chrono::steady_clock::now() + kRequestBudget;
  for (size_t i = 0; i < urls.size(); ++i) {
    const std::string field = "urls[" + std::to_string(i) + "]";
    if (!urls[i].is_string()) return Status::Invalid(field, "each url must be a string");
    const std::string url = urls[i].get<std::string>();
    if (url.empty() || url.size() > kMaxUrlLength || HasControlOrSpace(url))
      return Status::Invalid(field, "the url is empty, too long or contains spaces");
    auto parsed = ParseFeedUrl(url);
    if (!parsed) return Status::Invalid(field, "the url must be an absolute https URL without credentials");
    if (parsed->scheme != "https" &&
        !(parsed->scheme == "http" && allow_private_networks_ && IsLoopbackHost(parsed->host)))
      return Status::Invalid(field, "the url must use https");
    if (const std::string why = NonPublicLiteral(parsed->host); !why.empty() && !allow_private_networks_)
      return Status::Invalid(field, "the url must not point to a private or otherwise non-public address (" +
                                        parsed->host + " is " + why + ")");
    if (!seen.insert(url).second) continue;
    const std::chrono::milliseconds timeout = IcsFetcher::TimeLeft(deadline);
    if (timeout.count() == 0)
      return Status::Invalid(field, "the feeds took too long to download; save fewer at once");
    const IcsDownload d = fetcher_.FetchFeed(url, timeout);
    if (!d.fetch.ok()) return Status::Invalid(field, "the feed could not be fetched: " + d.fetch.error);
    if (d.fetch.status != 200)
      return Status::Invalid(field, "the feed answered HTTP " + std::to_string(d.fetch.status));
    if (!d.calendar) return Status::Invalid(field, "the feed is not an iCalendar file: " + d.why);
    // A feed's name is any bytes it sends: stored as valid UTF-8, cut on a character boundary.
    const std::string& name = d.calendar->name.empty() ? parsed->host : d.calendar->name;
    const std::string& zone = d.calendar->time_zone;
    fetched.push_back(Fetched{url, text::TruncateUtf8(text::SanitizeUtf8(name), kMaxNameBytes),
                              time::Zone::Find(zone) ? zone : ""});
  }

  std::vector<std::string> encrypted;
  for (const Fetched& f : fetched) {
    auto enc = crypto::Encrypt(encryption_key_, f.url);
    if (!enc.ok())
      return Status(ErrorCode::kUnavailable, "credential encryption failed").WithReason("not_configured");
    encrypted.push_back(*enc);
  }
  Status saved = db_.Transaction([&](DbConnection& tx) -> Status {
    // Serializes concurrent saves of one user's feeds (the count below must hold).
    std::set<std::string> existing;
    for (const DbRow& r : tx.Query("SELECT url_hash FROM calendar_ics_feeds WHERE user_id = ? FOR UPDATE", {user_id}))
      existing.insert(r.String(1));
    size_t total = existing.size();
    for (const Fetched& f : fetched) total += existing.count(crypto::Sha256Hex(f.url)) ? 0 : 1;
    if (total > kMaxIcsFeedsPerUser)
      return Status::Invalid("urls", "a user may have at most " + std::to_string(kMaxIcsFeedsPerUser) + " ICS feeds");
    std::vector<std::vector<DbValue>> rows;
    for (size_t i = 0; i < fetched.size(); ++i) {
      rows.push_back({user_id, crypto::Sha256Hex(fetched[i].url), encrypted[i], fetched[i].name,
                      fetched[i].time_zone, read_only});
    }
    tx.InsertRows("INSERT INTO calendar_ics_feeds (user_id, url_hash, url_enc, name, time_zone, read_only, created_at)",
                  rows,
                  " ON DUPLICATE KEY UPDATE url_enc = VALUES(url_enc), name = VALUES(name),"
                  " time_zone = VALUES(time_zone), read_only = VALUES(read_only)",
                  "(?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3))");
    return Status::Ok();
  });
  if (!saved.ok()) return saved;
  busy_cache_.Forget(user_id);

  // Cal.com's answer is one credential. Each feed is its own credential here: the answer is the
  // first saved feed's, and `calendars` lists every feed of this save.
  Result<Json> all = calendars_.ListCalendars(user_id);
  if (!all.ok()) return all.status();
  Json saved_calendars = Json::array();
  for (const Fetched& f : fetched) {
    for (const Json& c : all->value("calendars", Json::array())) {
      if (c.value("integration", "") == "ics_feed" && c.value("externalId", "") == f.url)
        saved_calendars.push_back(c);
    }
  }
  if (saved_calendars.empty()) return Status(ErrorCode::kInternal, "the saved feeds could not be read back");
  return Json{{"id", saved_calendars.front()["credentialId"]},
              {"type", "ics-feed_calendar"},
              {"userId", user_id},
              {"teamId", nullptr},
              {"appId", "ics-feed"},
              {"invalid", false},
              {"calendars", saved_calendars}};
}

Status IcsFeeds::Check(int64_t user_id) {
  if (Status s = RequireEncryption(encryption_key_); !s.ok()) return s;
  std::vector<std::string> urls = db_.Run([&](DbConnection& c) {
    std::vector<std::string> out;
    for (const DbRow& r :
         c.Query("SELECT url_enc FROM calendar_ics_feeds WHERE user_id = ? ORDER BY id LIMIT ?",
                 {user_id, static_cast<int64_t>(kMaxIcsFeedsPerUser)}))
      out.push_back(r.String(1));
    return out;
  });
  if (urls.empty())
    return Status(ErrorCode::kInvalid, "no ICS feed is saved").WithReason("ics_feed_not_working");
  const Deadline deadline = std::chrono::steady_clock::now() + kRequestBudget;
  std::string why;
  for (const std::string& enc : urls) {
    auto url = crypto::Decrypt(encryption_key_, enc);
    if (!url.ok()) {
      why = "a saved feed URL cannot be decrypted with the configured key";
      continue;
    }
    const std::chrono::milliseconds timeout = IcsFetcher::TimeLeft(deadline);
    if (timeout.count() == 0) break;
    const IcsDownload d = fetcher_.FetchFeed(*url, timeout);
    if (d.fetch.ok() && d.fetch.status == 200 && d.calendar) return Status::Ok();
    if (why.empty()) {
      why = !d.fetch.ok()           ? "a feed could not be fetched: " + d.fetch.error
            : d.fetch.status != 200 ? "a feed answered HTTP " + std::to_string(d.fetch.status)
                                    : "a feed is not an iCalendar file: " + d.why;
    }
  }
  if (why.empty()) why = "the feeds took too long to download";
  return Status(ErrorCode::kInvalid, "no saved ICS feed works (" + why + ")")
      .WithReason("ics_feed_not_working");
}

}  // namespace rendezvous::calendar
