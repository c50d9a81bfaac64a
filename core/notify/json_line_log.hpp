// A file that mails and text messages are appended to, one JSON object per line with the time
// ("at"), when no SMTP server or SMS gateway is configured. Thread-safe: one writer at a time.
#pragma once

#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace rendezvous::core {

class JsonLineLog {
 public:
  // `what` names the log in error messages ("mail log").
  JsonLineLog(std::string path, std::string what) : path_(std::move(path)), what_(std::move(what)) {}

  // Appends `fields` plus "at" (ISO 8601, UTC) as one line, creating the folder and the file
  // (mode 0640) when missing. Throws std::runtime_error when the file cannot be written.
  void Append(const nlohmann::json& fields);

 private:
  const std::string path_;
  const std::string what_;
  std::mutex mu_;
};

}  // namespace rendezvous::core
