// The metrics reference of docs/operations.md against the real server with every plugin and both
// shipped Lua scripts, after traffic through every area and a script reload: every metric family
// on /metrics is in the reference with every label it carries, and every family in the reference
// is on /metrics.
#include <signal.h>

#include <map>
#include <regex>
#include <set>

#include "child_process.hpp"
#include "operations_fixture.hpp"

namespace rendezvous::testing {
namespace {

using OperationsReference = OperationsTest;

// Family name -> the label cell of its row, from the tables of "Metrics reference".
std::map<std::string, std::string> ReferenceRows() {
  const std::string guide = ReadFile(SourceDir() + "/docs/operations.md");
  const size_t begin = guide.find("## Metrics reference");
  const size_t end = guide.find("## Configuration reference");
  EXPECT_NE(begin, std::string::npos);
  EXPECT_NE(end, std::string::npos);
  const std::string section = guide.substr(begin, end - begin);
  std::map<std::string, std::string> rows;
  static const std::regex kRow(R"(\n\| `([a-z_]+)` \| [a-z ,-]+ \| ([^|]*) \|)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), kRow); it != std::sregex_iterator(); ++it)
    rows[(*it)[1].str()] = (*it)[2].str();
  return rows;
}

// Family name -> label names of its samples (`le` and histogram suffixes folded in).
std::map<std::string, std::set<std::string>> Exported(const std::string& text) {
  std::map<std::string, std::set<std::string>> families;
  std::istringstream lines(text);
  std::string line;
  static const std::regex kType(R"(^# TYPE ([a-z_:]+) )");
  static const std::regex kLabel(R"(([a-z_]+)=")");
  std::smatch m;
  std::string current;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, kType)) {
      current = m[1].str();
      families[current];
      continue;
    }
    if (line.empty() || line[0] == '#' || current.empty()) continue;
    const std::string labels = line.substr(0, line.rfind(' '));
    for (auto it = std::sregex_iterator(labels.begin(), labels.end(), kLabel); it != std::sregex_iterator(); ++it)
      if ((*it)[1].str() != "le") families[current].insert((*it)[1].str());
  }
  return families;
}

TEST_F(OperationsReference, TheGuideNamesEveryExportedMetricWithItsLabelsAndNothingElse) {
  MakeTraffic();
  if (HasFatalFailure()) return;
  server_->Signal(SIGHUP);  // lua_reloads_total
  ASSERT_TRUE(server_->AwaitLog("\"msg\":\"reloading\""));
  ASSERT_TRUE(AwaitSample("lua_reloads_total{result=\"ok\",script=\"webhooks.render\"}", 1));

  HttpResult scrape = http_.Get(Api("/metrics"));
  ASSERT_EQ(scrape.status, 200);
  const auto exported = Exported(scrape.body);
  const auto reference = ReferenceRows();
  ASSERT_GT(exported.size(), 40u);
  for (const auto& [family, labels] : exported) {
    auto row = reference.find(family);
    if (row == reference.end()) {
      ADD_FAILURE() << family << " is exported but not in docs/operations.md's metrics reference";
      continue;
    }
    for (const std::string& label : labels)
      EXPECT_NE(row->second.find("`" + label + "`"), std::string::npos) << family << " has label " << label;
  }
  for (const auto& [family, cell] : reference)
    EXPECT_TRUE(exported.count(family)) << family << " is in the reference but not exported";
}

}  // namespace
}  // namespace rendezvous::testing
