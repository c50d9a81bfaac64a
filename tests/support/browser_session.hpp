// A browser on the app listener, as far as tests need one: signing in through the login form
// (its CSRF field and cookies included) and reading a page's CSRF field.
#pragma once

#include <string>

#include "http_client.hpp"

namespace rendezvous::testing {

// The value of the page's hidden csrf_token field ("" when there is none).
std::string CsrfFieldOf(const std::string& page);

// Signs `email` in at `app_url` (GET and POST /auth/login); the session cookie
// ("rdv_session=..") or "" when signing in failed.
std::string SignInSession(HttpClient& http, const std::string& app_url, const std::string& email,
                          const std::string& password = "correct horse battery");

}  // namespace rendezvous::testing
