// The event lookup, GET /v2/calendars/google/event/{eventUid}, against a running server whose
// calendar plugin talks to the tests' fake Google (tests/support/fake_google.hpp), hosted here on
// loopback; then the same event read straight from the fake, measured the same way, so that the
// difference is what the server adds.
//   event_lookup_bench PLUGIN_YAML API_URL APP_URL EMAIL PASSWORD SECONDS CONNECTIONS
// 1. Starts the fake Google with one primary calendar holding one event (attendees and a Meet),
//    writes the calendar plugin's config for it (YAML for under `plugins:`) to PLUGIN_YAML and
//    prints one line {"google": URL}.
// 2. Reads the API key of the user EMAIL from stdin (one line) once the caller has started the
//    server with that config, and connects the user's Google calendar through the real flow (sign
//    in, start page, /save with a code the fake issued): the server then holds a fresh credential,
//    so no lookup refreshes it.
// 3. CONNECTIONS connections (libcurl handles, one thread each) GET the event through the server
//    for SECONDS, then straight from the fake's calendar API (an access token of its own) for
//    SECONDS. An answer counts when it is 200 and names the event; anything else is a failure (the
//    first few are described on stderr).
// Prints two JSON lines (bench::Tally): the server's run, then the fake's. Exit 0 when nothing
// failed.
#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_google.hpp"
#include "google_connect.hpp"
#include "http_client.hpp"
#include "load_support.hpp"

namespace {

using nlohmann::json;
using rendezvous::testing::FakeGoogle;

constexpr const char* kCalendar = "lookup@bench.example.com";
constexpr const char* kEventId = "rdvbench0lookup0event";

// A Google event as the Calendar API answers it: times with a zone, attendees, a Meet.
json BenchEvent() {
  const std::string meet = "https://meet.google.com/abc-defg-hij";
  return {
      {"kind", "calendar#event"},
      {"id", kEventId},
      {"status", "confirmed"},
      {"summary", "Intro between Lookup Host and Ann Attendee"},
      {"description", "A meeting the benchmark reads again and again."},
      {"start", {{"dateTime", "2030-01-15T10:00:00+01:00"}, {"timeZone", "Europe/Berlin"}}},
      {"end", {{"dateTime", "2030-01-15T10:30:00+01:00"}, {"timeZone", "Europe/Berlin"}}},
      {"organizer", {{"email", kCalendar}, {"displayName", "Lookup Host"}, {"self", true}}},
      {"attendees",
       {{{"email", kCalendar},
         {"displayName", "Lookup Host"},
         {"organizer", true},
         {"responseStatus", "accepted"}},
        {{"email", "ann@example.com"}, {"displayName", "Ann Attendee"}, {"responseStatus", "needsAction"}},
        {{"email", "guest@example.com"}, {"responseStatus", "tentative"}}}},
      {"hangoutLink", meet},
      {"conferenceData",
       {{"entryPoints",
         {{{"entryPointType", "video"}, {"uri", meet}, {"label", "meet.google.com/abc-defg-hij"}},
          {{"entryPointType", "phone"},
           {"uri", "tel:+1-555-0100"},
           {"label", "+1 555-0100"},
           {"pin", "123456"}}}},
        {"conferenceSolution", {{"key", {{"type", "hangoutsMeet"}}}, {"name", "Google Meet"}}},
        {"conferenceId", "abc-defg-hij"}}}};
}

// CONNECTIONS connections GET `url` with `headers` for `seconds`; reports the run as one JSON line.
int Load(const std::string& what, const std::string& url, const std::vector<std::string>& headers,
         int seconds, size_t connections) {
  bench::Tally tally;
  std::atomic<int> described{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < connections; ++i) {
    threads.emplace_back([&] {
      CURL* c = curl_easy_init();
      curl_slist* list = nullptr;
      for (const std::string& h : headers) list = curl_slist_append(list, h.c_str());
      std::vector<double> mine;
      while (std::chrono::steady_clock::now() < deadline) {
        const bench::Exchange x = bench::Get(c, list, url);
        if (x.transport_ok && x.status == 200 && x.body.find(kEventId) != std::string::npos) {
          mine.push_back(x.ms);
          ++tally.ok;
          continue;
        }
        ++tally.failed;
        if (described++ < 5)
          std::cerr << what << ": answer " << x.status << (x.transport_ok ? "" : " (transport failed)")
                    << ": " << x.body.substr(0, 300) << "\n";
      }
      tally.AddLatencies(mine);
      curl_slist_free_all(list);
      curl_easy_cleanup(c);
    });
  }
  for (std::thread& t : threads) t.join();
  return tally.Report(connections, seconds);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::cerr << "usage: event_lookup_bench PLUGIN_YAML API_URL APP_URL EMAIL PASSWORD SECONDS CONNECTIONS\n";
    return 2;
  }
  const std::string plugin_yaml = argv[1], api = argv[2], app = argv[3], email = argv[4], password = argv[5];
  const int seconds = std::stoi(argv[6]);
  const size_t connections = std::stoul(argv[7]);
  curl_global_init(CURL_GLOBAL_ALL);

  FakeGoogle google;
  google.AddCalendar({{"id", kCalendar},
                      {"summary", "Lookup Host"},
                      {"primary", true},
                      {"accessRole", "owner"},
                      {"timeZone", "Europe/Berlin"}});
  google.AddEvent(kCalendar, BenchEvent());
  std::ofstream(plugin_yaml, std::ios::trunc) << google.PluginConfig(false);
  std::cout << json{{"google", google.url()}}.dump() << std::endl;

  std::string key;
  if (!std::getline(std::cin, key) || key.empty()) {
    std::cerr << "event_lookup_bench: no API key on stdin\n";
    return 1;
  }
  rendezvous::testing::HttpClient http;
  std::string why;
  const std::string session = rendezvous::testing::SignInBrowser(http, app, email, password, &why);
  if (session.empty()) {
    std::cerr << "event_lookup_bench: " << why << "\n";
    return 1;
  }
  const rendezvous::testing::HttpResult saved =
      rendezvous::testing::ConnectGoogleCalendar(http, api, app, key, session, google.IssueCode());
  if (saved.status != 200) {
    std::cerr << "event_lookup_bench: connecting Google answered " << saved.status << " " << saved.error
              << " " << saved.body << "\n";
    return 1;
  }

  const std::string through_server = api + "/v2/calendars/google/event/" + kEventId;
  const int server_failed =
      Load("server", through_server, {"Authorization: Bearer " + key}, seconds, connections);
  const std::string straight = google.api_base_url() + "/calendars/" + kCalendar + "/events/" + kEventId;
  const int google_failed = Load(
      "fake Google", straight, {"Authorization: Bearer " + google.IssueAccessToken()}, seconds, connections);
  return server_failed == 0 && google_failed == 0 ? 0 : 1;
}
