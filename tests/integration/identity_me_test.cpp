// GET and PATCH /v2/me in Cal.com's shape (DESIGN §9, §10) against the real binary and MariaDB:
// every field Cal.com's MeOutput requires, of its type; usernames chosen on the command line or
// derived from the e-mail, changed through PATCH (409 username_taken); timeFormat; the default
// schedule's id from the bookings plugin.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bookings_fixture.hpp"

namespace rendezvous::testing {
namespace {

// Cal.com's MeOutput (its API v2 document, components.schemas.MeOutput): the required fields and
// their types. "number" fields are JSON numbers; nullable ones may also be null.
struct Required {
  const char* field;
  const char* type;  // "number" or "string"
  bool nullable;
};
constexpr Required kMeOutput[] = {
    {"id", "number", false},         {"username", "string", false},         {"email", "string", false},
    {"timeFormat", "number", false}, {"defaultScheduleId", "number", true}, {"weekStart", "string", false},
    {"timeZone", "string", false},   {"organizationId", "number", true},
};

// Fails the test for every way `envelope` would not validate against Cal.com's GetMeOutput /
// UpdateMeOutput ({status: "success", data: MeOutput}).
void ExpectCalcomMe(const json& envelope, const std::string& what) {
  ASSERT_TRUE(envelope.is_object()) << what;
  EXPECT_EQ(envelope.value("status", ""), "success") << what;
  ASSERT_TRUE(envelope.contains("data") && envelope["data"].is_object()) << what << ": " << envelope.dump();
  const json& data = envelope["data"];
  for (const Required& r : kMeOutput) {
    ASSERT_TRUE(data.contains(r.field)) << what << ": no " << r.field << " in " << data.dump();
    const json& v = data[r.field];
    if (v.is_null()) {
      EXPECT_TRUE(r.nullable) << what << ": " << r.field << " is null";
      continue;
    }
    if (std::string(r.type) == "number") {
      EXPECT_TRUE(v.is_number()) << what << ": " << r.field << " = " << v.dump();
    } else {
      EXPECT_TRUE(v.is_string()) << what << ": " << r.field << " = " << v.dump();
    }
  }
}

class IdentityMe : public BookingsFixture {
 protected:
  void SetUp() override { StartServer(); }

