// Users, sessions and CSRF as the core provides them to plugins (pages, token issuers). Plugin
// logic that only looks users up takes the HTTP-free UserDirectory (user.hpp) instead.
#pragma once

#include <optional>
#include <string>

#include "rendezvous/http.hpp"
#include "rendezvous/pages.hpp"
#include "rendezvous/url.hpp"
#include "rendezvous/user.hpp"

namespace rendezvous {

// Thread-safe. Methods touching the database may throw DatabaseUnavailable.
class Identity : public UserDirectory {
 public:
  // The signed-in user of an app-host request (session cookie), if any.
  virtual std::optional<User> SessionUser(const Request& req) = 0;
  // CSRF token bound to the request's session (or a pre-session cookie); forms carry it as
  // the hidden field "csrf_token". Set-Cookie headers needed are appended to `res`.
  virtual std::string CsrfToken(const Request& req, Response& res) = 0;
  virtual bool CheckCsrf(const Request& req, const std::string& token) = 0;
  // JSON of a user as /v2/me shows it.
  virtual Json UserJson(const User& user) = 0;
  // Changes a profile as PATCH /v2/me does (name, timeZone, weekStart, username, timeFormat,
  // defaultScheduleId; any other field is 400 naming it); kNotFound for an unknown user, kConflict
  // "username_taken".
  virtual Result<User> UpdateProfile(int64_t user_id, const Json& patch) = 0;
  // Removes the user with what the core keeps of it (API keys, sessions, verified e-mails and
  // phones); kNotFound when there is no such user. Other plugins' rows naming the user stay.
  virtual Status DeleteUser(int64_t user_id) = 0;
};

// A settings page of the signed-in user: runs fill(user, res, csrf_token) on a 200 page response
// that already carries any Set-Cookie the CSRF token needs. Without a session (one that ended after
// the core's own check) the answer is a 303 to the sign-in page, back to this path after it. The
// page headers (AddPageHeaders) are added either way.
template <class Fill>
Response ServeUserPage(Identity& identity, const Request& req, Fill&& fill) {
  std::optional<User> user = identity.SessionUser(req);
  if (!user) {
    Response res = Response::Redirect("/auth/login?next=" + net::PercentEncode(req.path), 303);
    AddPageHeaders(res);
    return res;
  }
  Response res = Response::Page(Status::Ok(), "");
  std::string csrf_token = identity.CsrfToken(req, res);
  fill(*user, res, std::move(csrf_token));
  AddPageHeaders(res);
  return res;
}

}  // namespace rendezvous
