// The YAML value behind a ConfigNode (opaque in the public header): the core builds ConfigNodes
// from yaml-cpp nodes through it.
#pragma once

#include <yaml-cpp/yaml.h>

#include "rendezvous/config_node.hpp"

namespace rendezvous {

struct ConfigValue {
  YAML::Node node;
};

}  // namespace rendezvous
