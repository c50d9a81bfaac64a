#include "webhook_pages.hpp"

#include <map>
#include <utility>

#include "rendezvous/digits.hpp"
#include "rendezvous/pages.hpp"
#include "rendezvous/url.hpp"
#include "webhook_page_views.hpp"

namespace rendezvous::webhooks {
namespace {

constexpr const char* kSettingsPath = "/settings/developer/webhooks";
constexpr int64_t kDeliveriesPerPage = 50;
constexpr int64_t kMaxPageSkip = 1000000;
constexpr const char* kFormExpired =
    "This form expired or was not sent from this site. Go back, reload the page and try again.";
constexpr const char* kNotFound = "There is no webhook of yours at this address.";

// Messages shown after a redirect, chosen by a fixed code in the query so that nothing from the
// URL is echoed into the page. The second member: shown as an error.
const std::map<std::string, std::pair<std::string, bool>>& Notices() {
  static const std::map<std::string, std::pair<std::string, bool>> notices = {
      {"created", {"Webhook created. Send a test event to check that your receiver gets it.", false}},
      {"saved", {"Changes saved.", false}},
      {"deleted", {"Webhook deleted, with its delivery log.", false}},
      {"ping_ok", {"Test event sent: the receiver accepted it (the first delivery below).", false}},
      {"ping_failed",
       {"Test event sent, but the receiver did not accept it: the first delivery below says why.", true}},
      {"retry_queued",
       {"Delivery queued again: it is sent within seconds. Reload this page to see the new attempt.", false}},
  };
  return notices;
}

void NoticeFrom(const Request& req, PageFrame& frame) {
  auto code = req.Query("notice");
  if (!code) return;
  auto it = Notices().find(*code);
  if (it == Notices().end()) return;
  (it->second.second ? frame.error : frame.notice) = it->second.first;
}

std::string WebhookPath(int64_t id) {
  return std::string(kSettingsPath) + "/" + std::to_string(id);
}

Response SeeOther(const std::string& location) {
  return Response::Redirect(location, 303);
}

class WebhookPages {
 public:
  WebhookPages(Identity& identity, std::shared_ptr<WebhookService> service, Logger& logger)
      : identity_(identity), service_(std::move(service)), logger_(logger) {}

  Response List(Request& req) {
    return WithUser(req, [&](const User& user, Response& res, PageFrame& frame) {
      NoticeFrom(req, frame);
      WebhookForm blank;
      blank.triggers = {"BOOKING_CREATED"};
      ShowList(res, frame, user, Status::Ok(), blank);
    });
  }

  Response Create(Request& req) {
    return WithForm(req, [&](const User& user, const Form& form, Response& res, PageFrame& frame) {
      WebhookForm input = ReadWebhookForm(form);
      Result<WebhookFields> fields = FieldsFromForm(input, true);
      Result<Webhook> created =
          fields.ok() ? service_->Create(user.id, WebhookLevel::Own(), *fields) : fields.status();
      if (!created.ok()) {
        frame.error = FormMessage(created.status().message());
        ShowList(res, frame, user, created.status(), input);
        return;
      }
      res = SeeOther(WebhookPath(created->id) + "?notice=created");
    });
  }

  Response Show(Request& req) {
    return WithUser(req, [&](const User& user, Response& res, PageFrame& frame) {
      auto webhook = OwnWebhook(req, user, res, frame);
      if (!webhook) return;
      NoticeFrom(req, frame);
      auto skip = text::ParseDigits(req.Query("skip").value_or("0"), 0, kMaxPageSkip);
      ShowWebhook(res, frame, user, *webhook, Status::Ok(), FormOf(*webhook), skip.value_or(0));
    });
  }

  Response Update(Request& req) {
    return WithForm(req, [&](const User& user, const Form& form, Response& res, PageFrame& frame) {
      auto webhook = OwnWebhook(req, user, res, frame);
      if (!webhook) return;
      WebhookForm input = ReadWebhookForm(form);
      Result<WebhookFields> fields = FieldsFromForm(input, false);
      Result<Webhook> updated =
          fields.ok() ? service_->Update(user.id, WebhookLevel::Of(*webhook), webhook->id, *fields)
                      : fields.status();
      if (!updated.ok()) {
        frame.error = FormMessage(updated.status().message());
        ShowWebhook(res, frame, user, *webhook, updated.status(), input, 0);
        return;
      }
      res = SeeOther(WebhookPath(webhook->id) + "?notice=saved");
    });
  }

