// The oauth plugin's wiring: config, the client service (tables, command line, pages), the token
// service (codes, tokens, the bearer resolver, the purger), the token/revoke/introspect/metadata
// endpoints, the authorize and consent pages, and `admin managed-user create`.
#include <memory>
#include <ostream>

#include "authorize_pages.hpp"
#include "client_commands.hpp"
#include "client_pages.hpp"
#include "client_service.hpp"
#include "rendezvous/plugin.hpp"
#include "token_endpoint.hpp"
#include "token_metrics.hpp"
#include "token_service.hpp"

namespace rendezvous::oauth {
namespace {

constexpr const char* kManagedUserUsage =
    "usage: rendezvous admin managed-user create --client-id ID --email E --name N [--time-zone TZ]";

// `admin managed-user create ...` (DESIGN §3): a user who cannot sign in, and tokens for the client.
int RunManagedUserCommand(ClientService& clients, TokenService& tokens, Identity& identity,
                          const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] != "create") {
    err << kManagedUserUsage << "\n";
    return 2;
  }
  std::string client_id, email, name, time_zone = "UTC";
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& flag = args[i];
    std::string* target = flag == "--client-id" ? &client_id
                          : flag == "--email"   ? &email
                          : flag == "--name"    ? &name
                          : flag == "--time-zone" ? &time_zone
                                                  : nullptr;
    if (!target || i + 1 >= args.size()) {
      err << (target ? "missing value for " + flag : "unknown option " + flag) << "\n" << kManagedUserUsage << "\n";
      return 2;
    }
    *target = args[++i];
  }
  if (client_id.empty() || email.empty() || name.empty()) {
    err << "--client-id, --email and --name are required\n" << kManagedUserUsage << "\n";
    return 2;
  }
  Result<OAuthClient> client = clients.Get(client_id);
  if (!client.ok()) {
    err << "OAuth client " << client_id << " not found\n";
    return 1;
  }
  if (client->state == ClientState::kRejected) {
    err << "OAuth client " << client_id << " is rejected; it cannot manage users\n";
    return 1;
  }
  Result<User> user = identity.CreateUser(email, name, "", time_zone, false);
  if (!user.ok()) {
    err << user.status().message() << "\n";
    return 1;
  }
  TokenResponse issued = tokens.IssueManagedUserTokens(client_id, user->id);
  out << Json{{"id", user->id},
              {"email", user->email},
              {"name", user->name},
              {"timeZone", user->time_zone},
              {"client_id", client_id},
              {"access_token", issued.access_token},
              {"refresh_token", issued.refresh_token},
              {"expires_in", issued.expires_in}}
             .dump()
      << "\n";
  return 0;
}

class OAuthPlugin final : public Plugin {
 public:
  OAuthPlugin(std::shared_ptr<ClientService> clients, std::shared_ptr<TokenService> tokens,
              std::shared_ptr<TokenMetrics> metrics)
      : clients_(std::move(clients)), tokens_(std::move(tokens)), metrics_(std::move(metrics)) {}
  Status Start() noexcept override {
    tokens_->StartPurger(std::chrono::seconds(60),
                         [metrics = metrics_](const ActiveGrants& grants) { metrics->SetActiveGrants(grants); });
    return Status::Ok();
  }
  void Stop() noexcept override { tokens_->StopPurger(); }

 private:
  std::shared_ptr<ClientService> clients_;
  std::shared_ptr<TokenService> tokens_;
  std::shared_ptr<TokenMetrics> metrics_;
};

std::unique_ptr<Plugin> Create(PluginContext& ctx) {
  ConfigNode& c = ctx.config();
  TokenLifetimes lifetimes;
  // Any positive number of seconds (DESIGN §8): tests need tokens that expire at once.
  lifetimes.access_token_ttl = c.Int("access_token_ttl", 1800, 1, 86400);
  lifetimes.refresh_token_ttl = c.Int("refresh_token_ttl", 2592000, 1, 31536000);
  lifetimes.code_ttl = c.Int("code_ttl", 600, 1, 3600);
  c.RejectUnknown();
  for (auto [key, seconds] : {std::pair{"access_token_ttl", lifetimes.access_token_ttl},
                              std::pair{"refresh_token_ttl", lifetimes.refresh_token_ttl},
                              std::pair{"code_ttl", lifetimes.code_ttl}}) {
    if (seconds < 60)
      ctx.logger().Warn("a lifetime under a minute is meant for tests", {{"key", std::string("plugins.oauth.") + key},
                                                                          {"seconds", seconds}});
  }

  auto clients = std::make_shared<ClientService>(ctx.db(), ctx.identity(), ctx.mailer(), ctx.logger());
  auto tokens = std::make_shared<TokenService>(ctx.db(), ctx.logger(), lifetimes);
  std::vector<Migration> migrations = ClientService::Migrations();
  for (Migration& m : TokenService::Migrations()) migrations.push_back(std::move(m));
  ctx.AddMigrations(std::move(migrations));

  // One resolver for both kinds; the principal's kind tells them apart.
  ctx.AddBearerResolver(kOAuthToken, [tokens](std::string_view token) { return tokens->ResolveAccessToken(token); });

  ctx.AddAdminCommand("oauth-client", [clients](const std::vector<std::string>& args, std::ostream& out,
                                                std::ostream& err) {
    return RunClientCommand(*clients, args, out, err);
  });
  Identity& identity = ctx.identity();
  ctx.AddAdminCommand("managed-user", [clients, tokens, &identity](const std::vector<std::string>& args,
                                                                   std::ostream& out, std::ostream& err) {
    return RunManagedUserCommand(*clients, *tokens, identity, args, out, err);
  });
  RegisterClientPages(ctx, *clients);
  auto metrics = std::make_shared<TokenMetrics>(ctx.metrics());
  RegisterTokenEndpoints(ctx, *clients, *tokens, *metrics);
  RegisterAuthorizePages(ctx, *clients, *tokens);
  return std::make_unique<OAuthPlugin>(std::move(clients), std::move(tokens), std::move(metrics));
}

}  // namespace
}  // namespace rendezvous::oauth

RENDEZVOUS_DEFINE_PLUGIN("oauth", &rendezvous::oauth::Create)
