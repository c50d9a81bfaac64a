#include "upcoming_cancellations.hpp"

#include <vector>

namespace rendezvous::bookings {
namespace {

constexpr int kBatch = 500;
constexpr int kMaxBatches = 200;

}  // namespace

Result<int64_t> UpcomingCancellations::CancelUpcoming(int64_t user_id, const std::string& reason) {
  int64_t cancelled = 0;
  // Bookings that could not be cancelled are skipped by id, so every batch makes progress.
  int64_t after_id = 0;
  for (int batch = 0; batch < kMaxBatches; ++batch) {
    std::vector<DbRow> rows = db_.Run([&](DbConnection& conn) {
      return conn.Query(
          "SELECT id, uid FROM bookings WHERE host_id = ? AND status IN ('pending', 'accepted')"
          " AND start_at > UTC_TIMESTAMP(3) AND id > ? ORDER BY id LIMIT ?",
          {user_id, after_id, kBatch});
    });
    for (const DbRow& row : rows) {
      after_id = row.Int(1);
      Result<Json> done = flow_->Cancel(row.String(2), reason);
      if (done.ok()) {
        ++cancelled;
      } else if (done.status().code() != ErrorCode::kConflict &&
                 done.status().code() != ErrorCode::kNotFound) {
        return done.status();
      }
    }
    if (rows.size() < static_cast<size_t>(kBatch)) return cancelled;
  }
  return Status(ErrorCode::kUnavailable, "too many upcoming bookings to cancel at once; try again");
}

}  // namespace rendezvous::bookings
