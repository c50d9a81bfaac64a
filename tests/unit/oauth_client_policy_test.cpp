#include "client_policy.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rendezvous::oauth {
namespace {

using ::testing::HasSubstr;

// ---- legacy derivation (§2.1) ----

TEST(OAuthLegacy, DerivedExactlyAsSection2_1) {
  EXPECT_TRUE(IsLegacyClient({}));
  EXPECT_TRUE(IsLegacyClient({"READ_BOOKING"}));
  EXPECT_TRUE(IsLegacyClient({"READ_PROFILE"}));
  EXPECT_TRUE(IsLegacyClient({"READ_BOOKING", "READ_PROFILE"}));
  EXPECT_TRUE(IsLegacyClient({"READ_PROFILE", "READ_BOOKING", "READ_PROFILE"}));
  EXPECT_FALSE(IsLegacyClient({"BOOKING_READ"}));
  EXPECT_FALSE(IsLegacyClient({"READ_BOOKING", "BOOKING_READ"}));
  EXPECT_FALSE(IsLegacyClient({"READ_BOOKING", "TEAM_BOOKING_READ"}));
  EXPECT_FALSE(IsLegacyClient({"ORG_PROFILE_READ"}));
  EXPECT_FALSE(IsLegacyClient({"read_booking"}));
}

TEST(OAuthClientNames, StateAndKindRoundTrip) {
  for (ClientState s : {ClientState::kPending, ClientState::kApproved, ClientState::kRejected}) {
    EXPECT_EQ(ParseClientState(ClientStateName(s)), s);
  }
  EXPECT_EQ(ClientStateName(ClientState::kApproved), "approved");
  EXPECT_EQ(ParseClientState("Approved"), std::nullopt);
  for (ClientKind k : {ClientKind::kConfidential, ClientKind::kPublic}) {
    EXPECT_EQ(ParseClientKind(ClientKindName(k)), k);
  }
  EXPECT_EQ(ParseClientKind("secret"), std::nullopt);
}

// ---- redirect URIs ----

TEST(OAuthRedirectUri, AcceptsHttpsAndLoopbackHttp) {
  for (const char* uri : {"https://app.example.com/callback", "https://app.example.com",
                          "https://app.example.com:8443/cb?x=1&y=2", "HTTPS://APP.EXAMPLE.COM/cb",
                          "http://localhost/cb", "http://LocalHost:3000/cb", "http://127.0.0.1/cb",
                          "http://127.1.2.3:8080/cb", "http://[::1]:8080/cb", "https://[2001:db8::1]/cb",
                          "https://xn--bcher-kva.example/cb"}) {
    EXPECT_TRUE(ValidateRedirectUri(uri).ok()) << uri << ": " << ValidateRedirectUri(uri).message();
  }
}

TEST(OAuthRedirectUri, RejectsWithClearMessages) {
  struct Case {
    const char* uri;
    const char* message_part;
  };
  const Case cases[] = {
      {"", "empty"},
      {"/callback", "absolute"},
      {"callback", "absolute"},
      {"app.example.com/cb", "absolute"},
      {"https:/app.example.com/cb", "absolute"},
      {"https://app.example.com/cb#frag", "fragment"},
      {"https://app.example.com/cb#", "fragment"},
      {"http://app.example.com/cb", "https"},
      {"http://127.0.0.1.example.com/cb", "https"},
      {"http://localhost.example.com/cb", "https"},
      {"http://128.0.0.1/cb", "https"},
      {"http://[::2]/cb", "https"},
      {"ftp://app.example.com/cb", "https"},
      {"javascript://alert(1)", "https"},
      {"com.example.app:/callback", "absolute"},
      {"https:///cb", "no host"},
      {"https://user:pass@app.example.com/cb", "credentials"},
      {"https://app.example.com:0/cb", "port"},
      {"https://app.example.com:65536/cb", "port"},
      {"https://app.example.com:/cb", "port"},
      {"https://app.example.com:8x/cb", "port"},
      {"https://app.example.com/c b", "spaces"},
      {"https://app.example.com/\xc3\xa9", "non-ASCII"},
      {"https://app.example.com\\@evil.com/", "backslash"},
      {"https://[::1/cb", "IPv6"},
      {"https://[zz]/cb", "IPv6"},
      {"https://exa%6dple.com/cb", "host"},
      // The OAuth copy of the URL parser took any hex digits, colons and dots for an IPv6 address.
      {"https://[:::::]/cb", "IPv6"},
      {"https://[1.2.3.4]/cb", "IPv6"},
      {"https://[::1::2]/cb", "IPv6"},
  };
  for (const Case& c : cases) {
    Status s = ValidateRedirectUri(c.uri);
    EXPECT_FALSE(s.ok()) << c.uri;
    EXPECT_EQ(s.code(), ErrorCode::kInvalid) << c.uri;
    EXPECT_THAT(s.message(), HasSubstr(c.message_part)) << c.uri;
  }
}

TEST(OAuthRedirectUri, LengthLimit) {
  const std::string base = "https://app.example.com/";
  EXPECT_TRUE(ValidateRedirectUri(base + std::string(kMaxUrlLength - base.size(), 'a')).ok());
  Status s = ValidateRedirectUri(base + std::string(kMaxUrlLength - base.size() + 1, 'a'));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("2048"));
}

