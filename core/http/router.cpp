#include "http/router.hpp"

#include <algorithm>
#include <stdexcept>

namespace rendezvous::core {

struct Router::Node {
  std::map<std::string, std::unique_ptr<Node>> exact;
  std::unique_ptr<Node> param;
  // Per method: the route and the parameter names along its pattern, in order.
  std::map<Method, std::pair<std::unique_ptr<Route>, std::vector<std::string>>> routes;
};

Router::Router() {
  for (auto& root : roots_) root = std::make_unique<Node>();
}

Router::~Router() = default;

void Router::Add(Route route) {
  const std::string& pattern = route.pattern;
  if (pattern.empty() || pattern.front() != '/')
    throw std::logic_error("route pattern must start with '/': " + pattern);
  Node* node = roots_[static_cast<int>(route.listener)].get();
  std::vector<std::string> names;
  if (pattern != "/") {
    size_t pos = 1;
    while (true) {
      size_t slash = pattern.find('/', pos);
      std::string seg = pattern.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
      if (!seg.empty() && seg.front() == ':') {
        if (seg.size() == 1) throw std::logic_error("route parameter without a name: " + pattern);
        names.push_back(seg.substr(1));
        if (!node->param) node->param = std::make_unique<Node>();
        node = node->param.get();
      } else {
        auto& child = node->exact[seg];
        if (!child) child = std::make_unique<Node>();
        node = child.get();
      }
      if (slash == std::string::npos) break;
      pos = slash + 1;
    }
  }
  if (node->routes.count(route.method) != 0)
    throw std::logic_error("duplicate route: " + std::string(MethodName(route.method)) + " " + pattern);
  Method method = route.method;
  node->routes.emplace(method, std::make_pair(std::make_unique<Route>(std::move(route)), std::move(names)));
}

void Router::Collect(const Node& node, const std::vector<std::string>& segments, size_t depth,
                     std::vector<std::string>& values,
                     std::vector<std::pair<const Node*, std::vector<std::string>>>& out) const {
  if (depth == segments.size()) {
    if (!node.routes.empty()) out.emplace_back(&node, values);
    return;
  }
  const std::string& seg = segments[depth];
  auto it = node.exact.find(seg);
  if (it != node.exact.end()) Collect(*it->second, segments, depth + 1, values, out);
  if (node.param && !seg.empty()) {
    values.push_back(seg);
    Collect(*node.param, segments, depth + 1, values, out);
    values.pop_back();
  }
}

Router::Match Router::Find(Listener listener, Method method, const std::vector<std::string>& segments) const {
  std::vector<std::pair<const Node*, std::vector<std::string>>> candidates;
  std::vector<std::string> values;
  Collect(*roots_[static_cast<int>(listener)], segments, 0, values, candidates);

  Match match;
  if (candidates.empty()) return match;
  auto pick = [&](Method m) -> bool {
    for (const auto& [node, vals] : candidates) {
      auto it = node->routes.find(m);
      if (it == node->routes.end()) continue;
      match.outcome = Outcome::kFound;
      match.route = it->second.first.get();
      const auto& names = it->second.second;
      for (size_t i = 0; i < names.size() && i < vals.size(); ++i) match.params[names[i]] = vals[i];
      return true;
    }
    return false;
  };
  if (pick(method)) return match;
  if (method == Method::kHead && pick(Method::kGet)) return match;

  match.outcome = Outcome::kMethodNotAllowed;
  match.allowed = AllowedMethods(listener, segments);
  return match;
}

std::vector<Method> Router::AllowedMethods(Listener listener, const std::vector<std::string>& segments) const {
  std::vector<std::pair<const Node*, std::vector<std::string>>> candidates;
  std::vector<std::string> values;
  Collect(*roots_[static_cast<int>(listener)], segments, 0, values, candidates);
  std::vector<Method> allowed;
  for (const auto& [node, vals] : candidates)
    for (const auto& [m, entry] : node->routes)
      if (std::find(allowed.begin(), allowed.end(), m) == allowed.end()) allowed.push_back(m);
  bool has_get = std::find(allowed.begin(), allowed.end(), Method::kGet) != allowed.end();
  bool has_head = std::find(allowed.begin(), allowed.end(), Method::kHead) != allowed.end();
  if (has_get && !has_head) allowed.push_back(Method::kHead);
  std::sort(allowed.begin(), allowed.end());
  return allowed;
}

std::vector<const Route*> Router::Routes(Listener listener) const {
  std::vector<const Route*> out;
  std::vector<const Node*> pending{roots_[static_cast<int>(listener)].get()};
  while (!pending.empty()) {
    const Node* node = pending.back();
    pending.pop_back();
    for (const auto& [method, entry] : node->routes) out.push_back(entry.first.get());
    for (const auto& [segment, child] : node->exact) pending.push_back(child.get());
    if (node->param) pending.push_back(node->param.get());
  }
  std::sort(out.begin(), out.end(), [](const Route* a, const Route* b) {
    return a->pattern != b->pattern ? a->pattern < b->pattern : a->method < b->method;
  });
  return out;
}

}  // namespace rendezvous::core
