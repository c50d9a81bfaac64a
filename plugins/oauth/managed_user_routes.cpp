#include "managed_user_routes.hpp"

#include <array>
#include <charconv>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "rendezvous/time.hpp"

namespace rendezvous::oauth {
namespace {

constexpr std::array<std::string_view, 7> kOperations = {"create", "list",          "get",    "update",
                                                         "delete", "force_refresh", "refresh"};
constexpr std::array<std::string_view, 7> kOutcomes = {
    "ok", "invalid", "unauthenticated", "forbidden", "not_found", "conflict", "failed"};

// Cal.com's locales (CreateManagedUserInput.locale).
constexpr std::array<std::string_view, 42> kLocales = {
    "ar", "ca", "de", "es",     "eu", "he", "id", "ja", "lv", "pl",    "ro", "sr", "th", "vi",
    "az", "cs", "el", "es-419", "fi", "hr", "it", "km", "nl", "pt",    "ru", "sv", "tr", "zh-CN",
    "bg", "da", "en", "et",     "fr", "hu", "iw", "ko", "no", "pt-BR", "sk", "ta", "uk", "zh-TW"};
constexpr std::array<std::string_view, 7> kWeekDays = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                       "Friday", "Saturday", "Sunday"};

// Cal.com's default when a managed user is created without a time zone.
constexpr const char* kDefaultTimeZone = "Europe/London";
constexpr const char* kDeletionReason = "The host's account was deleted";
constexpr int64_t kDefaultLimit = 100;
constexpr int64_t kMaxLimit = 250;
constexpr int64_t kMaxOffset = 1000000;

std::string OutcomeOf(int status) {
  if (status < 400) return "ok";
  switch (status) {
    case 401:
      return "unauthenticated";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 409:
      return "conflict";
    default:
      return status >= 500 ? "failed" : "invalid";
  }
}

template <size_t N>
bool OneOf(const std::array<std::string_view, N>& values, std::string_view value) {
  for (std::string_view v : values) {
    if (v == value) return true;
  }
  return false;
}

// A non-negative integer query parameter in [min, max]; `fallback` when absent.
Result<int64_t> IntParam(const Request& req, const std::string& name, int64_t fallback, int64_t min,
                         int64_t max) {
  if (req.query.count(name) > 1) return Status::Invalid(name, name + " must be given once");
  std::optional<std::string> text = req.Query(name);
  if (!text) return fallback;
  int64_t value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (text->empty() || ec != std::errc() || ptr != end || value < min || value > max) {
    return Status::Invalid(
        name, name + " must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return value;
}

std::optional<int64_t> PathUserId(const Request& req) {
  auto it = req.params.find("userId");
  if (it == req.params.end() || it->second.empty() || it->second.size() > 18) return std::nullopt;
  int64_t id = 0;
  const char* end = it->second.data() + it->second.size();
  auto [ptr, ec] = std::from_chars(it->second.data(), end, id);
  if (ec != std::errc() || ptr != end || id <= 0) return std::nullopt;
  return id;
}

Response NotFound() {
  return Response::FromStatus(Status::NotFound("managed user not found"));
}

// Token answers are not to be cached (as the token endpoint's).
Response NoStore(Response res) {
  res.With("Cache-Control", "no-store").With("Pragma", "no-cache");
  return res;
}

// The checked fields of a create or update body that the profile does not hold, and the profile
// patch made of the others.
struct ParsedBody {
  Json profile = Json::object();
  std::optional<std::string> locale;
};

// `create`: email and name are required and every field is taken; otherwise email may not change
// (only be repeated as it is). Unknown fields are 400 naming them.
Result<ParsedBody> ParseBody(const Json& body, bool create, const std::string& current_email) {
  ParsedBody out;
  if (create) {
    for (const char* required : {"email", "name"}) {
      if (!body.contains(required)) return Status::Invalid(required, std::string(required) + " is required");
    }
  }
  for (const auto& [key, value] : body.items()) {
    if (key == "email" || key == "name" || key == "timeZone") {
      if (!value.is_string()) return Status::Invalid(key, key + " must be a string");
      if (key == "email" && !create) {
        if (value.get<std::string>() != current_email) {
          return Status::Invalid("email", "a managed user's email cannot be changed");
        }
        continue;
      }
      out.profile[key] = value;
    } else if (key == "timeFormat") {
      if (!value.is_number() || (value.get<double>() != 12 && value.get<double>() != 24)) {
        return Status::Invalid("timeFormat", "timeFormat must be 12 or 24");
      }
      out.profile[key] = static_cast<int>(value.get<double>());
    } else if (key == "weekStart") {
      if (!value.is_string() || !OneOf(kWeekDays, value.get<std::string>())) {
        return Status::Invalid("weekStart", "weekStart must be a day name, Monday to Sunday");
      }
      out.profile[key] = value;
    } else if (key == "locale") {
      if (!value.is_string() || !OneOf(kLocales, value.get<std::string>())) {
        return Status::Invalid("locale", "locale must be one of Cal.com's locales (en, de, fr, pt-BR, ...)");
      }
      out.locale = value.get<std::string>();
    } else if (key == "avatarUrl") {
      // Accepted for Cal.com's clients; no avatar is kept (the user answers avatarUrl null).
      if (!value.is_string() && !value.is_null())
        return Status::Invalid("avatarUrl", "avatarUrl must be a string");
      if (value.is_string() && value.get_ref<const std::string&>().size() > 2048) {
        return Status::Invalid("avatarUrl", "avatarUrl must be at most 2048 characters");
      }
    } else if (key == "defaultScheduleId" && !create) {
      out.profile[key] = value;  // checked by the profile update
    } else {
      const std::string shown = key.substr(0, 64);
      return Status::Invalid(shown, "unknown field: " + shown);
    }
  }
  return out;
}

class ManagedUserApi : public std::enable_shared_from_this<ManagedUserApi> {
 public:
  ManagedUserApi(PluginContext& ctx, const ManagedUserServices& services)
      : identity_(ctx.identity()),
        logger_(ctx.logger()),
        s_(services),
        requests_(ctx.metrics().Counter(
            "oauth_managed_user_requests_total",
            "Calls of the managed-user routes of OAuth clients, by operation and outcome.",
            {"operation", "outcome"})) {
    for (std::string_view op : kOperations) {
      for (std::string_view outcome : kOutcomes) requests_.With({std::string(op), std::string(outcome)});
    }
  }

  void Register(PluginContext& ctx) {
    const std::string users = "/v2/oauth-clients/:clientId/users";
    Add(ctx, Method::kPost, users, "create", &ManagedUserApi::Create);
    Add(ctx, Method::kGet, users, "list", &ManagedUserApi::List);
    Add(ctx, Method::kGet, users + "/:userId", "get", &ManagedUserApi::Get);
    Add(ctx, Method::kPatch, users + "/:userId", "update", &ManagedUserApi::Update);
    Add(ctx, Method::kDelete, users + "/:userId", "delete", &ManagedUserApi::Delete);
    Add(ctx, Method::kPost, users + "/:userId/force-refresh", "force_refresh", &ManagedUserApi::ForceRefresh);
    Add(ctx, Method::kPost, "/v2/oauth/:clientId/refresh", "refresh", &ManagedUserApi::Refresh);
  }

 private:
  using Handler = Response (ManagedUserApi::*)(Request&);

  void Add(PluginContext& ctx, Method method, const std::string& pattern, const char* operation, Handler fn) {
    // Each route holds the api: it lives as long as its routes.
    ctx.AddRoute(Route::Api(method, pattern, RouteAuth::Public(),
                            [self = shared_from_this(), operation, fn](Request& req) {
                              try {
                                Response res = ((*self).*fn)(req);
                                self->requests_.With({operation, OutcomeOf(res.status)}).Increment();
                                return res;
                              } catch (...) {
                                self->requests_.With({operation, "failed"}).Increment();
                                throw;
                              }
                            }));
  }

  static const std::string& ClientOf(const Request& req) { return req.params.at("clientId"); }

  // {id, email, username, name, timeZone, weekStart, createdDate, timeFormat, defaultScheduleId,
  // locale?, avatarUrl: null} (Cal.com's ManagedUserOutput; our /v2/me fields besides).
  Json UserOut(const User& user, const std::string& locale) {
    Json j = identity_.UserJson(user);
    if (!locale.empty()) j["locale"] = locale;
    j["avatarUrl"] = nullptr;
    return j;
  }

  Json Keys(const TokenResponse& tokens) const {
    const time::Millis now = time::Now();
    return Json{{"accessToken", tokens.access_token},
                {"refreshToken", tokens.refresh_token},
                {"accessTokenExpiresAt", now + static_cast<int64_t>(tokens.expires_in) * 1000},
                {"refreshTokenExpiresAt",
                 now + static_cast<int64_t>(s_.tokens.lifetimes().refresh_token_ttl) * 1000}};
  }

  // The client's own managed user of the path with its link; a Response when there is none.
  struct Found {
    User user;
    ManagedUserLink link;
  };
  std::variant<Found, Response> FindOwn(const Request& req) {
    std::optional<int64_t> id = PathUserId(req);
    if (!id) return NotFound();
    std::optional<ManagedUserLink> link = s_.managed.Find(ClientOf(req), *id);
    if (!link) return NotFound();
    std::optional<User> user = identity_.FindUser(*id);
    if (!user) return NotFound();
    return Found{*std::move(user), *std::move(link)};
  }

  Response Create(Request& req) {
    Result<PlatformClient> client = s_.platform.Authenticate(req, ClientOf(req));
    if (!client.ok()) return Response::FromStatus(client.status());
    Result<Json> body = req.JsonBody();
    if (!body.ok()) return Response::FromStatus(body.status());
    Result<ParsedBody> parsed = ParseBody(*body, true, "");
    if (parsed.ok() && s_.managed.Count(client->client_id) >= s_.max_users_per_client) {
      // Checked before the user is made; racing creations may pass it together, so the bound may
      // be passed by the requests in flight at once, never by more.
      return Response::FromStatus(Status::Conflict("the client has " +
                                                   std::to_string(s_.max_users_per_client) +
                                                   " managed users, its limit: delete one first"));
    }
    if (!parsed.ok()) return Response::FromStatus(parsed.status());
    Json& profile = parsed->profile;
    NewUser fields;
    fields.email = profile["email"].get<std::string>();
    fields.name = profile["name"].get<std::string>();
    fields.time_zone = profile.value("timeZone", std::string(kDefaultTimeZone));
    Result<User> user = identity_.CreateUser(fields);
    if (!user.ok()) return Response::FromStatus(user.status());
    // Nothing half-made: a user whose profile or tokens could not be written is removed again.
    const int64_t user_id = user->id;
    try {
      Json rest = Json::object();
      for (const char* key : {"timeFormat", "weekStart"}) {
        if (profile.contains(key)) rest[key] = profile[key];
      }
      if (!rest.empty()) {
        Result<User> updated = identity_.UpdateProfile(user_id, rest);
        if (!updated.ok()) {
          identity_.DeleteUser(user_id);
          return Response::FromStatus(updated.status());
        }
        user = std::move(updated);
      }
      TokenResponse tokens = s_.tokens.Issue(client->client_id, user_id, parsed->locale.value_or(""));
      logger_.Info("managed user created", {{"client_id", client->client_id}, {"user_id", user_id}});
      Json data = Keys(tokens);
      data["user"] = UserOut(*user, parsed->locale.value_or(""));
      return NoStore(Response::Success(data, 201));
    } catch (...) {
      try {
        identity_.DeleteUser(user_id);
      } catch (const std::exception& e) {
        logger_.Error("a managed user half created could not be removed",
                      {{"user_id", user_id}, {"error", std::string(e.what())}});
      }
      throw;
    }
  }

  Response List(Request& req) {
    Result<PlatformClient> client = s_.platform.Authenticate(req, ClientOf(req));
    if (!client.ok()) return Response::FromStatus(client.status());
    Result<int64_t> limit = IntParam(req, "limit", kDefaultLimit, 1, kMaxLimit);
    if (!limit.ok()) return Response::FromStatus(limit.status());
    Result<int64_t> offset = IntParam(req, "offset", 0, 0, kMaxOffset);
    if (!offset.ok()) return Response::FromStatus(offset.status());
    Json data = Json::array();
    for (const ManagedUserLink& link : s_.managed.List(client->client_id, *limit, *offset)) {
      // A user removed by other means than this API is left out.
      if (std::optional<User> user = identity_.FindUser(link.user_id))
        data.push_back(UserOut(*user, link.locale));
    }
    return Response::Success(data);
  }

  Response Get(Request& req) {
    Result<PlatformClient> client = s_.platform.Authenticate(req, ClientOf(req));
    if (!client.ok()) return Response::FromStatus(client.status());
    auto found = FindOwn(req);
    if (auto* res = std::get_if<Response>(&found)) return *res;
    const auto& f = std::get<Found>(found);
    return Response::Success(UserOut(f.user, f.link.locale));
  }

  Response Update(Request& req) {
    Result<PlatformClient> client = s_.platform.Authenticate(req, ClientOf(req));
    if (!client.ok()) return Response::FromStatus(client.status());
    auto found = FindOwn(req);
    if (auto* res = std::get_if<Response>(&found)) return *res;
    auto& f = std::get<Found>(found);
    Result<Json> body = req.JsonBody();
    if (!body.ok()) return Response::FromStatus(body.status());
    Result<ParsedBody> parsed = ParseBody(*body, false, f.user.email);
    if (!parsed.ok()) return Response::FromStatus(parsed.status());
    Result<User> user = identity_.UpdateProfile(f.user.id, parsed->profile);
    if (!user.ok()) return Response::FromStatus(user.status());
    if (parsed->locale && *parsed->locale != f.link.locale) {
      s_.managed.SetLocale(f.user.id, *parsed->locale);
      f.link.locale = *parsed->locale;
    }
    return Response::Success(UserOut(*user, f.link.locale));
  }

  Response Delete(Request& req) {
    Result<PlatformClient> client = s_.platform.Authenticate(req, ClientOf(req));
    if (!client.ok()) return Response::FromStatus(client.status());
    auto found = FindOwn(req);
    if (auto* res = std::get_if<Response>(&found)) return *res;
    const auto& f = std::get<Found>(found);
    // Tokens first, so that nothing the user's token could do races the rest; then the bookings
    // (their events need the user); then the user. A failure leaves the user for a new DELETE.
    s_.tokens.RevokeAll(f.user.id);
    int64_t cancelled = 0;
    if (const std::shared_ptr<UserBookings>& bookings = s_.bookings->bookings) {
      Result<int64_t> done = bookings->CancelUpcoming(f.user.id, kDeletionReason);
      if (!done.ok()) return Response::FromStatus(done.status());
      cancelled = *done;
    }
    Status deleted = identity_.DeleteUser(f.user.id);
    if (!deleted.ok() && deleted.code() != ErrorCode::kNotFound) return Response::FromStatus(deleted);
    s_.managed.MarkDeleted(f.user.id);
    logger_.Info(
        "managed user deleted",
        {{"client_id", client->client_id}, {"user_id", f.user.id}, {"bookings_cancelled", cancelled}});
    return Response::Success(UserOut(f.user, f.link.locale));
  }

  Response ForceRefresh(Request& req) {
    Result<PlatformClient> client = s_.platform.Authenticate(req, ClientOf(req));
    if (!client.ok()) return Response::FromStatus(client.status());
    auto found = FindOwn(req);
    if (auto* res = std::get_if<Response>(&found)) return *res;
    TokenResponse tokens = s_.tokens.Reissue(client->client_id, std::get<Found>(found).user.id);
    return NoStore(Response::Success(Keys(tokens)));
  }

  Response Refresh(Request& req) {
    const std::string& client_id = ClientOf(req);
    // Cal.com's callers send the secret alone; a client id header, when sent, must agree.
    std::optional<std::string> header_id = req.Header("x-cal-client-id");
    if (header_id && *header_id != client_id) {
      return Response::FromStatus(
          Status(ErrorCode::kUnauthenticated, "x-cal-client-id does not name the client of the path"));
    }
    Result<PlatformClient> client =
        s_.platform.AuthenticateSecret(client_id, req.Header("x-cal-secret-key").value_or(""));
    if (!client.ok()) return Response::FromStatus(client.status());
    Result<Json> body = req.JsonBody();
    if (!body.ok()) return Response::FromStatus(body.status());
    auto token = body->find("refreshToken");
    if (token == body->end() || !token->is_string() || token->get_ref<const std::string&>().empty()) {
      return Response::FromStatus(Status::Invalid("refreshToken", "refreshToken is required"));
    }
    TokenResult result = s_.refresh.Refresh(client_id, token->get<std::string>());
    if (const TokenError* error = std::get_if<TokenError>(&result)) {
      // Every refusal is 400 with the envelope (reused, revoked, expired, another client's).
      return NoStore(
          Response::Error(400, error->error_description.empty() ? error->error : error->error_description,
                          "the refresh token cannot be used"));
    }
    return NoStore(Response::Success(Keys(std::get<TokenResponse>(result))));
  }

  Identity& identity_;
  Logger& logger_;
  ManagedUserServices s_;
  MetricFamily& requests_;
};

}  // namespace

void RegisterManagedUserRoutes(PluginContext& ctx, const ManagedUserServices& services) {
  std::make_shared<ManagedUserApi>(ctx, services)->Register(ctx);
}

}  // namespace rendezvous::oauth
