#include "http/connection.hpp"

#include <cerrno>

#include <sys/epoll.h>
#include <sys/socket.h>

namespace rendezvous::core {
namespace {

// Bytes a connection may hold beyond one request's limits while earlier requests are answered.
constexpr size_t kPipelineSlack = 64 * 1024;
constexpr size_t kKeepCapacity = 64 * 1024;
constexpr size_t kMaxUnsentBytes = 256 * 1024;
// A connection holding at most kSmallHolding request bytes may use the budget's last
// 1/kReserveShare; a connection holding more may not.
constexpr size_t kSmallHolding = 64 * 1024;
constexpr size_t kReserveShare = 16;

}  // namespace

Connection::Connection(uint64_t id, int fd, Listener listener, std::string remote_ip, ConnectionContext& context)
    : id_(id),
      fd_(fd),
      listener_(listener),
      remote_ip_(std::move(remote_ip)),
      context_(context),
      parser_(context.parser),
      phase_since_(SteadyClock::now()) {}

Connection::~Connection() {
  if (budget_held_) context_.buffered.fetch_sub(budget_held_);
}

Connection::Items Connection::OnInput(const char* data, size_t size) {
  Items items;
  std::lock_guard lock(mu_);
  if (!open_ || aborted_ || !reading_) return items;  // a closing connection's bytes are dropped
  const size_t before = context_.buffered.fetch_add(size);
  budget_held_ += size;
  in_.append(data, size);
  const auto& limits = context_.parser;
  // Large uploads may fill the budget only up to its reserve, which is kept for connections
  // holding little, so stalled uploads cannot lock ordinary requests out.
  const size_t limit = budget_held_ > kSmallHolding ? context_.buffer_budget - context_.buffer_budget / kReserveShare
                                                    : context_.buffer_budget;
  if (before + size > limit) {
    items.push_back({next_seq_++, std::nullopt, 503, "the server holds too many request bytes; try again later",
                     "buffer_budget"});
    StopReadingLocked();
  } else if (in_.size() > limits.max_body_bytes + limits.max_head_bytes + kPipelineSlack) {
    items.push_back({next_seq_++, std::nullopt, 503, "too many pipelined request bytes on this connection",
                     "buffer_budget"});
    StopReadingLocked();
  } else {
    ParseLocked(items);
  }
  SyncBudgetLocked();
  return items;
}

void Connection::ParseLocked(Items& items) {
  const auto now = SteadyClock::now();
  // A client that does not read its answers gets no new ones computed.
  while (reading_ && next_seq_ - next_send_ < kMaxPipelined && out_.size() - out_sent_ < kMaxUnsentBytes) {
    RequestParser::Outcome outcome = parser_.Parse(in_);
    if (outcome == RequestParser::Outcome::kNeedMore) break;
    if (outcome == RequestParser::Outcome::kError) {
      int status = parser_.error_status();
      items.push_back({next_seq_++, std::nullopt, status, parser_.error_message(),
                       status == 413 ? "too_large" : "malformed"});
      StopReadingLocked();
      break;
    }
    ParsedRequest request = parser_.Take();
    const bool keep_alive = request.keep_alive;
    size_t bytes = request.body.size() + request.target.size();
    for (const auto& [name, value] : request.headers) bytes += name.size() + value.size();
    item_bytes_[next_seq_] = bytes;
    items_held_ += bytes;
    items.push_back({next_seq_++, std::move(request), 0, {}, nullptr});
    continue_sent_ = false;
    phase_ = Phase::kIdle;
    phase_since_ = now;
    if (!keep_alive) StopReadingLocked();  // nothing after a request that asked to close is read
  }
  if (!reading_) return;
  Phase phase = parser_.idle() ? Phase::kIdle : parser_.in_body() ? Phase::kBody : Phase::kHead;
  if (phase != phase_) {
    phase_ = phase;
    phase_since_ = now;
  }
  // 100 Continue only when it cannot overtake an earlier answer.
  if (parser_.expects_continue() && !continue_sent_ && next_seq_ == next_send_ && out_.empty()) {
    continue_sent_ = true;
    out_ = "HTTP/1.1 100 Continue\r\n\r\n";
    FlushLocked();
  }
}

Connection::Items Connection::Complete(uint64_t seq, std::string bytes, bool close) {
  Items items;
  std::lock_guard lock(mu_);
  if (auto it = item_bytes_.find(seq); it != item_bytes_.end()) {
    items_held_ -= it->second;
    item_bytes_.erase(it);
  }
  if (!open_ || aborted_ || closing_ || seq < next_send_) {
    SyncBudgetLocked();
    return items;
  }
  ready_.emplace(seq, std::make_pair(std::move(bytes), close));
  for (auto it = ready_.find(next_send_); it != ready_.end(); it = ready_.find(next_send_)) {
    out_ += it->second.first;
    const bool last = it->second.second;
    ready_.erase(it);
    ++next_send_;
    if (last) {
      closing_ = true;
      StopReadingLocked();
      ready_.clear();
      break;
    }
  }
  if (next_send_ == next_seq_) phase_since_ = SteadyClock::now();  // idle from the last answer on
  FlushLocked();
  if (reading_ && open_ && !aborted_) ParseLocked(items);
  SyncBudgetLocked();
  return items;
}

Connection::Item Connection::Refuse(int status, std::string message, const char* reason) {
  std::lock_guard lock(mu_);
  Item item{next_seq_++, std::nullopt, status, std::move(message), reason};
  StopReadingLocked();
  SyncBudgetLocked();
  return item;
}

void Connection::FlushLocked() {
  if (!open_ || aborted_) return;
  while (out_sent_ < out_.size()) {
    ssize_t n = ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      out_sent_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (write_stalled_since_ == SteadyClock::time_point{}) write_stalled_since_ = SteadyClock::now();
      ArmWritableLocked();
      return;
    }
    AbortLocked();  // the client is gone
    return;
  }
  out_.clear();
  if (out_.capacity() > kKeepCapacity) out_.shrink_to_fit();
  out_sent_ = 0;
  write_stalled_since_ = {};
  if (closing_ && !write_shut_) {
    ::shutdown(fd_, SHUT_WR);
    write_shut_ = true;
    linger_until_ = SteadyClock::now() + context_.linger;
  }
}

