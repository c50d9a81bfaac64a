#include <gtest/gtest.h>

#include <string>

#include "authorize_page_views.hpp"

namespace rendezvous::oauth {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

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
  EXPECT_FALSE(Contains(html, "<script>alert(1)</script>"));
  EXPECT_TRUE(Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co"));
  EXPECT_TRUE(Contains(html, "View your bookings"));
  EXPECT_TRUE(Contains(html, "BOOKING_READ"));
  EXPECT_TRUE(Contains(html, "app.example.com:8443"));
  EXPECT_TRUE(Contains(html, "ada@example.com"));
  EXPECT_FALSE(Contains(html, "Pending review"));
  EXPECT_FALSE(Contains(html, "full access"));
}

TEST(OAuthAuthorizePages, ConsentFormPostsRequestCsrfAndBothButtons) {
  std::string html = RenderConsentPage(SamplePage());
  EXPECT_TRUE(Contains(html, "<form method=\"post\" action=\"/auth/oauth2/authorize\">"));
  EXPECT_TRUE(Contains(html, "name=\"csrf_token\" value=\"csrf-123\""));
  EXPECT_TRUE(Contains(html, "name=\"client_id\" value=\"cl_1\""));
  EXPECT_TRUE(Contains(html, "name=\"redirect_uri\" value=\"https://app.example.com:8443/cb?x=1\""));
  EXPECT_TRUE(Contains(html, "name=\"state\" value=\"st&quot;ate&lt;\""));
  EXPECT_TRUE(Contains(html, "name=\"scope\" value=\"BOOKING_READ,PROFILE_READ\""));
  EXPECT_TRUE(Contains(html, "name=\"code_challenge\" value=\"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM\""));
  EXPECT_FALSE(Contains(html, "name=\"code_challenge_method\""));
  EXPECT_TRUE(Contains(html, "name=\"decision\" value=\"allow\">Allow</button>"));
  EXPECT_TRUE(Contains(html, "name=\"decision\" value=\"deny\" class=\"secondary\">Deny</button>"));
}

TEST(OAuthAuthorizePages, LegacyClientWithoutScopeAsksForFullAccess) {
  ConsentPage p = SamplePage();
  p.request.scope.reset();
  p.grant.all_scopes = true;
  p.client_pending = true;
  std::string html = RenderConsentPage(p);
  EXPECT_TRUE(Contains(html, "full access to your account"));
  EXPECT_FALSE(Contains(html, "View your bookings"));
  EXPECT_FALSE(Contains(html, "name=\"scope\""));
  EXPECT_TRUE(Contains(html, "Pending review"));
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
