#include "template_renderer.hpp"

#include "rendezvous/text.hpp"

namespace rendezvous::webhooks {
namespace {

using Json = nlohmann::json;

std::string Dump(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::optional<size_t> Index(std::string_view segment) {
  if (segment.empty() || segment.size() > 9) return std::nullopt;
  size_t index = 0;
  for (char c : segment) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<size_t>(c - '0');
  }
  return index;
}

}  // namespace

std::optional<Json> ResolvePath(const Json& event, std::string_view path) {
  path = text::Trim(path);
  if (path.empty() || !event.is_object()) return std::nullopt;
  if (path == "triggerEvent" || path == "createdAt") {
    auto it = event.find(std::string(path));
    if (it == event.end()) return std::nullopt;
    return *it;
  }
  auto payload = event.find("payload");
  if (payload == event.end()) return std::nullopt;
  const Json* cur = &*payload;
  while (true) {
    const size_t dot = path.find('.');
    const std::string_view segment = path.substr(0, dot);
    if (cur->is_object()) {
      auto it = cur->find(std::string(segment));
      if (it == cur->end()) return std::nullopt;
      cur = &*it;
    } else if (cur->is_array()) {
      std::optional<size_t> i = Index(segment);
      if (!i || *i >= cur->size()) return std::nullopt;
      cur = &(*cur)[*i];
    } else {
      return std::nullopt;
    }
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return *cur;
}

std::string RenderTemplate(std::string_view tmpl, const Json& event) {
  std::string out;
  out.reserve(tmpl.size());
  size_t pos = 0;
  while (pos < tmpl.size() && out.size() < kMaxRenderedBytes) {
    const size_t open = tmpl.find("{{", pos);
    const size_t close = open == std::string_view::npos ? open : tmpl.find("}}", open + 2);
    if (close == std::string_view::npos) {
      out.append(tmpl.substr(pos));
      break;
    }
    out.append(tmpl.substr(pos, open - pos));
    if (std::optional<Json> value = ResolvePath(event, tmpl.substr(open + 2, close - open - 2))) {
      const std::string dumped = Dump(*value);
      if (value->is_string()) {
        out.append(dumped, 1, dumped.size() - 2);
      } else {
        out.append(dumped);
      }
    }
    pos = close + 2;
  }
  if (out.size() > kMaxRenderedBytes) out.resize(kMaxRenderedBytes);
  return out;
}

RenderedBody RenderBody(const std::optional<std::string>& tmpl, const Json& event) {
  if (!tmpl) return {Dump(event), "application/json"};
  return TypedBody(RenderTemplate(*tmpl, event));
}

RenderedBody TypedBody(std::string text) {
  if (text.size() > kMaxRenderedBytes) text.resize(kMaxRenderedBytes);
  RenderedBody r;
  r.content_type = Json::accept(text) ? "application/json" : "text/plain";
  r.body = std::move(text);
  return r;
}

}  // namespace rendezvous::webhooks
