// libFuzzer target: the URL kit (rendezvous/url.hpp), fed URLs, query strings and form values a
// client or a peer chooses. The input is cut at its first NUL byte: the part before it is parsed
// as a URL, the part after it is used as a form's text and as a value to encode.
//  - ParseUrl either fails with one of its fixed messages (never echoing the input) or answers a
//    URL whose parts hold what the header promises; writing it back and parsing again gives the
//    same URL, and writing that one gives the same text (a fixed point).
//  - Encoding then decoding gives the value back; a form written with FormEncode parses into the
//    same pairs; AppendQuery keeps a parsed URL's origin, path and fragment and adds the pairs.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rendezvous/url.hpp"

namespace {

using rendezvous::net::Url;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

bool IsLowerAscii(std::string_view s) {
  for (char c : s) {
    if (c >= 'A' && c <= 'Z') return false;
  }
  return true;
}

bool IsPrintableAscii(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '\\') return false;
  }
  return true;
}

// The URL written back as text: what ParseUrl reads as the same URL.
std::string Write(const Url& url) {
  std::string out = url.scheme + "://" + url.HostInUrl();
  if (url.port) out += ":" + std::to_string(*url.port);
  out += url.path;
  if (url.query) out += "?" + *url.query;
  if (url.fragment) out += "#" + *url.fragment;
  return out;
}

bool Same(const Url& a, const Url& b) {
  return a.scheme == b.scheme && a.host == b.host && a.ipv6 == b.ipv6 && a.port == b.port &&
         a.path == b.path && a.query == b.query && a.fragment == b.fragment;
}

void CheckParsed(std::string_view text, const Url& url) {
  Check(IsPrintableAscii(text));
  Check(!url.scheme.empty() && IsLowerAscii(url.scheme) && url.scheme[0] >= 'a' && url.scheme[0] <= 'z');
  Check(!url.host.empty() && IsLowerAscii(url.host) && IsPrintableAscii(url.host));
  // No user information and nothing of the path, query or fragment in the host.
  Check(url.host.find_first_of("@/?#[]") == std::string::npos);
  Check(url.ipv6 || url.host.find(':') == std::string::npos);
  Check(!url.port || (*url.port >= 1 && *url.port <= 65535));
  Check(url.path.empty() || url.path[0] == '/');
  Check(url.path.find_first_of("?#") == std::string::npos);
  Check(!url.query || url.query->find('#') == std::string::npos);
  Check(url.EffectivePort() >= 0 && url.EffectivePort() <= 65535);
  Check(url.SameOrigin(url));
  Check(url.Destination() == url.HostInUrl() + ":" + std::to_string(url.EffectivePort()));
  // Nothing is invented: the written form is never longer than the input (only case and a port's
  // leading zeros may differ).
  const std::string written = Write(url);
  Check(written.size() <= text.size());
  const rendezvous::Result<Url> again = rendezvous::net::ParseUrl(written);
  Check(again.ok());
  Check(Same(url, *again));
  Check(Write(*again) == written);
}

void CheckFailure(const rendezvous::Status& status) {
  static const std::string_view kMessages[] = {
      "URL is empty",
      "URL must not contain spaces, control or non-ASCII characters",
      "URL must not contain a backslash",
      "URL must be absolute (scheme://host/...)",
      "URL must not contain user credentials",
      "URL has an unterminated IPv6 address",
      "URL has an invalid IPv6 address",
      "URL has an invalid host",
      "URL has no host",
      "URL has an invalid port",
  };
  bool known = false;
  for (std::string_view m : kMessages) known = known || status.message() == m;
  Check(known);
  Check(status.code() == rendezvous::ErrorCode::kInvalid);
}

void CheckEncoding(std::string_view value, std::string_view form) {
  const std::string encoded = rendezvous::net::PercentEncode(value);
  for (char c : encoded) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                            c == '-' || c == '.' || c == '_' || c == '~' || c == '%';
    Check(unreserved);
  }
  // FormDecode takes every byte back; PercentDecode all but an escaped NUL.
  const std::optional<std::string> form_back = rendezvous::net::FormDecode(encoded);
  Check(form_back && *form_back == value);
  const std::optional<std::string> back = rendezvous::net::PercentDecode(encoded, false);
  Check(value.find('\0') != std::string_view::npos ? !back : back && *back == value);

  // A path of encoded segments splits into the segments.
  const std::string path = "/" + encoded + "/" + rendezvous::net::PercentEncode(form);
  const auto segments = rendezvous::net::SplitPath(path);
  const bool has_nul =
      value.find('\0') != std::string_view::npos || form.find('\0') != std::string_view::npos;
  if (has_nul) {
    Check(!segments);
  } else {
    Check(segments && segments->size() == 2 && (*segments)[0] == value && (*segments)[1] == form);
  }

  // Whatever a form's text, what parses is written back to pairs that parse the same.
  const auto pairs = rendezvous::net::ParseUrlEncoded(form);
  if (pairs) {
    const auto again = rendezvous::net::ParseUrlEncoded(rendezvous::net::FormEncode(*pairs));
    Check(again && *again == *pairs);
  }
}

void CheckAppendQuery(std::string_view text, const Url& url, std::string_view value) {
  const std::vector<std::pair<std::string, std::string>> params = {{"a b", std::string(value)},
                                                                   {"state", "x&y=z"}};
  const std::string appended = rendezvous::net::AppendQuery(text, params);
  const rendezvous::Result<Url> parsed = rendezvous::net::ParseUrl(appended);
  Check(parsed.ok());
  Check(parsed->SameOrigin(url) && parsed->path == url.path && parsed->fragment == url.fragment);
  Check(parsed->query.has_value());
  // The pairs come last in the query, as they were given (value without NUL: the query decoder
  // refuses an escaped NUL).
  if (value.find('\0') != std::string_view::npos) return;
  const auto pairs = rendezvous::net::ParseUrlEncoded(*parsed->query);
  if (!pairs) return;  // the URL's own query held a bad escape
  Check(pairs->size() >= 2);
  Check((*pairs)[pairs->size() - 2] == params[0] && (*pairs)[pairs->size() - 1] == params[1]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view text = input.substr(0, nul);
  const std::string_view rest = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);

  const rendezvous::Result<Url> url = rendezvous::net::ParseUrl(text);
  if (url.ok()) {
    CheckParsed(text, *url);
    CheckAppendQuery(text, *url, rest);
    // An IPv6 literal is never a DNS name; the loopback check answers for any parsed host.
    Check(!url->ipv6 || !rendezvous::net::IsDnsName(url->host));
    (void)rendezvous::net::IsLoopbackHost(url->host);
  } else {
    CheckFailure(url.status());
  }
  CheckEncoding(rest, text);
  return 0;
}
