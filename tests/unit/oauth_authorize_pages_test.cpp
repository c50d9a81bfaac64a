#include <gtest/gtest.h>

#include <string>

#include "authorize_page_views.hpp"
#include "page_fragments.hpp"

namespace rendezvous::oauth {
namespace {

using rdv_test::Contains;
using rdv_test::ExpectFragments;

ConsentPage SamplePage() {
  ConsentPage p;
  p.csrf_token = "csrf-123";
  p.client_name = "<script>alert(1)</script> & Co";
  p.user_email = "ada@example.com";
  p.request.client_id = "cl_1";
  p.request.redirect_uri = "https://app.example.com:8443/cb?x=1";
  p.request.state = "st\"ate<";
  p.request.scope = "BOOKING_READ,PROFILE_READ";
  p.request.code_challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
  p.grant.client_id = "cl_1";
  p.grant.redirect_uri = "https://app.example.com:8443/cb?x=1";
  p.grant.state = p.request.state;
  p.grant.scopes = {"BOOKING_READ", "PROFILE_READ"};
  p.grant.code_challenge = *p.request.code_challenge;
  p.grant.code_challenge_method = "S256";
  return p;
}

TEST(OAuthAuthorizePages, HiddenFieldsCarryOnlyPresentParameters) {
  AuthorizeQuery q;
  q.client_id = "cl_1";
  q.redirect_uri = "https://a.example/cb";
  auto fields = ConsentHiddenFields(q);
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0], (std::pair<std::string, std::string>{"client_id", "cl_1"}));
  EXPECT_EQ(fields[1], (std::pair<std::string, std::string>{"redirect_uri", "https://a.example/cb"}));

  q.state = "";
  q.scope = "BOOKING_READ";
  q.code_challenge = "abc";
  q.code_challenge_method = "S256";
  fields = ConsentHiddenFields(q);
  ASSERT_EQ(fields.size(), 6u);
  EXPECT_EQ(fields[2].first, "state");
  EXPECT_EQ(fields[2].second, "");  // present but empty stays present
  EXPECT_EQ(fields[5].first, "code_challenge_method");
}

TEST(OAuthAuthorizePages, RedirectHostNamesHostAndPort) {
  EXPECT_EQ(RedirectHost("https://app.example.com/cb"), "app.example.com");
  EXPECT_EQ(RedirectHost("http://127.0.0.1:9000/cb?a=b"), "127.0.0.1:9000");
  EXPECT_EQ(RedirectHost("not a url"), "not a url");
}

TEST(OAuthAuthorizePages, ConsentPageNamesClientAndScopesInPlainWordsEscaped) {
  std::string html = RenderConsentPage(SamplePage());
  ExpectFragments(html,
                  {"&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co", "View your bookings", "BOOKING_READ",
                   "app.example.com:8443", "ada@example.com"},
                  {"<script>alert(1)</script>", "Pending review", "full access"});
}

TEST(OAuthAuthorizePages, ConsentFormPostsRequestCsrfAndBothButtons) {
  std::string html = RenderConsentPage(SamplePage());
  ExpectFragments(
      html,
      {"<form method=\"post\" action=\"/auth/oauth2/authorize\">", "name=\"csrf_token\" value=\"csrf-123\"",
       "name=\"client_id\" value=\"cl_1\"",
       "name=\"redirect_uri\" value=\"https://app.example.com:8443/cb?x=1\"",
       "name=\"state\" value=\"st&quot;ate&lt;\"", "name=\"scope\" value=\"BOOKING_READ,PROFILE_READ\"",
       "name=\"code_challenge\" value=\"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM\"",
       "name=\"decision\" value=\"allow\">Allow</button>",
       "name=\"decision\" value=\"deny\" class=\"secondary\">Deny</button>"},
      {"name=\"code_challenge_method\""});
}

// A pushed request's parameters stay on the server: the form carries client_id and request_uri.
TEST(OAuthAuthorizePages, ConsentFormOfAPushedRequestCarriesOnlyItsReference) {
  ConsentPage page = SamplePage();
  page.request_uri = "urn:ietf:params:oauth:request_uri:abc";
  ExpectFragments(RenderConsentPage(page),
                  {"name=\"client_id\" value=\"cl_1\"",
                   "name=\"request_uri\" value=\"urn:ietf:params:oauth:request_uri:abc\"",
                   "name=\"decision\" value=\"allow\">Allow</button>", "View your bookings"},
                  {"name=\"redirect_uri\"", "name=\"state\"", "name=\"scope\"", "name=\"code_challenge\""});
}

TEST(OAuthAuthorizePages, LegacyClientWithoutScopeAsksForFullAccess) {
  ConsentPage p = SamplePage();
  p.request.scope.reset();
  p.grant.all_scopes = true;
  p.client_pending = true;
  std::string html = RenderConsentPage(p);
  ExpectFragments(html, {"full access to your account", "Pending review"},
                  {"View your bookings", "name=\"scope\""});
}

TEST(OAuthAuthorizePages, ErrorPageShowsMessageEscaped) {
  std::string html = RenderAuthorizeErrorPage("Authorization failed", "scope parameter is required for this OAuth client");
  EXPECT_TRUE(Contains(html, "scope parameter is required for this OAuth client"));
  EXPECT_TRUE(Contains(html, "<h1>Authorization failed</h1>"));
  html = RenderAuthorizeErrorPage("t", "<b>x</b>");
  EXPECT_FALSE(Contains(html, "<b>x</b>"));
}

}  // namespace
}  // namespace rendezvous::oauth
