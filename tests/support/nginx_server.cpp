#include "nginx_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "free_port.hpp"

namespace rendezvous::testing {
namespace {

bool Accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::string NginxBinary() {
  if (const char* named = std::getenv("RDV_NGINX"); named && *named) return named;
  const char* path = std::getenv("PATH");
  // Debian installs it in /usr/sbin, which an unprivileged user's PATH often lacks.
  std::istringstream dirs(std::string(path ? path : "/usr/bin:/bin") + ":/usr/sbin:/sbin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/nginx";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

NginxServer::NginxServer() {
  char tmpl[] = "/tmp/rdv-nginx-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  // A master started as root runs its worker as `nobody`, which must reach the temporary folders.
  ::chmod(dir_.c_str(), 0755);
}

NginxServer::~NginxServer() {
  Stop();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

bool NginxServer::Start(const std::function<std::string(int port)>& site, std::string* why) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const int port = ProbeFreePort();
    if (port == 0) continue;
    if (StartOn(port, site(port), why)) return true;
    if (ErrorLog().find("Address already in use") == std::string::npos) return false;
  }
  return false;
}

bool NginxServer::StartOn(int port, const std::string& site, std::string* why) {
  const std::string binary = NginxBinary();
  if (binary.empty()) {
    if (why) *why = "no nginx binary (Debian package `nginx`, in the Makefile's PACKAGES)";
    return false;
  }
  port_ = port;
  std::filesystem::remove(dir_ + "/error.log");
  std::ofstream(dir_ + "/site.conf", std::ios::trunc) << site;
  std::ostringstream main;
  main << "worker_processes 1;\n"
       << "pid " << dir_ << "/nginx.pid;\n"
       << "error_log " << dir_ << "/error.log notice;\n"
       << "events { worker_connections 256; }\n"
       << "http {\n"
       << "  access_log " << dir_ << "/access.log;\n";
  for (const char* kind : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"})
    main << "  " << kind << "_temp_path " << dir_ << "/" << kind << "_temp;\n";
  main << "  include " << dir_ << "/site.conf;\n}\n";
  std::ofstream(dir_ + "/nginx.conf", std::ios::trunc) << main.str();

  pid_ = Spawn({binary, "-p", dir_ + "/", "-c", dir_ + "/nginx.conf", "-e", dir_ + "/error.log", "-g", "daemon off;"},
               dir_ + "/nginx.out", dir_ + "/nginx.err");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (why) *why = "nginx exited:\n" + ReadFile(dir_ + "/nginx.err") + ErrorLog();
      return false;
    }
    if (Accepts(port)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (why) *why = "nginx not accepting within 20 s:\n" + ErrorLog();
  Stop();
  return false;
}

void NginxServer::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGQUIT);
  WaitFor(pid_, std::chrono::seconds(10));
  pid_ = -1;
}

std::string NginxServer::ErrorLog() const { return ReadFile(dir_ + "/error.log"); }

}  // namespace rendezvous::testing
