// Versioned schema migrations per owner ("outbox", "identity", plugin names), recorded in the
// table schema_migrations(owner, version, name, checksum, applied_at).
//
// - Apply() runs under the named lock 'rendezvous.migrate.<MD5 of the database name>' (GET_LOCK,
//   60 s; per database, and within MySQL's 64-character limit) and, because named locks hold on
//   one server only, under the row of schema_migrations_lock (taken by INSERT, so on a Galera
//   cluster one node's migrator wins certification), so several instances migrating at once,
//   through the same server or different cluster nodes, are safe: the others wait, then find
//   nothing left to do.
// - Owners are applied in the order they were added, each owner's migrations in version order.
//   A pending version lower than one already applied is still applied (and logged).
// - A migration's SQL is split into statements at lines ending with ';' (see SplitStatements);
//   a `CREATE PROCEDURE` / `CREATE FUNCTION` statement ends only at a line `END;`, so routine
//   bodies keep their own semicolons (no DELIMITER needed).
//   MariaDB/MySQL DDL is not transactional: statements run one by one, and a version is recorded
//   only after all its statements succeeded. A failed version is re-run from its first statement
//   next time, so write statements that can run twice (CREATE TABLE IF NOT EXISTS,
//   ADD COLUMN IF NOT EXISTS, CREATE INDEX IF NOT EXISTS, INSERT IGNORE ...).
// - The checksum is SHA-256 over the split statements (so whitespace around statements does not
//   matter). Changing the SQL of an applied version is an error: Apply() throws, naming it.
//
// Thread-safety: Add() is for start-up, before Apply()/Pending(); Apply() and Pending() may run
// from several threads or Migrator objects (they serialise on the database lock).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "rendezvous/database.hpp"
#include "rendezvous/log.hpp"

namespace rendezvous::core {

// Splits migration SQL into statements: a statement ends at a line whose last non-blank
// character is ';' (or at the end). CRLF is accepted. Pieces that are empty or hold only
// `--` / `#` comment lines are dropped. A ';' at the end of a line inside a string literal
// would split it: avoid that in migrations.
std::vector<std::string> SplitStatements(const std::string& sql);

// Hex SHA-256 of the statements of `sql` joined with ";\n".
std::string MigrationChecksum(const std::string& sql);

class Migrator {
 public:
  // `db` and `logger` must outlive the Migrator.
  Migrator(Database& db, Logger& logger);

  // Registers the migrations of one owner (at most 128 characters). Throws std::invalid_argument
  // for an owner added twice, a version < 1, a duplicate version or an empty name or SQL.
  void Add(const std::string& owner, std::vector<Migration> migrations);

  // Applies every pending migration. Returns {"applied":[{"owner","version","name"}...]}
  // (empty when nothing was pending). Throws std::runtime_error naming the owner, version and
  // SQL error when a statement fails or a checksum differs (earlier versions stay applied);
  // DatabaseUnavailable when the database cannot be reached.
  nlohmann::json Apply();

  // What Apply() would do, without the lock and without changing anything:
  // {"pending":[{"owner","version","name"}...], "changed":[{"owner","version","name"}...]}
  // where "changed" lists applied versions whose SQL differs now (Apply() would fail on them).
  nlohmann::json Pending();

 private:
  struct Owner {
    std::string name;
    std::vector<Migration> migrations;  // sorted by version
  };

  Database& db_;
  Logger& logger_;
  std::vector<Owner> owners_;
};

}  // namespace rendezvous::core