TEST(OAuthRedirectUri, ListLimits) {
  std::vector<std::string> uris;
  EXPECT_THAT(ValidateRedirectUris(uris).message(), HasSubstr("at least one"));
  for (int i = 0; i < 10; ++i) uris.push_back("https://app.example.com/cb" + std::to_string(i));
  EXPECT_TRUE(ValidateRedirectUris(uris).ok());
  uris.push_back("https://app.example.com/cb10");
  Status eleven = ValidateRedirectUris(uris);
  EXPECT_FALSE(eleven.ok());
  EXPECT_THAT(eleven.message(), HasSubstr("at most 10"));
}

TEST(OAuthRedirectUri, ListNamesThePositionAndRejectsDuplicates) {
  Status bad = ValidateRedirectUris({"https://a.example/cb", "https://a.example/cb#x"});
  EXPECT_THAT(bad.message(), HasSubstr("redirect URI 2"));
  EXPECT_THAT(bad.message(), HasSubstr("fragment"));
  Status dup = ValidateRedirectUris({"https://a.example/cb", "https://b.example/cb",
                                     "https://a.example/cb"});
  EXPECT_FALSE(dup.ok());
  EXPECT_THAT(dup.message(), HasSubstr("redirect URI 3 is a duplicate of redirect URI 1"));
}

// ---- client settings ----

ClientSettings Valid() {
  ClientSettings s;
  s.name = "Acme Scheduler";
  s.logo = "https://acme.example/logo.png";
  s.website = "https://acme.example";
  s.purpose = "Shows your bookings in Acme.";
  s.redirect_uris = {"https://acme.example/callback"};
  s.scopes = {"BOOKING_READ"};
  return s;
}

Status Check(const ClientSettings& s, bool require_scopes = true) {
  return ValidateClientSettings(s, ClientValidationOptions{require_scopes});
}

TEST(OAuthClientSettings, ValidClientPasses) {
  EXPECT_TRUE(Check(Valid()).ok()) << Check(Valid()).message();
  ClientSettings minimal = Valid();
  minimal.logo = minimal.website = minimal.purpose = "";
  EXPECT_TRUE(Check(minimal).ok());
}

