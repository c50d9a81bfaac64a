// The HTML page kit (rendezvous/pages.hpp): escaping, the page frame, templates, cookies.
#include "rendezvous/pages.hpp"

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "page_fragments.hpp"

namespace rendezvous {
namespace {

using rdv_test::Contains;
using rdv_test::ExpectFragments;

TEST(PagesHtmlEscape, EscapesMarkupCharacters) {
  EXPECT_EQ(HtmlEscape(R"(<a href="x" onclick='y'>&</a>)"),
            "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("plain text \xc3\xa9"), "plain text \xc3\xa9");
  EXPECT_EQ(HtmlEscape(""), "");
}

TEST(PagesRenderPage, IsACompleteDocumentWithEscapedTitle) {
  std::string page = RenderPage("<Settings>", "<p>body</p>");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  ExpectFragments(page, {"<meta charset=\"utf-8\">", "<title>&lt;Settings&gt;</title>", "<p>body</p>",
                         "<style>", "</html>"});
}

TEST(PagesHeaders, ForbidCachingFramingAndReferrers) {
  Response res;
  AddPageHeaders(res);
  std::map<std::string, std::string> got(res.headers.begin(), res.headers.end());
  EXPECT_EQ(got["Cache-Control"], "no-store");
  EXPECT_EQ(got["X-Frame-Options"], "DENY");
  EXPECT_EQ(got["Content-Security-Policy"], "frame-ancestors 'none'");
  EXPECT_EQ(got["Referrer-Policy"], "no-referrer");
  EXPECT_EQ(got.size(), res.headers.size()) << "each header once";
}

TEST(PagesRenderTemplate, EscapesVariablesAndIteratesLists) {
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

TEST(PagesRenderTemplate, ReportsMalformedTemplates) {
  auto out = RenderTemplate("{{#open}}never closed", Json::object());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kInternal);
}

TEST(PagesSetCookieHeader, SessionCookieAttributes) {
  CookieOptions opts;
  opts.secure = true;
  opts.max_age = std::chrono::seconds(3600);
  EXPECT_EQ(SetCookieHeader("rdv_session", "abc-_123", opts),
            "rdv_session=abc-_123; Path=/; Max-Age=3600; HttpOnly; Secure; SameSite=Lax");
  EXPECT_EQ(SetCookieHeader("rdv_csrf", "t"), "rdv_csrf=t; Path=/; HttpOnly; SameSite=Lax");
}

TEST(PagesSetCookieHeader, DeletionAndInjectionAttempts) {
  CookieOptions opts;
  opts.max_age = std::chrono::seconds(0);
  std::string deleted = SetCookieHeader("rdv_session", "", opts);
  EXPECT_TRUE(Contains(deleted, "rdv_session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970"));
  std::string injected = SetCookieHeader("a", "x; Domain=evil.example\r\nX: y", {});
  EXPECT_EQ(injected.find(';'), injected.find("; Path=/"));
  EXPECT_FALSE(Contains(injected, "\r"));
  EXPECT_FALSE(Contains(injected, " Domain"));
}

}  // namespace
}  // namespace rendezvous
