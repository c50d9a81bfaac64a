#include "time_util.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace rendezvous::calendar {
namespace {

constexpr const char* kZoneInfoDir = "/usr/share/zoneinfo/";
constexpr size_t kMaxZoneName = 64;
constexpr size_t kMaxTzifBytes = 1 << 20;

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

int DaysInMonth(int y, int m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

bool ValidDate(int y, int m, int d) {
  return y >= 1 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= DaysInMonth(y, m);
}

int64_t Be(std::string_view data, size_t pos, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(data[pos + i]);
  if (n == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

bool ValidZoneName(const std::string& name) {
  if (name.empty() || name.size() > kMaxZoneName || name.front() == '/' ||
      name.find("..") != std::string::npos)
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' ||
           c == '_' || c == '-' || c == '+';
  });
}

}  // namespace

int64_t DaysFromCivil(const CivilDate& d) {
  // Howard Hinnant's days_from_civil.
  const int y = d.year - (d.month <= 2 ? 1 : 0);
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (d.month + (d.month > 2 ? -3 : 9)) + 2) / 5 + d.day - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<int64_t>(era) * 146097 + static_cast<int64_t>(doe) - 719468;
}

CivilDate CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return CivilDate{static_cast<int>(y + (m <= 2 ? 1 : 0)), static_cast<int>(m), static_cast<int>(d)};
}

std::optional<CivilDate> ParseDate(std::string_view s) {
  int y = 0, m = 0, d = 0;
  if (s.size() != 10 || s[4] != '-' || s[7] != '-' || !Digits(s, 0, 4, &y) || !Digits(s, 5, 2, &m) ||
      !Digits(s, 8, 2, &d) || !ValidDate(y, m, d))
    return std::nullopt;
  return CivilDate{y, m, d};
}

std::optional<UnixSeconds> ParseRfc3339(std::string_view s) {
  if (s.size() < 20 || s.size() > 40) return std::nullopt;
  auto date = ParseDate(s.substr(0, 10));
  if (!date || (s[10] != 'T' && s[10] != 't' && s[10] != ' ')) return std::nullopt;
  int hh = 0, mm = 0, ss = 0;
  if (!Digits(s, 11, 2, &hh) || s[13] != ':' || !Digits(s, 14, 2, &mm) || s[16] != ':' ||
      !Digits(s, 17, 2, &ss) || hh > 23 || mm > 59 || ss > 60)
    return std::nullopt;
  size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    const size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    if (pos == start || pos - start > 9) return std::nullopt;
  }
  if (pos >= s.size()) return std::nullopt;
  int offset = 0;
  if (s[pos] == 'Z' || s[pos] == 'z') {
    if (pos + 1 != s.size()) return std::nullopt;
  } else if (s[pos] == '+' || s[pos] == '-') {
    int oh = 0, om = 0;
    if (pos + 6 != s.size() || !Digits(s, pos + 1, 2, &oh) || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om) || oh > 23 || om > 59)
      return std::nullopt;
    offset = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
  } else {
    return std::nullopt;
  }
  if (ss == 60) ss = 59;
  return DaysFromCivil(*date) * 86400 + hh * 3600 + mm * 60 + ss - offset;
}

std::string FormatUtc(UnixSeconds t) {
  int64_t days = t / 86400;
  int64_t rem = t % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  const CivilDate d = CivilFromDays(days);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", d.year, d.month, d.day,
                static_cast<int>(rem / 3600), static_cast<int>(rem % 3600 / 60), static_cast<int>(rem % 60));
  return buf;
}

std::shared_ptr<const TimeZone> TimeZone::Utc() {
  static const std::shared_ptr<const TimeZone> utc = [] {
    auto z = std::make_shared<TimeZone>();
    z->name_ = "UTC";
    return z;
  }();
  return utc;
}

std::shared_ptr<const TimeZone> TimeZone::FromTzif(const std::string& name, std::string_view data) {
  if (data.size() < 44 || data.substr(0, 4) != "TZif") return nullptr;
  auto counts = [&](size_t at, int64_t* c) {
    if (at + 44 > data.size()) return false;
    for (int i = 0; i < 6; ++i) {
      c[i] = Be(data, at + 20 + 4 * i, 4);
      if (c[i] < 0 || c[i] > 100000) return false;
    }
    return true;
  };
  int64_t c[6];  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  if (!counts(0, c)) return nullptr;
  size_t time_size = 4;
  size_t at = 44;
  if (data[4] >= '2') {
    // Skip the 32-bit block; the 64-bit one follows with its own header.
    at += static_cast<size_t>(c[3] * 4 + c[3] + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0]);
    if (!counts(at, c)) return nullptr;
    at += 44;
    time_size = 8;
  }
  const size_t timecnt = static_cast<size_t>(c[3]), typecnt = static_cast<size_t>(c[4]);
  if (typecnt == 0 || at + timecnt * time_size + timecnt + typecnt * 6 > data.size()) return nullptr;
  std::vector<int> type_offsets;
  const size_t types_at = at + timecnt * time_size + timecnt;
  for (size_t i = 0; i < typecnt; ++i)
    type_offsets.push_back(static_cast<int>(Be(data, types_at + 6 * i, 4)));
  auto z = std::make_shared<TimeZone>();
  z->name_ = name;
  z->initial_offset_ = type_offsets[0];
  for (size_t i = 0; i < timecnt; ++i) {
    const int64_t t = Be(data, at + i * time_size, time_size);
    const size_t idx = static_cast<unsigned char>(data[at + timecnt * time_size + i]);
    if (idx >= typecnt) return nullptr;
    if (!z->transitions_.empty() && t <= z->transitions_.back()) continue;
    z->transitions_.push_back(t);
    z->offsets_after_.push_back(type_offsets[idx]);
  }
  return z;
}

std::shared_ptr<const TimeZone> TimeZone::Load(const std::string& name) {
  if (name == "UTC" || name == "Etc/UTC" || name == "Z") return Utc();
  if (!ValidZoneName(name)) return nullptr;
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const TimeZone>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(name);
    if (it != cache.end()) return it->second;
  }
  std::ifstream in(kZoneInfoDir + name, std::ios::binary);
  if (!in) return nullptr;
  std::string data;
  data.resize(kMaxTzifBytes);
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<size_t>(in.gcount()));
  auto z = FromTzif(name, data);
  if (!z) return nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() < 1000) cache.emplace(name, z);
  return z;
}

int TimeZone::OffsetAt(UnixSeconds t) const {
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), t);
  if (it == transitions_.begin()) return initial_offset_;
  return offsets_after_[static_cast<size_t>(it - transitions_.begin() - 1)];
}

UnixSeconds TimeZone::LocalToUtc(int64_t local) const {
  // Two rounds settle on a consistent offset except in gaps, where the earlier offset is kept.
  const int o1 = OffsetAt(local);
  const int o2 = OffsetAt(local - o1);
  if (o1 == o2) return local - o1;
  const int o3 = OffsetAt(local - o2);
  return local - (o3 == o2 ? o2 : std::min(o1, o2));
}

}  // namespace rendezvous::calendar
