#include "identity/session_store.hpp"

#include <memory>


#include "identity/user_store.hpp"
#include "rendezvous/crypto.hpp"

namespace rendezvous::core {

bool SessionStore::WellFormedToken(std::string_view token) {
  if (token.size() != 43) return false;
  for (char c : token) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

SessionStore::NewSession SessionStore::Create(int64_t user_id) {
  NewSession s{crypto::RandomToken(32), crypto::RandomToken(32)};
  std::string id_hash = crypto::Sha256Hex(s.token);
  db_.Run([&](DbConnection& conn) {
    // Housekeeping rides on sign-ins, bounded so that no sign-in pays for a large backlog.
    conn.Exec("DELETE FROM sessions WHERE expires_at < UTC_TIMESTAMP(3) LIMIT 100");
    conn.Exec(
        "INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, expires_at) "
        "VALUES (?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ? SECOND)",
        {id_hash, user_id, s.csrf_token, ttl_.count()});
  });
  return s;
}

std::optional<Session> SessionStore::Find(std::string_view token) {
  if (!WellFormedToken(token)) return std::nullopt;
  std::string id_hash = crypto::Sha256Hex(token);
  return db_.Run([&](DbConnection& conn) -> std::optional<Session> {
    std::optional<DbRow> row = conn.QueryOne(std::string("SELECT ") + kUserColumns +
                                                 ", s.csrf_token FROM sessions s JOIN users u ON u.id = s.user_id "
                                                 "WHERE s.id_hash = ? AND s.expires_at > UTC_TIMESTAMP(3)",
                                             {id_hash});
    if (!row) return std::nullopt;
    Session session{UserFromRow(*row), row->String(kUserColumnCount + 1)};
    return session;
  });
}

void SessionStore::Delete(std::string_view token) {
  if (!WellFormedToken(token)) return;
  std::string id_hash = crypto::Sha256Hex(token);
  db_.Run([&](DbConnection& conn) {
    conn.Exec("DELETE FROM sessions WHERE id_hash = ?", {id_hash});
  });
}

}  // namespace rendezvous::core
