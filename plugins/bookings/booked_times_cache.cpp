#include "booked_times_cache.hpp"

#include <algorithm>

namespace rendezvous::bookings {
namespace {

bool ByStart(const BookedTime& a, const BookedTime& b) {
  return a.start < b.start;
}

// The times of `sorted` starting in [lo, hi).
std::vector<BookedTime> Slice(const std::vector<BookedTime>& sorted, time::Millis lo, time::Millis hi) {
  auto first = std::lower_bound(sorted.begin(), sorted.end(), BookedTime{lo}, ByStart);
  auto last = std::lower_bound(first, sorted.end(), BookedTime{hi}, ByStart);
  return std::vector<BookedTime>(first, last);
}

}  // namespace

void BookedTimesCache::Erase(std::unordered_map<int64_t, Entry>::iterator it) {
  total_ -= it->second.count;
  recent_.erase(it->second.age);
  entries_.erase(it);
}

std::optional<std::vector<BookedTime>> BookedTimesCache::FindLocked(int64_t host, int64_t version,
                                                                    time::Millis lo, time::Millis hi) {
  auto it = entries_.find(host);
  if (it == entries_.end() || it->second.version != version) return std::nullopt;
  for (const Range& r : it->second.ranges) {
    if (r.lo > lo || r.hi < hi) continue;
    recent_.splice(recent_.begin(), recent_, it->second.age);
    return Slice(r.times, lo, hi);
  }
  return std::nullopt;
}

std::optional<std::vector<BookedTime>> BookedTimesCache::Find(int64_t host, int64_t version, time::Millis lo,
                                                              time::Millis hi) {
  std::lock_guard lock(mu_);
  return FindLocked(host, version, lo, hi);
}

size_t BookedTimesCache::waiting() const {
  std::lock_guard lock(mu_);
  return waiting_;
}

std::vector<BookedTime> BookedTimesCache::Get(int64_t host, int64_t version, time::Millis lo, time::Millis hi,
                                              const std::function<std::vector<BookedTime>()>& load) {
  std::shared_ptr<Load> mine = std::make_shared<Load>();
  *mine = Load{host, version, lo, hi, false, nullptr};
  {
    std::unique_lock lock(mu_);
    if (auto hit = FindLocked(host, version, lo, hi)) return std::move(*hit);
    auto covering = std::find_if(loads_.begin(), loads_.end(), [&](const std::shared_ptr<Load>& l) {
      return l->host == host && l->version == version && l->lo <= lo && l->hi >= hi;
    });
    if (covering != loads_.end()) {
      std::shared_ptr<Load> other = *covering;
      ++waiting_;
      load_done_.wait_until(lock, std::chrono::steady_clock::now() + kLoadWait, [&] { return other->done; });
      --waiting_;
      if (other->done && other->times) return Slice(*other->times, lo, hi);
      // It failed or is slow: this request reads for itself (and waits for no one again).
    }
    loads_.push_back(mine);
  }
  // Whatever happens, the read is over for the requests waiting on it.
  struct Finish {
    BookedTimesCache& cache;
    const std::shared_ptr<Load>& load;
    ~Finish() {
      {
        std::lock_guard lock(cache.mu_);
        load->done = true;
        cache.loads_.remove(load);
      }
      cache.load_done_.notify_all();
    }
  } finish{*this, mine};
  std::vector<BookedTime> times = load();
  std::sort(times.begin(), times.end(), ByStart);
  auto shared = std::make_shared<const std::vector<BookedTime>>(std::move(times));
  Put(host, version, lo, hi, *shared);
  {
    std::lock_guard lock(mu_);
    mine->times = shared;
  }
  return *shared;
}

void BookedTimesCache::Put(int64_t host, int64_t version, time::Millis lo, time::Millis hi,
                           const std::vector<BookedTime>& times) {
  if (times.size() > max_times_ || times.size() > max_total_ || max_hosts_ == 0 || hi <= lo) return;
  if (!std::is_sorted(times.begin(), times.end(), ByStart)) {
    std::vector<BookedTime> sorted = times;
    std::sort(sorted.begin(), sorted.end(), ByStart);
    return Put(host, version, lo, hi, sorted);
  }
  std::lock_guard lock(mu_);
  std::vector<Range> ranges;
  auto it = entries_.find(host);
  if (it != entries_.end()) {
    if (it->second.version > version) return;
    if (it->second.version == version) ranges = std::move(it->second.ranges);
    Erase(it);
  }
  // The kept ranges that overlap or touch the new one join it, keeping their times outside it:
  // the ranges are disjoint and by lo, so those before lo, the new read and those from hi on are
  // in order as they come.
  Range joined{lo, hi, {}};
  std::vector<Range> apart;
  std::vector<Range> joining;
  size_t joining_count = times.size();
  for (Range& r : ranges) {
    if (r.hi < lo || r.lo > hi) {
      apart.push_back(std::move(r));
      continue;
    }
    joining_count += r.times.size();
    joined.lo = std::min(joined.lo, r.lo);
    joined.hi = std::max(joined.hi, r.hi);
    joining.push_back(std::move(r));
  }
  joined.times.reserve(joining_count);
  for (const Range& r : joining) {
    for (const BookedTime& t : r.times) {
      if (t.start >= lo) break;
      joined.times.push_back(t);
    }
  }
  const size_t first_new = joined.times.size();
  joined.times.insert(joined.times.end(), times.begin(), times.end());
  const size_t end_new = joined.times.size();
  for (const Range& r : joining) {
    auto from = std::lower_bound(r.times.begin(), r.times.end(), BookedTime{hi}, ByStart);
    joined.times.insert(joined.times.end(), from, r.times.end());
  }
  if (joined.times.size() > max_times_) {
    // Too long: cut back to the new read and as much on either side of it as the budget allows
    // (half each, the rest to the side that has more). A cut falls between two starts, so every
    // time starting in the range kept is in it.
    const size_t budget = max_times_ - times.size();
    const size_t left_avail = first_new;
    const size_t right_avail = joined.times.size() - end_new;
    size_t left = std::min(left_avail, budget / 2);
    const size_t right = std::min(right_avail, budget - left);
    left = std::min(left_avail, budget - right);
    const std::vector<BookedTime>& all = joined.times;
    auto first = all.begin() + static_cast<std::ptrdiff_t>(first_new - left);
    auto last = all.begin() + static_cast<std::ptrdiff_t>(end_new + right);
    time::Millis cut_lo = joined.lo;
    time::Millis cut_hi = joined.hi;
    if (first != all.begin()) {
      cut_lo = (first - 1)->start + 1;  // <= lo: that time starts before lo
      first = std::upper_bound(first - 1, all.end(), *(first - 1), ByStart);
    }
    if (last != all.end()) {
      cut_hi = last->start;  // >= hi: that time starts from hi on
      last = std::lower_bound(all.begin(), last, *last, ByStart);
    }
    Range cut{cut_lo, cut_hi, std::vector<BookedTime>(first, last)};
    joined = std::move(cut);
  }
  size_t count = joined.times.size();
  // The other ranges stay while the host's budget allows, the nearest first.
  std::sort(apart.begin(), apart.end(), [&](const Range& a, const Range& b) {
    auto gap = [&](const Range& r) { return r.hi <= lo ? lo - r.hi : r.lo - hi; };
    return gap(a) < gap(b);
  });
  Entry entry;
  entry.version = version;
  entry.ranges.push_back(std::move(joined));
  for (Range& r : apart) {
    if (entry.ranges.size() >= kMaxRanges || count + r.times.size() > max_times_) break;
    count += r.times.size();
    entry.ranges.push_back(std::move(r));
  }
  std::sort(entry.ranges.begin(), entry.ranges.end(), [](const Range& a, const Range& b) { return a.lo < b.lo; });
  entry.count = count;
  while (!recent_.empty() && (entries_.size() >= max_hosts_ || total_ + count > max_total_)) {
    Erase(entries_.find(recent_.back()));
  }
  recent_.push_front(host);
  entry.age = recent_.begin();
  total_ += count;
  entries_.emplace(host, std::move(entry));
}

void BookedTimesCache::Apply(int64_t host, int64_t version, const std::optional<BookedTime>& added,
                             int64_t removed_id) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(host);
  if (it == entries_.end() || it->second.version != version - 1) return;
  Entry& e = it->second;
  e.version = version;
  for (Range& r : e.ranges) {
    // By id, so a change the entry's read already saw is not applied twice.
    const bool adds_here = added && added->start >= r.lo && added->start < r.hi;
    auto same = [&](const BookedTime& t) { return t.id == removed_id || (adds_here && t.id == added->id); };
    const size_t before = r.times.size();
    std::erase_if(r.times, same);
    e.count -= before - r.times.size();
    total_ -= before - r.times.size();
    if (adds_here) {
      r.times.insert(std::upper_bound(r.times.begin(), r.times.end(), *added, ByStart), *added);
      ++e.count;
      ++total_;
    }
  }
  if (e.count > max_times_ || total_ > max_total_) Erase(it);
}

}  // namespace rendezvous::bookings
