#include "managed_user_command.hpp"

#include <ostream>

namespace rendezvous::oauth {
namespace {

constexpr const char* kManagedUserUsage =
    "usage: rendezvous admin managed-user create --client-id ID --email E --name N [--time-zone TZ] "
    "[--username U]";

}  // namespace

int RunManagedUserCommand(ClientService& clients, ManagedUserTokens& tokens, UserDirectory& users,
                          const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] != "create") {
    err << kManagedUserUsage << "\n";
    return 2;
  }
  std::string client_id, email, name, time_zone = "UTC", username;
  bool username_given = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& flag = args[i];
    std::string* target = flag == "--client-id"   ? &client_id
                          : flag == "--email"     ? &email
                          : flag == "--name"      ? &name
                          : flag == "--time-zone" ? &time_zone
                          : flag == "--username"  ? &username
                                                  : nullptr;
    if (!target || i + 1 >= args.size()) {
      err << (target ? "missing value for " + flag : "unknown option " + flag) << "\n" << kManagedUserUsage << "\n";
      return 2;
    }
    username_given = username_given || target == &username;
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
  if (username_given && username.empty()) {
    err << "username must be 1 to 64 characters\n";
    return 1;
  }
  Result<User> user = users.CreateUser(NewUser{email, name, "", time_zone, username, false});
  if (!user.ok()) {
    err << user.status().message() << "\n";
    return 1;
  }
  TokenResponse issued = tokens.Issue(client_id, user->id);
  out << Json{{"id", user->id},
              {"email", user->email},
              {"name", user->name},
              {"timeZone", user->time_zone},
              {"username", user->username},
              {"client_id", client_id},
              {"access_token", issued.access_token},
              {"refresh_token", issued.refresh_token},
              {"expires_in", issued.expires_in}}
             .dump()
      << "\n";
  return 0;
}

}  // namespace rendezvous::oauth
