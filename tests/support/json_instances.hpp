#pragma once

// The nlohmann::json classes the tests use, instantiated once (json_instances.cpp) instead of in
// every test file. Test files are compiled unoptimized, and there an extern template declaration
// keeps the compiler from instantiating and emitting the members again: a json-heavy test file
// compiles in a quarter to a third less time. tests/CMakeLists.txt includes this header first in
// every test source.

#include <string>

#include <nlohmann/json.hpp>

namespace rendezvous::testing::json_instances {
using Json = nlohmann::json;
using StringInput = nlohmann::detail::iterator_input_adapter<std::string::const_iterator>;
using PointerInput = nlohmann::detail::iterator_input_adapter<const char*>;
}  // namespace rendezvous::testing::json_instances

// The instances, each preceded by `kind`: `extern` here, nothing in json_instances.cpp.
// clang-format off
#define RDV_JSON_INSTANCES(kind)                                                                    \
  kind template class nlohmann::basic_json<>;                                                       \
  kind template class nlohmann::detail::serializer<rendezvous::testing::json_instances::Json>;      \
  kind template class nlohmann::detail::json_sax_dom_parser<rendezvous::testing::json_instances::Json>; \
  kind template class nlohmann::detail::json_sax_dom_callback_parser<                               \
      rendezvous::testing::json_instances::Json>;                                                   \
  kind template class nlohmann::detail::parser<rendezvous::testing::json_instances::Json,           \
                                               rendezvous::testing::json_instances::StringInput>;   \
  kind template class nlohmann::detail::lexer<rendezvous::testing::json_instances::Json,            \
                                              rendezvous::testing::json_instances::StringInput>;    \
  kind template class nlohmann::detail::parser<rendezvous::testing::json_instances::Json,           \
                                               rendezvous::testing::json_instances::PointerInput>;  \
  kind template class nlohmann::detail::lexer<rendezvous::testing::json_instances::Json,            \
                                              rendezvous::testing::json_instances::PointerInput>;
// clang-format on

RDV_JSON_INSTANCES(extern)
