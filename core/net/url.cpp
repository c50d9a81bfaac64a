#include "rendezvous/url.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "rendezvous/address_policy.hpp"
#include "rendezvous/text.hpp"

namespace rendezvous::net {
namespace {

bool IsAlpha(unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

bool IsUnreserved(unsigned char c) {
  return IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

// RFC 3986 reg-name: unreserved / sub-delims. A percent-encoded host name is refused: it only
// invites confusion about which host is meant.
bool IsRegNameChar(unsigned char c) {
  return IsUnreserved(c) || c == '!' || c == '$' || c == '&' || c == '\'' || c == '(' || c == ')' || c == '*' ||
         c == '+' || c == ',' || c == ';' || c == '=';
}

Status Bad(const char* message) { return Status(ErrorCode::kInvalid, message); }

}  // namespace

int Url::EffectivePort() const {
  if (port) return *port;
  if (scheme == "http") return 80;
  if (scheme == "https") return 443;
  if (scheme == "smtp") return 25;
  if (scheme == "smtps") return 465;
  return 0;
}

std::string Url::HostInUrl() const { return ipv6 ? "[" + host + "]" : host; }

std::string Url::Destination() const { return HostInUrl() + ":" + std::to_string(EffectivePort()); }

bool Url::SameOrigin(const Url& other) const {
  return scheme == other.scheme && host == other.host && EffectivePort() == other.EffectivePort();
}

Result<Url> ParseUrl(std::string_view text) {
  if (text.empty()) return Bad("URL is empty");
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f) return Bad("URL must not contain spaces, control or non-ASCII characters");
    if (c == '\\') return Bad("URL must not contain a backslash");
  }
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || !IsAlpha(static_cast<unsigned char>(text[0]))) {
    return Bad("URL must be absolute (scheme://host/...)");
  }
  for (size_t i = 1; i < colon; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (!IsAlpha(c) && !IsDigit(c) && c != '+' && c != '-' && c != '.') {
      return Bad("URL must be absolute (scheme://host/...)");
    }
  }
  Url url;
  url.scheme = text::AsciiLower(text.substr(0, colon));
  std::string_view rest = text.substr(colon + 1);
  if (rest.substr(0, 2) != "//") return Bad("URL must be absolute (scheme://host/...)");
  rest.remove_prefix(2);

  if (const size_t hash = rest.find('#'); hash != std::string_view::npos) {
    url.fragment = std::string(rest.substr(hash + 1));
    rest = rest.substr(0, hash);
  }
  if (const size_t q = rest.find('?'); q != std::string_view::npos) {
    url.query = std::string(rest.substr(q + 1));
    rest = rest.substr(0, q);
  }
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) url.path = std::string(rest.substr(slash));

  if (authority.find('@') != std::string_view::npos) return Bad("URL must not contain user credentials");
  std::string_view host;
  std::optional<std::string_view> port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Bad("URL has an unterminated IPv6 address");
    host = authority.substr(1, close - 1);
    in6_addr address{};
    if (host.empty() || host.size() >= INET6_ADDRSTRLEN ||
        inet_pton(AF_INET6, std::string(host).c_str(), &address) != 1) {
      return Bad("URL has an invalid IPv6 address");
    }
    url.ipv6 = true;
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Bad("URL has an invalid host");
      port_text = after.substr(1);
    }
  } else {
    const size_t pc = authority.find(':');
    host = authority.substr(0, pc);
    if (pc != std::string_view::npos) port_text = authority.substr(pc + 1);
    for (char c : host) {
      if (!IsRegNameChar(static_cast<unsigned char>(c))) return Bad("URL has an invalid host");
    }
  }
  if (host.empty()) return Bad("URL has no host");
  url.host = text::AsciiLower(host);
  if (port_text) {
    if (port_text->empty() || port_text->size() > 5) return Bad("URL has an invalid port");
    int port = 0;
    for (char c : *port_text) {
      if (!IsDigit(static_cast<unsigned char>(c))) return Bad("URL has an invalid port");
      port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535) return Bad("URL has an invalid port");
    url.port = port;
  }
  return url;
}

bool IsDnsName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (char ch : host) {
    const auto c = static_cast<unsigned char>(ch);
    if (!IsAlpha(c) && !IsDigit(c) && c != '-' && c != '.' && c != '_') return false;
  }
  return true;
}

bool IsLoopbackHost(std::string_view host) {
  if (text::EqualsIgnoreCase(host, "localhost")) return true;
  const std::optional<std::string> why = ClassifyAddress(host);
  return why && *why == "loopback";
}

std::string PercentEncode(std::string_view in, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(in.size());
  for (char ch : in) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsUnreserved(c) || (keep_slash && c == '/')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

namespace {

std::optional<std::string> Decode(std::string_view in, bool plus_as_space, bool allow_nul) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      const int hi = text::HexDigitValue(in[i + 1]);
      const int lo = text::HexDigitValue(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      const char decoded = static_cast<char>(hi * 16 + lo);
      if (decoded == '\0' && !allow_nul) return std::nullopt;
      out.push_back(decoded);
      i += 2;
    } else if (c == '+' && plus_as_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view in, bool plus_as_space) {
  return Decode(in, plus_as_space, false);
}

std::optional<std::string> FormDecode(std::string_view in) { return Decode(in, true, true); }

std::optional<std::vector<std::pair<std::string, std::string>>> ParseUrlEncoded(std::string_view in) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos <= in.size()) {
    size_t amp = in.find('&', pos);
    if (amp == std::string_view::npos) amp = in.size();
    const std::string_view piece = in.substr(pos, amp - pos);
    if (!piece.empty()) {
      const size_t eq = piece.find('=');
      auto key = PercentDecode(piece.substr(0, eq), true);
      auto value = eq == std::string_view::npos ? std::optional<std::string>("")
                                                : PercentDecode(piece.substr(eq + 1), true);
      if (!key || !value) return std::nullopt;
      out.emplace_back(std::move(*key), std::move(*value));
    }
    pos = amp + 1;
  }
  return out;
}

std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out.push_back('&');
    out += PercentEncode(name);
    out.push_back('=');
    out += PercentEncode(value);
  }
  return out;
}

std::string AppendQuery(std::string_view url, const std::vector<std::pair<std::string, std::string>>& params) {
  std::string_view fragment;
  if (const size_t hash = url.find('#'); hash != std::string_view::npos) {
    fragment = url.substr(hash);
    url = url.substr(0, hash);
  }
  std::string out(url);
  const size_t q = out.find('?');
  const bool need_separator = q != std::string::npos && q + 1 != out.size() && out.back() != '&';
  if (q == std::string::npos) out.push_back('?');
  if (need_separator && !params.empty()) out.push_back('&');
  out += FormEncode(params);
  out += fragment;
  return out;
}

std::optional<std::vector<std::string>> SplitPath(std::string_view raw_path) {
  if (raw_path.empty() || raw_path.front() != '/') return std::nullopt;
  std::vector<std::string> segments;
  size_t pos = 1;
  while (true) {
    const size_t slash = raw_path.find('/', pos);
    const std::string_view piece =
        raw_path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
    auto decoded = PercentDecode(piece, false);
    if (!decoded) return std::nullopt;
    segments.push_back(std::move(*decoded));
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  // "/" is the root: no segments.
  if (segments.size() == 1 && segments[0].empty()) segments.clear();
  return segments;
}

}  // namespace rendezvous::net
