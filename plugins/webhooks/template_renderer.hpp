// Renders a webhook's payloadTemplate against a booking event (DESIGN §6). `{{path}}`
// placeholders resolve against the event's payload with dotted paths and array indices
// (`{{organizer.name}}`, `{{attendees.0.name}}`); `{{triggerEvent}}` and `{{createdAt}}` name the
// event's own members. A string is inserted JSON-escaped without its quotes (so a template that
// quotes it stays valid JSON), a number, boolean or null as JSON, an object or array as compact
// JSON; an unknown path renders empty. Whitespace inside the braces is ignored; a `{{` without a
// closing `}}` stays as text. Never HTML-escapes. Pure logic; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rendezvous::webhooks {

// The default of DESIGN §8 plugins.webhooks.max_rendered_bytes: one delivery's body.
inline constexpr size_t kMaxRenderedBytes = 1024 * 1024;

struct RenderedBody {
  std::string body;
  std::string content_type;  // "application/json" when the body parses as JSON, else "text/plain"
};

// `event` = {"triggerEvent", "createdAt", "payload"}. The output stops at `max_bytes`, cut on a
// UTF-8 character boundary: a well-formed template renders to well-formed UTF-8 (the inserted
// values are, ill-formed strings in the event being replaced).
std::string RenderTemplate(std::string_view tmpl, const nlohmann::json& event,
                           size_t max_bytes = kMaxRenderedBytes);

// The value a placeholder path names, nullopt when unknown.
std::optional<nlohmann::json> ResolvePath(const nlohmann::json& event, std::string_view path);

// A rendered text as a delivery's body: cut at `max_bytes` on a UTF-8 character boundary,
// "application/json" when it parses as JSON, else "text/plain". `text` must be well-formed UTF-8
// (a render script's answer is checked before it comes here).
RenderedBody TypedBody(std::string text, size_t max_bytes = kMaxRenderedBytes);

// Whether `text` is one JSON text (RFC 8259), by nlohmann::json::accept's rules: surrounding
// whitespace and a leading UTF-8 byte order mark are allowed, strings are well-formed UTF-8
// without raw control characters and pair their \u surrogates, numbers are finite as doubles.
// Checks without building anything, so it costs a fraction of accept; nesting depth is bounded
// only by memory (an explicit stack, no recursion). One difference: accept takes a NUL byte for
// the end of the input ("{}\0x" passes), here it is invalid wherever it stands.
bool IsJsonText(std::string_view text);

// The body of a delivery: the template rendered (cut at `max_bytes`, as RenderTemplate), or
// without one the event itself as compact JSON.
RenderedBody RenderBody(const std::optional<std::string>& tmpl, const nlohmann::json& event,
                        size_t max_bytes = kMaxRenderedBytes);

}  // namespace rendezvous::webhooks
