#include "booked_times_cache.hpp"

#include <algorithm>

namespace rendezvous::bookings {
namespace {

bool ByStart(const BookedTime& a, const BookedTime& b) {
  return a.start < b.start;
}

}  // namespace

void BookedTimesCache::Erase(std::unordered_map<int64_t, Entry>::iterator it) {
  total_ -= it->second.count;
  recent_.erase(it->second.age);
  entries_.erase(it);
}

std::optional<std::vector<BookedTime>> BookedTimesCache::Find(int64_t host, int64_t version, time::Millis lo,
                                                             time::Millis hi) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(host);
  if (it == entries_.end() || it->second.version != version) return std::nullopt;
  for (const Range& r : it->second.ranges) {
    if (r.lo > lo || r.hi < hi) continue;
    recent_.splice(recent_.begin(), recent_, it->second.age);
    auto first = std::lower_bound(r.times.begin(), r.times.end(), BookedTime{lo}, ByStart);
    auto last = std::lower_bound(first, r.times.end(), BookedTime{hi}, ByStart);
    return std::vector<BookedTime>(first, last);
  }
  return std::nullopt;
}

void BookedTimesCache::Put(int64_t host, int64_t version, time::Millis lo, time::Millis hi,
                           std::vector<BookedTime> times) {
  if (times.size() > max_times_ || times.size() > max_total_ || max_hosts_ == 0 || hi <= lo) return;
  std::sort(times.begin(), times.end(), ByStart);
  std::lock_guard lock(mu_);
  Range fresh{lo, hi, std::move(times)};
  std::vector<Range> ranges;
  auto it = entries_.find(host);
  if (it != entries_.end()) {
    if (it->second.version > version) return;
    if (it->second.version == version) ranges = std::move(it->second.ranges);
    Erase(it);
  }
  // The kept ranges that overlap or touch the new one join it, keeping their times outside it.
  std::vector<Range> kept;
  for (Range& r : ranges) {
    if (r.hi < lo || r.lo > hi) {
      kept.push_back(std::move(r));
      continue;
    }
    for (const BookedTime& t : r.times) {
      if (t.start < lo || t.start >= hi) fresh.times.push_back(t);
    }
    fresh.lo = std::min(fresh.lo, r.lo);
    fresh.hi = std::max(fresh.hi, r.hi);
  }
  std::sort(fresh.times.begin(), fresh.times.end(), ByStart);
  size_t count = fresh.times.size();
  if (count > max_times_) {  // the joined range is too long: the new read alone
    fresh.lo = lo;
    fresh.hi = hi;
    std::erase_if(fresh.times, [&](const BookedTime& t) { return t.start < lo || t.start >= hi; });
    count = fresh.times.size();
    kept.clear();
  }
  // The other ranges stay while the host's total allows, the nearest first.
  std::sort(kept.begin(), kept.end(), [&](const Range& a, const Range& b) {
    auto gap = [&](const Range& r) { return r.hi <= lo ? lo - r.hi : r.lo - hi; };
    return gap(a) < gap(b);
  });
  Entry entry;
  entry.version = version;
  entry.ranges.push_back(std::move(fresh));
  for (Range& r : kept) {
    if (count + r.times.size() > max_times_) break;
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
