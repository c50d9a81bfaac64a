// The process logger: JSON lines (or plain text) on stderr, filtered by level. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "rendezvous/log.hpp"

namespace rendezvous::core {

class StderrLogger final : public Logger {
 public:
  StderrLogger(LogLevel level, bool json) : level_(level), json_(json) {}
  void Log(LogLevel level, std::string_view message, const nlohmann::json& fields) override;
  bool Enabled(LogLevel level) const override { return level >= level_; }

 private:
  LogLevel level_;
  bool json_;
  std::mutex mu_;
};

// Parses "debug|info|warn|error"; throws std::invalid_argument otherwise.
LogLevel ParseLogLevel(const std::string& name);

// The process-wide logger (set once in main; a default text logger before that).
Logger& ProcessLogger();
void SetProcessLogger(std::unique_ptr<Logger> logger);

}  // namespace rendezvous::core
