#include "webhook_routes.hpp"

#include <algorithm>

#include "rendezvous/answer.hpp"
#include "rendezvous/digits.hpp"
#include "rendezvous/pagination.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::webhooks {
namespace {

constexpr int64_t kDefaultTake = 100;
constexpr int64_t kMaxTake = 250;
constexpr int64_t kMaxSkip = 1000000;
constexpr int64_t kMaxGraceSeconds = 604800;

std::optional<int64_t> PathId(const Request& req, const char* name) {
  auto it = req.params.find(name);
  return it == req.params.end() ? std::nullopt : text::ParseDigits(it->second, 1);
}

Response WebhookNotFound() { return Response::FromStatus(Status::NotFound("webhook not found")); }
Response EventTypeNotFound() {
  return Response::FromStatus(Status::NotFound("event type not found"));
}

// The level a route's path names: the user's own webhooks, or the event type's in :eventTypeId.
// nullopt when that is not an id (404).
std::optional<WebhookStore::Level> PathLevel(const Request& req, bool of_event_type) {
  if (!of_event_type) return WebhookLevel::Own();
  auto id = PathId(req, "eventTypeId");
  if (!id) return std::nullopt;
  return WebhookLevel::EventType(*id);
}

// Cal.com's answer to a deletion of all a level's webhooks: a sentence in `data`.
Response DeletedAll(const Result<int64_t>& deleted) {
  if (!deleted.ok()) return Response::FromStatus(deleted.status());
  return Response::Success(
      Json(std::to_string(*deleted) + (*deleted == 1 ? " webhook deleted" : " webhooks deleted")));
}

// The body's fields (the service checks the subscriber URL's host).
Result<WebhookFields> ReadFields(const Request& req, bool create) {
  Result<Json> body = req.JsonBody();
  if (!body.ok()) return body.status();
  return ParseWebhookFields(*body, create);
}

Route ApiKeyRoute(Method method, std::string pattern, Handler handler) {
  // Spec §5.1: the webhook endpoints take API keys only.
  Route r = Route::Api(method, std::move(pattern), RouteAuth::Bearer("", kApiKey), std::move(handler));
  return r;
}

}  // namespace

