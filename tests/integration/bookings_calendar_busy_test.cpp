// Busy times of a host's connected calendars keep slots and bookings away (the calendar plugin's
// busy-time source): a Google busy period and an ICS feed event remove the slots they cover and
// make a booking there 409; a recurring ICS event blocks each of its occurrences, except the dates
// it excludes. A source that cannot be read does not take the booking page down: it is named in
// the slots answer, what it said last stands in for it, and a slow one is given up on in time.
// Answers are cached per host until a change of the host's calendars. A calendar that hangs never
// holds the API's request threads: another user's requests are answered as usual meanwhile.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "calendar_fixture.hpp"
#include "eventually.hpp"
#include "http_framing.hpp"
#include "rendezvous/time.hpp"

namespace rendezvous::testing {
namespace {

// An ICS feed host on 127.0.0.1 that serves `ics` until Hang(); from then on it accepts connections
// and never answers them (until it is destroyed, which closes them).
class HangingFeedHost {
 public:
  explicit HangingFeedHost(std::string ics) : ics_(std::move(ics)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd_, 256) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      ADD_FAILURE() << "the feed host could not listen";
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~HangingFeedHost() {
    stop_ = true;
    thread_.join();
    for (int fd : held_) ::close(fd);
    ::close(fd_);
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/feed.ics"; }
  void Hang() { hang_ = true; }
  size_t held() const { return held_count_; }

 private:
  void Loop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      if (hang_) {
        held_.push_back(c);  // read nothing, answer nothing
        ++held_count_;
        continue;
      }
      // The request, read for at most 10 s, whatever it turns out to be: the feed is answered.
      HttpReader reader(HttpKind::kRequest);
      std::string in;
      char buf[4096];
      for (int i = 0; i < 100 && reader.Read(in) == HttpReader::Result::kNeedMore; ++i) {
        pollfd r{c, POLLIN, 0};
        if (::poll(&r, 1, 100) <= 0) continue;
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
      }
      const std::string answer =
          HttpResponseText(200, {"Content-Type: text/calendar", "Connection: close"}, ics_);
      (void)!::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(c);
    }
  }

  std::string ics_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false}, hang_{false};
  std::atomic<size_t> held_count_{0};
  std::vector<int> held_;  // the accepting thread's only
  std::thread thread_;
};

class BookingsCalendarBusy : public CalendarTest {
 protected:
  // A Tuesday a week or more ahead (free 09:00-17:00 by the default schedule), YYYY-MM-DD.
  static std::string NextTuesday() {
    int64_t day = time::DaysFromCivil(time::Zone::Utc().DateAt(time::Now())) + 7;
    while (time::IsoWeekday(time::CivilFromDays(day)) != 2) ++day;
    return time::FormatDate(time::CivilFromDays(day));
  }
  static std::string IcsEvent(const std::string& date, const std::string& from, const std::string& to) {
    const std::string d = date.substr(0, 4) + date.substr(5, 2) + date.substr(8, 2);
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:1\r\nDTSTART:" + d + "T" +
           from + "Z\r\nDTEND:" + d + "T" + to + "Z\r\nSUMMARY:Climbing\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
  }
  int64_t CreateEventType() {
    HttpResult et = Send("POST", "/v2/event-types", {{"title", "Call"}, {"slug", "call"}, {"lengthInMinutes", 60}}, key_);
    EXPECT_EQ(et.status, 201) << et.body;
    return et.Json().value("/data/id"_json_pointer, int64_t{0});
  }
  // Ada connected to Google (busy 10:30-11:15 on `date`) and to an ICS feed (busy 14:00-14:30).
  void ConnectBusyCalendars(const std::string& date) {
    AddStandardCalendars();
    ASSERT_EQ(ConnectAndSave().status, 200);
    google_.AddBusy("ada@example.com", date + "T10:30:00Z", date + "T11:15:00Z");
    google_.SetIcs("club.ics", IcsEvent(date, "140000", "143000"));
    ASSERT_EQ(Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("club.ics")}}}, key_).status,
              201);
  }
  HttpResult SlotsAnswer(int64_t event_type, const std::string& date) {
    return Get("/v2/slots?eventTypeId=" + std::to_string(event_type) + "&start=" + date + "&end=" + date, "");
  }
  static std::vector<std::string> Starts(const HttpResult& r, const std::string& date) {
    std::vector<std::string> out;
    for (const json& s : r.Json()["data"].value(date, json::array())) out.push_back(s["start"]);
    return out;
  }
  size_t FreeBusyCalls() const { return google_.RequestsTo("/calendar/v3/freeBusy").size(); }
  // The calendar plugin's busy_times keys for this fixture's server (none: the defaults).
  virtual std::string BusyTimesConfig() const { return ""; }
  void SetUp() override {
    const std::string keys = BusyTimesConfig();
    if (!keys.empty()) calendar_extra_ = "  busy_times:\n" + keys;
    CalendarTest::SetUp();
  }

  HttpResult Book(int64_t event_type, const std::string& start) {
    return Send("POST", "/v2/bookings",
                {{"start", start},
                 {"eventTypeId", event_type},
                 {"attendee", {{"name", "Ann"}, {"email", "ann@example.com"}, {"timeZone", "UTC"}}}},
                "");
  }
  json SlotsOn(int64_t event_type, const std::string& date) {
    HttpResult r = Get("/v2/slots?eventTypeId=" + std::to_string(event_type) + "&start=" + date + "&end=" + date, "");
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json()["data"].value(date, json::array());
  }
};

