#include "event_writer.hpp"

namespace rendezvous::calendar {
namespace {

using nlohmann::json;

SyncWrite Done(std::string calendar_id, bool event_exists) {
  SyncWrite w;
  w.outcome = SyncWrite::Outcome::kDone;
  w.calendar_id = std::move(calendar_id);
  w.event_exists = event_exists;
  return w;
}

SyncWrite Failure(SyncWrite::Outcome outcome, std::string error) {
  SyncWrite w;
  w.outcome = outcome;
  w.error = std::move(error);
  return w;
}

// A credential Google refuses for good (invalid_grant, or marked for reconnecting) ends the job;
// anything else (Google unreachable, the database, a missing key) may pass.
SyncWrite FromStatus(const Status& s) {
  const bool reconnect = s.reason() == "reconnect_required" || s.code() == ErrorCode::kConflict ||
                         s.message().find("invalid_grant") != std::string::npos;
  return Failure(reconnect ? SyncWrite::Outcome::kFailed : SyncWrite::Outcome::kRetry, s.message());
}

// Timeouts, connection failures, 5xx, 429, 401 and 403 (Google's rate limits) are worth another
// try; another 4xx will answer the same.
SyncWrite FromCall(const GoogleCall& call, const std::string& what) {
  const bool transient = call.transport != FetchOutcome::kOk || call.status >= 500 || call.status == 429 ||
                         call.status == 401 || call.status == 403 || (call.status >= 200 && call.status < 300);
  return Failure(transient ? SyncWrite::Outcome::kRetry : SyncWrite::Outcome::kFailed,
                 GoogleFailure(call, what).message());
}

bool Succeeded(const GoogleCall& call) {
  return call.transport == FetchOutcome::kOk && call.status >= 200 && call.status < 300;
}

bool Conflict(const GoogleCall& call) { return call.transport == FetchOutcome::kOk && call.status == 409; }

// The event as written: the booking's contents, confirmed (which also restores an event deleted
// before, e.g. of a reopened booking), and a Meet when asked for. The Meet's requestId is the
// event id: Google makes one conference per requestId, so a repeated write never makes a second.
json EventBody(const SyncJob& job) {
  json body = job.event.is_object() ? job.event : json::object();
  body["status"] = "confirmed";
  if (job.meet)
    body["conferenceData"] = {
        {"createRequest", {{"requestId", job.event_id}, {"conferenceSolutionKey", {{"type", "hangoutsMeet"}}}}}};
  return body;
}

}  // namespace

EventWriter::EventWriter(const GoogleApi& google, GoogleCredentials& credentials, CalendarList& calendars)
    : google_(google), credentials_(credentials), calendars_(calendars) {}

SyncWrite EventWriter::Write(const SyncJob& job) {
  auto loaded = credentials_.Load(job.user_id);
  if (!loaded.ok()) return FromStatus(loaded.status());
  // The host disconnected Google since: there is nothing to write to.
  if (!*loaded) return Done("", false);
  GoogleCredential& cred = **loaded;
  auto with_google = [&](const std::function<GoogleCall(const std::string&)>& call) {
    return credentials_.WithGoogle(cred, call);
  };

  if (job.action == SyncAction::kDelete) {
    // Never written (its create failed for good): nothing to delete.
    if (!job.calendar_id) return Done("", false);
    auto r = with_google([&](const std::string& token) {
      return google_.DeleteEvent(token, *job.calendar_id, job.event_id);
    });
    if (!r.ok()) return FromStatus(r.status());
    if (Succeeded(*r) || r->not_found()) return Done("", false);
    return FromCall(*r, "the event delete");
  }

  const json body = EventBody(job);
  const std::string calendar = job.calendar_id.value_or(calendars_.TargetCalendar(job.user_id));
  auto insert = [&]() -> SyncWrite {
    json with_id = body;
    with_id["id"] = job.event_id;
    auto r = with_google([&](const std::string& token) { return google_.InsertEvent(token, calendar, with_id); });
    if (!r.ok()) return FromStatus(r.status());
    if (Succeeded(*r)) return Done(calendar, true);
    if (!Conflict(*r)) return FromCall(*r, "the event insert");
    // The id is taken: an earlier attempt made the event (its answer was lost), or it was
    // deleted before (a reopened booking). Write it again over it.
    auto p = with_google([&](const std::string& token) {
      return google_.PatchEvent(token, calendar, job.event_id, body);
    });
    if (!p.ok()) return FromStatus(p.status());
    if (Succeeded(*p)) return Done(calendar, true);
    return FromCall(*p, "the event update");
  };
  if (job.action == SyncAction::kCreate) return insert();

  json times = {{"start", body.value("start", json())},
                {"end", body.value("end", json())},
                {"status", "confirmed"}};
  auto r = with_google([&](const std::string& token) {
    return google_.PatchEvent(token, calendar, job.event_id, times);
  });
  if (!r.ok()) return FromStatus(r.status());
  if (Succeeded(*r)) return Done(calendar, true);
  // The old booking's event is not there (its write failed for good, or it was removed in
  // Google): the new booking gets an event of its own.
  if (r->not_found()) return insert();
  return FromCall(*r, "the event move");
}

}  // namespace rendezvous::calendar