void RegisterWebhookRoutes(PluginContext& ctx, const std::shared_ptr<WebhookService>& service,
                           const std::shared_ptr<WebhookStore>& webhooks,
                           const std::shared_ptr<DeliveryQueue>& deliveries, const RouteOptions& options) {
  Database& db = ctx.db();

  // The same five routes at both levels: the user's own webhooks under /v2/webhooks, an event
  // type's under /v2/event-types/{eventTypeId}/webhooks (DESIGN §6). Create and update resolve the
  // subscriber's host name: outbound work, on its own pool.
  for (const bool of_event_type : {false, true}) {
    const std::string base = of_event_type ? "/v2/event-types/:eventTypeId/webhooks" : "/v2/webhooks";

    ctx.AddRoute(ApiKeyRoute(Method::kPost, base, [service, of_event_type](Request& req) {
                   auto level = PathLevel(req, of_event_type);
                   if (!level) return EventTypeNotFound();
                   Result<WebhookFields> fields = ReadFields(req, true);
                   if (!fields.ok()) return Response::FromStatus(fields.status());
                   return Answer(service->Create(req.principal->user_id, *level, *fields), WebhookJson, 201);
                 }).Outbound());

    ctx.AddRoute(ApiKeyRoute(Method::kPatch, base + "/:id", [service, of_event_type](Request& req) {
                   auto level = PathLevel(req, of_event_type);
                   if (!level) return EventTypeNotFound();
                   auto id = PathId(req, "id");
                   if (!id) return WebhookNotFound();
                   Result<WebhookFields> fields = ReadFields(req, false);
                   if (!fields.ok()) return Response::FromStatus(fields.status());
                   return Answer(service->Update(req.principal->user_id, *level, *id, *fields), WebhookJson);
                 }).Outbound());

    ctx.AddRoute(ApiKeyRoute(Method::kGet, base, [service, of_event_type](Request& req) {
      auto level = PathLevel(req, of_event_type);
      if (!level) return EventTypeNotFound();
      Result<Pagination> page = ParsePagination(req.query, {kDefaultTake, kMaxTake, kMaxSkip});
      if (!page.ok()) return Response::FromStatus(page.status());
      auto list = service->List(req.principal->user_id, *level, page->skip, page->take);
      if (!list.ok()) return Response::FromStatus(list.status());
      Json data = Json::array();
      for (const Webhook& w : list->first) data.push_back(WebhookJson(w));
      return Response::SuccessWith(
          Json{{"data", std::move(data)}, {"pagination", page->ToJson(list->second)}});
    }));

    ctx.AddRoute(ApiKeyRoute(Method::kGet, base + "/:id", [service, of_event_type](Request& req) {
      auto level = PathLevel(req, of_event_type);
      if (!level) return EventTypeNotFound();
      auto id = PathId(req, "id");
      if (!id) return WebhookNotFound();
      return Answer(service->Get(req.principal->user_id, *level, *id), WebhookJson);
    }));

    ctx.AddRoute(ApiKeyRoute(Method::kDelete, base + "/:id", [service, of_event_type](Request& req) {
      auto level = PathLevel(req, of_event_type);
      if (!level) return EventTypeNotFound();
      auto id = PathId(req, "id");
      if (!id) return WebhookNotFound();
      return Answer(service->Delete(req.principal->user_id, *level, *id), WebhookJson);
    }));
  }

  // Cal.com's deletion of all an event type's webhooks (that event type's only).
  ctx.AddRoute(ApiKeyRoute(Method::kDelete, "/v2/event-types/:eventTypeId/webhooks", [service](Request& req) {
    auto level = PathLevel(req, true);
    if (!level) return EventTypeNotFound();
    return DeletedAll(service->DeleteAll(req.principal->user_id, *level));
  }));

  // A webhook's own routes serve both levels: its id names it.
  ctx.AddRoute(ApiKeyRoute(Method::kGet, "/v2/webhooks/:id/deliveries", [service](Request& req) {
    auto id = PathId(req, "id");
    if (!id) return WebhookNotFound();
    Result<Pagination> page = ParsePagination(req.query, {kDefaultTake, kMaxTake, kMaxSkip});
    if (!page.ok()) return Response::FromStatus(page.status());
    auto list = service->Deliveries(req.principal->user_id, *id, page->skip, page->take);
    if (!list.ok()) return Response::FromStatus(list.status());
    return Response::SuccessWith(
        Json{{"data", std::move(list->first)}, {"pagination", page->ToJson(list->second)}});
  }));

  ctx.AddRoute(
      ApiKeyRoute(Method::kPost, "/v2/webhooks/:id/deliveries/:deliveryId/retry", [service](Request& req) {
        auto id = PathId(req, "id");
        auto delivery = PathId(req, "deliveryId");
        if (!id) return WebhookNotFound();
        if (!delivery) return Response::FromStatus(Status::NotFound("delivery not found"));
        return Answer(service->Retry(req.principal->user_id, *id, *delivery));
      }));

  ctx.AddRoute(ApiKeyRoute(Method::kPost, "/v2/webhooks/:id/secret/rotate",
                           [webhooks, grace = options.secret_rotation_grace](Request& req) {
                             auto id = PathId(req, "id");
                             if (!id) return WebhookNotFound();
                             Result<Json> body = req.JsonBody();
                             if (!body.ok()) return Response::FromStatus(body.status());
                             if (!body->is_object()) return Response::FromStatus(Status::Invalid("body", "body must be an object"));
                             int64_t seconds = grace;
                             if (auto g = body->find("graceSeconds"); g != body->end()) {
                               if (!g->is_number_integer() || g->get<int64_t>() < 0 || g->get<int64_t>() > kMaxGraceSeconds) {
                                 return Response::FromStatus(Status::Invalid(
                                     "graceSeconds", "graceSeconds must be an integer from 0 to " + std::to_string(kMaxGraceSeconds)));
                               }
                               seconds = g->get<int64_t>();
                             }
                             return Answer(webhooks->RotateSecret(req.principal->user_id, *id, seconds),
                                           WebhookJson);
                           }));

  ctx.AddRoute(ApiKeyRoute(
      Method::kPost, "/v2/webhooks/:id/recover",
      [deliveries, &db, wake = options.wake_sender, retention = options.retention_seconds](Request& req) {
        auto id = PathId(req, "id");
        if (!id) return WebhookNotFound();
        Result<Json> body = req.JsonBody();
        if (!body.ok()) return Response::FromStatus(body.status());
        const int64_t now = time::Now();
        auto instant = [&](const char* name) -> std::optional<int64_t> {
          auto v = body->is_object() ? body->find(name) : body->end();
          if (v == body->end() || !v->is_string()) return std::nullopt;
          return time::ParseIso(v->get<std::string>());
        };
        std::optional<int64_t> since = instant("since");
        if (!since)
          return Response::FromStatus(Status::Invalid("since", "since must be an ISO 8601 date-time"));
        std::optional<int64_t> until = now;
        if (body->contains("until")) {
          until = instant("until");
          if (!until)
            return Response::FromStatus(Status::Invalid("until", "until must be an ISO 8601 date-time"));
        }
        if (*until <= *since)
          return Response::FromStatus(Status::Invalid("until", "until must be after since"));
        if (*since < now - retention * 1000) {
          return Response::FromStatus(Status::Invalid("since", "since reaches past the delivery retention (" +
                                                                   std::to_string(retention) + " seconds)"));
        }
        Result<int64_t> queued = deliveries->Recover(db, req.principal->user_id, *id, *since, *until);
        if (!queued.ok()) return Response::FromStatus(queued.status());
        if (*queued > 0 && wake) wake();
        return Response::Success(Json{{"queued", *queued}}, 202);
      }));

  // The ping waits for the receiver: outbound work, on its own pool.
  ctx.AddRoute(ApiKeyRoute(Method::kPost, "/v2/webhooks/:id/ping", [service](Request& req) {
                 auto id = PathId(req, "id");
                 if (!id) return WebhookNotFound();
                 return Answer(service->Ping(req.principal->user_id, *id), [](const PingResult& p) {
                   return Json{{"ok", p.ok},
                               {"statusCode", p.status_code > 0 ? Json(p.status_code) : Json()},
                               {"durationMs", p.duration_ms},
                               {"error", p.error.empty() ? Json() : Json(p.error)}};
                 });
               }).Outbound());
}