  json Me(const std::string& key) {
    HttpResult r = Call("GET", "/v2/me", key);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json();
  }
};

TEST_F(IdentityMe, AnswersInCalcomsShape) {
  const json me = Me(owner_key_);
  ExpectCalcomMe(me, "GET /v2/me");
  const json& data = me["data"];
  EXPECT_EQ(data["id"], owner_);
  EXPECT_EQ(data["username"], "owner");  // derived from owner@example.com
  EXPECT_EQ(data["timeFormat"], 12);
  // Every user is made with a default schedule, the implicit default's hours stored (DESIGN §9).
  ASSERT_TRUE(data["defaultScheduleId"].is_number_integer()) << data;
  const int64_t made = data["defaultScheduleId"];
  HttpResult made_schedule = Call("GET", "/v2/schedules/default", owner_key_);
  ASSERT_EQ(made_schedule.status, 200) << made_schedule.body;
  EXPECT_EQ(made_schedule.Json()["data"]["id"], made);
  EXPECT_EQ(made_schedule.Json()["data"]["name"], "Working hours");
  EXPECT_TRUE(data["organizationId"].is_null());
  // Our own fields stay beside Cal.com's.
  EXPECT_EQ(data["name"], "Olga Owner");
  EXPECT_TRUE(data["createdDate"].is_string());
  EXPECT_EQ(Me(other_key_)["data"]["username"], "other");
  const json other_default = Me(other_key_)["data"]["defaultScheduleId"];
  ASSERT_TRUE(other_default.is_number_integer());
  EXPECT_NE(other_default, made);

  // A schedule stored later is not the default unless asked for.
  HttpResult created = Call("POST", "/v2/schedules", owner_key_, R"({"name":"Office hours"})");
  ASSERT_EQ(created.status, 201) << created.body;
  const int64_t first = created.Json()["data"]["id"];
  json after = Me(owner_key_);
  ExpectCalcomMe(after, "GET /v2/me with a schedule");
  EXPECT_EQ(after["data"]["defaultScheduleId"], made);
  // Another one made the default replaces it; the other user is untouched.
  HttpResult second = Call("POST", "/v2/schedules", owner_key_, R"({"name":"Evenings","isDefault":true})");
  ASSERT_EQ(second.status, 201) << second.body;
  EXPECT_EQ(Me(owner_key_)["data"]["defaultScheduleId"], second.Json()["data"]["id"]);
  EXPECT_EQ(Me(other_key_)["data"]["defaultScheduleId"], other_default);

  // PATCH /v2/me may name another of one's schedules the default (Cal.com's input has it).
  HttpResult back = Call("PATCH", "/v2/me", owner_key_, json{{"defaultScheduleId", first}});
  ASSERT_EQ(back.status, 200) << back.body;
  ExpectCalcomMe(back.Json(), "PATCH /v2/me defaultScheduleId");
  EXPECT_EQ(back.Json()["data"]["defaultScheduleId"], first);
  HttpResult schedule = Call("GET", "/v2/schedules/" + std::to_string(first), owner_key_);
  EXPECT_TRUE(schedule.Json()["data"]["isDefault"].get<bool>()) << schedule.body;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM schedules WHERE default_owner_id = " + std::to_string(owner_)), 1);
  // Another user's schedule (or none) is refused naming the field, and nothing of that patch is
  // written.
  HttpResult foreign =
      Call("PATCH", "/v2/me", other_key_, json{{"name", "Changed"}, {"defaultScheduleId", first}});
  EXPECT_EQ(foreign.status, 400) << foreign.body;
  EXPECT_EQ(foreign.Json()["error"]["details"]["field"], "defaultScheduleId");
  EXPECT_EQ(Me(other_key_)["data"]["name"], "Otto Other");
  EXPECT_EQ(Me(owner_key_)["data"]["defaultScheduleId"], first);
  EXPECT_EQ(Call("PATCH", "/v2/me", owner_key_, R"({"defaultScheduleId":0})").status, 400);
}

TEST_F(IdentityMe, PatchChangesUsernameAndTimeFormat) {
  HttpResult p = Call("PATCH", "/v2/me", owner_key_, R"({"username":"olga.o","timeFormat":24})");
  ASSERT_EQ(p.status, 200) << p.body;
  ExpectCalcomMe(p.Json(), "PATCH /v2/me");
  EXPECT_EQ(p.Json()["data"]["username"], "olga.o");
  EXPECT_EQ(p.Json()["data"]["timeFormat"], 24);
  json me = Me(owner_key_)["data"];
  EXPECT_EQ(me["username"], "olga.o");
  EXPECT_EQ(me["timeFormat"], 24);
  EXPECT_EQ(me["name"], "Olga Owner");

  // Back to 12; one's own username again is no conflict.
  p = Call("PATCH", "/v2/me", owner_key_, R"({"username":"olga.o","timeFormat":12})");
  ASSERT_EQ(p.status, 200) << p.body;
  EXPECT_EQ(p.Json()["data"]["timeFormat"], 12);
}

TEST_F(IdentityMe, TakenAndInvalidUsernamesAreRefused) {
  HttpResult taken = Call("PATCH", "/v2/me", other_key_, R"({"username":"owner","name":"Changed"})");
  EXPECT_EQ(taken.status, 409) << taken.body;
  EXPECT_EQ(taken.Json()["status"], "error");
  EXPECT_EQ(taken.Json()["error"]["code"], "username_taken");
  EXPECT_EQ(taken.Json()["error"]["details"]["field"], "username");

  struct Bad {
    const char* body;
    const char* field;
  };
  const std::vector<Bad> bad = {
      {R"({"username":"Owner2"})", "username"}, {R"({"username":"has space"})", "username"},
      {R"({"username":""})", "username"},       {R"({"username":12})", "username"},
      {R"({"timeFormat":13})", "timeFormat"},   {R"({"timeFormat":"24"})", "timeFormat"},
      {R"({"timeFormat":null})", "timeFormat"}, {R"({"name":"Changed","timeFormat":0})", "timeFormat"},
  };
  for (const Bad& b : bad) {
    HttpResult r = Call("PATCH", "/v2/me", other_key_, b.body);
    EXPECT_EQ(r.status, 400) << b.body << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], b.field) << b.body << " " << r.body;
  }
  const std::string long_name(65, 'a');
  EXPECT_EQ(Call("PATCH", "/v2/me", other_key_, json{{"username", long_name}}).status, 400);
  // Nothing of a refused patch was written, and the server still serves.
  json me = Me(other_key_)["data"];
  EXPECT_EQ(me["username"], "other");
  EXPECT_EQ(me["name"], "Otto Other");
  EXPECT_EQ(me["timeFormat"], 12);
  EXPECT_EQ(Me(owner_key_)["data"]["username"], "owner");
}

