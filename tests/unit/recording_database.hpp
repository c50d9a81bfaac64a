// A Database over a real one that notes the text of every statement run through it, for tests
// that check how many round trips a call makes and which tables they touch. The statements run on
// the real connection unchanged; only their text is kept. A test may also act right after a
// statement ran (AfterStatement), e.g. commit something from another connection between two reads
// of one transaction. Thread-safe.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/database.hpp"

namespace rendezvous::testing {

class RecordingDatabase final : public Database {
 public:
  explicit RecordingDatabase(Database& inner) : inner_(inner) {}

  bool Ping() noexcept override { return inner_.Ping(); }
  void RunTransaction(const std::function<void(DbConnection&)>& fn) override {
    inner_.RunTransaction([&](DbConnection& conn) {
      Connection recorded(conn, *this);
      fn(recorded);
    });
  }
  void RunAutocommit(const std::function<void(DbConnection&)>& fn) override {
    inner_.RunAutocommit([&](DbConnection& conn) {
      Connection recorded(conn, *this);
      fn(recorded);
    });
  }

  // The statements run so far, oldest first; Clear() forgets them.
  std::vector<std::string> Statements() {
    std::lock_guard<std::mutex> lk(mu_);
    return statements_;
  }
  void Clear() {
    std::lock_guard<std::mutex> lk(mu_);
    statements_.clear();
  }
  // Called with each statement's text right after it ran, on the thread that ran it (set it before
  // the statements it should see).
  void AfterStatement(std::function<void(std::string_view sql)> fn) { after_ = std::move(fn); }

  // How many of the statements so far contain `text`.
  size_t Count(std::string_view text) {
    std::lock_guard<std::mutex> lk(mu_);
    size_t n = 0;
    for (const std::string& s : statements_) n += s.find(text) != std::string::npos ? 1 : 0;
    return n;
  }

 private:
  class Connection final : public DbConnection {
   public:
    Connection(DbConnection& inner, RecordingDatabase& db) : inner_(inner), db_(db) {}
    int64_t LastInsertId() override { return inner_.LastInsertId(); }

   protected:
    uint64_t Run(std::string_view sql, DbParams params, Mode mode, std::vector<DbRow>* rows,
                 size_t max_rows) override {
      {
        std::lock_guard<std::mutex> lk(db_.mu_);
        db_.statements_.emplace_back(sql);
      }
      const uint64_t affected = RunInner(sql, params, mode, rows, max_rows);
      if (db_.after_) db_.after_(sql);
      return affected;
    }

   private:
    uint64_t RunInner(std::string_view sql, DbParams params, Mode mode, std::vector<DbRow>* rows,
                      size_t max_rows) {
      const std::vector<DbValue> values(params.begin(), params.end());
      if (mode == Mode::kUnprepared) {
        if (!rows) return inner_.ExecUnprepared(sql);
        Append(inner_.QueryUnprepared(sql), rows, max_rows);
        return 0;
      }
      if (mode == Mode::kLock) return inner_.ExecLock(sql, values);
      if (!rows) return inner_.Exec(sql, values);
      Append(inner_.Query(sql, values), rows, max_rows);
      return 0;
    }

    static void Append(std::vector<DbRow> found, std::vector<DbRow>* rows, size_t max_rows) {
      for (DbRow& row : found) {
        if (rows->size() >= max_rows) break;
        rows->push_back(std::move(row));
      }
    }

    DbConnection& inner_;
    RecordingDatabase& db_;
  };

  Database& inner_;
  std::mutex mu_;
  std::vector<std::string> statements_;
  std::function<void(std::string_view)> after_;
};

}  // namespace rendezvous::testing
