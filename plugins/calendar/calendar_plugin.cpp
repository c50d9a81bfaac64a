// The calendar plugin's wiring. Its config is checked here; the Google provider, connect flow
// and event lookup arrive with the calendar issue.
#include <memory>
#include <string>

#include "rendezvous/plugin.hpp"

namespace rendezvous::calendar {
namespace {

struct GoogleConfig {
  std::string client_id;
  std::string client_secret;
  std::string auth_url;
  std::string token_url;
  std::string api_base_url;
};

class CalendarPlugin final : public Plugin {
 public:
  explicit CalendarPlugin(GoogleConfig google) : google_(std::move(google)) {}
  Status Start() noexcept override { return Status::Ok(); }
  void Stop() noexcept override {}

 private:
  GoogleConfig google_;
};

std::string Url(ConfigNode& node, const std::string& key, const std::string& def) {
  std::string v = node.String(key, def);
  if (v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0) node.Fail(key, "must be an http(s) URL");
  return v;
}

std::unique_ptr<Plugin> Create(PluginContext& ctx) {
  ConfigNode& c = ctx.config();
  ConfigNode g = c.Child("google");
  GoogleConfig google;
  google.client_id = g.String("client_id", "");
  google.client_secret = g.Secret("client_secret", "");
  google.auth_url = Url(g, "auth_url", "https://accounts.google.com/o/oauth2/v2/auth");
  google.token_url = Url(g, "token_url", "https://oauth2.googleapis.com/token");
  google.api_base_url = Url(g, "api_base_url", "https://www.googleapis.com/calendar/v3");
  g.RejectUnknown();
  c.RejectUnknown();
  return std::make_unique<CalendarPlugin>(std::move(google));
}

}  // namespace
}  // namespace rendezvous::calendar

RENDEZVOUS_DEFINE_PLUGIN("calendar", &rendezvous::calendar::Create, "bookings")
