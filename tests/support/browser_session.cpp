#include "browser_session.hpp"

namespace rendezvous::testing {

std::string CsrfFieldOf(const std::string& page) {
  const std::string marker = "name=\"csrf_token\" value=\"";
  const size_t at = page.find(marker);
  if (at == std::string::npos) return "";
  const size_t start = at + marker.size();
  return page.substr(start, page.find('"', start) - start);
}

}  // namespace rendezvous::testing
