#include <gtest/gtest.h>

#include <map>
#include <string>

#include "client_page_views.hpp"
#include "page_fragments.hpp"

namespace rendezvous::oauth {
namespace {

using rdv_test::Contains;
using rdv_test::ExpectFragments;

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

OAuthClient SampleClient() {
  OAuthClient c;
  c.client_id = "cl_abc123";
  c.owner_id = 7;
  c.kind = ClientKind::kConfidential;
  c.state = ClientState::kApproved;
  c.settings.name = "<script>alert(1)</script>";
  c.settings.purpose = "Sync & <b>more</b>";
  c.settings.redirect_uris = {"https://app.example.com/cb", "http://127.0.0.1:9000/cb"};
  c.settings.scopes = {"BOOKING_READ", "TEAM_BOOKING_READ"};
  c.secrets = {{11, "a1b2", "2024-05-01T10:00:00Z"}, {12, "c3d4", "2024-05-02T10:00:00Z"}};
  c.created_at = "2024-05-01T10:00:00Z";
  return c;
}

TEST(OAuthClientPagesForm, SplitsRedirectUrisByLineTrimmedAndBounded) {
  EXPECT_EQ(SplitRedirectUris(" https://a.example/cb \r\n\n\thttps://b.example/cb\n"),
            (std::vector<std::string>{"https://a.example/cb", "https://b.example/cb"}));
  EXPECT_TRUE(SplitRedirectUris("").empty());
  EXPECT_TRUE(SplitRedirectUris("\n \r\n").empty());
  std::string many;
  for (int i = 0; i < 5000; ++i) many += "https://a.example/" + std::to_string(i) + "\n";
  // One more than the limit, so validation can say the list is too long.
  EXPECT_EQ(SplitRedirectUris(many).size(), kMaxRedirectUris + 1);
}

TEST(OAuthClientPagesForm, ReadsFieldsAndScopeCheckboxes) {
  std::map<std::string, std::string> form = {
      {"name", "My App"},          {"kind", "public"},
      {"redirect_uris", "https://a.example/cb"},
      {"purpose", "p"},            {"website", "https://a.example"},
      {"logo", "https://a.example/logo.png"},
      {"scope_BOOKING_READ", "1"}, {"scope_ORG_PROFILE_READ", "1"},
      {"scope_READ_BOOKING", "1"}, {"scope_NOT_A_SCOPE", "1"},
      {"csrf_token", "t"}};
  ClientFormInput in = ReadClientForm(form, /*accept_legacy=*/false);
  EXPECT_EQ(in.name, "My App");
  EXPECT_EQ(in.kind, ClientKind::kPublic);
  EXPECT_EQ(in.scopes, (std::vector<std::string>{"BOOKING_READ", "ORG_PROFILE_READ"}));
  EXPECT_EQ(ReadClientForm(form, /*accept_legacy=*/true).scopes,
            (std::vector<std::string>{"BOOKING_READ", "ORG_PROFILE_READ", "READ_BOOKING"}));
  ClientSettings s = SettingsFromForm(in);
  EXPECT_EQ(s.redirect_uris, std::vector<std::string>{"https://a.example/cb"});
  EXPECT_EQ(s.website, "https://a.example");
  EXPECT_EQ(s.logo, "https://a.example/logo.png");
  EXPECT_EQ(ReadClientForm({}, false).kind, ClientKind::kConfidential);
}

TEST(OAuthClientPagesForm, EditFormStartsFromTheClient) {
  ClientFormInput in = FormInputFromClient(SampleClient());
  EXPECT_EQ(in.redirect_uris_text, "https://app.example.com/cb\nhttp://127.0.0.1:9000/cb");
  EXPECT_EQ(in.scopes, (std::vector<std::string>{"BOOKING_READ", "TEAM_BOOKING_READ"}));
  EXPECT_FALSE(in.require_par);
}

TEST(OAuthClientPagesForm, RequireParIsACheckbox) {
  EXPECT_TRUE(ReadClientForm({{"name", "A"}, {"require_par", "1"}}, false).require_par);
  EXPECT_FALSE(ReadClientForm({{"name", "A"}}, false).require_par);
  OAuthClient client = SampleClient();
  const std::string unchecked = RenderClientPage({}, client, FormInputFromClient(client));
  ExpectFragments(
      unchecked,
      {"<input type=\"checkbox\" id=\"require_par\" name=\"require_par\" value=\"1\" aria-describedby",
       "<label for=\"require_par\">Require pushed authorization requests (PAR)</label>"},
      {"name=\"require_par\" value=\"1\" checked"});
  client.require_par = true;
  EXPECT_TRUE(Contains(RenderClientPage({}, client, FormInputFromClient(client)),
                       "name=\"require_par\" value=\"1\" checked"));
  EXPECT_TRUE(Contains(RenderClientListPage({}, {}, ClientFormInput{}), "id=\"require_par\""));
}

TEST(OAuthClientPagesRender, ListEscapesEveryValueAndLabelsEveryField) {
  PageFrame frame{"tok\"en", "", "", false};
  ClientFormInput input;
  input.name = "\"><img src=x>";
  input.purpose = "</textarea><script>x()</script>";
  input.scopes = {"PROFILE_READ"};
  std::string html = RenderClientListPage(frame, {SampleClient()}, input);
  ExpectFragments(html, {"&lt;script&gt;alert(1)&lt;/script&gt;", "value=\"tok&quot;en\""},
                  {"<script>alert(1)</script>", "<img src=x>", "</textarea><script>"});
  for (const char* id : {"name", "kind", "redirect_uris", "purpose", "website", "logo", "scope_BOOKING_READ",
                         "scope_TEAM_BOOKING_READ", "scope_ORG_VERIFIED_RESOURCES_WRITE"}) {
    EXPECT_TRUE(Contains(html, std::string("<label for=\"") + id + "\"")) << id;
    EXPECT_TRUE(Contains(html, std::string("id=\"") + id + "\"")) << id;
  }
  ExpectFragments(html, {"View your bookings", "name=\"scope_PROFILE_READ\" value=\"1\" checked"},
                  {"name=\"scope_BOOKING_READ\" value=\"1\" checked"});
  EXPECT_FALSE(Contains(html, "scope_READ_BOOKING")) << "legacy values are not offered on create";
  EXPECT_FALSE(Contains(html, "class=\"notice\"")) << "no empty notice box";
  EXPECT_FALSE(Contains(html, "class=\"error\""));
  EXPECT_FALSE(Contains(html, "Review OAuth clients")) << "no admin link for a non-admin";
}

TEST(OAuthClientPagesRender, ListShowsStateReasonLegacyAndErrors) {
  OAuthClient rejected = SampleClient();
  rejected.state = ClientState::kRejected;
  rejected.review_reason = "Unclear <purpose>";
  OAuthClient legacy = SampleClient();
  legacy.client_id = "cl_legacy";
  legacy.legacy = true;
  std::string html = RenderClientListPage({"t", "", "name is required", true}, {rejected, legacy}, {});
  ExpectFragments(html,
                  {"rejected", "Reason: Unclear &lt;purpose&gt;", ">legacy</span>",
                   "<p class=\"error\" role=\"alert\">name is required</p>", "href=\"/admin/oauth-clients\""},
                  {"You have no OAuth clients yet."});
}

TEST(OAuthClientPagesRender, ClientPageShowsANewSecretOnceAndSecretForms) {
  OAuthClient c = SampleClient();
  std::string with_secret = RenderClientPage({"tok", "", "", false}, c, FormInputFromClient(c), "s3cr3t<&>");
  ExpectFragments(with_secret,
                  {"Copy this secret now. It will not be shown again.", "value=\"s3cr3t&lt;&amp;&gt;\"",
                   "action=\"/settings/developer/oauth/cl_abc123/secrets/11/revoke\"",
                   "action=\"/settings/developer/oauth/cl_abc123/secrets/12/revoke\"",
                   "action=\"/settings/developer/oauth/cl_abc123/secrets\"", "Generate new secret"});
  // Every form carries the token: edit, generate, two revokes.
  EXPECT_EQ(Count(with_secret, "name=\"csrf_token\" value=\"tok\""), 4u);
  EXPECT_TRUE(Contains(with_secret, "<details open>")) << "a held team scope opens its group";
  EXPECT_TRUE(Contains(with_secret, "name=\"scope_TEAM_BOOKING_READ\" value=\"1\" checked"));

  std::string plain = RenderClientPage({"tok", "Changes saved.", "", false}, c, FormInputFromClient(c));
  EXPECT_FALSE(Contains(plain, "Copy this secret now"));
  EXPECT_TRUE(Contains(plain, "<p class=\"notice\" role=\"status\">Changes saved.</p>"));

  c.kind = ClientKind::kPublic;
  c.secrets.clear();
  std::string pub = RenderClientPage({"tok", "", "", false}, c, FormInputFromClient(c));
  EXPECT_FALSE(Contains(pub, "Generate new secret"));
  EXPECT_TRUE(Contains(pub, "Public clients have no secret"));
  EXPECT_FALSE(Contains(pub, "id=\"kind\"")) << "the kind is chosen at creation only";
}

TEST(OAuthClientPagesRender, LegacyScopesAreOfferedOnlyToClientsHoldingThem) {
  OAuthClient c = SampleClient();
  c.settings.scopes = {"READ_BOOKING"};
  c.legacy = true;
  std::string html = RenderClientPage({"t", "", "", false}, c, FormInputFromClient(c));
  ExpectFragments(html,
                  {"name=\"scope_READ_BOOKING\" value=\"1\" checked", "Select scopes below to migrate it."},
                  {"scope_READ_PROFILE"});
}

TEST(OAuthClientPagesRender, ReviewPageShowsOwnerScopesAndBothButtons) {
  ReviewEntry e{SampleClient(), "Ann <Owner>", "ann@example.com"};
  e.client.state = ClientState::kPending;
  std::string html = RenderReviewPage({"tok", "", "", true}, {e});
  ExpectFragments(
      html, {"Ann &lt;Owner&gt; &lt;ann@example.com&gt;", "View your bookings <code>BOOKING_READ</code>",
             "https://app.example.com/cb", "Sync &amp; &lt;b&gt;more&lt;/b&gt;",
             "action=\"/admin/oauth-clients/cl_abc123/review\"", "name=\"accept\" value=\"1\"",
             "name=\"reject\" value=\"1\"", "<label for=\"reason_cl_abc123\""});
  EXPECT_TRUE(Contains(RenderReviewPage({"tok", "", "", true}, {}), "No client is waiting for review."));
}

TEST(OAuthClientPagesRender, MessagePageEscapes) {
  std::string html = RenderMessagePage({}, "Not <found>", "No <client>.");
  EXPECT_TRUE(Contains(html, "<h1>Not &lt;found&gt;</h1>"));
  EXPECT_TRUE(Contains(html, "<p>No &lt;client&gt;.</p>"));
}

}  // namespace
}  // namespace rendezvous::oauth
