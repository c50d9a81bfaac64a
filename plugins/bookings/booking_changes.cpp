// The host's reads and changes of BookingFlow (list, get, confirm, decline, mark absent; the
// public cancel goes through the same change) and the completion of ended bookings.
#include <algorithm>
#include <map>

#include "booking_events.hpp"
#include "booking_flow.hpp"
#include "booking_rows.hpp"
#include "rendezvous/crypto.hpp"
#include "schedule_rows.hpp"

namespace rendezvous::bookings {
namespace {

Status NotFoundBooking() {
  return Status::NotFound("booking not found");
}

User HostOrPlaceholder(UserDirectory& users, int64_t id) {
  if (auto u = users.FindUser(id)) return *u;
  User placeholder;
  placeholder.id = id;
  return placeholder;
}

// The WHERE clause (with its parameters) and ORDER BY of a host's bookings list at `now`;
// `longest` is the host's longest booking (booking_host_locks.longest_ms) when known.
struct ListSql {
  std::string where;
  std::vector<DbValue> params;
  std::string order;
};

ListSql ListQuerySql(int64_t host_id, const ListQuery& query, Millis now, std::optional<Millis> longest) {
  std::string where = " WHERE host_id = ?";
  std::vector<DbValue> params{host_id};
  const std::string now_sql = time::FormatSql(now);
  // A booking ending later started after now less the host's longest booking: a bound of the
  // host's start index, so that the rows read are those ending later, not all before them.
  std::string started_after;
  if (longest && *longest < now) {
    started_after = " AND start_at > '" + time::FormatSql(now - *longest) + "'";
  }
  // DESIGN §9's states and Cal.com's periods: a booking in any of them. `past` also says that the
  // booking started before now (it ended by now), so the host's start index bounds the rows read.
  std::vector<std::string> any;
  if (!query.statuses.empty()) {
    std::string in = "status IN (";
    for (size_t i = 0; i < query.statuses.size(); ++i) {
      in += i ? ", ?" : "?";
      params.emplace_back(StatusName(query.statuses[i]));
    }
    any.push_back(in + ")");
  }
  for (ListPeriod p : query.periods) {
    switch (p) {
      case ListPeriod::kUpcoming:
        any.push_back("(status IN ('accepted', 'pending') AND end_at > ?" + started_after + ")");
        params.emplace_back(now_sql);
        break;
      case ListPeriod::kUnconfirmed:
        any.push_back("(status = 'pending' AND end_at > ?" + started_after + ")");
        params.emplace_back(now_sql);
        break;
      case ListPeriod::kPast:
        any.emplace_back("(status NOT IN ('cancelled', 'rejected') AND end_at <= ? AND start_at < ?)");
        params.emplace_back(now_sql);
        params.emplace_back(now_sql);
        break;
      case ListPeriod::kRecurring:
        any.emplace_back("FALSE");  // there are no recurring bookings
        break;
    }
  }
  if (!any.empty()) {
    where += " AND (";
    for (size_t i = 0; i < any.size(); ++i) where += (i ? " OR " : "") + any[i];
    where += ")";
  }
  if (query.after_start) {
    where += " AND start_at >= ?";
    params.emplace_back(time::FormatSql(*query.after_start));
  }
  if (query.before_end) {
    where += " AND end_at <= ?";
    params.emplace_back(time::FormatSql(*query.before_end));
  }
  if (query.event_type_id) {
    where += " AND event_type_id = ?";
    params.emplace_back(*query.event_type_id);
  }
  if (!query.event_type_ids.empty()) {
    where += " AND event_type_id IN (";
    for (size_t i = 0; i < query.event_type_ids.size(); ++i) {
      where += i ? ", ?" : "?";
      params.emplace_back(query.event_type_ids[i]);
    }
    where += ")";
  }
  // Attendees' names and e-mails are compared in their columns' collation: letter case aside.
  if (query.attendee_email) {
    where +=
        " AND EXISTS (SELECT 1 FROM booking_attendees a WHERE a.booking_id = bookings.id AND a.email = ?)";
    params.emplace_back(*query.attendee_email);
  }
  if (query.attendee_name) {
    where +=
        " AND EXISTS (SELECT 1 FROM booking_attendees a WHERE a.booking_id = bookings.id AND a.name = ?)";
    params.emplace_back(*query.attendee_name);
  }
  std::string order;
  const char* id_order = "id";
  for (auto [column, sort] : {std::pair{"start_at", query.sort_start}, std::pair{"end_at", query.sort_end},
                              std::pair{"created_at", query.sort_created}}) {
    if (!sort) continue;
    const bool desc = *sort == SortOrder::kDesc;
    if (order.empty()) id_order = desc ? "id DESC" : "id";
    order += std::string(order.empty() ? "" : ", ") + column + (desc ? " DESC" : "");
  }
  order = order.empty() ? "start_at, id" : order + ", " + id_order;
  return ListSql{std::move(where), std::move(params), std::move(order)};
}

}  // namespace

BookingFlow::BookingFlow(Database& db, Outbox& outbox, std::shared_ptr<HostWrites> writes,
                         UserDirectory& users)
    : db_(db), outbox_(outbox), writes_(std::move(writes)), users_(users) {}

Json BookingFlow::ListBookings(const User& host, const ListQuery& query) {
  const bool ending_later = std::any_of(query.periods.begin(), query.periods.end(), [](ListPeriod p) {
    return p == ListPeriod::kUpcoming || p == ListPeriod::kUnconfirmed;
  });
  const Millis now = time::Now();
  return db_.Transaction([&](DbConnection& conn) {
    std::optional<Millis> longest;
    if (ending_later) {
      if (auto row = conn.QueryOne("SELECT longest_ms FROM booking_host_locks WHERE host_id = ?", {host.id}))
        longest = row->Int(1);
    }
    const auto [where, params, order] = ListQuerySql(host.id, query, now, longest);
    std::optional<DbRow> count = conn.QueryOne("SELECT COUNT(*) FROM bookings" + where, params);
    const int64_t total = count ? count->Int(1) : 0;
    std::vector<BookingRow> rows;
    if (query.skip < total) {
      std::vector<DbValue> page = params;
      page.emplace_back(query.take);
      page.emplace_back(query.skip);
      std::string sql = std::string("SELECT ") + kBookingColumns + " FROM bookings";
      sql += where;
      sql += " ORDER BY ";
      sql += order;
      sql += " LIMIT ? OFFSET ?";
      for (const DbRow& row : conn.Query(sql, page)) {
        rows.push_back(BookingFromRow(row));
      }
      LoadAttendees(conn, rows);
      LoadEventTypeSlugs(conn, rows);
    }
    Json data = Json::array();
    for (const BookingRow& r : rows) data.push_back(BookingJson(r.booking, host));
    return Json{{"data", std::move(data)},
                {"pagination", {{"total", total}, {"skip", query.skip}, {"take", query.take}}}};
  });
}

Result<Json> BookingFlow::GetBooking(const User& host, const std::string& uid) {
  return db_.Run([&](DbConnection& conn) -> Result<Json> {
    auto row = LoadBooking(conn, host.id, uid, false);
    if (!row) return NotFoundBooking();
    return BookingJson(row->booking, host);
  });
}

Result<Json> BookingFlow::Confirm(const User& host, const std::string& uid) {
  return Change(host, uid, BookingAction::kConfirm, std::nullopt, nullptr);
}

Result<Json> BookingFlow::Decline(const User& host, const std::string& uid,
                                  const std::optional<std::string>& reason) {
  return Change(host, uid, BookingAction::kDecline, reason, nullptr);
}

Result<Json> BookingFlow::MarkAbsent(const User& host, const std::string& uid, const AbsentMarks& marks) {
  return Change(host, uid, BookingAction::kMarkAbsent, std::nullopt, &marks);
}

Result<Json> BookingFlow::Change(const User& host, const std::string& uid, BookingAction action,
                                 const std::optional<std::string>& reason, const AbsentMarks* marks) {
  // The change may free the booking's time in the host's booked times.
  Result<Json> out = writes_->Change(host.id, [&](HostChange& change) -> Result<Json> {
    DbConnection& conn = change.conn();
    auto row = LoadBooking(conn, host.id, uid, true);
    if (!row) return NotFoundBooking();
    Booking& b = row->booking;
    const Millis now = time::Now();
    if (Status refused = CheckTransition(b.status, action, b.start <= now, b.end <= now); !refused.ok()) {
      return refused;
    }
    bool emit = true;
    if (action == BookingAction::kMarkAbsent) {
      Result<bool> marked_absent = ApplyAbsentMarks(*marks, b);
      if (!marked_absent.ok()) return marked_absent.status();
      emit = *marked_absent;
      for (const Attendee& a : b.attendees) {
        conn.Exec("UPDATE booking_attendees SET absent = ? WHERE booking_id = ? AND email = ?",
                  {a.absent, b.id, a.email});
      }
    }
    if (action == BookingAction::kDecline || action == BookingAction::kCancel) b.cancellation_reason = reason;
    b.status = StatusAfter(b.status, action);
    if (!BlocksTime(b.status)) change.Freed(b.id);
    conn.Exec(
        "UPDATE bookings SET status = ?, cancellation_reason = ?, host_absent = ?, updated_at = ? WHERE id = "
        "?",
        {StatusName(b.status), b.cancellation_reason, b.host_absent, time::FormatSql(now), b.id});
    if (emit) {
      std::optional<EventType> et = FindEventType(conn, b.event_type_id);
      if (!et) return Status(ErrorCode::kInternal, "the booking's event type is missing");
      change.Publish(TriggerFor(action), now, EventPayload(b, host, *et));
    }
    return BookingJson(b, host);
  });
  if (metrics_ && out.ok()) metrics_->Transitioned(action);
  return out;
}

size_t BookingFlow::CompleteEnded(Millis now, size_t batch) {
  const std::string cutoff = time::FormatSql(now);
  // Hosts are looked up before the transaction so it never waits for a second connection.
  std::map<int64_t, User> hosts;
  db_.Run([&](DbConnection& conn) {
    for (const DbRow& row : conn.Query("SELECT DISTINCT host_id FROM (SELECT host_id FROM bookings WHERE "
                                       "status = 'accepted' AND end_at <= ?"
                                       " ORDER BY end_at, id LIMIT ?) AS due",
                                       {cutoff, batch})) {
      hosts[row.Int(1)] = User{};
    }
  });
  if (hosts.empty()) return 0;
  for (auto& [id, user] : hosts) user = HostOrPlaceholder(users_, id);

  size_t published = 0;
  const size_t completed = db_.Transaction([&](DbConnection& conn) {
    published = 0;
    std::vector<BookingRow> rows;
    for (const DbRow& row :
         conn.Query(std::string("SELECT ") + kBookingColumns +
                        " FROM bookings WHERE status = 'accepted' AND end_at <= ? ORDER BY "
                        "end_at, id LIMIT ? FOR UPDATE SKIP LOCKED",
                    {cutoff, batch})) {
      rows.push_back(BookingFromRow(row));
    }
    LoadAttendees(conn, rows);
    std::map<int64_t, std::optional<EventType>> event_types;
    for (const BookingRow& row : rows) {
      if (!event_types.count(row.booking.event_type_id)) {
        event_types[row.booking.event_type_id] = FindEventType(conn, row.booking.event_type_id);
      }
    }
    const std::string updated_at = time::FormatSql(time::Now());
    size_t n = 0;
    for (BookingRow& row : rows) {
      Booking& b = row.booking;
      if (!CheckTransition(b.status, BookingAction::kComplete, true, b.end <= now).ok()) continue;
      auto host = hosts.find(b.host_id);
      const std::optional<EventType>& et = event_types[b.event_type_id];
      // A host not looked up above (a row that became due in between) waits for the next pass.
      if (row.emit_completion && (host == hosts.end() || !et)) continue;
      b.status = StatusAfter(b.status, BookingAction::kComplete);
      conn.Exec("UPDATE bookings SET status = ?, updated_at = ? WHERE id = ?",
                {StatusName(b.status), updated_at, b.id});
      ++n;
      if (!row.emit_completion) continue;
      const char* trigger = TriggerFor(BookingAction::kComplete);
      outbox_.Publish(conn, kOutboxTopic, trigger,
                      EventEnvelope(trigger, time::Now(), EventPayload(b, host->second, *et)));
      ++published;
    }
    return n;
  });
  if (published > 0) outbox_.Notify();
  if (metrics_ && completed > 0) metrics_->Transitioned(BookingAction::kComplete, completed);
  return completed;
}

}  // namespace rendezvous::bookings
