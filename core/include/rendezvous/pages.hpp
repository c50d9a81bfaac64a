// Helpers for the HTML pages of the app host ({app_url}): escaping, a common page frame, mustache
// templates fed with JSON, and Set-Cookie headers. Used by the core's sign-in page and by plugins
// (consent page, settings). All functions are pure and thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "rendezvous/http.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous {

// Escapes & < > " ' for use in HTML text and in quoted attribute values.
std::string HtmlEscape(std::string_view text);

// A complete HTML5 document: <meta charset="utf-8">, viewport, the escaped title and a small
// inline stylesheet (forms, buttons, .error, .muted, tables) around `body_html`, which is inserted
// as given: escape every value in it (HtmlEscape or RenderTemplate).
std::string RenderPage(const std::string& title, const std::string& body_html);

// Renders a mustache template (kainjow/mustache) with JSON data: {{name}} is HTML-escaped,
// {{{name}}} is inserted raw, sections iterate arrays and test booleans, dotted names reach into
// objects. Numbers render as JSON numbers, null and missing names as nothing.
// kInternal with the parser's message when the template is malformed.
Result<std::string> RenderTemplate(const std::string& mustache_template, const Json& data);

// The headers every page carries: never cached, never framed, no Referer sent to other sites
// (page URLs and forms carry states and codes), and no content sniffing. The server adds the same
// headers to every other answer of the app listener (404s, errors, refusals) that lacks them.
void AddPageHeaders(Response& res);

struct CookieOptions {
  std::string path = "/";
  bool http_only = true;
  bool secure = false;              // set when the page is served over https
  std::string same_site = "Lax";    // "Lax", "Strict", "None" ("" = attribute left out)
  std::optional<std::chrono::seconds> max_age;  // nullopt = session cookie; 0 deletes the cookie
};

// The value of a Set-Cookie header: "name=value; Path=/; Max-Age=..; HttpOnly; Secure; SameSite=..".
// Characters not allowed in a cookie name or value (RFC 6265 cookie-octet) are dropped, so pass
// values that do not need them (tokens in base64url, hex).
std::string SetCookieHeader(std::string_view name, std::string_view value,
                            const CookieOptions& options = {});

}  // namespace rendezvous