TEST(OAuthClientSettings, Name) {
  ClientSettings s = Valid();
  s.name = "";
  EXPECT_THAT(Check(s).message(), HasSubstr("name is required"));
  s.name = "   \t ";
  EXPECT_THAT(Check(s).message(), HasSubstr("name is required"));
  s.name = std::string(100, 'x');
  EXPECT_TRUE(Check(s).ok());
  s.name = "  " + std::string(100, 'x') + "  ";  // counted after trimming
  EXPECT_TRUE(Check(s).ok());
  s.name = std::string(101, 'x');
  EXPECT_THAT(Check(s).message(), HasSubstr("at most 100"));
  s.name.clear();
  for (int i = 0; i < 100; ++i) s.name += "\xc3\xa9";  // 100 characters, 200 bytes
  EXPECT_TRUE(Check(s).ok());
  s.name = "Acme\nScheduler";
  EXPECT_THAT(Check(s).message(), HasSubstr("control characters"));
  s.name = "Acme\x7f";
  EXPECT_THAT(Check(s).message(), HasSubstr("control characters"));
  s.name = "Acme\xc2\x85";  // U+0085, a C1 control
  EXPECT_THAT(Check(s).message(), HasSubstr("control characters"));
  s.name = "Acme\xff";
  EXPECT_THAT(Check(s).message(), HasSubstr("UTF-8"));
  s.name = "Acme\xc0\xaf";  // overlong
  EXPECT_THAT(Check(s).message(), HasSubstr("UTF-8"));
  s.name = "<script>alert(1)</script>";  // stored as is; pages escape it
  EXPECT_TRUE(Check(s).ok());
}

TEST(OAuthClientSettings, LogoAndWebsite) {
  ClientSettings s = Valid();
  s.logo = "http://acme.example/logo.png";
  EXPECT_THAT(Check(s).message(), HasSubstr("logo URL must use https"));
  s.logo = "http://localhost:8080/logo.png";
  EXPECT_TRUE(Check(s).ok());
  s.logo = "logo.png";
  EXPECT_THAT(Check(s).message(), HasSubstr("logo URL is invalid"));
  s = Valid();
  s.website = "javascript:alert(1)";
  EXPECT_THAT(Check(s).message(), HasSubstr("website URL"));
  s.website = "https://acme.example/#about";  // a fragment is fine outside redirect URIs
  EXPECT_TRUE(Check(s).ok());
  s.website = "https://acme.example/" + std::string(kMaxUrlLength, 'a');
  EXPECT_THAT(Check(s).message(), HasSubstr("website URL must be at most 2048"));
}

TEST(OAuthClientSettings, Purpose) {
  ClientSettings s = Valid();
  s.purpose = std::string(1000, 'p');
  EXPECT_TRUE(Check(s).ok());
  s.purpose = std::string(1001, 'p');
  EXPECT_THAT(Check(s).message(), HasSubstr("purpose must be at most 1000"));
  s.purpose = "line one\nline two\r\n\tindented";
  EXPECT_TRUE(Check(s).ok());
  s.purpose = std::string("nul\0inside", 10);
  EXPECT_THAT(Check(s).message(), HasSubstr("purpose must not contain control"));
}

TEST(OAuthClientSettings, RedirectUrisChecked) {
  ClientSettings s = Valid();
  s.redirect_uris = {};
  EXPECT_THAT(Check(s).message(), HasSubstr("at least one redirect URI"));
  s.redirect_uris = {"https://a.example/cb", "/relative"};
  EXPECT_THAT(Check(s).message(), HasSubstr("redirect URI 2"));
}

TEST(OAuthClientSettings, Scopes) {
  ClientSettings s = Valid();
  s.scopes = {};
  EXPECT_THAT(Check(s).message(), HasSubstr("at least one scope"));
  EXPECT_TRUE(Check(s, /*require_scopes=*/false).ok());  // command-line legacy client
  s.scopes = {"READ_BOOKING"};
  EXPECT_TRUE(Check(s).ok());
  s.scopes = {"BOOKING_READ", "NOPE"};
  EXPECT_THAT(Check(s).message(), HasSubstr("unknown scope: NOPE"));
  s.scopes = {"BOOKING_READ", std::string(500, 'A')};
  EXPECT_THAT(Check(s).message(), HasSubstr("scope 2 is not a known scope"));
  s.scopes = {"BOOKING_READ", "TEAM_BOOKING_READ", "BOOKING_READ"};
  EXPECT_THAT(Check(s).message(), HasSubstr("listed twice"));
}

