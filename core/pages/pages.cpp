#include "rendezvous/pages.hpp"

#include <kainjow/mustache.hpp>

#include "rendezvous/time.hpp"

namespace rendezvous {
namespace {

namespace mustache = kainjow::mustache;

constexpr const char* kStylesheet = R"css(
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2933;background:#f5f7fa;line-height:1.5}
main{max-width:40rem;margin:3rem auto;padding:2rem;background:#fff;border:1px solid #e4e7eb;border-radius:8px}
h1{font-size:1.5rem;margin:0 0 1.5rem}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=text],input[type=email],input[type=password],input[type=url],select,textarea{width:100%;padding:.5rem;border:1px solid #cbd2d9;border-radius:4px;font:inherit}
button{margin-top:1.5rem;padding:.5rem 1.25rem;border:0;border-radius:4px;background:#2563eb;color:#fff;font:inherit;cursor:pointer}
button.secondary{background:#e4e7eb;color:#1f2933}
.error{padding:.75rem;border-radius:4px;background:#fdecea;color:#8a1c12;margin-bottom:1rem}
.muted{color:#616e7c;font-size:.9rem}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:.4rem;border-bottom:1px solid #e4e7eb}
)css";

bool IsTokenChar(unsigned char c) {
  // RFC 6265 cookie-octet, which also covers what a cookie name may hold in practice.
  return c == 0x21 || (c >= 0x23 && c <= 0x2b) || (c >= 0x2d && c <= 0x3a) || (c >= 0x3c && c <= 0x5b) ||
         (c >= 0x5d && c <= 0x7e);
}

std::string KeepTokenChars(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (IsTokenChar(static_cast<unsigned char>(c))) out.push_back(c);
  }
  return out;
}

mustache::data ToMustache(const Json& value) {
  switch (value.type()) {
    case Json::value_t::object: {
      mustache::data obj{mustache::data::type::object};
      for (const auto& [key, item] : value.items()) obj.set(key, ToMustache(item));
      return obj;
    }
    case Json::value_t::array: {
      mustache::data list{mustache::data::type::list};
      for (const auto& item : value) list.push_back(ToMustache(item));
      return list;
    }
    case Json::value_t::string:
      return mustache::data{value.get_ref<const std::string&>()};
    case Json::value_t::boolean:
      return mustache::data{value.get<bool>()};
    case Json::value_t::null:
    case Json::value_t::discarded:
      return mustache::data{false};
    default:
      return mustache::data{value.dump()};
  }
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

void AddPageHeaders(Response& res) {
  res.With("Cache-Control", "no-store");
  res.With("Pragma", "no-cache");
  res.With("X-Frame-Options", "DENY");
  res.With("Content-Security-Policy", "frame-ancestors 'none'");
  res.With("Referrer-Policy", "no-referrer");
  res.With("X-Content-Type-Options", "nosniff");
}

std::string RenderPage(const std::string& title, const std::string& body_html) {
  std::string page;
  page.reserve(body_html.size() + 1600);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<meta name=\"referrer\" content=\"same-origin\">\n";
  page += "<title>" + HtmlEscape(title) + "</title>\n<style>";
  page += kStylesheet;
  page += "</style>\n</head>\n<body>\n<main>\n";
  page += body_html;
  page += "\n</main>\n</body>\n</html>\n";
  return page;
}

Result<std::string> RenderTemplate(const std::string& mustache_template, const Json& data) {
  mustache::mustache tmpl{mustache_template};
  if (!tmpl.is_valid()) return Status(ErrorCode::kInternal, "template: " + tmpl.error_message());
  tmpl.set_custom_escape([](const std::string& s) { return HtmlEscape(s); });
  std::string out = tmpl.render(ToMustache(data));
  if (!tmpl.is_valid()) return Status(ErrorCode::kInternal, "template: " + tmpl.error_message());
  return out;
}

std::string SetCookieHeader(std::string_view name, std::string_view value, const CookieOptions& options) {
  std::string out = KeepTokenChars(name) + "=" + KeepTokenChars(value);
  if (!options.path.empty()) out += "; Path=" + KeepTokenChars(options.path);
  if (options.max_age) {
    out += "; Max-Age=" + std::to_string(std::max<int64_t>(0, options.max_age->count()));
    if (options.max_age->count() <= 0) out += "; Expires=" + time::FormatHttpDate(0);
  }
  if (options.http_only) out += "; HttpOnly";
  if (options.secure) out += "; Secure";
  if (!options.same_site.empty()) out += "; SameSite=" + KeepTokenChars(options.same_site);
  return out;
}

}  // namespace rendezvous
