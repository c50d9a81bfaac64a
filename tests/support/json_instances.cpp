// The one place the test executables get the nlohmann::json members json_instances.hpp declares
// (the build includes that header before this file's first line).
#include "json_instances.hpp"

RDV_JSON_INSTANCES()
