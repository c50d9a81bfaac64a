// Status and Result<T>: how fallible calls report failure without exceptions on the request path.
// One vocabulary for the host and every plugin: logic returns a Status (a category, a message for
// people, the field at fault, a machine-readable reason and details); only the HTTP layer turns it
// into a status code and the error envelope of DESIGN §4 (Response::FromStatus).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

namespace rendezvous {

// Error categories. The HTTP answer of each (by Response::FromStatus) is noted.
enum class ErrorCode {
  kOk = 0,
  kInvalid,               // 400 validation_error; field() names the input at fault
  kUnauthenticated,       // 401 unauthorized
  kForbidden,             // 403 forbidden
  kInsufficientScope,     // 403 insufficient_scope
  kNotFound,              // 404 not_found
  kConflict,              // 409 conflict (a state that does not allow the change, a duplicate)
  kTooLarge,              // 413 payload_too_large
  kUnprocessable,         // 422 unprocessable_entity: a well-formed request that contradicts an
                          //     earlier one (an idempotency key reused with another body)
  kUnsupportedMediaType,  // 415 unsupported_media_type
  kRateLimited,           // 429 rate_limited; retry_after() seconds become Retry-After
  kUpstreamFailed,        // 502 bad_gateway: an outside service (Google, a feed) failed
  kUpstreamTimeout,       // 504 gateway_timeout: an outside service did not answer in time
  kUnavailable,           // 503 service_unavailable (the database, a full queue)
  kInternal,              // 500 internal_error
};

class Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  // 400 naming the field (a JSON path such as "attendee.email" or a query parameter).
  static Status Invalid(std::string field, std::string message) {
    Status s(ErrorCode::kInvalid, std::move(message));
    s.field_ = std::move(field);
    return s;
  }
  static Status NotFound(std::string message) { return {ErrorCode::kNotFound, std::move(message)}; }
  static Status Conflict(std::string message) { return {ErrorCode::kConflict, std::move(message)}; }
  static Status RateLimited(std::string message, int retry_after_seconds) {
    Status s(ErrorCode::kRateLimited, std::move(message));
    s.retry_after_ = retry_after_seconds;
    return s;
  }

  // A machine-readable reason that replaces the category's default code in the envelope
  // ("reconnect_required", "invalid_transition", ...).
  Status& WithReason(std::string reason) & {
    reason_ = std::move(reason);
    return *this;
  }
  Status&& WithReason(std::string reason) && { return std::move(WithReason(std::move(reason))); }
  // Extra JSON for the envelope's error.details (merged with {"field": ..} when there is a field).
  Status& WithDetails(nlohmann::json details) & {
    details_ = std::move(details);
    return *this;
  }
  Status&& WithDetails(nlohmann::json details) && { return std::move(WithDetails(std::move(details))); }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::string& field() const { return field_; }
  const std::string& reason() const { return reason_; }
  const nlohmann::json& details() const { return details_; }
  std::optional<int> retry_after() const { return retry_after_; }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
  std::string field_;
  std::string reason_;
  nlohmann::json details_;
  std::optional<int> retry_after_;
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