TEST(OAuthClientSettings, Normalize) {
  ClientSettings s = Valid();
  s.name = "  Acme  ";
  s.website = " https://acme.example ";
  s.purpose = "\n text \n";
  s.scopes = {"BOOKING_READ", " PROFILE_READ", "BOOKING_READ"};
  s.redirect_uris = {"https://a.example/cb", "https://a.example/cb "};
  ClientSettings n = NormalizeClientSettings(s);
  EXPECT_EQ(n.name, "Acme");
  EXPECT_EQ(n.website, "https://acme.example");
  EXPECT_EQ(n.purpose, "text");
  EXPECT_EQ(n.scopes, (std::vector<std::string>{"BOOKING_READ", "PROFILE_READ"}));
  EXPECT_EQ(n.redirect_uris, (std::vector<std::string>{"https://a.example/cb"}));
  EXPECT_TRUE(Check(n).ok());
}

// ---- re-approval (§3.1), every row ----

ClientSettings Client(std::vector<std::string> scopes) {
  ClientSettings s = Valid();
  s.scopes = std::move(scopes);
  return s;
}

struct Row {
  const char* name;
  ClientState current;
  ClientSettings before;
  ClientSettings after;
  ClientState expected;
  bool legacy_after;
  const char* reason_part;
};

void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

class ReviewRows : public ::testing::TestWithParam<Row> {};

TEST_P(ReviewRows, Decision) {
  const Row& row = GetParam();
  ReviewDecision d = DecideAfterUpdate(row.current, row.before, row.after);
  EXPECT_EQ(ClientStateName(d.next_state), ClientStateName(row.expected)) << d.reason;
  EXPECT_EQ(d.legacy_after, row.legacy_after) << d.reason;
  EXPECT_THAT(d.reason, HasSubstr(row.reason_part));
}

ClientSettings With(ClientSettings s, void (*edit)(ClientSettings&)) {
  edit(s);
  return s;
}

const ClientState kA = ClientState::kApproved;
const ClientState kP = ClientState::kPending;
const ClientState kR = ClientState::kRejected;

