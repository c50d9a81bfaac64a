// OAuth clients through the real command line (DESIGN §3) against a real MariaDB: the JSON shapes,
// secrets (shown once, at most 2, rotation), the review and its mail, every re-approval row of
// specification §3.1, and bad input refused with nothing stored.
#include <chrono>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "eventually.hpp"
#include "scratch_db.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

using nlohmann::json;

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

std::string Id(const json& client) { return client.value("client_id", ""); }

std::set<std::string> Keys(const json& j) {
  std::set<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.insert(it.key());
  return out;
}

class OAuthClientsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    TestServerOptions o;
    o.top_extra = "mail:\n  log_file: \"var/test-mail.log\"\n  from: \"Rendezvous Test <rdv@test.example>\"\n";
    server_ = std::make_unique<TestServer>(db_.name(), o);
    server_->Migrate();
    owner_ = server_->CreateUser("owner@example.com", "Owner");
  }

  std::string MailLog() const { return server_->dir() + "/var/test-mail.log"; }

  CliResult Run(std::vector<std::string> args) const {
    args.insert(args.begin(), {"admin", "oauth-client"});
    return server_->Cli(args);
  }
  json Ok(const std::vector<std::string>& args) const {
    CliResult r = Run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = r.Json();
    EXPECT_TRUE(j.is_object()) << r.out;
    return j;
  }
  // A client of owner_ with the given scopes (none: legacy); extra arguments appended.
  json Create(const std::vector<std::string>& scopes, std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {"create", "--owner-id", std::to_string(owner_), "--name", "My App",
                                     "--redirect-uri", "https://app.example.com/callback"};
    for (const auto& s : scopes) args.insert(args.end(), {"--scope", s});
    args.insert(args.end(), extra.begin(), extra.end());
    return Ok(args);
  }
  json CreateApproved(const std::vector<std::string>& scopes) const {
    json c = Create(scopes);
    json r = Ok({"review", Id(c), "--accept"});
    EXPECT_EQ(r["state"], "approved");
    return r;
  }
  json Show(const std::string& client_id) const { return Ok({"show", client_id}); }
  std::string ClientCount() const { return db_.QueryValue("SELECT COUNT(*) FROM oauth_clients"); }

  // Waits (bounded) until the mail log has a line containing every needle; returns it as JSON.
  json AwaitMail(const std::vector<std::string>& needles) const {
    json found;
    if (Eventually("a mail with the expected text", {std::chrono::seconds(15)}, [&] {
          std::ifstream in(MailLog());
          for (std::string line; std::getline(in, line);) {
            bool all = true;
            for (const auto& n : needles) all = all && line.find(n) != std::string::npos;
            if (all) {
              found = json::parse(line, nullptr, false);
              return true;
            }
          }
          return false;
        })) {
      return found;
    }
    ADD_FAILURE() << "no mail with the expected text in " << MailLog() << "; server log:\n" << server_->Log();
    return json();
  }

  ScratchDatabase db_;
  std::unique_ptr<TestServer> server_;
  int64_t owner_ = 0;
};

