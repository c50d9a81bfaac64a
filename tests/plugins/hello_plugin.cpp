// A small, complete plugin, built and loaded by the integration tests (CoreServer) and walked
// through in docs/plugin-api.md: a config key, migrations, public and scoped routes that touch the
// database, an outbox publisher and consumer, a metric and an optional Lua script.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous/plugin.hpp"

namespace {

using rendezvous::DbConnection;
using rendezvous::Json;
using rendezvous::Method;
using rendezvous::Request;
using rendezvous::Response;
using rendezvous::Result;
using rendezvous::Route;
using rendezvous::RouteAuth;
using rendezvous::Status;

class HelloPlugin final : public rendezvous::Plugin {
 public:
  Status Start() noexcept override { return Status::Ok(); }
  void Stop() noexcept override {}
};

// The item id of /v2/hello/items/:id; a malformed id is as unknown as a missing one.
Result<int64_t> ParseItemId(const std::string& text) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    return Status::NotFound("no such item");
  return std::stoll(text);
}

Result<std::string> ParseItemText(const Json& body) {
  if (!body.contains("text") || !body["text"].is_string()) return Status::Invalid("text", "text is required");
  return body["text"].get<std::string>();
}

std::unique_ptr<rendezvous::Plugin> Create(rendezvous::PluginContext& ctx) {
  rendezvous::ConfigNode& config = ctx.config();
  const std::string greeting = config.String("greeting", "hello");
  const std::string script_path = config.String("script", "");
  config.RejectUnknown();  // a key this plugin does not know stops start-up, naming file and line

  std::shared_ptr<rendezvous::Script> script;
  if (!script_path.empty()) {
    auto loaded = ctx.scripts().Load("hello", ctx.ResolvePath(script_path), {});
    if (!loaded.ok()) config.Fail("script", loaded.status().message());
    script = *loaded;
  }

  rendezvous::Metric& requests = ctx.metrics().Counter("hello_requests_total", "Requests to /v2/hello.").With();

  ctx.AddMigrations({{1, "create hello_items",
                      "CREATE TABLE hello_items (id BIGINT AUTO_INCREMENT PRIMARY KEY, user_id BIGINT NOT NULL, "
                      "text VARCHAR(200) NOT NULL) ENGINE=InnoDB"},
                     {2, "create hello_seen",
                      "CREATE TABLE hello_seen (event_id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL) ENGINE=InnoDB"}});

  ctx.AddRoute(Route::Api(Method::kGet, "/v2/hello", RouteAuth::Public(), [greeting, &requests](Request&) {
    requests.Increment();
    return Response::Success({{"greeting", greeting}});
  }));

  // The insert and its event commit together: the event exists if and only if the item does.
  ctx.AddRoute(Route::Api(Method::kPost, "/v2/hello/items", RouteAuth::Bearer("BOOKING_WRITE"), [&ctx](Request& req) {
    auto body = req.JsonBody();
    if (!body.ok()) return Response::FromStatus(body.status());
    auto text = ParseItemText(*body);
    if (!text.ok()) return Response::FromStatus(text.status());
    int64_t id = ctx.db().Transaction([&](DbConnection& tx) {
      tx.Exec("INSERT INTO hello_items (user_id, text) VALUES (?, ?)", {req.principal->user_id, *text});
      int64_t new_id = tx.LastInsertId();
      ctx.outbox().Publish(tx, "hello", "HELLO_CREATED", {{"id", new_id}, {"text", *text}});
      return new_id;
    });
    ctx.outbox().Notify();
    return Response::Success({{"id", id}, {"text", *text}}, 201);
  }));

  ctx.AddRoute(Route::Api(Method::kGet, "/v2/hello/items/:id", RouteAuth::Bearer("BOOKING_READ"), [&ctx](Request& req) {
    auto id = ParseItemId(req.params["id"]);
    if (!id.ok()) return Response::FromStatus(id.status());
    auto item = ctx.db().Run([&](DbConnection& c) {
      return c.QueryOne("SELECT id, text FROM hello_items WHERE id = ? AND user_id = ?", {*id, req.principal->user_id});
    });
    if (!item) return Response::FromStatus(Status::NotFound("no such item"));
    return Response::Success({{"id", item->Int("id")}, {"text", item->String("text")}});
  }));

  if (script) {
    ctx.AddRoute(Route::Api(Method::kGet, "/v2/hello/lua", RouteAuth::Public(), [script](Request& req) {
      auto greeted = script->Call("greet", {Json(req.Query("name").value_or("world"))});
      if (!greeted.ok()) return Response::FromStatus(Status(rendezvous::ErrorCode::kInternal, "script failed"));
      return Response::Success(*greeted);
    }));
  }

  // Every consumed event is recorded in the consumer's transaction, so tests can see the outbox
  // deliver exactly once.
  ctx.outbox().Subscribe("hello.seen", {"hello"}, [](DbConnection& tx, const std::vector<rendezvous::OutboxEvent>& batch) {
    for (const auto& e : batch)
      tx.Exec("INSERT INTO hello_seen (event_id, item_id) VALUES (?, ?)",
              {e.id, e.payload->value("id", int64_t{0})});
  });
  ctx.AddRoute(Route::Api(Method::kGet, "/v2/hello/seen", RouteAuth::Public(), [&ctx](Request&) {
    auto n = ctx.db().Run([](DbConnection& c) { return c.QueryOne("SELECT COUNT(*) FROM hello_seen")->Int(1); });
    return Response::Success({{"seen", n}});
  }));

  return std::make_unique<HelloPlugin>();
}

}  // namespace

RENDEZVOUS_DEFINE_PLUGIN("hello", &Create)
