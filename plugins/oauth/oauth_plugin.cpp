// The oauth plugin's wiring: config, the client service (tables, command line, pages), the token
// jobs (codes, refresh, managed users, the bearer resolver, the purger), the
// token/revoke/introspect/metadata endpoints, the authorize and consent pages, and
// `admin managed-user create`.
#include <memory>
#include <ostream>

#include "authorize_pages.hpp"
#include "client_cache.hpp"
#include "client_commands.hpp"
#include "client_pages.hpp"
#include "client_service.hpp"
#include "code_exchange.hpp"
#include "dpop_verifier.hpp"
#include "issued_tokens.hpp"
#include "managed_user_command.hpp"
#include "managed_user_routes.hpp"
#include "managed_user_tokens.hpp"
#include "managed_users.hpp"
#include "oauth_migrations.hpp"
#include "par_endpoint.hpp"
#include "platform_client_routes.hpp"
#include "pushed_requests.hpp"
#include "refresh_grant.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/plugin.hpp"
#include "revocation_log.hpp"
#include "token_cache.hpp"
#include "token_endpoint.hpp"
#include "token_metrics.hpp"
#include "token_purger.hpp"
#include "token_storage.hpp"

namespace rendezvous::oauth {
namespace {

// The token jobs, owned together by the plugin.
struct TokenJobs {
  TokenJobs(Database& db, Logger& logger, Metrics& metrics, TokenLifetimes lifetimes, int64_t dpop_max_age,
            TokenCacheLimits cache_limits)
      : cache(cache_limits, &metrics),
        // Kept by the same feed: on exactly when the token cache is.
        client_cache(ClientCacheLimits{cache.enabled() ? ClientCacheLimits{}.max_entries : 0}, &metrics),
        feed(db, logger, cache, &client_cache),
        codes(db, logger, lifetimes, &cache),
        refresh(db, logger, lifetimes, &cache),
        managed(db, lifetimes, &cache),
        managed_users(db),
        platform(db, managed_users),
        issued(db, &cache),
        purger(db, logger),
        dpop(db, dpop_max_age) {}
  TokenCache cache;
  ClientCache client_cache;
  RevocationFeed feed;
  CodeExchange codes;
  RefreshGrant refresh;
  ManagedUserTokens managed;
  ManagedUsers managed_users;
  OAuthPlatformClients platform;
  IssuedTokens issued;
  TokenPurger purger;
  DpopVerifier dpop;
};

Principal PrincipalOf(ResolvedToken token) {
  Principal p;
  p.kind = token.managed ? kManagedUserToken : kOAuthToken;
  p.credential_id = token.grant_id;
  p.client_id = std::move(token.client_id);
  p.user_id = token.user_id;
  p.scopes = std::move(token.scopes);
  p.all_scopes = token.all_scopes;
  p.dpop_jkt = std::move(token.dpop_jkt);
  return p;
}

class OAuthPlugin final : public Plugin {
 public:
  OAuthPlugin(PluginContext& ctx, std::shared_ptr<ClientService> clients, std::shared_ptr<TokenJobs> tokens,
              std::shared_ptr<TokenMetrics> metrics, std::shared_ptr<UserBookingsSlot> bookings)
      : ctx_(ctx),
        clients_(std::move(clients)),
        tokens_(std::move(tokens)),
        metrics_(std::move(metrics)),
        bookings_(std::move(bookings)) {}
  Status Start() noexcept override {
    // Services are found from Start() on; null when the bookings plugin is disabled.
    bookings_->bookings = ctx_.Find<UserBookings>("bookings.user_bookings");
    tokens_->purger.Start(std::chrono::seconds(60), [metrics = metrics_](const ActiveGrants& grants) {
      metrics->SetActiveGrants(grants);
    });
    if (tokens_->cache.enabled()) tokens_->feed.Start();
    return Status::Ok();
  }
  void Stop() noexcept override {
    tokens_->feed.Stop();
    tokens_->purger.Stop();
  }