  Response Delete(Request& req) {
    return WithForm(req, [&](const User& user, const Form& form, Response& res, PageFrame& frame) {
      auto webhook = OwnWebhook(req, user, res, frame);
      if (!webhook) return;
      if (form.count("confirm") == 0) {
        const Status problem = Status::Invalid("confirm", "Tick the box to confirm the deletion.");
        frame.error = problem.message();
        ShowWebhook(res, frame, user, *webhook, problem, FormOf(*webhook), 0);
        return;
      }
      Result<Webhook> deleted = service_->Delete(user.id, WebhookLevel::Of(*webhook), webhook->id);
      if (!deleted.ok()) {
        FillPage(res, deleted.status(),
                 RenderWebhookMessagePage(frame, "Webhook", deleted.status().message()));
        return;
      }
      res = SeeOther(std::string(kSettingsPath) + "?notice=deleted");
    });
  }

  Response Ping(Request& req) {
    return WithForm(req, [&](const User& user, const Form&, Response& res, PageFrame& frame) {
      auto webhook = OwnWebhook(req, user, res, frame);
      if (!webhook) return;
      Result<PingResult> ping = service_->Ping(user.id, webhook->id);
      if (!ping.ok()) {
        FillPage(res, ping.status(), RenderWebhookMessagePage(frame, "Webhook", ping.status().message()));
        return;
      }
      res = SeeOther(WebhookPath(webhook->id) + (ping->ok ? "?notice=ping_ok" : "?notice=ping_failed"));
    });
  }

  Response Retry(Request& req) {
    return WithForm(req, [&](const User& user, const Form&, Response& res, PageFrame& frame) {
      auto webhook = OwnWebhook(req, user, res, frame);
      if (!webhook) return;
      auto delivery = text::ParseDigits(req.params["delivery_id"], 1);
      Result<Json> retried = delivery ? service_->Retry(user.id, webhook->id, *delivery)
                                      : Result<Json>(Status::NotFound("delivery not found"));
      if (!retried.ok()) {
        frame.error = FormMessage(retried.status().message()) + ".";
        ShowWebhook(res, frame, user, *webhook, retried.status(), FormOf(*webhook), 0);
        return;
      }
      res = SeeOther(WebhookPath(webhook->id) + "?notice=retry_queued");
    });
  }

 private:
  using Form = std::map<std::string, std::string>;

  // Runs `fill` with the signed-in user, the page response and the page frame (ServeUserPage).
  template <class Fill>
  Response WithUser(Request& req, Fill&& fill) {
    return ServeUserPage(identity_, req, [&](const User& user, Response& res, std::string csrf_token) {
      PageFrame frame;
      frame.csrf_token = std::move(csrf_token);
      fill(user, res, frame);
    });
  }

  // WithUser for a POST: reads the form and checks its CSRF token before anything else.
  template <class Fill>
  Response WithForm(Request& req, Fill&& fill) {
    return WithUser(req, [&](const User& user, Response& res, PageFrame& frame) {
      auto form = req.FormBody();
      if (!form.ok()) {
        FillPage(res, form.status(),
                 RenderWebhookMessagePage(frame, "Form not accepted", "The form could not be read."));
        return;
      }
      auto token = form->find("csrf_token");
      if (!identity_.CheckCsrf(req, token == form->end() ? std::string() : token->second)) {
        FillPage(res, Status(ErrorCode::kForbidden, kFormExpired),
                 RenderWebhookMessagePage(frame, "Form expired", kFormExpired));
        return;
      }
      fill(user, *form, res, frame);
    });
  }

