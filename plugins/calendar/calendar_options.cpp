#include "calendar_options.hpp"

namespace rendezvous::calendar {

Status RequireEncryption(const std::string& key) {
  if (EncryptionConfigured(key)) return Status::Ok();
  return Status(ErrorCode::kUnavailable,
                "credential encryption is not configured on this server: the operator must set the variable "
                "named "
                "by security.encryption_key_env (default RENDEZVOUS_ENCRYPTION_KEY)")
      .WithReason("not_configured");
}

Status ReconnectRequired(const std::string& message) {
  return Status::Conflict(message).WithReason("reconnect_required");
}

}  // namespace rendezvous::calendar
