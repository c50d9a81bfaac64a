// Structured logging: one JSON (or text) line per event on stderr. Thread-safe.
// Never pass secrets (tokens, passwords, client secrets) as fields.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rendezvous {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

class Logger {
 public:
  virtual ~Logger() = default;
  virtual void Log(LogLevel level, std::string_view message, const nlohmann::json& fields = nlohmann::json::object()) = 0;
  virtual bool Enabled(LogLevel level) const = 0;

  void Debug(std::string_view m, const nlohmann::json& f = nlohmann::json::object()) { Log(LogLevel::kDebug, m, f); }
  void Info(std::string_view m, const nlohmann::json& f = nlohmann::json::object()) { Log(LogLevel::kInfo, m, f); }
  void Warn(std::string_view m, const nlohmann::json& f = nlohmann::json::object()) { Log(LogLevel::kWarn, m, f); }
  void Error(std::string_view m, const nlohmann::json& f = nlohmann::json::object()) { Log(LogLevel::kError, m, f); }
};

}  // namespace rendezvous
