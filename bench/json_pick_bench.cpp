// Cost of reading an outbox event's routing members, as the webhooks plugin reads them
// (DeliveryQueue's RouteOf: triggerEvent, payload.organizer.id, payload.hosts[0].id,
// payload.eventTypeId), on BOOKING_CREATED events made by the bookings plugin's EventPayload and
// EventEnvelope and written as the outbox writes them, in three sizes. Readers, alternating in the
// same run, each over the same event N times a round, one thread:
//   pick         rendezvous::json::PickScalars: simdjson On-Demand walking the whole text (every
//                value read, so the text is checked as a parser that builds the tree checks it),
//                the copy into its padded buffer included
//   fields       simdjson On-Demand reading the four members alone (find_field_unordered on a
//                reused parser, the padded copy included): the floor, not a replacement (the rest
//                of the text goes unchecked and a duplicate member reads as its first occurrence)
//   pad          the copy into a padded buffer alone (what simdjson's padding costs a read)
//   tree         nlohmann::json::parse of the whole text (what readers did before json_pick), the
//                reference
//   json_pick_bench [ROUNDS] [N]   (default 9 rounds of 20000 reads a reader)
// A round runs every reader once, in an order that rotates each round. Prints one JSON line a size:
// the event's bytes, each reader's median thread-CPU ns a read over the rounds, and the median over
// rounds of the ratios pick / tree and fields / pick of the same round. (The hand-written reader
// json_pick had before simdjson was measured beside these at the commit that replaced it:
// bench/RESULTS.md.)
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "booking_events.hpp"
#include "rendezvous/json_pick.hpp"

