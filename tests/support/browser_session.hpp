// What a test browser reads off a page of the app listener (signing in is SignInBrowser,
// google_connect.hpp).
#pragma once

#include <string>

namespace rendezvous::testing {

// The value of the page's hidden csrf_token field ("" when there is none).
std::string CsrfFieldOf(const std::string& page);

}  // namespace rendezvous::testing
