#include "metrics/process_metrics.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

#include "metrics/metrics_registry.hpp"

namespace rendezvous::core {
namespace {

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type, double value) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) m.counter.value = value;
  else m.gauge.value = value;
  f.metric.push_back(std::move(m));
  return f;
}

// The boot time in seconds since the epoch, from the clocks rather than /proc/stat (which a
// service with ProcSubset=pid cannot read): the wall clock now less the time since boot.
double ReadBootTime() {
  timespec now{};
  timespec since_boot{};
  if (clock_gettime(CLOCK_REALTIME, &now) != 0 || clock_gettime(CLOCK_BOOTTIME, &since_boot) != 0) return 0;
  return static_cast<double>(now.tv_sec - since_boot.tv_sec) + (now.tv_nsec - since_boot.tv_nsec) / 1e9;
}

int CountOpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(dir))
    if (e->d_name[0] != '.') ++n;
  closedir(dir);
  return n - 1;  // the descriptor opendir itself holds
}

}  // namespace

ProcessCollector::ProcessCollector() : boot_time_seconds_(ReadBootTime()) {}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));

  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  // The command name (field 2) is in parentheses and may hold spaces: parse after the last ')'.
  size_t close = stat.rfind(')');
  if (close != std::string::npos && ticks > 0) {
    std::istringstream rest(stat.substr(close + 1));
    std::string field;
    std::vector<std::string> fields;  // fields[0] is field 3 (state)
    while (rest >> field) fields.push_back(field);
    if (fields.size() >= 22) {
      auto num = [&fields](size_t i) { return std::strtod(fields[i].c_str(), nullptr); };
      double utime = num(11);
      double stime = num(12);
      double start_ticks = num(19);
      double vsize = num(20);
      double rss_pages = num(21);
      out.push_back(Family("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                           MetricType::Counter, (utime + stime) / ticks));
      out.push_back(Family("process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge, vsize));
      out.push_back(Family("process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
                           rss_pages * page));
      if (boot_time_seconds_ > 0)
        out.push_back(Family("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                             MetricType::Gauge, boot_time_seconds_ + start_ticks / ticks));
    }
  }
  int fds = CountOpenFds();
  if (fds >= 0)
    out.push_back(Family("process_open_fds", "Number of open file descriptors.", MetricType::Gauge, fds));
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0)
    out.push_back(Family("process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge,
                         lim.rlim_cur == RLIM_INFINITY ? -1.0 : static_cast<double>(lim.rlim_cur)));
  return out;
}

void RegisterProcessMetrics(MetricsRegistry& registry) {
  registry.AddCollectable(std::make_shared<ProcessCollector>());
}

}  // namespace rendezvous::core
