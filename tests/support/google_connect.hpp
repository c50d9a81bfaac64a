// The browser's part of connecting a Google calendar to the real server (docs/calendar.md,
// "Connect flow"): signing in on the app listener and opening the start page, whose binding cookie
// `/save` then wants. Shared by the calendar integration tests and the event-lookup benchmark, so
// no test framework here: a failure comes back as an empty result with the reason.
#pragma once

#include <string>

#include "http_client.hpp"

namespace rendezvous::testing {

// Signs `email` in with `password` on the app listener at `app` (the login page's CSRF token and
// cookies, then the form). Returns the session cookie ("rdv_session=..") or "" with `why` set.
std::string SignInBrowser(HttpClient& http, const std::string& app, const std::string& email,
                          const std::string& password, std::string* why);

// What the start page gave a browser: the page, Google's consent URL it links to and the binding
// cookie ("name=value") it set.
struct ConnectStartPage {
  HttpResult page;
  std::string google_url;
  std::string binding_cookie;
  std::string set_cookie;  // the whole Set-Cookie value
};

// Opens the start page `auth_url` names (GET /v2/calendars/google/connect's authUrl, which carries
// the configured app_url) on the app listener's real address `app`, in a browser holding
// `session_cookie` ("" = none).
ConnectStartPage OpenConnectStartPage(HttpClient& http, const std::string& app, const std::string& auth_url,
                                      const std::string& session_cookie);

// The whole flow for the user of `api_key`, signed in as `session_cookie`: connect, the start page,
// and Google's redirect back to /save with `code`. Returns the /save answer (status 0 with `error`
// set when a step before it failed).
HttpResult ConnectGoogleCalendar(HttpClient& http, const std::string& api, const std::string& app,
                                 const std::string& api_key, const std::string& session_cookie,
                                 const std::string& code);

}  // namespace rendezvous::testing
