// The routes of the verified e-mails and phone numbers (VerifiedResourceService), on the api
// listener:
//   POST /v2/verified-resources/emails/verification-code/request  {email}        -> 200
//   POST /v2/verified-resources/emails/verification-code/verify   {email, code}  -> 200 verified e-mail
//   GET  /v2/verified-resources/emails?skip&take                                 -> data [..] + pagination
//   GET  /v2/verified-resources/emails/:id                                       -> verified e-mail
// and the same under /phones with {phone} / {phone, code}. Every route needs a bearer API key or
// OAuth token with VERIFIED_RESOURCES_WRITE (the spec names no read scope; reads need it too).
// Failures are the service's statuses in the error envelope (Response::FromStatus).
//
// The service must outlive the routes. The handlers are thread-safe.
#pragma once

#include <functional>

#include "identity/verified_resources.hpp"
#include "rendezvous/http.hpp"

namespace rendezvous::core {

void RegisterVerifiedResourceRoutes(VerifiedResourceService& service, const std::function<void(Route)>& add);

}  // namespace rendezvous::core
