// The sign-in page of the app host (identity/login_page.hpp).
#include <string>

#include <gtest/gtest.h>

#include "identity/login_page.hpp"
#include "page_fragments.hpp"

namespace rendezvous {
namespace {

using rdv_test::ExpectFragments;

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