 private:
  PluginContext& ctx_;
  std::shared_ptr<ClientService> clients_;
  std::shared_ptr<TokenJobs> tokens_;
  std::shared_ptr<TokenMetrics> metrics_;
  std::shared_ptr<UserBookingsSlot> bookings_;
};

std::unique_ptr<Plugin> Create(PluginContext& ctx) {
  ConfigNode& c = ctx.config();
  TokenLifetimes lifetimes;
  // Any positive number of seconds (DESIGN §8): tests need tokens that expire at once.
  lifetimes.access_token_ttl = c.Int("access_token_ttl", 1800, 1, 86400);
  lifetimes.refresh_token_ttl = c.Int("refresh_token_ttl", 2592000, 1, 31536000);
  lifetimes.code_ttl = c.Int("code_ttl", 600, 1, 3600);
  const long par_ttl = c.Int("par_ttl", 60, 1, 3600);
  const long par_pending_per_address = c.Int("par_pending_per_address", 20, 1, 10000);
  const int64_t dpop_max_age = c.Int("dpop_max_age", 300, 1, 86400);
  const int64_t managed_users_per_client = c.Int("managed_users_per_client", 10000, 1, 10000000);
  TokenCacheLimits cache_limits;
  cache_limits.max_entries = static_cast<size_t>(c.Int("token_cache_entries", 100000, 0, 100000000));
  cache_limits.max_bytes = static_cast<size_t>(c.Int("token_cache_bytes", 67108864, 1048576, 68719476736));
  c.RejectUnknown();
  for (auto [key, seconds] : {std::pair{"access_token_ttl", lifetimes.access_token_ttl},
                              std::pair{"refresh_token_ttl", lifetimes.refresh_token_ttl},
                              std::pair{"code_ttl", lifetimes.code_ttl}}) {
    if (seconds < 60)
      ctx.logger().Warn("a lifetime under a minute is meant for tests",
                        {{"key", std::string("plugins.oauth.") + key}, {"seconds", seconds}});
  }

  auto tokens = std::make_shared<TokenJobs>(ctx.db(), ctx.logger(), ctx.metrics(), lifetimes, dpop_max_age,
                                            cache_limits);
  auto clients = std::make_shared<ClientService>(ctx.db(), ctx.identity(), ctx.mailer(), ctx.logger(),
                                                 &tokens->cache, &tokens->client_cache);
  ctx.AddMigrations(OAuthMigrations());

  // One resolver for both kinds; the principal's kind tells them apart.
  ctx.AddBearerResolver(kOAuthToken, [tokens](std::string_view token) -> std::optional<Principal> {
    std::optional<ResolvedToken> resolved = tokens->issued.Resolve(token);
    if (!resolved) return std::nullopt;
    return PrincipalOf(*std::move(resolved));
  });
  // A token with a proof: the proof is checked here, then its jti is claimed and the token looked
  // up together (with the claims of the proofs arriving at the same time: DpopJtiLedger). A proof
  // that fails its checks claims nothing; the token is still looked up, so that an invalid token
  // is reported as such whatever its proof.
  ctx.SetDpopResolver([tokens](std::string_view token, std::string_view proof, std::string_view method,
                               std::string_view url) {
    DpopResolution out;
    Result<DpopProof> checked = tokens->dpop.Check(proof, method, url, token);
    std::optional<ResolvedToken> resolved;
    if (!checked.ok()) {
      out.proof_error = checked.status().message();
      resolved = tokens->issued.Resolve(token);
    } else if (WellFormed(token, kAccessTokenPrefix)) {
      // A token in memory needs only its proof's claim; otherwise the claim reads it too.
      const std::string hash = crypto::Sha256Hex(token);
      resolved = tokens->cache.Get(hash);
      Result<bool> fresh = false;
      if (resolved) {
        fresh = tokens->dpop.Claim(*checked);
      } else {
        const TokenCache::Ticket ticket = tokens->cache.Take();
        fresh = tokens->dpop.ClaimResolving(*checked, hash, resolved);
        if (fresh.ok() && resolved) tokens->cache.Put(hash, *resolved, ticket);
      }
      if (!fresh.ok()) {
        out.proof_error = fresh.status().message();
      } else if (*fresh) {
        out.jkt = std::move(checked->jkt);
      } else {
        out.proof_error = "the proof's jti was used before";
      }
    }
    if (resolved) out.principal = PrincipalOf(*std::move(resolved));
    return out;
  });

  ctx.AddAdminCommand("oauth-client",
                      [clients](const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
                        return RunClientCommand(*clients, args, out, err);
                      });
  Identity& identity = ctx.identity();
  ctx.AddAdminCommand("managed-user", [clients, tokens, &identity](const std::vector<std::string>& args,
                                                                   std::ostream& out, std::ostream& err) {
    return RunManagedUserCommand(*clients, tokens->managed, identity, args, out, err);
  });
  // The service keeps the token jobs alive (an aliasing pointer into them).
  ctx.Provide<PlatformClients>("oauth.platform_clients",
                               std::shared_ptr<PlatformClients>(tokens, &tokens->platform));
  RegisterClientPages(ctx, *clients);
  auto metrics = std::make_shared<TokenMetrics>(ctx.metrics());
  RegisterTokenEndpoints(ctx,
                         TokenEndpointServices{*clients, tokens->codes, tokens->refresh, tokens->issued,
                                               tokens->dpop, ctx.base_url() + "/v2/auth/oauth2/token"},
                         *metrics);
  // The routes share the pushed requests (no thread of their own, nothing to stop).
  auto pushed =
      std::make_shared<PushedRequests>(ctx.db(), par_ttl, static_cast<size_t>(par_pending_per_address));
  RegisterParEndpoint(ctx, ParEndpointServices{*clients, *pushed});
  RegisterAuthorizePages(ctx, *clients, tokens->codes, pushed);
  auto bookings = std::make_shared<UserBookingsSlot>();
  RegisterManagedUserRoutes(ctx, ManagedUserServices{tokens->platform, tokens->managed_users, tokens->managed,
                                                     tokens->refresh, bookings, managed_users_per_client});
  return std::make_unique<OAuthPlugin>(ctx, std::move(clients), std::move(tokens), std::move(metrics),
                                       std::move(bookings));
}

}  // namespace
}  // namespace rendezvous::oauth

RENDEZVOUS_DEFINE_PLUGIN("oauth", &rendezvous::oauth::Create)
