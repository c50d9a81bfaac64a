#include <gtest/gtest.h>

#include <map>
#include <string>

#include "identity/login_page.hpp"
#include "page_fragments.hpp"
#include "rendezvous/pages.hpp"

namespace rendezvous {
namespace {

using rdv_test::Contains;
using rdv_test::ExpectFragments;

TEST(IdentityHtmlEscape, EscapesMarkupCharacters) {
  EXPECT_EQ(HtmlEscape(R"(<a href="x" onclick='y'>&</a>)"),
            "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("plain text \xc3\xa9"), "plain text \xc3\xa9");
  EXPECT_EQ(HtmlEscape(""), "");
}

TEST(IdentityRenderPage, IsACompleteDocumentWithEscapedTitle) {
  std::string page = RenderPage("<Settings>", "<p>body</p>");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  ExpectFragments(page, {"<meta charset=\"utf-8\">", "<title>&lt;Settings&gt;</title>", "<p>body</p>",
                         "<style>", "</html>"});
}

TEST(IdentityPageHeaders, ForbidCachingFramingAndReferrers) {
  Response res;
  AddPageHeaders(res);
  std::map<std::string, std::string> got(res.headers.begin(), res.headers.end());
  EXPECT_EQ(got["Cache-Control"], "no-store");
  EXPECT_EQ(got["X-Frame-Options"], "DENY");
  EXPECT_EQ(got["Content-Security-Policy"], "frame-ancestors 'none'");
  EXPECT_EQ(got["Referrer-Policy"], "no-referrer");
  EXPECT_EQ(got.size(), res.headers.size()) << "each header once";
}

TEST(IdentityRenderTemplate, EscapesVariablesAndIteratesLists) {
  Json data = {{"client", {{"name", "<b>Evil & Co</b>"}}},
               {"scopes", Json::array({Json{{"label", "Read bookings"}}, Json{{"label", "Write <x>"}}})},
               {"count", 2},
               {"show", true},
               {"hide", false},
               {"nothing", nullptr}};
  auto out = RenderTemplate(
      "{{client.name}}|{{{client.name}}}|{{#scopes}}[{{label}}]{{/scopes}}|{{count}}|"
      "{{#show}}S{{/show}}{{#hide}}H{{/hide}}{{^hide}}!H{{/hide}}|{{nothing}}|{{missing}}",
      data);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(*out,
            "&lt;b&gt;Evil &amp; Co&lt;/b&gt;|<b>Evil & Co</b>|[Read bookings][Write &lt;x&gt;]|2|S!H||");
}

TEST(IdentityRenderTemplate, ReportsMalformedTemplates) {
  auto out = RenderTemplate("{{#open}}never closed", Json::object());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kInternal);
}

TEST(IdentitySetCookieHeader, SessionCookieAttributes) {
  CookieOptions opts;
  opts.secure = true;
  opts.max_age = std::chrono::seconds(3600);
  EXPECT_EQ(SetCookieHeader("rdv_session", "abc-_123", opts),
            "rdv_session=abc-_123; Path=/; Max-Age=3600; HttpOnly; Secure; SameSite=Lax");
  EXPECT_EQ(SetCookieHeader("rdv_csrf", "t"), "rdv_csrf=t; Path=/; HttpOnly; SameSite=Lax");
}

TEST(IdentitySetCookieHeader, DeletionAndInjectionAttempts) {
  CookieOptions opts;
  opts.max_age = std::chrono::seconds(0);
  std::string deleted = SetCookieHeader("rdv_session", "", opts);
  EXPECT_TRUE(Contains(deleted, "rdv_session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970"));
  std::string injected = SetCookieHeader("a", "x; Domain=evil.example\r\nX: y", {});
  EXPECT_EQ(injected.find(';'), injected.find("; Path=/"));
  EXPECT_FALSE(Contains(injected, "\r"));
  EXPECT_FALSE(Contains(injected, " Domain"));
}

TEST(IdentityLoginPage, HasLabelledFieldsAndSignInButton) {
  std::string page = core::RenderLoginPage({"", "/settings", "tok123", ""});
  ExpectFragments(
      page,
      {"<label for=\"email\">Email</label>", "id=\"email\" name=\"email\"",
       "<label for=\"password\">Password</label>", "type=\"password\" id=\"password\" name=\"password\"",
       "<button type=\"submit\">Sign in</button>", "name=\"csrf_token\" value=\"tok123\"",
       "name=\"next\" value=\"/settings\"", "action=\"/auth/login\""},
      {"class=\"error\""});
}

TEST(IdentityLoginPage, EscapesEchoedValues) {
  std::string page = core::RenderLoginPage(
      {"\"><script>alert(1)</script>", "/x?a=1&b=\"2\"", "t\"k", "Invalid email or password."});
  ExpectFragments(
      page,
      {"value=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\"", "value=\"/x?a=1&amp;b=&quot;2&quot;\"",
       "value=\"t&quot;k\"", "Invalid email or password.", "class=\"error\""},
      {"<script>"});
}

}  // namespace
}  // namespace rendezvous
