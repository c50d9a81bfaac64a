#include "client_commands.hpp"

#include <algorithm>
#include <ostream>
#include <stdexcept>

#include "rendezvous/cli_args.hpp"
#include "rendezvous/digits.hpp"

namespace rendezvous::oauth {
namespace {

constexpr const char* kUsage = R"(usage:
  oauth-client create --owner-id ID --name N --redirect-uri U [--redirect-uri U]...
      --scope S [--scope S]... [--public] [--purpose TEXT] [--website URL] [--logo URL]
      [--require-par]
      (no --scope creates a legacy client)
  oauth-client update CLIENT_ID [--name N] [--logo URL] [--website URL] [--purpose TEXT]
      [--redirect-uri U]... [--add-scope S]... [--remove-scope S]... [--require-par true|false]
  oauth-client review CLIENT_ID --accept | --reject [--reason TEXT]
  oauth-client secret generate CLIENT_ID
  oauth-client secret revoke CLIENT_ID SECRET_ID
  oauth-client show CLIENT_ID)";

// A usage error (exit 2).
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

int64_t ParseId(const std::string& what, const std::string& text) {
  const std::optional<int64_t> v = text::ParseDigits(text, 1);
  if (!v) throw UsageError(what + " must be a positive integer");
  return *v;
}

void ExpectPositional(const CliArgs& a, size_t count, const char* form) {
  if (a.positional().size() != count) throw UsageError(std::string("usage: oauth-client ") + form);
}

int Fail(std::ostream& err, const std::string& command, const Status& s) {
  err << "oauth-client " << command << ": " << s.message() << std::endl;
  return 1;
}

int Create(ClientService& service, const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
         bool& parsing) {
  CliArgs a(args, {"owner-id", "name", "redirect-uri", "scope", "purpose", "website", "logo"},
            {"public", "require-par"});
  ExpectPositional(a, 1, "create --owner-id ID --name N --redirect-uri U... --scope S... [--public] ...");
  NewClient req;
  req.owner_id = ParseId("--owner-id", a.Require("owner-id"));
  req.kind = a.Flag("public") ? ClientKind::kPublic : ClientKind::kConfidential;
  req.settings.name = a.Require("name");
  req.settings.redirect_uris = a.GetAll("redirect-uri");
  req.settings.scopes = a.GetAll("scope");
  req.settings.purpose = a.Get("purpose").value_or("");
  req.settings.website = a.Get("website").value_or("");
  req.settings.logo = a.Get("logo").value_or("");
  req.allow_no_scopes = true;  // DESIGN §3: no --scope creates a legacy client
  req.require_par = a.Flag("require-par");
  parsing = false;
  auto created = service.Create(req);
  if (!created.ok()) return Fail(err, "create", created.status());
  out << ClientJson(created->first, created->second).dump() << std::endl;
  return 0;
}

int Update(ClientService& service, const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
         bool& parsing) {
  CliArgs a(
      args,
      {"name", "logo", "website", "purpose", "redirect-uri", "add-scope", "remove-scope", "require-par"}, {});
  ExpectPositional(a, 2, "update CLIENT_ID [--name N] [--logo URL] [--website URL] [--purpose TEXT] ...");
  ClientUpdate u;
  u.name = a.Get("name");
  u.logo = a.Get("logo");
  u.website = a.Get("website");
  u.purpose = a.Get("purpose");
  if (auto uris = a.GetAll("redirect-uri"); !uris.empty()) u.redirect_uris = uris;
  u.add_scopes = a.GetAll("add-scope");
  u.remove_scopes = a.GetAll("remove-scope");
  if (auto require_par = a.Get("require-par")) {
    if (*require_par != "true" && *require_par != "false")
      throw UsageError("--require-par must be true or false");
    u.require_par = *require_par == "true";
  }
  parsing = false;
  auto updated = service.Update(a.positional()[1], std::nullopt, u);
  if (!updated.ok()) return Fail(err, "update", updated.status());
  out << ClientJson(*updated).dump() << std::endl;
  return 0;
}

int Review(ClientService& service, const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
         bool& parsing) {
  CliArgs a(args, {"reason"}, {"accept", "reject"});
  ExpectPositional(a, 2, "review CLIENT_ID --accept | --reject [--reason TEXT]");
  if (a.Flag("accept") == a.Flag("reject")) throw UsageError("review needs exactly one of --accept and --reject");
  parsing = false;
  auto reviewed = service.Review(a.positional()[1], a.Flag("accept"), a.Get("reason").value_or(""));
  if (!reviewed.ok()) return Fail(err, "review", reviewed.status());
  out << ClientJson(*reviewed).dump() << std::endl;
  return 0;
}

int Secret(ClientService& service, const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
         bool& parsing) {
  CliArgs a(args, {}, {});
  const auto& p = a.positional();
  if (p.size() == 3 && p[1] == "generate") {
    parsing = false;
    auto created = service.GenerateSecret(p[2], std::nullopt);
    if (!created.ok()) return Fail(err, "secret generate", created.status());
    out << Json{{"secret_id", created->info.secret_id}, {"client_secret", created->secret}}.dump() << std::endl;
    return 0;
  }
  if (p.size() == 4 && p[1] == "revoke") {
    const int64_t secret_id = ParseId("SECRET_ID", p[3]);
    parsing = false;
    Status s = service.RevokeSecret(p[2], secret_id, std::nullopt);
    if (!s.ok()) return Fail(err, "secret revoke", s);
    out << Json{{"client_id", p[2]}, {"secret_id", secret_id}, {"revoked", true}}.dump() << std::endl;
    return 0;
  }
  throw UsageError("usage: oauth-client secret generate CLIENT_ID | secret revoke CLIENT_ID SECRET_ID");
}

int Show(ClientService& service, const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
         bool& parsing) {
  CliArgs a(args, {}, {});
  ExpectPositional(a, 2, "show CLIENT_ID");
  parsing = false;
  auto client = service.Get(a.positional()[1]);
  if (!client.ok()) return Fail(err, "show", client.status());
  out << ClientJson(*client).dump() << std::endl;
  return 0;
}

}  // namespace

int RunClientCommand(ClientService& service, const std::vector<std::string>& args, std::ostream& out,
                     std::ostream& err) {
  const std::string command = args.empty() ? "" : args[0];
  bool parsing = true;  // std::invalid_argument while parsing is a usage error, later it is not
  try {
    if (command == "create") return Create(service, args, out, err, parsing);
    if (command == "update") return Update(service, args, out, err, parsing);
    if (command == "review") return Review(service, args, out, err, parsing);
    if (command == "secret") return Secret(service, args, out, err, parsing);
    if (command == "show") return Show(service, args, out, err, parsing);
    err << (command.empty() ? "" : "unknown oauth-client command '" + command + "'\n") << kUsage << std::endl;
    return 2;
  } catch (const std::invalid_argument& e) {  // CliArgs and UsageError
    if (!parsing) {
      err << "oauth-client " << command << ": " << e.what() << std::endl;
      return 1;
    }
    err << "oauth-client " << command << ": " << e.what() << "\n" << kUsage << std::endl;
    return 2;
  }
}

}  // namespace rendezvous::oauth
