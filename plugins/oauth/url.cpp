#include "url.hpp"

#include <cctype>

#include "rendezvous/text.hpp"

namespace rendezvous::oauth {
namespace {

bool IsUnreserved(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

bool IsRegNameChar(unsigned char c) {
  // RFC 3986 reg-name: unreserved / pct-encoded / sub-delims. '%' is refused too: a percent-encoded
  // host name only invites confusion about which host is meant.
  return IsUnreserved(c) || c == '!' || c == '$' || c == '&' || c == '\'' || c == '(' ||
         c == ')' || c == '*' || c == '+' || c == ',' || c == ';' || c == '=';
}

bool ParseIpv4(std::string_view s, int octets[4]) {
  int n = 0;
  size_t i = 0;
  while (n < 4) {
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    int value = 0;
    size_t digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      value = value * 10 + (s[i] - '0');
      ++i;
      if (++digits > 3) return false;
    }
    if (value > 255) return false;
    octets[n++] = value;
    if (n < 4) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
  }
  return i == s.size();
}

}  // namespace

Result<UrlParts> ParseAbsoluteUrl(std::string_view url) {
  if (url.empty()) return Status(ErrorCode::kInvalid, "URL is empty");
  for (char ch : url) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f) {
      return Status(ErrorCode::kInvalid,
                    "URL must not contain spaces, control or non-ASCII characters");
    }
    if (c == '\\') return Status(ErrorCode::kInvalid, "URL must not contain a backslash");
  }
  UrlParts parts;
  size_t colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0 ||
      !std::isalpha(static_cast<unsigned char>(url[0]))) {
    return Status(ErrorCode::kInvalid, "URL must be absolute (scheme://host/...)");
  }
  for (size_t i = 1; i < colon; ++i) {
    const auto c = static_cast<unsigned char>(url[i]);
    if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') {
      return Status(ErrorCode::kInvalid, "URL must be absolute (scheme://host/...)");
    }
  }
  parts.scheme = text::AsciiLower(url.substr(0, colon));
  std::string_view rest = url.substr(colon + 1);
  if (rest.substr(0, 2) != "//") {
    return Status(ErrorCode::kInvalid, "URL must be absolute (scheme://host/...)");
  }
  rest.remove_prefix(2);

  if (size_t hash = rest.find('#'); hash != std::string_view::npos) {
    parts.has_fragment = true;
    parts.fragment = rest.substr(hash + 1);
    rest = rest.substr(0, hash);
  }
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    parts.has_query = true;
    parts.query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  parts.path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);

  if (authority.find('@') != std::string_view::npos) {
    return Status(ErrorCode::kInvalid, "URL must not contain user credentials");
  }
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return Status(ErrorCode::kInvalid, "URL has an unterminated IPv6 address");
    }
    parts.host = authority.substr(0, close + 1);
    for (char c : parts.host.substr(1, parts.host.size() - 2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') {
        return Status(ErrorCode::kInvalid, "URL has an invalid IPv6 address");
      }
    }
    if (parts.host.size() < 4) return Status(ErrorCode::kInvalid, "URL has an invalid IPv6 address");
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return Status(ErrorCode::kInvalid, "URL has an invalid host");
      has_port = true;
      port_text = after.substr(1);
    }
  } else {
    const size_t pc = authority.find(':');
    parts.host = authority.substr(0, pc);
    if (pc != std::string_view::npos) {
      has_port = true;
      port_text = authority.substr(pc + 1);
    }
    for (char c : parts.host) {
      if (!IsRegNameChar(static_cast<unsigned char>(c))) {
        return Status(ErrorCode::kInvalid, "URL has an invalid host");
      }
    }
  }
  if (parts.host.empty()) return Status(ErrorCode::kInvalid, "URL has no host");
  if (has_port) {
    if (port_text.empty() || port_text.size() > 5) {
      return Status(ErrorCode::kInvalid, "URL has an invalid port");
    }
    int port = 0;
    for (char c : port_text) {
      if (!std::isdigit(static_cast<unsigned char>(c))) {
        return Status(ErrorCode::kInvalid, "URL has an invalid port");
      }
      port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535) return Status(ErrorCode::kInvalid, "URL has an invalid port");
    parts.port = port;
  }
  return parts;
}

bool IsLoopbackHost(std::string_view host) {
  if (text::EqualsIgnoreCase(host, "localhost")) return true;
  if (host == "[::1]") return true;
  int octets[4];
  return ParseIpv4(host, octets) && octets[0] == 127;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsUnreserved(c)) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::optional<std::string> FormDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int hi = text::HexDigitValue(text[i + 1]);
      const int lo = text::HexDigitValue(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(char(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string AppendQuery(std::string_view url,
                        const std::vector<std::pair<std::string, std::string>>& params) {
  std::string_view fragment;
  if (size_t hash = url.find('#'); hash != std::string_view::npos) {
    fragment = url.substr(hash);
    url = url.substr(0, hash);
  }
  std::string out(url);
  const size_t q = out.find('?');
  bool need_separator = q != std::string::npos && q + 1 != out.size() && out.back() != '&';
  if (q == std::string::npos) out.push_back('?');
  for (const auto& [name, value] : params) {
    if (need_separator) out.push_back('&');
    out += PercentEncode(name);
    out.push_back('=');
    out += PercentEncode(value);
    need_separator = true;
  }
  out += fragment;
  return out;
}

}  // namespace rendezvous::oauth
