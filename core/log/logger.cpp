#include "log/logger.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>

namespace rendezvous::core {
namespace {

const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "info";
}

std::string NowIso() {
  auto now = std::chrono::system_clock::now();
  auto t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

std::unique_ptr<Logger>& Slot() {
  static std::unique_ptr<Logger> logger = std::make_unique<StderrLogger>(LogLevel::kInfo, false);
  return logger;
}

}  // namespace

void StderrLogger::Log(LogLevel level, std::string_view message, const nlohmann::json& fields) {
  if (!Enabled(level)) return;
  std::string line;
  if (json_) {
    nlohmann::json j = nlohmann::json::object();
    j["ts"] = NowIso();
    j["level"] = LevelName(level);
    j["msg"] = message;
    if (fields.is_object())
      for (auto it = fields.begin(); it != fields.end(); ++it) j[it.key()] = it.value();
    line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    line = NowIso() + " " + LevelName(level) + " " + std::string(message);
    if (fields.is_object() && !fields.empty())
      line += " " + fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  line += '\n';
  std::lock_guard lock(mu_);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

LogLevel ParseLogLevel(const std::string& name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warn") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  throw std::invalid_argument("must be one of debug, info, warn, error");
}

Logger& ProcessLogger() { return *Slot(); }
void SetProcessLogger(std::unique_ptr<Logger> logger) { Slot() = std::move(logger); }

}  // namespace rendezvous::core
