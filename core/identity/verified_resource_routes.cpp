#include "identity/verified_resource_routes.hpp"

#include <string>
#include <utility>

#include "rendezvous/answer.hpp"

namespace rendezvous::core {
namespace {

// Managed-user tokens too, with their client's scopes (DESIGN §10).
constexpr unsigned kAccepts = kApiKey | kOAuthToken | kManagedUserToken;
constexpr const char* kScope = "VERIFIED_RESOURCES_WRITE";

Response UnauthenticatedResponse() {
  return Response::FromStatus(Status(ErrorCode::kUnauthenticated, "missing or invalid credentials"));
}

// A POST: the body as JSON, handed to `call` with the caller's user id.
Response Posted(const Request& req, const std::function<Result<Json>(int64_t, const Json&)>& call) {
  if (!req.principal) return UnauthenticatedResponse();
  Result<Json> body = req.JsonBody();
  if (!body.ok()) return Response::FromStatus(body.status());
  return Answer(call(req.principal->user_id, *body));
}

}  // namespace

void RegisterVerifiedResourceRoutes(VerifiedResourceService& service, const std::function<void(Route)>& add) {
  auto route = [&](Method method, std::string pattern, std::function<Response(Request&)> handler) {
    Route r;
    r.listener = Listener::kApi;
    r.method = method;
    r.pattern = std::move(pattern);
    r.auth = RouteAuth::Bearer(kScope, kAccepts);
    r.handler = std::move(handler);
    add(std::move(r));
  };
  for (auto [kind, base] : {std::pair{VerifiedKind::kEmail, "/v2/verified-resources/emails"},
                            std::pair{VerifiedKind::kPhone, "/v2/verified-resources/phones"}}) {
    const std::string b = base;
    route(Method::kPost, b + "/verification-code/request", [&service, kind = kind](Request& req) {
      return Posted(req, [&](int64_t user, const Json& body) { return service.RequestCode(kind, user, body); });
    });
    route(Method::kPost, b + "/verification-code/verify", [&service, kind = kind](Request& req) {
      return Posted(req, [&](int64_t user, const Json& body) { return service.VerifyCode(kind, user, body); });
    });
    route(Method::kGet, b, [&service, kind = kind](Request& req) {
      if (!req.principal) return UnauthenticatedResponse();
      Result<Pagination> page = ParsePagination(req.query, kVerifiedListLimits);
      if (!page.ok()) return Response::FromStatus(page.status());
      return Response::SuccessWith(service.List(kind, req.principal->user_id, *page));
    });
    route(Method::kGet, b + "/:id", [&service, kind = kind](Request& req) {
      if (!req.principal) return UnauthenticatedResponse();
      auto it = req.params.find("id");
      return Answer(service.Get(kind, req.principal->user_id, it == req.params.end() ? std::string() : it->second));
    });
  }
}

}  // namespace rendezvous::core
