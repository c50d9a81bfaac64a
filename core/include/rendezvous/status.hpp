// Status and Result<T>: how fallible calls report failure without exceptions on the request path.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace rendezvous {

// Error categories; each maps to one HTTP status in the error envelope (core/http/envelope).
enum class ErrorCode {
  kOk = 0,
  kInvalid,              // 400 validation_error
  kUnauthenticated,      // 401 unauthorized
  kForbidden,            // 403 forbidden
  kNotFound,             // 404 not_found
  kConflict,             // 409 conflict
  kTooLarge,             // 413 payload_too_large
  kUnsupportedMediaType, // 415 unsupported_media_type
  kRateLimited,          // 429 rate_limited
  kUnavailable,          // 503 service_unavailable
  kInternal,             // 500 internal_error
};

// The HTTP status an error category answers with (the table above). kOk is 200.
constexpr int HttpStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return 200;
    case ErrorCode::kInvalid: return 400;
    case ErrorCode::kUnauthenticated: return 401;
    case ErrorCode::kForbidden: return 403;
    case ErrorCode::kNotFound: return 404;
    case ErrorCode::kConflict: return 409;
    case ErrorCode::kTooLarge: return 413;
    case ErrorCode::kUnsupportedMediaType: return 415;
    case ErrorCode::kRateLimited: return 429;
    case ErrorCode::kUnavailable: return 503;
    case ErrorCode::kInternal: return 500;
  }
  return 500;
}

class Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

// Either a value or a non-ok Status.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)
  Result(ErrorCode code, std::string message) : v_(Status(code, std::move(message))) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &std::get<T>(v_); }
  const T* operator->() const { return &std::get<T>(v_); }
  T& operator*() & { return std::get<T>(v_); }
  const T& operator*() const& { return std::get<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace rendezvous
