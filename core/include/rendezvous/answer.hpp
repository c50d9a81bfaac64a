// The answer of a service call: a request handler hands the Result of the logic it called to
// Answer, which makes it the success envelope or the error envelope (Response::FromStatus). Pure;
// thread-safe.
#pragma once

#include "rendezvous/http.hpp"
#include "rendezvous/status.hpp"

namespace rendezvous {

// `success_status` with the value as data, else the status's error envelope.
inline Response Answer(const Result<Json>& result, int success_status = 200) {
  if (!result.ok()) return Response::FromStatus(result.status());
  return Response::Success(*result, success_status);
}

// The same for a value shown through `to_json` (a callable taking const T&, answering Json).
template <typename T, typename ToJson>
Response Answer(const Result<T>& result, ToJson&& to_json, int success_status = 200) {
  if (!result.ok()) return Response::FromStatus(result.status());
  return Response::Success(to_json(*result), success_status);
}

}  // namespace rendezvous
