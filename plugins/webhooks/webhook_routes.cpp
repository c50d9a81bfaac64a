#include "webhook_routes.hpp"

#include <algorithm>

#include "address_guard.hpp"
#include "rendezvous/answer.hpp"
#include "rendezvous/crypto.hpp"
#include "rendezvous/digits.hpp"
#include "rendezvous/list_page.hpp"
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
  if (!of_event_type) return std::optional<WebhookStore::Level>(std::in_place);  // the user's own
  auto id = PathId(req, "eventTypeId");
  if (!id) return std::nullopt;
  return std::optional<WebhookStore::Level>(std::in_place, *id);
}

// The body's fields, with the subscriber URL's host checked against the address rules.
Result<WebhookFields> ReadFields(const Request& req, bool create, bool allow_private) {
  Result<Json> body = req.JsonBody();
  if (!body.ok()) return body.status();
  Result<WebhookFields> fields = ParseWebhookFields(*body, create);
  if (!fields.ok()) return fields;
  if (fields->subscriber && !allow_private) {
    Result<std::string> address = CheckedAddress(*fields->subscriber, false);
    if (!address.ok()) return address.status();
  }
  return fields;
}

Route ApiKeyRoute(Method method, std::string pattern, Handler handler) {
  // Spec §5.1: the webhook endpoints take API keys only.
  Route r = Route::Api(method, std::move(pattern), RouteAuth::Bearer("", kApiKey), std::move(handler));
  return r;
}

// The ping's body (DESIGN §6): a test booking an hour from now, organized by the webhook's owner.
std::string PingBody(const std::optional<User>& owner) {
  const int64_t now = time::Now();
  const int64_t start = (now / 60000 + 60) * 60000;
  Json organizer = owner ? Json{{"name", owner->name}, {"email", owner->email}, {"timeZone", owner->time_zone}}
                         : Json::object();
  return Json{{"triggerEvent", "PING"},
              {"createdAt", time::FormatIso(now)},
              {"payload",
               {{"type", "Test"},
                {"title", "Test trigger event"},
                {"startTime", time::FormatIso(start)},
                {"endTime", time::FormatIso(start + 30 * 60000)},
                {"organizer", std::move(organizer)},
                {"attendees", Json::array()}}}}
      .dump();
}

}  // namespace

