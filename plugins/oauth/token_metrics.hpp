// The token endpoint's metrics, on /metrics from start-up (every label value is known in advance
// and exported at zero):
//
//   oauth_token_grants_total{grant_type, outcome}  token requests; grant_type authorization_code,
//       refresh_token or unknown (refused before a supported grant type was read); outcome
//       issued, refused (an OAuth error answer) or failed (no answer: the database was unavailable)
//   oauth_token_errors_total{error}                refusals by OAuth error code (RFC 6749 §5.2:
//       invalid_request, invalid_client, invalid_grant, unauthorized_client)
//   oauth_active_grants{kind}                      grants still usable (tokens.hpp ActiveGrants),
//       kind oauth or managed; measured by each instance over the shared database
//
// Thread-safe. `metrics` must outlive this object.
#pragma once

#include <string>

#include "rendezvous/metrics.hpp"
#include "tokens.hpp"

namespace rendezvous::oauth {

// What one token request came to.
struct TokenRequestOutcome {
  std::string grant_type;  // "" until a supported grant type was read
  std::string error;       // the OAuth error code of a refusal; "" when tokens were issued
};

class TokenMetrics {
 public:
  explicit TokenMetrics(Metrics& metrics);

  // A request that was answered: issued when `outcome.error` is empty, else refused.
  void Answered(const TokenRequestOutcome& outcome);
  // A request that could not be answered (an exception left the handler).
  void Failed(const TokenRequestOutcome& outcome);
  void SetActiveGrants(const ActiveGrants& grants);

 private:
  MetricFamily& grants_;
  MetricFamily& errors_;
  Metric& active_oauth_;
  Metric& active_managed_;
};

}  // namespace rendezvous::oauth
