// Helpers shared by the storage tests: options for a scratch database, metric look-ups, a quiet
// logger and a private MariaDB instance that a test may stop and start.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

#include <prometheus/registry.h>

#include "log/logger.hpp"
#include "scratch_db.hpp"
#include "storage/mysql_database.hpp"

namespace rendezvous::testing {

inline core::DatabaseOptions OptionsFor(const ScratchDatabase& db, int pool_size = 4) {
  core::DatabaseOptions o;
  o.socket = db.socket();
  o.user = "root";
  o.password = "";
  o.name = db.name();
  o.pool_size = pool_size;
  return o;
}

// Value of a counter or gauge (histograms: sample count); -1 when the series does not exist.
inline double MetricValue(prometheus::Registry& registry, const std::string& name,
                          const std::map<std::string, std::string>& labels = {}) {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& m : family.metric) {
      std::map<std::string, std::string> got;
      for (const auto& l : m.label) got[l.name] = l.value;
      if (got != labels) continue;
      switch (family.type) {
        case prometheus::MetricType::Counter: return m.counter.value;
        case prometheus::MetricType::Gauge: return m.gauge.value;
        case prometheus::MetricType::Histogram: return static_cast<double>(m.histogram.sample_count);
        default: return -1;
      }
    }
  }
  return -1;
}

inline Logger& QuietLogger() {
  static core::StderrLogger logger(LogLevel::kError, false);
  return logger;
}

inline std::string MariadbScript() {
  if (const char* d = std::getenv("RDV_TOOLS_DIR"); d && *d) return std::string(d) + "/mariadb.sh";
  return std::string(RDV_DEFAULT_TOOLS_DIR) + "/mariadb.sh";
}

// A MariaDB server of its own in a temporary folder (not the shared test instance), so a test
// can stop and restart it. Stopped and removed at the end.
class PrivateMariadb {
 public:
  PrivateMariadb() {
    char tmpl[] = "/tmp/rdv-storage-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    Start();
  }
  ~PrivateMariadb() {
    Stop();
    std::string cmd = "rm -rf '" + dir_ + "'";
    (void)std::system(cmd.c_str());
  }
  void Start() { Run("start"); }
  void Stop() { Run("stop"); }
  std::string socket() const { return dir_ + "/mysqld.sock"; }

 private:
  void Run(const std::string& what) {
    std::string cmd = "'" + MariadbScript() + "' " + what + " '" + dir_ + "' >/dev/null";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("mariadb.sh " + what + " failed");
  }
  std::string dir_;
};

}  // namespace rendezvous::testing
