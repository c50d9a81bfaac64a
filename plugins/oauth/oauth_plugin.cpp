// The oauth plugin's wiring. Its config is checked here; clients, the authorize page and the
// token endpoint arrive with the OAuth issues (#3, #4).
#include <memory>

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
  explicit OAuthPlugin(OAuthConfig config) : config_(config) {}
  Status Start() noexcept override { return Status::Ok(); }
  void Stop() noexcept override {}

 private:
  OAuthConfig config_;
};

std::unique_ptr<Plugin> Create(PluginContext& ctx) {
  ConfigNode& c = ctx.config();
  OAuthConfig config;
  config.access_token_ttl = c.Int("access_token_ttl", 1800, 60, 86400);
  config.refresh_token_ttl = c.Int("refresh_token_ttl", 2592000, 60, 31536000);
  config.code_ttl = c.Int("code_ttl", 600, 10, 3600);
  c.RejectUnknown();
  return std::make_unique<OAuthPlugin>(config);
}

}  // namespace
}  // namespace rendezvous::oauth

RENDEZVOUS_DEFINE_PLUGIN("oauth", &rendezvous::oauth::Create)
