#include "identity/password_hasher.hpp"

#include <future>
#include <memory>

#include "rendezvous/crypto.hpp"

namespace rendezvous::core {

PasswordHasher::PasswordHasher(int threads, size_t queue_limit) : pool_(threads, queue_limit) {}

std::optional<bool> PasswordHasher::Verify(std::string_view password, std::string_view encoded) {
  auto done = std::make_shared<std::promise<bool>>();
  std::future<bool> result = done->get_future();
  WorkerPool::Task task = [done, password = std::string(password), encoded = std::string(encoded)] {
    done->set_value(crypto::VerifyPassword(password, encoded));
  };
  if (!pool_.TrySubmit(task)) return std::nullopt;
  return result.get();
}

}  // namespace rendezvous::core
