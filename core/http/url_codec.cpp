#include "http/url_codec.hpp"

#include "rendezvous/text.hpp"

namespace rendezvous::core {
namespace {

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view in, bool plus_as_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      int hi = text::HexDigitValue(in[i + 1]);
      int lo = text::HexDigitValue(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      char decoded = static_cast<char>(hi * 16 + lo);
      if (decoded == '\0') return std::nullopt;
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

std::string PercentEncode(std::string_view in, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(in.size());
  for (unsigned char c : in) {
    if (IsUnreserved(c) || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> ParseUrlEncoded(std::string_view in) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos <= in.size()) {
    size_t amp = in.find('&', pos);
    if (amp == std::string_view::npos) amp = in.size();
    std::string_view piece = in.substr(pos, amp - pos);
    if (!piece.empty()) {
      size_t eq = piece.find('=');
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

std::optional<std::vector<std::string>> SplitPath(std::string_view raw_path) {
  if (raw_path.empty() || raw_path.front() != '/') return std::nullopt;
  std::vector<std::string> segments;
  size_t pos = 1;
  while (true) {
    size_t slash = raw_path.find('/', pos);
    std::string_view piece =
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

}  // namespace rendezvous::core
