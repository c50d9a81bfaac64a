#include "identity/login_page.hpp"

#include "rendezvous/pages.hpp"

namespace rendezvous::core {
namespace {

constexpr const char* kLoginTemplate = R"html(<h1>Sign in</h1>
{{#has_error}}<p class="error" role="alert">{{error}}</p>{{/has_error}}
<form method="post" action="/auth/login">
  <input type="hidden" name="csrf_token" value="{{csrf_token}}">
  <input type="hidden" name="next" value="{{next}}">
  <label for="email">Email</label>
  <input type="email" id="email" name="email" value="{{email}}" autocomplete="username" maxlength="254" required autofocus>
  <label for="password">Password</label>
  <input type="password" id="password" name="password" autocomplete="current-password" maxlength="1024" required>
  <button type="submit">Sign in</button>
</form>)html";

}  // namespace

std::string RenderLoginPage(const LoginPageView& view) {
  Json data = {{"email", view.email},
               {"next", view.next},
               {"csrf_token", view.csrf_token},
               {"error", view.error},
               {"has_error", !view.error.empty()}};
  auto body = RenderTemplate(kLoginTemplate, data);
  // The template is a constant; a parse failure is a programming error caught by the unit tests.
  return RenderPage("Sign in", body.ok() ? *body : std::string("<p>Sign-in is unavailable.</p>"));
}

}  // namespace rendezvous::core