INSTANTIATE_TEST_SUITE_P(
    Section3_1, ReviewRows,
    ::testing::Values(
        // approved: change of name, logo, website URL, a redirect URI → pending
        Row{"approved_name", kA, Valid(), With(Valid(), [](ClientSettings& s) { s.name = "New"; }),
            kP, false, "name changed"},
        Row{"approved_logo", kA, Valid(),
            With(Valid(), [](ClientSettings& s) { s.logo = "https://acme.example/l2.png"; }), kP,
            false, "logo changed"},
        Row{"approved_logo_removed", kA, Valid(),
            With(Valid(), [](ClientSettings& s) { s.logo = ""; }), kP, false, "logo changed"},
        Row{"approved_website", kA, Valid(),
            With(Valid(), [](ClientSettings& s) { s.website = "https://acme2.example"; }), kP,
            false, "website changed"},
        Row{"approved_redirect_added", kA, Valid(),
            With(Valid(),
                 [](ClientSettings& s) { s.redirect_uris.push_back("https://acme.example/cb2"); }),
            kP, false, "redirect URIs changed"},
        Row{"approved_redirect_changed", kA, Valid(),
            With(Valid(),
                 [](ClientSettings& s) { s.redirect_uris = {"https://acme.example/other"}; }),
            kP, false, "redirect URIs changed"},
        Row{"approved_redirect_removed", kA,
            With(Valid(),
                 [](ClientSettings& s) { s.redirect_uris.push_back("https://acme.example/cb2"); }),
            Valid(), kP, false, "redirect URIs changed"},
        Row{"approved_redirect_reordered_is_no_change", kA,
            With(Valid(),
                 [](ClientSettings& s) {
                   s.redirect_uris = {"https://acme.example/a", "https://acme.example/b"};
                 }),
            With(Valid(),
                 [](ClientSettings& s) {
                   s.redirect_uris = {"https://acme.example/b", "https://acme.example/a"};
                 }),
            kA, false, "no change"},
        // approved: scope expansion → pending
        Row{"approved_scope_expansion", kA, Client({"BOOKING_READ"}),
            Client({"BOOKING_READ", "PROFILE_READ"}), kP, false, "scope expansion: PROFILE_READ"},
        Row{"approved_write_added_to_read", kA, Client({"BOOKING_READ"}),
            Client({"BOOKING_READ", "BOOKING_WRITE"}), kP, false, "scope expansion: BOOKING_WRITE"},
        Row{"approved_team_scope_added", kA, Client({"BOOKING_READ"}),
            Client({"BOOKING_READ", "TEAM_BOOKING_READ"}), kP, false,
            "scope expansion: TEAM_BOOKING_READ"},
        Row{"approved_scope_swapped", kA, Client({"BOOKING_READ"}), Client({"PROFILE_READ"}), kP,
            false, "scope expansion: PROFILE_READ"},
        // approved: adding X_READ while X_WRITE is granted → unchanged
        Row{"approved_read_added_under_write", kA, Client({"BOOKING_WRITE"}),
            Client({"BOOKING_WRITE", "BOOKING_READ"}), kA, false,
            "added BOOKING_READ while BOOKING_WRITE is granted"},
        Row{"approved_team_read_added_under_team_write", kA, Client({"TEAM_EVENT_TYPE_WRITE"}),
            Client({"TEAM_EVENT_TYPE_WRITE", "TEAM_EVENT_TYPE_READ"}), kA, false, "no re-review"},
        Row{"approved_read_added_under_other_write", kA, Client({"PROFILE_WRITE"}),
            Client({"PROFILE_WRITE", "BOOKING_READ"}), kP, false, "scope expansion: BOOKING_READ"},
        Row{"approved_read_and_write_added_together", kA, Client({"PROFILE_READ"}),
            Client({"PROFILE_READ", "BOOKING_READ", "BOOKING_WRITE"}), kP, false,
            "scope expansion: BOOKING_READ"},
        // approved: removing scopes → unchanged
        Row{"approved_scope_removed", kA, Client({"BOOKING_READ", "PROFILE_READ"}),
            Client({"BOOKING_READ"}), kA, false, "scopes removed"},
        // approved: change of purpose → unchanged
        Row{"approved_purpose", kA, Valid(),
            With(Valid(), [](ClientSettings& s) { s.purpose = "Something else"; }), kA, false,
            "purpose changed"},
        Row{"approved_nothing", kA, Valid(), Valid(), kA, false, "no change"},
        // legacy client adding a TEAM_ or ORG_ scope → pending
        Row{"legacy_empty_adds_team", kA, Client({}), Client({"TEAM_BOOKING_READ"}), kP, false,
            "legacy client added team/org scope TEAM_BOOKING_READ"},
        Row{"legacy_adds_org", kA, Client({"READ_BOOKING"}),
            Client({"READ_BOOKING", "ORG_PROFILE_READ"}), kP, false,
            "legacy client added team/org scope ORG_PROFILE_READ"},
        Row{"legacy_adds_user_and_team", kA, Client({"READ_PROFILE"}),
            Client({"PROFILE_READ", "TEAM_PROFILE_READ"}), kP, false, "TEAM_PROFILE_READ"},
        // legacy client adding only user-level scopes → unchanged, no longer legacy
        Row{"legacy_empty_adds_user_level", kA, Client({}), Client({"BOOKING_READ"}), kA, false,
            "no longer legacy"},
        Row{"legacy_old_values_replaced_by_user_level", kA, Client({"READ_BOOKING", "READ_PROFILE"}),
            Client({"BOOKING_READ", "PROFILE_READ"}), kA, false, "no longer legacy"},
        Row{"legacy_adds_legacy_value", kA, Client({"READ_BOOKING"}),
            Client({"READ_BOOKING", "READ_PROFILE"}), kA, true, "legacy scope values"},
        Row{"legacy_pending_adds_user_level", kP, Client({}), Client({"BOOKING_READ"}), kP, false,
            "pending stays pending"},
        // decision beyond the table: becoming legacy lifts enforcement → pending
        Row{"approved_becomes_legacy_by_removal", kA, Client({"BOOKING_READ", "READ_BOOKING"}),
            Client({"READ_BOOKING"}), kP, true, "became legacy"},
        Row{"approved_removes_all_scopes", kA, Client({"BOOKING_READ"}), Client({}), kP, true,
            "became legacy"},
        // pending stays pending, whatever changes
        Row{"pending_name", kP, Valid(), With(Valid(), [](ClientSettings& s) { s.name = "N"; }),
            kP, false, "pending stays pending"},
        Row{"pending_purpose", kP, Valid(),
            With(Valid(), [](ClientSettings& s) { s.purpose = "x"; }), kP, false,
            "pending stays pending"},
        Row{"pending_nothing", kP, Valid(), Valid(), kP, false, "pending stays pending"},
        // rejected: the documented decision
        Row{"rejected_name", kR, Valid(), With(Valid(), [](ClientSettings& s) { s.name = "N"; }),
            kP, false, "new review"},
        Row{"rejected_purpose", kR, Valid(),
            With(Valid(), [](ClientSettings& s) { s.purpose = "x"; }), kP, false, "new review"},
        Row{"rejected_scope_removed", kR, Client({"BOOKING_READ", "PROFILE_READ"}),
            Client({"BOOKING_READ"}), kP, false, "new review"},
        Row{"rejected_nothing", kR, Valid(), Valid(), kR, false, "no change"}),
    [](const ::testing::TestParamInfo<Row>& info) { return std::string(info.param.name); });

