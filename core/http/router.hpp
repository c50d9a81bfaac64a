// The route table: patterns with ":name" segments, one table per listener. Exact segments win over
// parameters; among the routes matching a path, the first (in that order) that serves the method
// wins, so GET /v2/x/search and GET /v2/x/:id coexist.
// Filled before serving (Add is not thread-safe); Match is const and safe from any thread after.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rendezvous/http.hpp"

namespace rendezvous::core {

class Router {
 public:
  enum class Outcome { kFound, kNotFound, kMethodNotAllowed };

  struct Match {
    Outcome outcome = Outcome::kNotFound;
    const Route* route = nullptr;                  // kFound: owned by the router
    std::map<std::string, std::string> params;     // kFound: decoded route parameters
    std::vector<Method> allowed;                   // kMethodNotAllowed: methods the path serves
  };

  Router();
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // Throws std::logic_error for a malformed pattern (must start with '/', no empty ":" names) or
  // when the listener already has a route for the same method and pattern (parameter names aside).
  void Add(Route route);

  // segments: the decoded path segments (see SplitPath). HEAD is served by a GET route when the
  // path has no HEAD route of its own.
  Match Find(Listener listener, Method method, const std::vector<std::string>& segments) const;

  // The methods some route serves on this path (HEAD included where GET is); empty when none.
  std::vector<Method> AllowedMethods(Listener listener, const std::vector<std::string>& segments) const;

  // Every route of one listener, ordered by pattern then method (owned by the router).
  std::vector<const Route*> Routes(Listener listener) const;

 private:
  struct Node;
  void Collect(const Node& node, const std::vector<std::string>& segments, size_t depth,
               std::vector<std::string>& values, std::vector<std::pair<const Node*, std::vector<std::string>>>& out) const;

  std::unique_ptr<Node> roots_[3];  // by Listener
};

}  // namespace rendezvous::core
