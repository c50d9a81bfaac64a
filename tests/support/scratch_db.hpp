// A fresh, empty database on the test MariaDB instance (started by the CTest fixture `mariadb`,
// socket in $RDV_TEST_DB_SOCKET), dropped when the object goes away.
#pragma once

#include <string>

namespace rendezvous::testing {

// The test instance's socket; aborts the test binary with a message when the env var is unset.
std::string TestDbSocket();

class ScratchDatabase {
 public:
  ScratchDatabase();
  ~ScratchDatabase();
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;

  const std::string& name() const { return name_; }
  const std::string& socket() const { return socket_; }
  // Runs one statement as root in this database (test set-up and checks).
  void Exec(const std::string& sql) const;
  // First column of the first row as a string ("" when no row).
  std::string QueryValue(const std::string& sql) const;

 private:
  std::string socket_;
  std::string name_;
};

}  // namespace rendezvous::testing