void Connection::ArmWritableLocked() {
  if (context_.write_poll_fd < 0) return;
  epoll_event ev{};
  ev.events = EPOLLOUT | EPOLLONESHOT;
  ev.data.u64 = id_;
  if (::epoll_ctl(context_.write_poll_fd, poll_registered_ ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd_, &ev) != 0 &&
      errno == EEXIST)
    ::epoll_ctl(context_.write_poll_fd, EPOLL_CTL_MOD, fd_, &ev);
  poll_registered_ = true;
}

Connection::Items Connection::OnWritable() {
  Items items;
  std::lock_guard lock(mu_);
  FlushLocked();
  if (reading_ && open_ && !aborted_) ParseLocked(items);
  SyncBudgetLocked();
  return items;
}

void Connection::OnClosed() {
  std::lock_guard lock(mu_);
  open_ = false;
  reading_ = false;
  in_.clear();
  in_.shrink_to_fit();
  parser_ = RequestParser(context_.parser);
  ready_.clear();
  out_.clear();
  out_.shrink_to_fit();
  SyncBudgetLocked();
}

Connection::Items Connection::CheckDeadline(SteadyClock::time_point now) {
  Items items;
  std::lock_guard lock(mu_);
  if (!open_ || aborted_) return items;
  if (write_shut_) {
    if (now >= linger_until_) AbortLocked();
    return items;
  }
  if (out_sent_ < out_.size()) {
    // The client does not read its answers.
    if (now - write_stalled_since_ >= context_.idle_timeout) AbortLocked();
    return items;
  }
  if (!reading_) return items;
  if ((phase_ == Phase::kHead && now - phase_since_ >= context_.header_timeout) ||
      (phase_ == Phase::kBody && now - phase_since_ >= context_.body_timeout)) {
    items.push_back({next_seq_++, std::nullopt, 408, "the request did not arrive in time", "timeout"});
    StopReadingLocked();
    SyncBudgetLocked();
    return items;
  }
  if (phase_ == Phase::kIdle && next_seq_ == next_send_ && in_.empty() &&
      now - phase_since_ >= context_.idle_timeout)
    AbortLocked();
  return items;
}

void Connection::Abort() {
  std::lock_guard lock(mu_);
  AbortLocked();
}

void Connection::CloseIfIdle() {
  std::lock_guard lock(mu_);
  if (reading_ && phase_ == Phase::kIdle && next_seq_ == next_send_ && in_.empty()) AbortLocked();
}

void Connection::AbortLocked() {
  if (!open_ || aborted_) return;
  ::shutdown(fd_, SHUT_RDWR);
  aborted_ = true;
}

void Connection::StopReadingLocked() {
  reading_ = false;
  in_.clear();
  in_.shrink_to_fit();
  parser_ = RequestParser(context_.parser);
}

void Connection::SyncBudgetLocked() {
  size_t held = in_.size() + parser_.held_bytes() + items_held_;
  if (held > budget_held_) context_.buffered.fetch_add(held - budget_held_);
  else if (held < budget_held_) context_.buffered.fetch_sub(budget_held_ - held);
  budget_held_ = held;
}

}  // namespace rendezvous::core