TEST_F(OAuthClientsCli, CreateConfidentialPublicAndLegacyClients) {
  json c = Create({"BOOKING_READ", "PROFILE_READ"}, {"--purpose", "Sync bookings", "--website", "https://app.example.com"});
  const std::set<std::string> required = {"client_id", "client_secret", "name", "kind", "state", "legacy",
                                          "scopes", "redirect_uris", "secrets", "owner_id"};
  for (const auto& k : required) EXPECT_TRUE(c.contains(k)) << k << " missing in " << c.dump();
  EXPECT_TRUE(c["client_id"].is_string());
  EXPECT_GE(Id(c).size(), 16u);
  const std::string secret = c["client_secret"];
  EXPECT_GE(secret.size(), 43u);  // >= 256 bits of randomness
  EXPECT_EQ(c["name"], "My App");
  EXPECT_EQ(c["kind"], "confidential");
  EXPECT_EQ(c["state"], "pending");
  EXPECT_EQ(c["legacy"], false);
  EXPECT_EQ(c["scopes"], json({"BOOKING_READ", "PROFILE_READ"}));
  EXPECT_EQ(c["redirect_uris"], json({"https://app.example.com/callback"}));
  EXPECT_EQ(c["owner_id"], owner_);
  EXPECT_EQ(c["purpose"], "Sync bookings");
  ASSERT_EQ(c["secrets"].size(), 1u);
  EXPECT_EQ(Keys(c["secrets"][0]), (std::set<std::string>{"secret_id", "hint", "created_at"}));
  EXPECT_EQ(c["secrets"][0]["hint"], secret.substr(secret.size() - 4));

  // Shown once: `show` has the secret's id and hint, never the secret.
  json shown = Show(Id(c));
  EXPECT_FALSE(shown.contains("client_secret"));
  EXPECT_EQ(shown["secrets"], c["secrets"]);
  EXPECT_EQ(shown["state"], "pending");
  EXPECT_EQ(shown.dump().find(secret), std::string::npos);

  // Stored as SHA-256 only.
  const std::string secret_id = std::to_string(c["secrets"][0]["secret_id"].get<int64_t>());
  EXPECT_EQ(db_.QueryValue("SELECT secret_hash FROM oauth_client_secrets WHERE id = " + secret_id), Sha256Hex(secret));
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM oauth_client_secrets WHERE secret_hash = '" + secret + "' OR hint = '" +
                           secret + "'"),
            "0");

  json pub = Create({"BOOKING_READ"}, {"--public"});
  EXPECT_EQ(pub["kind"], "public");
  EXPECT_FALSE(pub.contains("client_secret"));
  EXPECT_EQ(pub["secrets"], json::array());
  EXPECT_EQ(pub["legacy"], false);
  EXPECT_NE(Id(pub), Id(c));

  json legacy = Create({});
  EXPECT_EQ(legacy["legacy"], true);
  EXPECT_EQ(legacy["scopes"], json::array());
  EXPECT_EQ(legacy["state"], "pending");
  json old_values = Create({"READ_BOOKING", "READ_PROFILE"});
  EXPECT_EQ(old_values["legacy"], true);
}

