// The yardstick for the HTTP layer: a bare Pistache 0.0.5 hello-world on loopback, answering every
// request with a small JSON body, with as many reactor threads as our server's api listener.
//   pistache_hello PORT [THREADS]     (run by bench/run.sh; stops on SIGTERM)
#include <csignal>
#include <cstdlib>
#include <iostream>

#include <pistache/endpoint.h>
#include <pistache/http.h>

namespace {

class Hello final : public Pistache::Http::Handler {
 public:
  HTTP_PROTOTYPE(Hello)
  void onRequest(const Pistache::Http::Request&, Pistache::Http::ResponseWriter response) override {
    response.send(Pistache::Http::Code::Ok, "{\"status\":\"ok\"}", MIME(Application, Json));
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: pistache_hello PORT [THREADS]\n";
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Pistache::Http::Endpoint endpoint(Pistache::Address(Pistache::Ipv4::loopback(), Pistache::Port(static_cast<uint16_t>(port))));
  endpoint.init(Pistache::Http::Endpoint::options().threads(threads).flags(Pistache::Tcp::Options::ReuseAddr));
  endpoint.setHandler(Pistache::Http::make_handler<Hello>());
  endpoint.serveThreaded();
  int sig = 0;
  sigwait(&signals, &sig);
  endpoint.shutdown();
  return 0;
}
