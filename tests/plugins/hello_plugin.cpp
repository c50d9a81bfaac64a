// A small, complete plugin for the host's integration tests: a migration, public and scoped
// routes that touch the database, an outbox publisher and consumer, a metric and a Lua script.
#include <atomic>
#include <memory>
#include <string>

#include "rendezvous/plugin.hpp"

namespace {

using rendezvous::Json;

class HelloPlugin final : public rendezvous::Plugin {
 public:
  explicit HelloPlugin(rendezvous::PluginContext& ctx) : ctx_(ctx) {}
  rendezvous::Status Start() noexcept override { return rendezvous::Status::Ok(); }
  void Stop() noexcept override {}
  rendezvous::Status Reload() noexcept override { return rendezvous::Status::Ok(); }

 private:
  rendezvous::PluginContext& ctx_;
};

std::unique_ptr<rendezvous::Plugin> Create(rendezvous::PluginContext& ctx) {
  auto& c = ctx.config();
  std::string greeting = c.String("greeting", "hello");
  std::string script_path = c.String("script", "");
  c.RejectUnknown();

  std::shared_ptr<rendezvous::Script> script;
  if (!script_path.empty()) {
    auto loaded = ctx.scripts().Load("hello", ctx.ResolvePath(script_path), {});
    if (!loaded.ok()) c.Fail("script", loaded.status().message());
    script = *loaded;
  }

  rendezvous::Metric& counter = ctx.metrics().Counter("hello_requests_total", "Requests to /v2/hello.").With();

  ctx.AddMigrations({{1, "create hello_items",
                      "CREATE TABLE hello_items (id BIGINT AUTO_INCREMENT PRIMARY KEY, user_id BIGINT NOT NULL, "
                      "text VARCHAR(200) NOT NULL) ENGINE=InnoDB"}});

  rendezvous::Route hello;
  hello.method = rendezvous::Method::kGet;
  hello.pattern = "/v2/hello";
  hello.handler = [greeting, &counter](rendezvous::Request&) {
    counter.Increment();
    return rendezvous::Response::Success({{"greeting", greeting}});
  };
  ctx.AddRoute(hello);

  rendezvous::Route add;
  add.method = rendezvous::Method::kPost;
  add.pattern = "/v2/hello/items";
  add.auth = rendezvous::RouteAuth::Bearer("BOOKING_WRITE");
  add.handler = [&ctx](rendezvous::Request& req) {
    auto body = req.JsonBody();
    if (!body.ok()) return rendezvous::Response::FromStatus(body.status());
    if (!body->contains("text") || !(*body)["text"].is_string())
      return rendezvous::Response::Error(400, "validation_error", "text is required");
    std::string text = (*body)["text"];
    int64_t id = ctx.db().Transaction([&](rendezvous::DbConnection& tx) {
      tx.Exec("INSERT INTO hello_items (user_id, text) VALUES (?, ?)", {req.principal->user_id, text});
      int64_t new_id = tx.LastInsertId();
      ctx.outbox().Publish(tx, "hello", "HELLO_CREATED", {{"id", new_id}, {"text", text}});
      return new_id;
    });
    ctx.outbox().Notify();
    return rendezvous::Response::Success({{"id", id}, {"text", text}}, 201);
  };
  ctx.AddRoute(add);

  rendezvous::Route get;
  get.method = rendezvous::Method::kGet;
  get.pattern = "/v2/hello/items/:id";
  get.auth = rendezvous::RouteAuth::Bearer("BOOKING_READ");
  get.handler = [&ctx](rendezvous::Request& req) {
    int64_t id = 0;
    try {
      size_t used = 0;
      id = std::stoll(req.params["id"], &used);
      if (used != req.params["id"].size()) throw std::invalid_argument("id");
    } catch (const std::exception&) {
      return rendezvous::Response::Error(404, "not_found", "no such item");
    }
    auto row = ctx.db().Run([&](rendezvous::DbConnection& c) -> std::optional<Json> {
      std::optional<rendezvous::DbRow> item =
          c.QueryOne("SELECT id, text FROM hello_items WHERE id = ? AND user_id = ?", {id, req.principal->user_id});
      if (!item) return std::nullopt;
      return Json{{"id", item->Int("id")}, {"text", item->String("text")}};
    });
    if (!row) return rendezvous::Response::Error(404, "not_found", "no such item");
    return rendezvous::Response::Success(*row);
  };
  ctx.AddRoute(get);

  if (script) {
    rendezvous::Route lua;
    lua.method = rendezvous::Method::kGet;
    lua.pattern = "/v2/hello/lua";
    lua.handler = [script](rendezvous::Request& req) {
      auto r = script->Call("greet", {Json(req.Query("name").value_or("world"))});
      if (!r.ok()) return rendezvous::Response::Error(500, "script_error", "script failed");
      return rendezvous::Response::Success(*r);
    };
    ctx.AddRoute(lua);
  }

  // Every consumed event is recorded, so tests can see the outbox deliver.
  ctx.AddMigrations({{2, "create hello_seen",
                      "CREATE TABLE hello_seen (event_id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL) ENGINE=InnoDB"}});
  ctx.outbox().Subscribe("hello.seen", {"hello"}, [](rendezvous::DbConnection& tx, const std::vector<rendezvous::OutboxEvent>& batch) {
    for (const auto& e : batch) {
      tx.Exec("INSERT INTO hello_seen (event_id, item_id) VALUES (?, ?)", {e.id, e.payload.value("id", int64_t{0})});
    }
  });
  rendezvous::Route seen;
  seen.method = rendezvous::Method::kGet;
  seen.pattern = "/v2/hello/seen";
  seen.handler = [&ctx](rendezvous::Request&) {
    auto n = ctx.db().Run([](rendezvous::DbConnection& c) {
      return c.QueryOne("SELECT COUNT(*) FROM hello_seen")->Int(1);
    });
    return rendezvous::Response::Success({{"seen", n}});
  };
  ctx.AddRoute(seen);

  return std::make_unique<HelloPlugin>(ctx);
}

}  // namespace

RENDEZVOUS_DEFINE_PLUGIN("hello", &Create)