namespace {

using nlohmann::json;
using rendezvous::json::JsonPath;
namespace bk = rendezvous::bookings;
namespace od = simdjson::ondemand;

const std::vector<JsonPath> kPaths = {{"triggerEvent"},
                                      {"payload", "organizer", "id"},
                                      {"payload", "hosts", "0", "id"},
                                      {"payload", "eventTypeId"}};

// A BOOKING_CREATED event's text as the outbox stores it: `attendees` attendees (the first books,
// the others are guests), `answers` custom booking-field answers, a description of
// `description_bytes` bytes with non-ASCII letters and characters JSON escapes.
std::string Event(size_t attendees, size_t answers, size_t description_bytes) {
  rendezvous::User host;
  host.id = 4711;
  host.name = "Olga Owner";
  host.email = "owner@example.com";
  host.time_zone = "Europe/Berlin";
  host.username = "olga";
  bk::EventType et;
  et.id = 17;
  et.owner_id = host.id;
  et.fields.title = "Intro call";
  et.fields.slug = "intro-call";
  et.fields.length_minutes = 30;
  bk::Booking b;
  b.id = 123456;
  b.uid = "b9dcqGz3yQ4Lr1Xwq0pT7a";
  b.event_type_id = et.id;
  b.event_type_slug = et.fields.slug;
  b.host_id = host.id;
  b.title = "Intro call between Olga Owner and Ann Attendée";
  const std::string piece = "Let us talk about the roadmap, \"Q3\" and the café's menu.\n";
  while (b.description.size() < description_bytes) b.description += piece;
  b.description.resize(std::min(b.description.size(), description_bytes));
  while (!b.description.empty() && (static_cast<unsigned char>(b.description.back()) & 0xC0) == 0x80) {
    b.description.pop_back();
  }
  if (!b.description.empty() && static_cast<unsigned char>(b.description.back()) >= 0xC0)
    b.description.pop_back();
  b.start = 1893837600000;  // 2030-01-05T10:00Z
  b.end = b.start + 30 * 60 * 1000;
  b.duration = 30;
  b.created_at = b.start - 86400000;
  b.location = "integrations:google:meet";
  b.metadata = {{"source", "website"}, {"campaign", "spring"}};
  for (size_t i = 0; i < attendees; ++i) {
    b.attendees.push_back({i == 0 ? "Ann Attendée" : "Guest " + std::to_string(i),
                           "guest" + std::to_string(i) + "@example.org", i % 2 ? "Europe/Paris" : "UTC",
                           false});
  }
  for (size_t i = 0; i < answers; ++i) {
    b.responses["question-" + std::to_string(i)] = {
        {"label", "Question number " + std::to_string(i) + "?"},
        {"value", i % 3 == 0 ? json(i % 2 == 0) : json("Answer «" + std::to_string(i) + "»")}};
  }
  const json envelope = bk::EventEnvelope("BOOKING_CREATED", b.created_at, bk::EventPayload(b, host, et));
  return envelope.dump(-1, ' ', false, json::error_handler_t::replace);
}

double ThreadCpuNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A padded buffer reused across reads, as PickScalars keeps one a thread.
struct Padded {
  std::unique_ptr<char[]> buffer;
  size_t capacity = 0;
  std::string_view Copy(std::string_view text) {
    if (capacity < text.size()) {
      capacity = text.size();
      buffer = std::make_unique<char[]>(capacity + simdjson::SIMDJSON_PADDING);
    }
    std::memcpy(buffer.get(), text.data(), text.size());
    std::memset(buffer.get() + text.size(), 0, simdjson::SIMDJSON_PADDING);
    return {buffer.get(), text.size()};
  }
};

// The four members with On-Demand alone; the sum of what was read, so nothing is optimized away.
int64_t Fields(od::parser& parser, Padded& padded, std::string_view text) {
  const std::string_view p = padded.Copy(text);
  od::document doc;
  if (parser.iterate(p, p.size() + simdjson::SIMDJSON_PADDING).get(doc)) return -1;
  int64_t sum = 0;
  od::object root;
  if (doc.get_object().get(root)) return -1;
  std::string_view trigger;
  if (!root.find_field_unordered("triggerEvent").get_string().get(trigger))
    sum += static_cast<int64_t>(trigger.size());
  od::object payload;
  if (root.find_field_unordered("payload").get_object().get(payload)) return -1;
  int64_t n = 0;
  if (!payload.find_field_unordered("organizer").find_field_unordered("id").get_int64().get(n)) sum += n;
  od::array hosts;
  if (!payload.find_field_unordered("hosts").get_array().get(hosts)) {
    for (auto h : hosts) {
      if (!h.find_field_unordered("id").get_int64().get(n)) sum += n;
      break;
    }
  }
  if (!payload.find_field_unordered("eventTypeId").get_int64().get(n)) sum += n;
  return sum;
}

int64_t Sum(const std::optional<std::vector<json>>& v) {
  if (!v) return -1;
  int64_t sum = 0;
  for (const json& j : *v) {
    if (j.is_string()) sum += static_cast<int64_t>(j.get_ref<const std::string&>().size());
    if (j.is_number_integer()) sum += j.get<int64_t>();
  }
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 9;
  const long n = argc > 2 ? std::atol(argv[2]) : 20000;
  struct Size {
    const char* name;
    std::string text;
  };
  const std::vector<Size> sizes = {
      {"small", Event(1, 0, 40)}, {"medium", Event(4, 5, 400)}, {"large", Event(40, 30, 4000)}};
  od::parser parser;
  Padded padded;
  volatile int64_t sink = 0;
  for (const Size& size : sizes) {
    const std::string& text = size.text;
    // Every reader must read the same values (the floor reads them its own way).
    const int64_t expected = Sum(rendezvous::json::PickScalars(text, kPaths));
    if (expected <= 0 || Fields(parser, padded, text) != expected) {
      std::fprintf(stderr, "readers disagree on the %s event\n", size.name);
      return 1;
    }
    struct Reader {
      const char* name;
      std::function<int64_t()> read;
      std::vector<double> ns;
    };
    std::vector<Reader> readers = {
        {"pick", [&] { return Sum(rendezvous::json::PickScalars(text, kPaths)); }, {}},
        {"fields", [&] { return Fields(parser, padded, text); }, {}},
        {"pad", [&] { return static_cast<int64_t>(padded.Copy(text).size()); }, {}},
        {"tree", [&] { return static_cast<int64_t>(json::parse(text).size()); }, {}},
    };
    for (Reader& r : readers) {
      for (long i = 0; i < n / 10; ++i) sink = sink + r.read();  // warm-up
    }
    std::vector<double> pick_over_tree;
    std::vector<double> fields_over_pick;
    for (int round = 0; round < rounds; ++round) {
      for (size_t k = 0; k < readers.size(); ++k) {
        Reader& r = readers[(k + static_cast<size_t>(round)) % readers.size()];
        const double start = ThreadCpuNs();
        for (long i = 0; i < n; ++i) sink = sink + r.read();
        r.ns.push_back((ThreadCpuNs() - start) / static_cast<double>(n));
      }
      pick_over_tree.push_back(readers[0].ns.back() / readers[3].ns.back());
      fields_over_pick.push_back(readers[1].ns.back() / readers[0].ns.back());
    }
    std::printf(R"({"event":"%s","bytes":%zu,"rounds":%d,"reads_a_round":%ld)", size.name, text.size(),
                rounds, n);
    for (const Reader& r : readers) std::printf(",\"%s_ns\":%.1f", r.name, Median(r.ns));
    std::printf(",\"pick_over_tree\":%.3f,\"fields_over_pick\":%.3f}\n", Median(pick_over_tree),
                Median(fields_over_pick));
  }
  return sink == 42 ? 2 : 0;
}