class BusyNotCached : public BookingsCalendarBusy {
  std::string BusyTimesConfig() const override { return "    cache_seconds: 0\n"; }
};
class BusyNeitherCachedNorKept : public BookingsCalendarBusy {
  std::string BusyTimesConfig() const override { return "    cache_seconds: 0\n    stale_seconds: 0\n"; }
};
class BusyWithShortTimeout : public BookingsCalendarBusy {
  std::string BusyTimesConfig() const override {
    return "    timeout_ms: 400\n    cache_seconds: 0\n    stale_seconds: 0\n";
  }
};

TEST_F(BookingsCalendarBusy, GoogleAndIcsBusyTimesAreNotOffered) {
  const std::string date = NextTuesday();
  const int64_t id = CreateEventType();
  ASSERT_EQ(SlotsOn(id, date).size(), 8u);  // 09:00 .. 16:00

  ConnectBusyCalendars(date);
  json slots = SlotsOn(id, date);
  std::vector<std::string> starts;
  for (const json& s : slots) starts.push_back(s["start"]);
  EXPECT_EQ(starts, (std::vector<std::string>{date + "T09:00:00.000Z", date + "T12:00:00.000Z",
                                              date + "T13:00:00.000Z", date + "T15:00:00.000Z",
                                              date + "T16:00:00.000Z"}));
  HttpResult busy = Book(id, date + "T10:00:00Z");
  EXPECT_EQ(busy.status, 409) << busy.body;
  EXPECT_EQ(Book(id, date + "T14:00:00Z").status, 409);
  EXPECT_EQ(Book(id, date + "T12:00:00Z").status, 201);
}

