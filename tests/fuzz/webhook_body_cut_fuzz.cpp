// libFuzzer target: where a webhook body is cut. The input gives a byte limit (its first two
// bytes), an attendee name (up to the first NUL) and a template (the rest, repaired to UTF-8 as
// the API requires of templates). Whatever they are, the rendered template, a render script's
// text as a body and text::TruncateUtf8 give well-formed UTF-8 within the limit, a prefix of the
// whole text, short of the limit by less than one character.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rendezvous/text.hpp"
#include "template_renderer.hpp"

namespace {

namespace text = rendezvous::text;
namespace webhooks = rendezvous::webhooks;

// `cut` is `whole` cut at `limit` as the body rules want it.
void CheckCut(const std::string& whole, const std::string& cut, size_t limit) {
  if (cut.size() > limit) __builtin_trap();
  if (!text::IsValidUtf8(cut)) __builtin_trap();
  if (whole.compare(0, cut.size(), cut) != 0) __builtin_trap();
  // At most the 1 to 3 bytes of a character that did not fit are left out.
  if (whole.size() > limit && cut.size() + 4 <= limit) __builtin_trap();
  if (whole.size() <= limit && cut != whole) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t limit = static_cast<size_t>(data[0]) << 8 | data[1];
  const std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const size_t nul = rest.find('\0');
  const std::string name(rest.substr(0, nul));
  const std::string tmpl = text::SanitizeUtf8(nul == std::string_view::npos ? "" : rest.substr(nul + 1));

  const nlohmann::json event = {
      {"triggerEvent", "BOOKING_CREATED"},
      {"createdAt", "2027-01-04T09:00:00.000Z"},
      {"payload", {{"attendees", {{{"name", name}}}}, {"title", "Caf\xC3\xA9 \xF0\x9F\x98\x80"}}}};

  // The template rendered whole (the limit of the service is far above what the input can make),
  // then with the input's limit.
  const std::string whole = webhooks::RenderTemplate(tmpl, event, webhooks::kMaxRenderedBytes);
  if (!text::IsValidUtf8(whole)) __builtin_trap();
  if (whole.size() < webhooks::kMaxRenderedBytes) {
    CheckCut(whole, webhooks::RenderTemplate(tmpl, event, limit), limit);
  }

  // A render script's text (well-formed: others never reach TypedBody).
  const std::string script_text = text::SanitizeUtf8(name);
  const webhooks::RenderedBody body = webhooks::TypedBody(script_text, limit);
  CheckCut(script_text, body.body, limit);

  CheckCut(script_text, text::TruncateUtf8(script_text, limit), limit);
  return 0;
}
