// The oauth plugin's wiring: config, the client service (tables, command line, pages, and the
// "oauth.clients" service for the rest of the plugin). The authorize page and the token endpoint
// arrive with issue #4.
#include <memory>

#include "client_commands.hpp"
#include "client_pages.hpp"
#include "client_service.hpp"
#include "rendezvous/plugin.hpp"

namespace rendezvous::oauth {
namespace {

struct OAuthConfig {
  long access_token_ttl = 1800;
  long refresh_token_ttl = 2592000;
  long code_ttl = 600;
};

class OAuthPlugin final : public Plugin {
 public:
  OAuthPlugin(OAuthConfig config, std::shared_ptr<ClientService> clients)
      : config_(config), clients_(std::move(clients)) {}
  Status Start() noexcept override { return Status::Ok(); }
  void Stop() noexcept override {}

 private:
  OAuthConfig config_;
  std::shared_ptr<ClientService> clients_;
};

std::unique_ptr<Plugin> Create(PluginContext& ctx) {
  ConfigNode& c = ctx.config();
  OAuthConfig config;
  config.access_token_ttl = c.Int("access_token_ttl", 1800, 60, 86400);
  config.refresh_token_ttl = c.Int("refresh_token_ttl", 2592000, 60, 31536000);
  config.code_ttl = c.Int("code_ttl", 600, 10, 3600);
  c.RejectUnknown();

  auto clients = std::make_shared<ClientService>(ctx.db(), ctx.identity(), ctx.mailer(), ctx.logger());
  ctx.AddMigrations(ClientService::Migrations());
  ctx.Provide<ClientService>("oauth.clients", clients);
  ctx.AddAdminCommand("oauth-client", [clients](const std::vector<std::string>& args, std::ostream& out,
                                                std::ostream& err) {
    return RunClientCommand(*clients, args, out, err);
  });
  RegisterClientPages(ctx, *clients);
  return std::make_unique<OAuthPlugin>(config, std::move(clients));
}

}  // namespace
}  // namespace rendezvous::oauth

RENDEZVOUS_DEFINE_PLUGIN("oauth", &rendezvous::oauth::Create)