TEST_F(BusyNotCached, AnUnreadableCalendarIsNamedAndTheOthersStillCount) {
  const std::string date = NextTuesday();
  const int64_t id = CreateEventType();
  ConnectBusyCalendars(date);
  const std::vector<std::string> busy_day = {date + "T09:00:00.000Z", date + "T12:00:00.000Z",
                                             date + "T13:00:00.000Z", date + "T15:00:00.000Z",
                                             date + "T16:00:00.000Z"};
  HttpResult good = SlotsAnswer(id, date);
  ASSERT_EQ(good.status, 200) << good.body;
  EXPECT_EQ(Starts(good, date), busy_day);
  EXPECT_FALSE(good.Json().contains("unavailableCalendars")) << good.body;

  // The feed stops being a calendar: its last answer stands in for it, and the page says so.
  google_.SetIcs("club.ics", "<html>gone</html>", "text/html");
  HttpResult stale = SlotsAnswer(id, date);
  ASSERT_EQ(stale.status, 200) << stale.body;
  EXPECT_EQ(Starts(stale, date), busy_day);
  EXPECT_EQ(stale.Json()["unavailableCalendars"], (json::array({{{"source", "ics_feed"}, {"code", "bad_gateway"}}})));
  EXPECT_EQ(Book(id, date + "T14:00:00Z").status, 409);

  // Google failing three times over (each call is tried three times) is named too; its busy
  // times of the last answer still keep 10:00 and 11:00 away.
  google_.FailNextApiCalls(503, 3);
  HttpResult both = SlotsAnswer(id, date);
  ASSERT_EQ(both.status, 200) << both.body;
  EXPECT_EQ(Starts(both, date), busy_day);
  EXPECT_EQ(both.Json()["unavailableCalendars"],
            (json::array({{{"source", "google_calendar"}, {"code", "bad_gateway"}},
                          {{"source", "ics_feed"}, {"code", "bad_gateway"}}})));
  // One failure of Google is tried again within the same request, unseen by the page.
  google_.FailNextApiCalls(503, 1);
  EXPECT_EQ(SlotsAnswer(id, date).Json()["unavailableCalendars"],
            (json::array({{{"source", "ics_feed"}, {"code", "bad_gateway"}}})));

  HttpResult metrics = http_.Get(Api("/metrics"));
  EXPECT_NE(metrics.body.find("calendar_busy_source_failures_total{code=\"bad_gateway\",source=\"ics_feed\"} 4"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("calendar_busy_source_failures_total{code=\"bad_gateway\",source=\"google_calendar\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("calendar_google_requests_total{endpoint=\"free_busy\",outcome=\"server_error\"} 4"),
            std::string::npos);
}

TEST_F(BusyNeitherCachedNorKept, WithoutAKeptAnswerAnUnreadableFeedsTimeIsOffered) {
  const std::string date = NextTuesday();
  const int64_t id = CreateEventType();
  ConnectBusyCalendars(date);
  // Without a kept answer to stand in, the unreadable feed's time is offered; Google's still not.
  google_.SetIcs("club.ics", "not a calendar", "text/calendar");
  HttpResult r = SlotsAnswer(id, date);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Starts(r, date), (std::vector<std::string>{date + "T09:00:00.000Z", date + "T12:00:00.000Z",
                                                        date + "T13:00:00.000Z", date + "T14:00:00.000Z",
                                                        date + "T15:00:00.000Z", date + "T16:00:00.000Z"}));
  EXPECT_EQ(Book(id, date + "T14:00:00Z").status, 201);
  EXPECT_EQ(Book(id, date + "T10:00:00Z").status, 409);
}

TEST_F(BusyWithShortTimeout, ASlowCalendarIsGivenUpOnInTime) {
  const std::string date = NextTuesday();
  const int64_t id = CreateEventType();
  ConnectBusyCalendars(date);
  google_.SetDelay(std::chrono::seconds(3));
  HttpResult r = SlotsAnswer(id, date);  // the client gives up after 10 s
  google_.SetDelay(std::chrono::milliseconds(0));
  ASSERT_EQ(r.status, 200) << r.body << r.error;
  EXPECT_EQ(Starts(r, date).size(), 8u);
  EXPECT_EQ(r.Json()["unavailableCalendars"],
            (json::array({{{"source", "google_calendar"}, {"code", "gateway_timeout"}},
                          {{"source", "ics_feed"}, {"code", "gateway_timeout"}}})));
}

TEST_F(BusyNotCached, ACalendarNeedingReconnectionDoesNotCloseTheBookingPage) {
  const std::string date = NextTuesday();
  const int64_t id = CreateEventType();
  ConnectBusyCalendars(date);
  google_.RevokeRefreshTokens();
  google_.ExpireAccessTokens();
  HttpResult r = SlotsAnswer(id, date);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["unavailableCalendars"],
            (json::array({{{"source", "google_calendar"}, {"code", "reconnect_required"}}})));
  // The host is told where it belongs: their own busy-times call answers 200 naming the source.
  HttpResult own = Get("/v2/calendars/busy-times?dateFrom=" + date + "&dateTo=" + date, key_);
  ASSERT_EQ(own.status, 200) << own.body;
  EXPECT_EQ(own.Json()["failedSources"][0]["code"], "reconnect_required");
  EXPECT_EQ(Get("/v2/calendars/google/check", key_).Json()["data"]["reconnectRequired"], true);
}