void RegisterWebhookRoutes(PluginContext& ctx, std::shared_ptr<WebhookStore> webhooks,
                           std::shared_ptr<DeliveryQueue> deliveries, RouteOptions options) {
  const bool allow_private = options.allow_private_networks;
  Database& db = ctx.db();

  // The same five routes at both levels: the user's own webhooks under /v2/webhooks, an event
  // type's under /v2/event-types/{eventTypeId}/webhooks (DESIGN §6). Create and update resolve the
  // subscriber's host name: outbound work, on its own pool.
  for (const bool of_event_type : {false, true}) {
    const std::string base = of_event_type ? "/v2/event-types/:eventTypeId/webhooks" : "/v2/webhooks";

    ctx.AddRoute(ApiKeyRoute(Method::kPost, base, [webhooks, allow_private, of_event_type](Request& req) {
                   auto level = PathLevel(req, of_event_type);
                   if (!level) return EventTypeNotFound();
                   Result<WebhookFields> fields = ReadFields(req, true, allow_private);
                   if (!fields.ok()) return Response::FromStatus(fields.status());
                   return Answer(webhooks->Create(req.principal->user_id, *level, *fields), WebhookJson, 201);
                 }).Outbound());

    ctx.AddRoute(
        ApiKeyRoute(Method::kPatch, base + "/:id", [webhooks, allow_private, of_event_type](Request& req) {
          auto level = PathLevel(req, of_event_type);
          if (!level) return EventTypeNotFound();
          auto id = PathId(req, "id");
          if (!id) return WebhookNotFound();
          Result<WebhookFields> fields = ReadFields(req, false, allow_private);
          if (!fields.ok()) return Response::FromStatus(fields.status());
          return Answer(webhooks->Update(req.principal->user_id, *level, *id, *fields), WebhookJson);
        }).Outbound());

    ctx.AddRoute(ApiKeyRoute(Method::kGet, base, [webhooks, of_event_type](Request& req) {
      auto level = PathLevel(req, of_event_type);
      if (!level) return EventTypeNotFound();
      Result<ListPage> page = ParseListPage(req.query, {kDefaultTake, kMaxTake, kMaxSkip});
      if (!page.ok()) return Response::FromStatus(page.status());
      auto list = webhooks->List(req.principal->user_id, *level, page->skip, page->take);
      if (!list.ok()) return Response::FromStatus(list.status());
      Json data = Json::array();
      for (const Webhook& w : list->first) data.push_back(WebhookJson(w));
      return Response::SuccessWith(
          Json{{"data", std::move(data)}, {"pagination", page->Pagination(list->second)}});
    }));

    ctx.AddRoute(ApiKeyRoute(Method::kGet, base + "/:id", [webhooks, of_event_type](Request& req) {
      auto level = PathLevel(req, of_event_type);
      if (!level) return EventTypeNotFound();
      auto id = PathId(req, "id");
      if (!id) return WebhookNotFound();
      return Answer(webhooks->Get(req.principal->user_id, *level, *id), WebhookJson);
    }));

    ctx.AddRoute(ApiKeyRoute(Method::kDelete, base + "/:id", [webhooks, of_event_type](Request& req) {
      auto level = PathLevel(req, of_event_type);
      if (!level) return EventTypeNotFound();
      auto id = PathId(req, "id");
      if (!id) return WebhookNotFound();
      return Answer(webhooks->Delete(req.principal->user_id, *level, *id), WebhookJson);
    }));
  }

  // A webhook's own routes serve both levels: its id names it.
  ctx.AddRoute(ApiKeyRoute(Method::kGet, "/v2/webhooks/:id/deliveries", [deliveries, &db](Request& req) {
    auto id = PathId(req, "id");
    if (!id) return WebhookNotFound();
    Result<ListPage> page = ParseListPage(req.query, {kDefaultTake, kMaxTake, kMaxSkip});
    if (!page.ok()) return Response::FromStatus(page.status());
    auto list = deliveries->List(db, req.principal->user_id, *id, page->skip, page->take);
    if (!list.ok()) return Response::FromStatus(list.status());
    return Response::SuccessWith(
        Json{{"data", std::move(list->first)}, {"pagination", page->Pagination(list->second)}});
  }));

  ctx.AddRoute(ApiKeyRoute(Method::kPost, "/v2/webhooks/:id/deliveries/:deliveryId/retry",
                           [deliveries, &db, wake = options.wake_sender](Request& req) {
                             auto id = PathId(req, "id");
                             auto delivery = PathId(req, "deliveryId");
                             if (!id) return WebhookNotFound();
                             if (!delivery) return Response::FromStatus(Status::NotFound("delivery not found"));
                             Result<Json> out = deliveries->Retry(db, req.principal->user_id, *id, *delivery);
                             if (!out.ok()) return Response::FromStatus(out.status());
                             if (wake) wake();
                             return Response::Success(*out);
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

  ctx.AddRoute(ApiKeyRoute(Method::kPost, "/v2/webhooks/:id/recover",
                           [deliveries, &db, wake = options.wake_sender,
                            retention = options.send.retention_seconds](Request& req) {
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
                             if (!since) return Response::FromStatus(Status::Invalid("since", "since must be an ISO 8601 date-time"));
                             std::optional<int64_t> until = now;
                             if (body->contains("until")) {
                               until = instant("until");
                               if (!until) return Response::FromStatus(Status::Invalid("until", "until must be an ISO 8601 date-time"));
                             }
                             if (*until <= *since) return Response::FromStatus(Status::Invalid("until", "until must be after since"));
                             if (*since < now - retention * 1000) {
                               return Response::FromStatus(Status::Invalid(
                                   "since", "since reaches past the delivery retention (" + std::to_string(retention) + " seconds)"));
                             }
                             Result<int64_t> queued = deliveries->Recover(db, req.principal->user_id, *id, *since, *until);
                             if (!queued.ok()) return Response::FromStatus(queued.status());
                             if (*queued > 0 && wake) wake();
                             return Response::Success(Json{{"queued", *queued}}, 202);
                           }));

  // The ping waits for the receiver: outbound work, on its own pool.
  ctx.AddRoute(ApiKeyRoute(Method::kPost, "/v2/webhooks/:id/ping",
                           [webhooks, deliveries, &db, &identity = ctx.identity(), send = options.send](Request& req) {
                             auto id = PathId(req, "id");
                             if (!id) return WebhookNotFound();
                             Result<Webhook> w = webhooks->Get(req.principal->user_id, *id);
                             if (!w.ok()) return Response::FromStatus(w.status());
                             const std::string body = PingBody(identity.FindUser(w->user_id));
                             const std::string message_id = "msg_" + crypto::RandomToken(18);
                             const Attempt a = SendNow(*w, message_id, body, "application/json", send);
                             deliveries->RecordPing(db, w->id, message_id, body, a);
                             return Response::Success(
                                 Json{{"ok", a.error.empty()},
                                      {"statusCode", a.status_code > 0 ? Json(a.status_code) : Json()},
                                      {"durationMs", a.duration_ms},
                                      {"error", a.error.empty() ? Json() : Json(a.error)}});
                           }).Outbound());
}

}  // namespace rendezvous::webhooks
