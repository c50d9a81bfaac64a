// Racing public creates against a running server: N connections post bookings of one event type
// at random among 50 overlapping starts (09:00, 09:05, .. 13:05 UTC; the event type is an hour
// long with a 5-minute grid) on random weekdays of the next weeks, so most attempts race others
// for the same hours. A 201 and a 409 are both answers the server should give; anything else
// counts as failed. With MODE `reserve` the same starts are held instead (POST
// /v2/slots/reservations {eventTypeId, slotStart}; URL is that route): a 201 is a hold made, a 409
// a slot already booked or held.
//   create_bench URL[,URL...] EVENT_TYPE_ID SECONDS CONNECTIONS FIRST_DATE DAYS [book|reserve]
// With several URLs (instances sharing one database) connection i posts to the (i mod n)-th.
// Prints one JSON line: the tally (ok = answered 201 or 409) plus "created" and "conflicts".
#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "load_support.hpp"

namespace {

// "YYYY-MM-DD" `days` after `first` (also "YYYY-MM-DD"), and whether that day is Monday to Friday.
std::pair<std::string, bool> DayAfter(const std::string& first, int days) {
  std::tm tm{};
  strptime(first.c_str(), "%Y-%m-%d", &tm);
  tm.tm_mday += days;
  tm.tm_hour = 12;
  const time_t t = timegm(&tm);
  std::tm out{};
  gmtime_r(&t, &out);
  char buf[11];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &out);
  return {buf, out.tm_wday >= 1 && out.tm_wday <= 5};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7 && argc != 8) {
    std::cerr << "usage: create_bench URL EVENT_TYPE_ID SECONDS CONNECTIONS FIRST_DATE DAYS [book|reserve]\n";
    return 2;
  }
  const bool reserve = argc == 8 && std::string(argv[7]) == "reserve";
  if (argc == 8 && !reserve && std::string(argv[7]) != "book") {
    std::cerr << "create_bench: MODE is book or reserve\n";
    return 2;
  }
  const std::string event_type = argv[2], first = argv[5];
  std::vector<std::string> urls;
  for (std::string rest = argv[1]; !rest.empty();) {
    const size_t comma = rest.find(',');
    urls.push_back(rest.substr(0, comma));
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
  }
  if (urls.empty()) {
    std::cerr << "create_bench: no URL\n";
    return 2;
  }
  const int seconds = std::stoi(argv[3]), connections = std::stoi(argv[4]), days = std::stoi(argv[6]);
  std::vector<std::string> weekdays;
  for (int d = 0; d < days; ++d) {
    auto [date, weekday] = DayAfter(first, d);
    if (weekday) weekdays.push_back(date);
  }
  curl_global_init(CURL_GLOBAL_ALL);
  bench::Tally tally;
  std::atomic<long> created{0}, conflicts{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::vector<std::thread> threads;
  for (int i = 0; i < connections; ++i) {
    threads.emplace_back([&, i] {
      std::mt19937 random(static_cast<unsigned>(i) * 7919u + 1u);
      CURL* c = curl_easy_init();
      curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
      std::vector<double> mine;
      for (long n = 0; std::chrono::steady_clock::now() < deadline; ++n) {
        const int minutes = 9 * 60 + static_cast<int>(random() % 50) * 5;
        char start[32];
        std::snprintf(start, sizeof start, "%sT%02d:%02d:00Z", weekdays[random() % weekdays.size()].c_str(),
                      minutes / 60, minutes % 60);
        const std::string body =
            reserve ? std::string(R"({"slotStart":")") + start + R"(","eventTypeId":)" + event_type + "}"
                    : std::string(R"({"start":")") + start + R"(","eventTypeId":)" + event_type +
                          R"(,"attendee":{"name":"Racer","email":"racer)" + std::to_string(i) + "-" +
                          std::to_string(n) + R"(@bench.example.com","timeZone":"UTC"}})";
        const bench::Exchange x = bench::Post(c, headers, urls[static_cast<size_t>(i) % urls.size()], body);
        mine.push_back(x.ms);
        if (x.transport_ok && (x.status == 201 || x.status == 409)) {
          ++tally.ok;
          ++(x.status == 201 ? created : conflicts);
        } else {
          ++tally.failed;
        }
      }
      tally.AddLatencies(mine);
      curl_slist_free_all(headers);
      curl_easy_cleanup(c);
    });
  }
  for (std::thread& t : threads) t.join();
  std::cout << R"({"created":)" << created.load() << R"(,"conflicts":)" << conflicts.load() << "}" << std::endl;
  return tally.Report(threads.size(), seconds);
}