TEST_F(BookingsCalendarBusy, SlotsAskTheCalendarsOnceUntilTheHostChangesThem) {
  const std::string date = NextTuesday();
  const int64_t id = CreateEventType();
  ASSERT_EQ(SlotsAnswer(id, date).status, 200);
  ConnectBusyCalendars(date);
  const size_t before = FreeBusyCalls();
  ASSERT_EQ(Starts(SlotsAnswer(id, date), date).size(), 5u);
  ASSERT_EQ(FreeBusyCalls(), before + 1);
  // The same page again, and a narrower one, come from the cache.
  ASSERT_EQ(Starts(SlotsAnswer(id, date), date).size(), 5u);
  EXPECT_EQ(Get("/v2/slots?eventTypeId=" + std::to_string(id) + "&start=" + date + "T12:00:00Z&end=" + date +
                    "T16:00:00Z",
                "")
                .status,
            200);
  EXPECT_EQ(FreeBusyCalls(), before + 1);
  // Saving a feed forgets them: the next page asks again and sees the feed's new event.
  google_.SetIcs("gym.ics", IcsEvent(date, "090000", "093000"));
  ASSERT_EQ(Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("gym.ics")}}}, key_).status, 201);
  EXPECT_EQ(Starts(SlotsAnswer(id, date), date).size(), 4u);
  EXPECT_EQ(FreeBusyCalls(), before + 2);
  // Disconnecting Google too: its busy times are gone from the next page.
  ASSERT_EQ(Send("POST", "/v2/calendars/google/disconnect", json::object(), key_).status, 200);
  EXPECT_EQ(Starts(SlotsAnswer(id, date), date).size(), 6u);
  EXPECT_EQ(FreeBusyCalls(), before + 2);
}

TEST_F(BookingsCalendarBusy, RecurringIcsEventBlocksEachOccurrenceButItsExdate) {
  int64_t first = time::DaysFromCivil(time::Zone::Utc().DateAt(time::Now())) + 7;
  while (time::IsoWeekday(time::CivilFromDays(first)) != 2) ++first;  // a Tuesday
  auto date = [&](int week) { return time::FormatDate(time::CivilFromDays(first + 7 * week)); };
  auto compact = [](const std::string& d) { return d.substr(0, 4) + d.substr(5, 2) + d.substr(8, 2); };
  HttpResult et = Send("POST", "/v2/event-types", {{"title", "Call"}, {"slug", "call"}, {"lengthInMinutes", 60}}, key_);
  ASSERT_EQ(et.status, 201) << et.body;
  const int64_t id = et.Json()["data"]["id"];

  // Every Tuesday at 14:00 UTC from the first week, except the second week.
  google_.SetIcs("weekly.ics", "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:weekly\r\n"
                               "DTSTART:" + compact(date(0)) + "T140000Z\r\nDTEND:" + compact(date(0)) +
                               "T143000Z\r\nRRULE:FREQ=WEEKLY;BYDAY=TU\r\nEXDATE:" + compact(date(1)) +
                               "T140000Z\r\nSUMMARY:Standup\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n");
  ASSERT_EQ(Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {google_.IcsUrl("weekly.ics")}}}, key_).status, 201);

  for (int week = 0; week < 4; ++week) {
    const std::string d = date(week);
    std::vector<std::string> starts;
    for (const json& s : SlotsOn(id, d)) starts.push_back(s["start"]);
    const bool offered = std::find(starts.begin(), starts.end(), d + "T14:00:00.000Z") != starts.end();
    EXPECT_EQ(offered, week == 1) << d;
    EXPECT_EQ(starts.size(), week == 1 ? 8u : 7u) << d;  // 09:00 .. 16:00, less the 14:00 one
  }
  EXPECT_EQ(Book(id, date(2) + "T14:00:00Z").status, 409);
  EXPECT_EQ(Book(id, date(1) + "T14:00:00Z").status, 201);
}