TEST_F(IdentityMe, CommandLineTakesOrDerivesUsernames) {
  CliResult chosen = server_->Cli({"admin", "user", "create", "--email", "ann@example.com", "--name", "Ann",
                                   "--password", "correct horse", "--username", "ann-b"});
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_EQ(chosen.Json()["username"], "ann-b");
  EXPECT_EQ(chosen.Json()["email"], "ann@example.com");
  // Derived: "ann" is free (the first Ann chose another name), then "ann1".
  CliResult derived = server_->Cli(
      {"admin", "user", "create", "--email", "Ann@Example.org", "--name", "Ann Two", "--password", "pw"});
  ASSERT_EQ(derived.exit_code, 0) << derived.err;
  EXPECT_EQ(derived.Json()["username"], "ann");
  CliResult third = server_->Cli(
      {"admin", "user", "create", "--email", "ann@example.net", "--name", "Ann Three", "--password", "pw"});
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(third.Json()["username"], "ann1");

  CliResult dup = server_->Cli({"admin", "user", "create", "--email", "x@example.com", "--name", "X",
                                "--password", "pw", "--username", "ann-b"});
  EXPECT_EQ(dup.exit_code, 1);
  EXPECT_NE(dup.err.find("username"), std::string::npos) << dup.err;
  CliResult invalid = server_->Cli({"admin", "user", "create", "--email", "x@example.com", "--name", "X",
                                    "--password", "pw", "--username", "Not Valid"});
  EXPECT_EQ(invalid.exit_code, 1);
  EXPECT_NE(invalid.err.find("username"), std::string::npos) << invalid.err;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM users WHERE email = 'x@example.com'"), 0);

  // Managed users: chosen or derived the same way.
  CliResult client =
      server_->Cli({"admin", "oauth-client", "create", "--owner-id", std::to_string(owner_), "--name",
                    "Platform", "--redirect-uri", "https://platform.example/cb", "--scope", "PROFILE_READ"});
  ASSERT_EQ(client.exit_code, 0) << client.err;
  const std::string client_id = client.Json()["client_id"];
  CliResult managed = server_->Cli({"admin", "managed-user", "create", "--client-id", client_id, "--email",
                                    "mu@example.com", "--name", "Managed", "--username", "platform-mu_1"});
  ASSERT_EQ(managed.exit_code, 0) << managed.err;
  EXPECT_EQ(managed.Json()["username"], "platform-mu_1");
  EXPECT_FALSE(managed.Json().value("access_token", "").empty());
  CliResult managed_derived = server_->Cli({"admin", "managed-user", "create", "--client-id", client_id,
                                            "--email", "owner@platform.example", "--name", "Managed Two"});
  ASSERT_EQ(managed_derived.exit_code, 0) << managed_derived.err;
  EXPECT_EQ(managed_derived.Json()["username"], "owner1");
  CliResult managed_taken =
      server_->Cli({"admin", "managed-user", "create", "--client-id", client_id, "--email", "mu2@example.com",
                    "--name", "M", "--username", "owner"});
  EXPECT_EQ(managed_taken.exit_code, 1);
  EXPECT_NE(managed_taken.err.find("username"), std::string::npos) << managed_taken.err;

  // A new user's /v2/me shows the username it was given.
  const std::string key = server_->CreateApiKey(chosen.Json()["id"].get<int64_t>());
  EXPECT_EQ(Me(key)["data"]["username"], "ann-b");
}

}  // namespace
}  // namespace rendezvous::testing