TEST(OAuthReview, CombinedChangesPendingWins) {
  ClientSettings before = Client({"BOOKING_WRITE", "PROFILE_READ"});
  ClientSettings after = Client({"BOOKING_WRITE", "BOOKING_READ"});  // read-under-write + removal
  after.purpose = "new purpose";
  ReviewDecision unchanged = DecideAfterUpdate(kA, before, after);
  EXPECT_EQ(unchanged.next_state, kA);
  EXPECT_THAT(unchanged.reason, HasSubstr("purpose changed"));
  EXPECT_THAT(unchanged.reason, HasSubstr("scopes removed"));
  EXPECT_THAT(unchanged.reason, HasSubstr("BOOKING_READ while BOOKING_WRITE"));

  after.name = "Renamed";
  ReviewDecision renamed = DecideAfterUpdate(kA, before, after);
  EXPECT_EQ(renamed.next_state, kP);
  EXPECT_THAT(renamed.reason, HasSubstr("name changed"));

  ClientSettings expand = Client({"BOOKING_WRITE", "BOOKING_READ", "APPS_READ"});
  expand.purpose = "new purpose";
  ReviewDecision expanded = DecideAfterUpdate(kA, before, expand);
  EXPECT_EQ(expanded.next_state, kP);
  EXPECT_THAT(expanded.reason, HasSubstr("scope expansion: APPS_READ"));
  EXPECT_THAT(expanded.reason, ::testing::Not(HasSubstr("scope expansion: BOOKING_READ")));

  // Legacy client adding user-level scopes while renaming: the rename still sends it to review.
  ClientSettings legacy = Client({});
  ClientSettings migrated = Client({"BOOKING_READ"});
  migrated.name = "Renamed";
  ReviewDecision d = DecideAfterUpdate(kA, legacy, migrated);
  EXPECT_EQ(d.next_state, kP);
  EXPECT_FALSE(d.legacy_after);

  // Several pending reasons are all reported.
  ClientSettings many = Client({"BOOKING_READ", "APPS_READ"});
  many.name = "X";
  many.website = "https://x.example";
  ReviewDecision all = DecideAfterUpdate(kA, Client({"BOOKING_READ"}), many);
  EXPECT_EQ(all.next_state, kP);
  EXPECT_THAT(all.reason, HasSubstr("name changed; website changed; scope expansion: APPS_READ"));
}

TEST(OAuthReview, ScopeOrderAndDuplicatesAreNoChange) {
  ReviewDecision d = DecideAfterUpdate(kA, Client({"BOOKING_READ", "PROFILE_READ"}),
                                       Client({"PROFILE_READ", "BOOKING_READ", "PROFILE_READ"}));
  EXPECT_EQ(d.next_state, kA);
  EXPECT_EQ(d.reason, "no change");
}

}  // namespace
}  // namespace rendezvous::oauth
