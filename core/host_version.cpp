#include "rendezvous/plugin.hpp"

namespace rendezvous {

// The build signature of the host, compared with each plugin's by the loader.
const char* HostBuildSignature() { return RENDEZVOUS_BUILD_SIGNATURE; }

}  // namespace rendezvous