  // The user's webhook named by the route's :id (either level); otherwise fills a 404 page.
  std::optional<Webhook> OwnWebhook(Request& req, const User& user, Response& res, const PageFrame& frame) {
    auto id = text::ParseDigits(req.params["id"], 1);
    Result<Webhook> webhook = id ? service_->Get(user.id, *id) : Result<Webhook>(Status::NotFound(kNotFound));
    if (webhook.ok()) return std::move(webhook).value();
    if (webhook.status().code() == ErrorCode::kNotFound) {
      FillPage(res, Status::NotFound(kNotFound), RenderWebhookMessagePage(frame, "Not found", kNotFound));
    } else {
      FillPage(res, webhook.status(), RenderWebhookMessagePage(frame, "Webhook", webhook.status().message()));
    }
    return std::nullopt;
  }

  // The list page with `form`, answering with the HTTP status of `status`.
  void ShowList(Response& res, const PageFrame& frame, const User& user, const Status& status,
                const WebhookForm& form) {
    auto list = service_->List(user.id, WebhookLevel::Own(), 0, kMaxWebhooksPerUser);
    if (!list.ok()) {
      FillPage(res, list.status(), RenderWebhookMessagePage(frame, "Webhooks", list.status().message()));
      return;
    }
    // The webhooks of the user's OAuth clients, which the clients made through the API.
    auto of_clients = service_->ListOfClients(user.id, kMaxWebhooksPerUser);
    if (!of_clients.ok()) {
      FillPage(res, of_clients.status(),
               RenderWebhookMessagePage(frame, "Webhooks", of_clients.status().message()));
      return;
    }
    FillPage(res, status, RenderWebhookListPage(frame, list->first, form, *of_clients));
  }

  // The webhook's page with `form` and the deliveries from `skip` on, answering with the HTTP
  // status of `status`.
  void ShowWebhook(Response& res, const PageFrame& frame, const User& user, const Webhook& webhook,
                   const Status& status, const WebhookForm& form, int64_t skip) {
    DeliveryLogPage log;
    log.skip = skip;
    log.take = kDeliveriesPerPage;
    auto deliveries = service_->Deliveries(user.id, webhook.id, skip, kDeliveriesPerPage);
    if (!deliveries.ok()) {
      FillPage(res, deliveries.status(),
               RenderWebhookMessagePage(frame, "Webhook", deliveries.status().message()));
      return;
    }
    log.deliveries = std::move(deliveries->first);
    log.total = deliveries->second;
    FillPage(res, status, RenderWebhookPage(frame, webhook, form, log));
  }

  // Makes `res` the page `html` with the HTTP status of `status` (200 when ok), keeping the
  // headers already set on `res` (the CSRF cookie).
  void FillPage(Response& res, const Status& status, std::string html) {
    Response page = Response::Page(status, std::move(html));
    if (page.status >= 500) logger_.Warn("webhook page failed", {{"error", status.message()}});
    res.status = page.status;
    res.content_type = std::move(page.content_type);
    res.body = std::move(page.body);
    for (auto& header : page.headers) res.headers.push_back(std::move(header));
  }

  Identity& identity_;
  std::shared_ptr<WebhookService> service_;
  Logger& logger_;
};

}  // namespace

void RegisterWebhookPages(PluginContext& ctx, std::shared_ptr<WebhookService> service) {
  auto pages = std::make_shared<WebhookPages>(ctx.identity(), std::move(service), ctx.logger());
  // Create, update and the test event wait on the network (DNS, the receiver): outbound routes.
  auto add = [&](Method method, std::string pattern, Response (WebhookPages::*fn)(Request&), bool outbound) {
    Route route = Route::Page(method, std::move(pattern), RouteAuth::Session(),
                              [pages, fn](Request& req) { return ((*pages).*fn)(req); });
    route.outbound = outbound;
    ctx.AddRoute(std::move(route));
  };
  const std::string settings = kSettingsPath;
  add(Method::kGet, settings, &WebhookPages::List, false);
  add(Method::kPost, settings, &WebhookPages::Create, true);
  add(Method::kGet, settings + "/:id", &WebhookPages::Show, false);
  add(Method::kPost, settings + "/:id", &WebhookPages::Update, true);
  add(Method::kPost, settings + "/:id/ping", &WebhookPages::Ping, true);
  add(Method::kPost, settings + "/:id/delete", &WebhookPages::Delete, false);
  add(Method::kPost, settings + "/:id/deliveries/:delivery_id/retry", &WebhookPages::Retry, false);
}

}  // namespace rendezvous::webhooks
