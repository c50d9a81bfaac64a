#include "token_service.hpp"

namespace rendezvous::oauth {

Json ToJson(const TokenResponse& response) {
  return {{"access_token", response.access_token},
          {"refresh_token", response.refresh_token},
          {"token_type", "bearer"},
          {"expires_in", response.expires_in},
          {"scope", response.scope}};
}

TokenService::TokenService(Database& db, Logger& logger, TokenLifetimes lifetimes)
    : db_(db), logger_(logger), lifetimes_(lifetimes) {}

}  // namespace rendezvous::oauth