TEST_F(OAuthClientsCli, SecretRotation) {
  json c = Create({"BOOKING_READ"});
  const std::string id = Id(c);
  const int64_t first = c["secrets"][0]["secret_id"];

  json second = Ok({"secret", "generate", id});
  EXPECT_EQ(Keys(second), (std::set<std::string>{"secret_id", "client_secret"}));
  const std::string second_secret = second["client_secret"];
  EXPECT_NE(second_secret, c["client_secret"]);
  EXPECT_EQ(Show(id)["secrets"].size(), 2u);

  CliResult third = Run({"secret", "generate", id});
  EXPECT_EQ(third.exit_code, 1);
  EXPECT_NE(third.err.find("at most 2 active secrets"), std::string::npos) << third.err;
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM oauth_client_secrets WHERE client_id = '" + id + "'"), "2");

  json revoked = Ok({"secret", "revoke", id, std::to_string(first)});
  EXPECT_EQ(revoked["revoked"], true);
  json after = Show(id);
  ASSERT_EQ(after["secrets"].size(), 1u);
  EXPECT_EQ(after["secrets"][0]["secret_id"], second["secret_id"]);
  EXPECT_EQ(db_.QueryValue("SELECT revoked_at IS NOT NULL FROM oauth_client_secrets WHERE id = " + std::to_string(first)), "1");

  CliResult again = Run({"secret", "revoke", id, std::to_string(first)});
  EXPECT_EQ(again.exit_code, 1) << again.out;

  CliResult last = Run({"secret", "revoke", id, std::to_string(second["secret_id"].get<int64_t>())});
  EXPECT_EQ(last.exit_code, 1);
  EXPECT_NE(last.err.find("last active secret"), std::string::npos) << last.err;
  EXPECT_EQ(Show(id)["secrets"].size(), 1u);

  // After a revoke there is room for a new one again.
  json third_ok = Ok({"secret", "generate", id});
  EXPECT_EQ(Show(id)["secrets"].size(), 2u);
  EXPECT_NE(third_ok["client_secret"], second_secret);

  json pub = Create({"BOOKING_READ"}, {"--public"});
  CliResult pub_secret = Run({"secret", "generate", Id(pub)});
  EXPECT_EQ(pub_secret.exit_code, 1);
  EXPECT_NE(pub_secret.err.find("public clients have no secrets"), std::string::npos) << pub_secret.err;

  CliResult unknown = Run({"secret", "generate", "no-such-client"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("not found"), std::string::npos) << unknown.err;
}

TEST_F(OAuthClientsCli, ReviewMailsTheOwner) {
  ASSERT_TRUE(server_->Start());
  json a = Create({"BOOKING_READ"});
  json accepted = Ok({"review", Id(a), "--accept"});
  EXPECT_EQ(accepted["state"], "approved");
  EXPECT_EQ(accepted["review_reason"], "");
  json mail = AwaitMail({"owner@example.com", "approved", Id(a)});
  EXPECT_EQ(mail["to"], "owner@example.com");
  EXPECT_EQ(mail["subject"], "Your OAuth client \"My App\" was approved");
  EXPECT_TRUE(mail["at"].is_string());

  json b = Create({"BOOKING_READ"});
  json rejected = Ok({"review", Id(b), "--reject", "--reason", "The website does not load"});
  EXPECT_EQ(rejected["state"], "rejected");
  EXPECT_EQ(rejected["review_reason"], "The website does not load");
  json rmail = AwaitMail({"owner@example.com", "rejected", "The website does not load"});
  EXPECT_EQ(rmail["subject"], "Your OAuth client \"My App\" was rejected");
  EXPECT_NE(rmail["text"].get<std::string>().find(Id(b)), std::string::npos);

  // Only pending clients are reviewed.
  CliResult twice = Run({"review", Id(a), "--reject"});
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_NE(twice.err.find("only pending clients"), std::string::npos) << twice.err;
  EXPECT_EQ(Show(Id(a))["state"], "approved");

  EXPECT_EQ(Run({"review", Id(a)}).exit_code, 2);
  EXPECT_EQ(Run({"review", Id(a), "--accept", "--reject"}).exit_code, 2);
  EXPECT_EQ(Run({"review", "no-such-client", "--accept"}).exit_code, 1);
  EXPECT_EQ(server_->Stop(), 0);
}

TEST_F(OAuthClientsCli, ReapprovalRulesOfSection31) {
  struct Row {
    const char* what;
    std::vector<std::string> scopes;  // of the approved client
    std::vector<std::string> update;  // arguments after `update CLIENT_ID`
    const char* state_after;
    bool legacy_after;
  };
  const std::vector<Row> rows = {
      {"name change", {"BOOKING_READ"}, {"--name", "Renamed"}, "pending", false},
      {"logo change", {"BOOKING_READ"}, {"--logo", "https://app.example.com/logo.png"}, "pending", false},
      {"website change", {"BOOKING_READ"}, {"--website", "https://other.example.com"}, "pending", false},
      {"redirect URI change", {"BOOKING_READ"}, {"--redirect-uri", "https://app.example.com/cb2"}, "pending", false},
      {"scope expansion", {"BOOKING_READ"}, {"--add-scope", "APPS_READ"}, "pending", false},
      {"X_READ while X_WRITE granted", {"EVENT_TYPE_WRITE"}, {"--add-scope", "EVENT_TYPE_READ"}, "approved", false},
      {"scope removal", {"BOOKING_READ", "PROFILE_READ"}, {"--remove-scope", "PROFILE_READ"}, "approved", false},
      {"purpose change", {"BOOKING_READ"}, {"--purpose", "Now with more detail"}, "approved", false},
      {"legacy adds TEAM_ scope", {}, {"--add-scope", "TEAM_BOOKING_READ"}, "pending", false},
      {"legacy adds ORG_ scope", {"READ_BOOKING"}, {"--add-scope", "ORG_PROFILE_READ"}, "pending", false},
      {"legacy adds user-level scopes", {}, {"--add-scope", "BOOKING_READ", "--add-scope", "PROFILE_READ"}, "approved", false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    json c = CreateApproved(row.scopes);
    std::vector<std::string> args = {"update", Id(c)};
    args.insert(args.end(), row.update.begin(), row.update.end());
    json u = Ok(args);
    EXPECT_EQ(u["state"], row.state_after);
    EXPECT_EQ(u["legacy"], row.legacy_after);
    EXPECT_EQ(Show(Id(c))["state"], row.state_after);
  }

  // The way out of `rejected` (left open by the specification): the owner's edit -> pending.
  json r = Create({"BOOKING_READ"});
  Ok({"review", Id(r), "--reject", "--reason", "Name is misleading"});
  json edited = Ok({"update", Id(r), "--name", "Clearer Name"});
  EXPECT_EQ(edited["state"], "pending");
  EXPECT_EQ(edited["review_reason"], "");
  EXPECT_EQ(edited["name"], "Clearer Name");

  // Redirect URIs given to update replace the list; scopes removed and added in one call.
  json m = CreateApproved({"BOOKING_READ", "PROFILE_READ"});
  json replaced = Ok({"update", Id(m), "--redirect-uri", "https://a.example.com/cb", "--redirect-uri",
                      "http://127.0.0.1:5000/cb", "--remove-scope", "PROFILE_READ"});
  EXPECT_EQ(replaced["redirect_uris"], json({"https://a.example.com/cb", "http://127.0.0.1:5000/cb"}));
  EXPECT_EQ(replaced["scopes"], json({"BOOKING_READ"}));
  EXPECT_EQ(replaced["state"], "pending");
}

TEST_F(OAuthClientsCli, BadInputIsRefusedAndNothingStored) {
  const std::string owner = std::to_string(owner_);
  auto base = [&](const std::string& name, const std::vector<std::string>& uris, const std::vector<std::string>& scopes,
                  const std::string& owner_id) {
    std::vector<std::string> args = {"create", "--owner-id", owner_id, "--name", name};
    for (const auto& u : uris) args.insert(args.end(), {"--redirect-uri", u});
    for (const auto& s : scopes) args.insert(args.end(), {"--scope", s});
    return args;
  };
  std::vector<std::string> eleven;
  for (int i = 0; i < 11; ++i) eleven.push_back("https://app.example.com/cb" + std::to_string(i));
  struct Bad {
    const char* what;
    std::vector<std::string> args;
    const char* message;
  };
  const std::vector<Bad> cases = {
      {"11 redirect URIs", base("App", eleven, {"BOOKING_READ"}, owner), "at most 10 redirect URIs"},
      {"relative URI", base("App", {"/callback"}, {"BOOKING_READ"}, owner), "redirect URI 1"},
      {"fragment", base("App", {"https://app.example.com/cb#frag"}, {"BOOKING_READ"}, owner), "fragment"},
      {"http non-loopback", base("App", {"http://app.example.com/cb"}, {"BOOKING_READ"}, owner), "https"},
      {"unknown scope", base("App", {"https://app.example.com/cb"}, {"BOOKING_READ", "NOPE_READ"}, owner),
       "unknown scope: NOPE_READ"},
      {"empty name", base("", {"https://app.example.com/cb"}, {"BOOKING_READ"}, owner), "name is required"},
      {"blank name", base("   ", {"https://app.example.com/cb"}, {"BOOKING_READ"}, owner), "name is required"},
      {"unknown owner", base("App", {"https://app.example.com/cb"}, {"BOOKING_READ"}, "999999"), "owner 999999 not found"},
      {"no redirect URI", base("App", {}, {"BOOKING_READ"}, owner), "redirect URI"},
  };
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.what);
    CliResult r = Run(bad.args);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.err.find(bad.message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_EQ(ClientCount(), "0");
  EXPECT_EQ(db_.QueryValue("SELECT COUNT(*) FROM oauth_client_secrets"), "0");

  // Usage errors exit 2.
  EXPECT_EQ(Run({"create", "--name", "App"}).exit_code, 2);  // no --owner-id
  EXPECT_EQ(Run({"create", "--owner-id", "abc", "--name", "App"}).exit_code, 2);
  EXPECT_EQ(Run({"create", "--owner-id", owner, "--name", "App", "--colour", "red"}).exit_code, 2);
  EXPECT_EQ(Run({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(Run({}).exit_code, 2);
  EXPECT_EQ(Run({"show"}).exit_code, 2);
  EXPECT_EQ(Run({"secret", "revoke", "x", "not-a-number"}).exit_code, 2);
  EXPECT_EQ(ClientCount(), "0");

  // A bad update changes nothing.
  json c = CreateApproved({"BOOKING_READ"});
  const std::string id = Id(c);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"update", id, "--redirect-uri", "http://evil.example.com/cb"},
           {"update", id, "--name", ""},
           {"update", id, "--add-scope", "NOT_A_SCOPE"},
           {"update", id, "--remove-scope", "BOOKING_READ"},  // would leave no scope
           {"update", id, "--remove-scope", "APPS_READ"},     // not granted
           {"update", id, "--name", "Renamed", "--redirect-uri", "https://x.example.com/cb#f"}}) {
    CliResult r = Run(args);
    EXPECT_EQ(r.exit_code, 1) << args[2] << ": " << r.out;
    EXPECT_FALSE(r.err.empty());
  }
  json after = Show(id);
  EXPECT_EQ(after["name"], "My App");
  EXPECT_EQ(after["state"], "approved");
  EXPECT_EQ(after["redirect_uris"], c["redirect_uris"]);
  EXPECT_EQ(after["scopes"], c["scopes"]);
  EXPECT_EQ(Run({"show", "no-such-client"}).exit_code, 1);
}

}  // namespace
}  // namespace rendezvous::testing
