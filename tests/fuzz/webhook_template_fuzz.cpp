// libFuzzer target: the webhook payload template renderer. The input is the template; the event
// is a fixed booking event whose strings hold quotes, backslashes, controls and non-ASCII text.
// The output stays within its bound, and a template that is valid JSON with string placeholders
// only inside quotes renders to valid JSON (strings are inserted JSON-escaped). The input is also
// checked as a JSON text by IsJsonText, which must agree with nlohmann::json::accept.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "template_renderer.hpp"

namespace {

const nlohmann::json& Event() {
  static const nlohmann::json event = {
      {"triggerEvent", "BOOKING_CREATED"},
      {"createdAt", "2027-01-04T09:00:00.000Z"},
      {"payload",
       {{"title", "Intro \"call\" \\ between\n\x01 \xc3\xa9 and \xe6\x97\xa5"},
        {"attendees", {{{"name", "Ann \"A\""}, {"email", "ann@example.com"}}}},
        {"organizer", {{"id", 3}, {"name", "Olga\t</script>"}}},
        {"length", 30},
        {"metadata", nlohmann::json::object()}}}};
  return event;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string tmpl(reinterpret_cast<const char*>(data), size);
  // The body's JSON check agrees with nlohmann's parser on every input without a NUL byte (the
  // parser takes NUL for the end of the input; for IsJsonText it is a byte like any other).
  if (tmpl.find('\0') == std::string::npos &&
      rendezvous::webhooks::IsJsonText(tmpl) != nlohmann::json::accept(tmpl)) {
    __builtin_trap();
  }
  const std::string out = rendezvous::webhooks::RenderTemplate(tmpl, Event());
  if (out.size() > rendezvous::webhooks::kMaxRenderedBytes) __builtin_trap();
  const rendezvous::webhooks::RenderedBody body = rendezvous::webhooks::RenderBody(tmpl, Event());
  if (body.content_type != "application/json" && body.content_type != "text/plain") __builtin_trap();
  if (body.content_type == "application/json" && nlohmann::json::parse(body.body, nullptr, false).is_discarded()) {
    __builtin_trap();
  }
  // A JSON template whose placeholders for strings sit inside quotes stays JSON.
  const std::string quoted = "{\"a\":\"{{title}}\",\"b\":\"{{attendees.0.name}}\",\"c\":{{length}},\"d\":\"" +
                             std::string(tmpl.size() % 2 ? "{{organizer.name}}" : "{{triggerEvent}}") + "\"}";
  if (nlohmann::json::parse(rendezvous::webhooks::RenderTemplate(quoted, Event()), nullptr, false).is_discarded()) {
    __builtin_trap();
  }
  return 0;
}
