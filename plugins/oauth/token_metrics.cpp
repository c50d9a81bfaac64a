#include "token_metrics.hpp"

namespace rendezvous::oauth {
namespace {

constexpr const char* kGrantTypes[] = {"authorization_code", "refresh_token", "unknown"};
constexpr const char* kOutcomes[] = {"issued", "refused", "failed"};
// The error codes TokenError answers with.
constexpr const char* kErrors[] = {"invalid_request", "invalid_client", "invalid_grant",
                                   "unauthorized_client", "invalid_dpop_proof"};

MetricFamily& ActiveGrantsFamily(Metrics& metrics) {
  return metrics.Gauge("oauth_active_grants", "Grants with a live refresh token, by kind.", {"kind"});
}

std::string GrantLabel(const TokenRequestOutcome& outcome) {
  return outcome.grant_type.empty() ? "unknown" : outcome.grant_type;
}

}  // namespace

TokenMetrics::TokenMetrics(Metrics& metrics)
    : grants_(metrics.Counter("oauth_token_grants_total", "Token endpoint requests by grant type and outcome.",
                              {"grant_type", "outcome"})),
      errors_(metrics.Counter("oauth_token_errors_total", "Token endpoint refusals by OAuth error code.", {"error"})),
      active_oauth_(ActiveGrantsFamily(metrics).With({"oauth"})),
      active_managed_(ActiveGrantsFamily(metrics).With({"managed"})) {
  for (const char* grant_type : kGrantTypes) {
    for (const char* outcome : kOutcomes) grants_.With({grant_type, outcome});
  }
  for (const char* error : kErrors) errors_.With({error});
}

void TokenMetrics::Answered(const TokenRequestOutcome& outcome) {
  grants_.With({GrantLabel(outcome), outcome.error.empty() ? "issued" : "refused"}).Increment();
  if (!outcome.error.empty()) errors_.With({outcome.error}).Increment();
}

void TokenMetrics::Failed(const TokenRequestOutcome& outcome) {
  grants_.With({GrantLabel(outcome), "failed"}).Increment();
}

void TokenMetrics::SetActiveGrants(const ActiveGrants& grants) {
  active_oauth_.Set(static_cast<double>(grants.oauth));
  active_managed_.Set(static_cast<double>(grants.managed));
}

}  // namespace rendezvous::oauth
