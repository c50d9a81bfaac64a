// The API's description: docs/openapi.yaml (OpenAPI 3.1), compiled into the binary as text by the
// build and served as JSON at GET /v2/openapi.json (builtin_routes.hpp). The YAML file is the one
// source; docs/api-description.md says how it is kept true to the routes.
#pragma once

#include <string>
#include <string_view>

#include "rendezvous/http.hpp"

namespace rendezvous::core {

// The addresses written into the document where it says ${BASE_URL} and ${APP_URL}.
struct DescriptionUrls {
  std::string base_url;
  std::string app_url;
};

struct ApiDescription {
  std::string json;  // the document, serialized once
  std::string etag;  // a strong validator of `json` ("\"<hex>\"")
};

// The compiled-in document as JSON with `urls` written in. The YAML is converted once per process
// (thread-safe). Throws std::runtime_error when the compiled-in YAML does not parse (the tests that
// serve it fail first).
ApiDescription OpenApiDescription(const DescriptionUrls& urls);

// YAML to JSON: mappings become objects (keys as text), sequences arrays; a plain (unquoted)
// scalar is typed as YAML 1.2's core schema says (null, true/false, integers, floats), a quoted
// one stays a string. Throws std::runtime_error with the line of a syntax error, or for an alias
// cycle or a key that is not a scalar.
Json YamlToJson(std::string_view yaml);

// The compiled-in YAML text (generated from docs/openapi.yaml at build time).
std::string_view OpenApiYamlText();

}  // namespace rendezvous::core