// 16 anonymous visitors ask for the slots of a host whose ICS feed hangs, each for other weeks:
// another user's own requests are answered as usual all the while (p99 under 1 s), and the
// visitors get their slots in time, the feed named as not answering.
TEST_F(BookingsCalendarBusy, AHangingFeedNeverHoldsOtherUsersRequests) {
  int64_t first = time::DaysFromCivil(time::Zone::Utc().DateAt(time::Now())) + 7;
  while (time::IsoWeekday(time::CivilFromDays(first)) != 2) ++first;  // a Tuesday
  const int64_t id = CreateEventType();
  HangingFeedHost feed(IcsEvent(time::FormatDate(time::CivilFromDays(first)), "140000", "143000"));
  ASSERT_EQ(Send("POST", "/v2/calendars/ics-feed/save", {{"urls", {feed.Url()}}}, key_).status, 201);
  feed.Hang();
  const std::string bob_key = server_->CreateApiKey(server_->CreateUser("bob@example.com", "Bob"));

  constexpr int kVisitors = 16;
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0}, named{0}, bad{0};
  std::vector<std::thread> visitors;
  for (int v = 0; v < kVisitors; ++v) {
    visitors.emplace_back([&, v] {
      HttpClient client;
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      for (int k = 0; k < 200 && !stop && std::chrono::steady_clock::now() < give_up; ++k) {
        const std::string day = time::FormatDate(time::CivilFromDays(first + 7 * (v + kVisitors * (k % 5))));
        HttpResult r = client.Request(
            "GET", Api("/v2/slots?eventTypeId=" + std::to_string(id) + "&start=" + day + "&end=" + day), "", {}, 20000);
        if (r.status == 200) {
          ++answered;
          const json failed = r.Json().value("unavailableCalendars", json::array());
          if (failed == json::array({{{"source", "ics_feed"}, {"code", "gateway_timeout"}}})) ++named;
        } else if (r.status != 429) {  // a rate limit may refuse some: never anything else
          ++bad;
        }
      }
    });
  }
  // The visitors are at it once the feed holds connections.
  EXPECT_TRUE(Eventually("a visitor at the feed", {std::chrono::seconds(10), std::chrono::milliseconds(5)},
                         [&] { return feed.held() > 0; }));

  std::vector<double> ms;
  const auto measuring = std::chrono::steady_clock::now();
  for (int i = 0; i < 80 && std::chrono::steady_clock::now() - measuring < std::chrono::seconds(20); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    HttpResult me = http_.Request("GET", Api("/v2/me"), "", Auth(bob_key), 20000);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    EXPECT_EQ(me.status, 200) << me.body << me.error;
  }
  stop = true;
  for (std::thread& t : visitors) t.join();
  std::sort(ms.begin(), ms.end());
  const double p50 = ms[ms.size() / 2], p99 = ms[(ms.size() * 99 + 99) / 100 - 1];
  EXPECT_LT(p99, 1000.0) << "GET /v2/me p50 " << p50 << " ms, p99 " << p99 << " ms";
  EXPECT_GE(answered.load(), kVisitors) << "slots answers";
  EXPECT_GT(named.load(), 0) << "no slots answer named the hanging feed";
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace rendezvous::testing
