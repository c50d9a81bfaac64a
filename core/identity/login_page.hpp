// The sign-in page of the app host (GET/POST /auth/login). Pure rendering; thread-safe.
#pragma once

#include <string>

namespace rendezvous::core {

// What the page shows; every value is HTML-escaped when rendered.
struct LoginPageView {
  std::string email;       // echoed back after a failed attempt
  std::string next;        // where to go after signing in (already checked to be safe, or "")
  std::string csrf_token;  // the hidden "csrf_token" field
  std::string error;       // "" = no error box
};

// A complete HTML document: a form posting to /auth/login with fields labelled "Email" and
// "Password", the hidden csrf_token and next fields, and a "Sign in" button.
std::string RenderLoginPage(const LoginPageView& view);

}  // namespace rendezvous::core
