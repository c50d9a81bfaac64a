// The JSON array of strings that scopes and redirect-URI columns hold. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace rendezvous::oauth {

// The strings of a JSON array; malformed text or a non-array gives none, non-strings are skipped.
std::vector<std::string> JsonList(const std::string& text);

}  // namespace rendezvous::oauth
