// `rendezvous --version` of the real binary: the project's version (CMakeLists.txt), the build
// signature and plugin ABI the loader holds plugins to, exit 0, and no configuration read.
#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "rendezvous/plugin.hpp"
#include "temp_dir.hpp"
#include "test_server.hpp"

namespace rendezvous::testing {
namespace {

struct BinaryRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

BinaryRun RunBinary(const std::vector<std::string>& args) {
  rdv_test::TempDir dir("rdv-version");
  std::vector<std::string> argv{BinDir() + "/rendezvous"};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = Spawn(argv, dir.path() + "/out", dir.path() + "/err");
  BinaryRun r;
  r.exit_code = WaitFor(pid, std::chrono::seconds(30));
  r.out = ReadFile(dir.path() + "/out");
  r.err = ReadFile(dir.path() + "/err");
  return r;
}

// The VERSION of project(rendezvous VERSION x.y.z ...) in the top CMakeLists.txt.
std::string ProjectVersion() {
  const std::string cmake = ReadFile(SourceDir() + "/CMakeLists.txt");
  std::smatch m;
  static const std::regex kProject(R"(project\(rendezvous VERSION ([0-9]+\.[0-9]+\.[0-9]+))");
  if (!std::regex_search(cmake, m, kProject)) return "";
  return m[1].str();
}

TEST(OperationsVersion, PrintsVersionSignatureAndAbi) {
  const std::string expected = ProjectVersion();
  ASSERT_FALSE(expected.empty()) << "no project version in CMakeLists.txt";
  const BinaryRun r = RunBinary({"--version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.back(), '\n');
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line: " << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j.size(), 3u) << r.out;
  EXPECT_EQ(j.value("version", ""), expected);
  EXPECT_EQ(j.value("buildSignature", ""), RENDEZVOUS_BUILD_SIGNATURE);
  EXPECT_EQ(j.value("pluginAbi", 0u), RENDEZVOUS_PLUGIN_ABI_VERSION);
}

TEST(OperationsVersion, ReadsNoConfiguration) {
  // A configuration that does not exist is not an error: --version opens no file.
  const BinaryRun r = RunBinary({"--config", "/nonexistent/rendezvous.yaml", "--version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j.value("version", ""), ProjectVersion());
  // The same missing file stops a command that reads it.
  const BinaryRun migrate = RunBinary({"--config", "/nonexistent/rendezvous.yaml", "migrate"});
  EXPECT_NE(migrate.exit_code, 0);
  EXPECT_NE(migrate.err.find("rendezvous.yaml"), std::string::npos) << migrate.err;
}

TEST(OperationsVersion, UsageNamesIt) {
  const BinaryRun r = RunBinary({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("--version"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rendezvous::testing