void RegisterClientWebhookRoutes(PluginContext& ctx, const std::shared_ptr<WebhookService>& service,
                                 const std::shared_ptr<ClientLink>& link) {
  // The client's own credentials (x-cal-client-id, x-cal-secret-key), checked by the oauth plugin;
  // without it no client exists. The level is the client's, its webhooks stored as its owner's.
  auto authenticated = [link](const Request& req) -> Result<PlatformClient> {
    auto it = req.params.find("clientId");
    std::shared_ptr<PlatformClients> clients = link->clients();
    if (!clients || it == req.params.end()) {
      return Status(ErrorCode::kUnauthenticated, "the OAuth client's credentials are not valid");
    }
    return clients->Authenticate(req, it->second);
  };
  const std::string base = "/v2/oauth-clients/:clientId/webhooks";
  auto route = [&](Method method, const std::string& pattern,
                   const std::function<Response(Request&, const PlatformClient&)>& handler) {
    return Route::Api(method, pattern, RouteAuth::Public(), [authenticated, handler](Request& req) {
      Result<PlatformClient> client = authenticated(req);
      if (!client.ok()) return Response::FromStatus(client.status());
      return handler(req, *client);
    });
  };
  auto level = [](const PlatformClient& c) { return WebhookLevel::Client(c.client_id); };

  ctx.AddRoute(route(Method::kPost, base, [service, level](Request& req, const PlatformClient& c) {
                 Result<WebhookFields> fields = ReadFields(req, true);
                 if (!fields.ok()) return Response::FromStatus(fields.status());
                 return Answer(service->Create(c.owner_user_id, level(c), *fields), WebhookJson, 201);
               }).Outbound());

  ctx.AddRoute(route(Method::kPatch, base + "/:id", [service, level](Request& req, const PlatformClient& c) {
                 auto id = PathId(req, "id");
                 if (!id) return WebhookNotFound();
                 Result<WebhookFields> fields = ReadFields(req, false);
                 if (!fields.ok()) return Response::FromStatus(fields.status());
                 return Answer(service->Update(c.owner_user_id, level(c), *id, *fields), WebhookJson);
               }).Outbound());

  ctx.AddRoute(route(Method::kGet, base, [service, level](Request& req, const PlatformClient& c) {
    Result<Pagination> page = ParsePagination(req.query, {kDefaultTake, kMaxTake, kMaxSkip});
    if (!page.ok()) return Response::FromStatus(page.status());
    auto list = service->List(c.owner_user_id, level(c), page->skip, page->take);
    if (!list.ok()) return Response::FromStatus(list.status());
    Json data = Json::array();
    for (const Webhook& w : list->first) data.push_back(WebhookJson(w));
    return Response::SuccessWith(Json{{"data", std::move(data)}, {"pagination", page->ToJson(list->second)}});
  }));

  ctx.AddRoute(route(Method::kGet, base + "/:id", [service, level](Request& req, const PlatformClient& c) {
    auto id = PathId(req, "id");
    if (!id) return WebhookNotFound();
    return Answer(service->Get(c.owner_user_id, level(c), *id), WebhookJson);
  }));

  ctx.AddRoute(route(Method::kDelete, base + "/:id", [service, level](Request& req, const PlatformClient& c) {
    auto id = PathId(req, "id");
    if (!id) return WebhookNotFound();
    return Answer(service->Delete(c.owner_user_id, level(c), *id), WebhookJson);
  }));

  ctx.AddRoute(route(Method::kDelete, base, [service, level](Request&, const PlatformClient& c) {
    return DeletedAll(service->DeleteAll(c.owner_user_id, level(c)));
  }));
}

}  // namespace rendezvous::webhooks
