// The Grafana dashboards and the alerting rules in dashboards/, checked as files (the conventions
// every panel follows, provisioning) and against a real Prometheus scraping the real server:
// every metric they name is exported from start-up, and after traffic through every area every
// panel query and every alert expression is valid and every panel query answers data.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "child_process.hpp"
#include "eventually.hpp"
#include "operations_fixture.hpp"
#include "prometheus_server.hpp"

namespace rendezvous::testing {
namespace {

namespace fs = std::filesystem;

std::string DashboardsDir() { return SourceDir() + "/dashboards"; }

struct Dashboard {
  std::string file;  // name within dashboards/
  json doc;
};

std::vector<Dashboard> LoadDashboards() {
  std::vector<Dashboard> out;
  for (const auto& entry : fs::directory_iterator(DashboardsDir())) {
    if (entry.path().extension() != ".json") continue;
    json doc = json::parse(ReadFile(entry.path()), nullptr, false);
    EXPECT_TRUE(doc.is_object()) << entry.path() << " is not JSON";
    out.push_back({entry.path().filename().string(), doc});
  }
  std::sort(out.begin(), out.end(), [](const Dashboard& a, const Dashboard& b) { return a.file < b.file; });
  return out;
}

// The panels that show data (rows only group them).
std::vector<json> DataPanels(const json& dashboard) {
  std::vector<json> out;
  for (const json& p : dashboard.value("panels", json::array())) {
    if (p.value("type", "") == "row") {
      for (const json& inner : p.value("panels", json::array())) out.push_back(inner);
    } else {
      out.push_back(p);
    }
  }
  return out;
}

struct PanelQuery {
  std::string where;  // "file: panel title"
  std::string expr;
};

std::vector<PanelQuery> PanelQueries() {
  std::vector<PanelQuery> out;
  for (const Dashboard& d : LoadDashboards()) {
    for (const json& p : DataPanels(d.doc)) {
      for (const json& t : p.value("targets", json::array()))
        out.push_back({d.file + ": " + p.value("title", ""), t.value("expr", "")});
    }
  }
  return out;
}

struct AlertRule {
  std::string name;
  std::string expr;
};

std::vector<AlertRule> AlertRules() {
  std::vector<AlertRule> out;
  YAML::Node root = YAML::LoadFile(DashboardsDir() + "/alerts.yaml");
  for (const YAML::Node& group : root["groups"]) {
    for (const YAML::Node& rule : group["rules"])
      out.push_back({rule["alert"].as<std::string>(), rule["expr"].as<std::string>()});
  }
  return out;
}

// The metric names a PromQL expression selects: identifiers outside strings, label matchers,
// `by (...)`/`without (...)` lists and range brackets that are neither functions, aggregations,
// keywords nor numbers.
std::set<std::string> MetricNames(const std::string& expr) {
  static const std::set<std::string> kKeywords = {
      "bool",   "and",    "or",     "unless", "offset", "inf",     "nan",   "sum",          "min",    "max",
      "avg",    "group",  "stddev", "stdvar", "count",  "bottomk", "topk",  "count_values", "quantile"};
  std::set<std::string> out;
  size_t i = 0;
  bool skip_list = false;  // the next parenthesis is a label list
  while (i < expr.size()) {
    const char c = expr[i];
    if (c == '"' || c == '\'') {
      const size_t end = expr.find(c, i + 1);
      i = end == std::string::npos ? expr.size() : end + 1;
    } else if (c == '{' || c == '[' || (c == '(' && skip_list)) {
      const char close = c == '{' ? '}' : c == '[' ? ']' : ')';
      for (++i; i < expr.size() && expr[i] != close; ++i) {
        if (expr[i] == '"') i = expr.find('"', i + 1);
      }
      ++i;
      skip_list = false;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':') {
      size_t j = i;
      auto word_char = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == ':'; };
      while (j < expr.size() && word_char(expr[j])) ++j;
      const std::string word = expr.substr(i, j - i);
      size_t k = j;
      while (k < expr.size() && expr[k] == ' ') ++k;
      std::string lower = word;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (lower == "by" || lower == "without" || lower == "on" || lower == "ignoring" || lower == "group_left" ||
          lower == "group_right") {
        skip_list = true;
      } else if (!kKeywords.count(lower) && (k >= expr.size() || expr[k] != '(')) {
        out.insert(word);
      }
      i = j;
    } else if (c == '$') {  // a Grafana variable
      ++i;
      while (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '_')) ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '.')) ++i;
    } else {
      ++i;
    }
  }
  return out;
}

// A panel query as Grafana sends it for one job and instance, with $__rate_interval at `window`.
std::string Substitute(std::string expr, const std::string& job, const std::string& instance,
                       const std::string& window) {
  auto replace = [&expr](const std::string& from, const std::string& to) {
    for (size_t at = expr.find(from); at != std::string::npos; at = expr.find(from, at + to.size()))
      expr.replace(at, from.size(), to);
  };
  replace("$__rate_interval", window);
  replace("$job", job);
  replace("$instance", instance);
  return expr;
}

// ------------------------------------------------------------------------------------------------
// The files.

TEST(DashboardFiles, EachDashboardHasItsTemplateVariablesAndAUniqueUid) {
  const std::vector<Dashboard> dashboards = LoadDashboards();
  ASSERT_GE(dashboards.size(), 5u);
  std::set<std::string> uids;
  for (const Dashboard& d : dashboards) {
    EXPECT_TRUE(uids.insert(d.doc.value("uid", "")).second) << d.file << ": uid repeated or missing";
    EXPECT_FALSE(d.doc.value("title", "").empty()) << d.file;
    std::map<std::string, json> vars;
    for (const json& v : d.doc["templating"]["list"]) vars[v.value("name", "")] = v;
    ASSERT_TRUE(vars.count("datasource")) << d.file;
    EXPECT_EQ(vars["datasource"].value("type", ""), "datasource") << d.file;
    EXPECT_EQ(vars["datasource"].value("query", ""), "prometheus") << d.file;
    for (const char* name : {"job", "instance"}) {
      ASSERT_TRUE(vars.count(name)) << d.file << " has no $" << name;
      EXPECT_EQ(vars[name].value("type", ""), "query") << d.file << " $" << name;
      EXPECT_EQ(vars[name]["datasource"].value("uid", ""), "${datasource}") << d.file << " $" << name;
      EXPECT_NE(vars[name].dump().find("label_values("), std::string::npos) << d.file << " $" << name;
    }
  }
}

TEST(DashboardFiles, EveryPanelHasAUnitADescriptionAndQueriesOnTheChosenJobAndInstance) {
  size_t panels = 0;
  for (const Dashboard& d : LoadDashboards()) {
    std::set<int> ids;
    for (const json& p : DataPanels(d.doc)) {
      ++panels;
      const std::string where = d.file + ": " + p.value("title", "(untitled)");
      EXPECT_TRUE(ids.insert(p.value("id", 0)).second) << where << ": panel id repeated";
      EXPECT_FALSE(p.value("title", "").empty()) << where;
      EXPECT_FALSE(p.value("description", "").empty()) << where << ": no description";
      EXPECT_FALSE(p["fieldConfig"]["defaults"].value("unit", "").empty()) << where << ": no unit";
      EXPECT_EQ(p["datasource"].value("uid", ""), "${datasource}") << where;
      ASSERT_FALSE(p.value("targets", json::array()).empty()) << where << ": no query";
      for (const json& t : p["targets"]) {
        const std::string expr = t.value("expr", "");
        EXPECT_EQ(t["datasource"].value("uid", ""), "${datasource}") << where;
        EXPECT_NE(expr.find("job=~\"$job\""), std::string::npos) << where << ": " << expr;
        EXPECT_NE(expr.find("instance=~\"$instance\""), std::string::npos) << where << ": " << expr;
      }
    }
  }
  EXPECT_GE(panels, 40u);
}

TEST(DashboardFiles, RatesAndIncreasesUseTheRateInterval) {
  const std::regex range(R"(\[([^\]]*)\])");
  size_t ranges = 0;
  for (const PanelQuery& q : PanelQueries()) {
    for (const char* fn : {"irate(", "delta(", "idelta(", "_over_time("})
      EXPECT_EQ(q.expr.find(fn), std::string::npos) << q.where << ": " << fn << " in " << q.expr;
    for (auto it = std::sregex_iterator(q.expr.begin(), q.expr.end(), range); it != std::sregex_iterator(); ++it) {
      ++ranges;
      EXPECT_EQ((*it)[1].str(), "$__rate_interval") << q.where << ": " << q.expr;
    }
    const bool windowed = q.expr.find("rate(") != std::string::npos || q.expr.find("increase(") != std::string::npos;
    EXPECT_EQ(windowed, q.expr.find('[') != std::string::npos) << q.where << ": " << q.expr;
  }
  EXPECT_GT(ranges, 0u);
}

TEST(DashboardFiles, ProvisioningLoadsEveryDashboardFromTheirFolderWithTheDataSourceTheyStartWith) {
  YAML::Node sources = YAML::LoadFile(DashboardsDir() + "/provisioning/datasources/rendezvous-prometheus.yaml");
  ASSERT_EQ(sources["apiVersion"].as<int>(), 1);
  ASSERT_EQ(sources["datasources"].size(), 1u);
  const YAML::Node source = sources["datasources"][0];
  EXPECT_EQ(source["type"].as<std::string>(), "prometheus");
  EXPECT_FALSE(source["url"].as<std::string>().empty());
  const std::string uid = source["uid"].as<std::string>();

  const std::string provider_file = DashboardsDir() + "/provisioning/dashboards/rendezvous.yaml";
  YAML::Node providers = YAML::LoadFile(provider_file);
  ASSERT_EQ(providers["apiVersion"].as<int>(), 1);
  ASSERT_EQ(providers["providers"].size(), 1u);
  const YAML::Node provider = providers["providers"][0];
  EXPECT_EQ(provider["type"].as<std::string>(), "file");
  EXPECT_EQ(provider["options"]["path"].as<std::string>().front(), '/');
  EXPECT_FALSE(provider["options"]["foldersFromFilesStructure"].as<bool>());

  // Grafana loads every *.json of the provider's folder, which is this one: each must be a
  // dashboard, named where the provider and the README tell operators what they get.
  const std::string provider_text = ReadFile(provider_file);
  const std::string readme = ReadFile(SourceDir() + "/README.md");
  for (const Dashboard& d : LoadDashboards()) {
    EXPECT_TRUE(d.doc.contains("panels") && d.doc.contains("uid") && d.doc.contains("schemaVersion")) << d.file;
    EXPECT_NE(provider_text.find(d.file), std::string::npos) << d.file << " is not named by " << provider_file;
    EXPECT_NE(readme.find("dashboards/" + d.file), std::string::npos) << d.file << " is not in the README";
    for (const json& v : d.doc["templating"]["list"]) {
      if (v.value("name", "") == "datasource") {
        EXPECT_EQ(v["current"].value("value", ""), uid) << d.file;
      }
    }
  }
}

TEST(DashboardFiles, MetricNamesAreFoundInQueries) {
  EXPECT_EQ(MetricNames("max by (job, instance) (webhooks_oldest_due_age_seconds) > 300"),
            (std::set<std::string>{"webhooks_oldest_due_age_seconds"}));
  EXPECT_EQ(MetricNames("histogram_quantile(0.99, sum by (le) (rate(a_bucket{job=~\"$job\",x=\"y{z}\"}"
                        "[$__rate_interval]))) or sum(b_total[5m]) * 0 / time() - c{d=\"e\"} or vector(0)"),
            (std::set<std::string>{"a_bucket", "b_total", "c"}));
}

// ------------------------------------------------------------------------------------------------
// Against a real Prometheus.

class DashboardsOnPrometheus : public OperationsTest {
 protected:
  void StartPrometheus() {
    PrometheusOptions o;
    o.targets = {"127.0.0.1:" + std::to_string(server_->api_port())};
    o.rule_files = {DashboardsDir() + "/alerts.yaml"};
    prometheus_ = std::make_unique<PrometheusServer>(o);
    std::string why;
    ASSERT_TRUE(prometheus_->Start(&why)) << why;
  }

  std::string Job() const { return "rendezvous"; }
  std::string Instance() const { return "127.0.0.1:" + std::to_string(server_->api_port()); }
  std::string Selector() const { return "job=\"" + Job() + "\",instance=\"" + Instance() + "\""; }

  std::unique_ptr<PrometheusServer> prometheus_;
};

TEST_F(DashboardsOnPrometheus, EveryPanelAndAlertQueryIsValidAndEveryPanelAnswersData) {
  const std::vector<PanelQuery> panels = PanelQueries();
  const std::vector<AlertRule> alerts = AlertRules();
  ASSERT_FALSE(panels.empty());
  ASSERT_EQ(alerts.size(), 9u);
  StartPrometheus();

  // Start-up, before any request but Prometheus's own scrapes: every metric a panel or an alert
  // names is there (three scrapes: the first scrape's request shows from the second on).
  const std::string up = "up{" + Selector() + "}";
  ASSERT_TRUE(prometheus_->AwaitResult("count_over_time(" + up + "[1m]) >= 3 and " + up + " == 1"))
      << prometheus_->Log();
  std::set<std::string> names;
  for (const PanelQuery& q : panels) {
    for (const std::string& n : MetricNames(q.expr)) names.insert(n);
  }
  for (const AlertRule& a : alerts) {
    for (const std::string& n : MetricNames(a.expr)) names.insert(n);
  }
  EXPECT_GE(names.size(), 40u);
  for (const std::string& name : names) {
    EXPECT_FALSE(prometheus_->Result("{__name__=\"" + name + "\"," + Selector() + "}").empty())
        << name << " is not exported at start-up";
  }

  MakeTraffic();
  ASSERT_FALSE(HasFatalFailure());
  // Two scrapes after the traffic: every series it created has two samples, enough for a rate.
  const std::string scrapes = "count_over_time(up{" + Selector() + "}[1h])";
  const json counted = prometheus_->Result(scrapes);
  ASSERT_EQ(counted.size(), 1u) << counted.dump();
  const std::string before = counted[0]["value"][1].get<std::string>();
  ASSERT_TRUE(prometheus_->AwaitResult(scrapes + " >= " + before + " + 2")) << prometheus_->Log();
  // Its last steps show in Prometheus.
  for (const char* shown : {
           "oauth_token_grants_total{grant_type=\"refresh_token\",outcome=\"refused\"} >= 1",
           "bookings_transitions_total{action=\"cancel\"} >= 1",
           "oauth_managed_user_requests_total{operation=\"create\",outcome=\"ok\"} >= 1",
           "bookings_overlaps_refused_total{action=\"create\"} >= 1",
           "sum(webhooks_delivery_attempts_total{outcome=\"succeeded\"}) >= 2",
           "calendar_google_requests_total{endpoint=\"events_insert\",outcome=\"ok\"} >= 1",
           "calendar_google_requests_total{endpoint=\"free_busy\",outcome=\"ok\"} >= 1",
       }) {
    EXPECT_TRUE(prometheus_->AwaitResult(shown)) << shown;
  }

  // Every panel query as Grafana sends it for this job and instance (a one-minute rate window
  // holds the whole run).
  for (const PanelQuery& q : panels) {
    const std::string expr = Substitute(q.expr, Job(), Instance(), "1m");
    const json answer = prometheus_->Query(expr);
    EXPECT_EQ(answer.value("status", ""), "success") << q.where << "\n" << expr << "\n" << answer.dump();
    EXPECT_FALSE(answer["data"]["result"].empty()) << q.where << ": no data\n" << expr;
  }
  // Every alert expression is valid, and Prometheus evaluated each rule of the file without error.
  for (const AlertRule& a : alerts) {
    const json answer = prometheus_->Query(a.expr);
    EXPECT_EQ(answer.value("status", ""), "success") << a.name << "\n" << answer.dump();
  }
  std::map<std::string, std::string> state;  // rule -> "ok" once evaluated without error, else why not
  Eventually("every alert rule evaluated without error",
             {std::chrono::seconds(30), std::chrono::milliseconds(200)}, [&] {
               state.clear();
               const json rules = prometheus_->Get("/api/v1/rules");
               for (const json& group : rules["data"]["groups"]) {
                 for (const json& rule : group["rules"]) {
                   const bool evaluated = rule.value("lastEvaluation", "").rfind("0001-", 0) != 0;
                   state[rule.value("name", "")] = !evaluated ? "not evaluated yet"
                                                   : rule.value("health", "") == "ok"
                                                       ? "ok"
                                                       : rule.value("lastError", "unhealthy");
                 }
               }
               return state.size() == alerts.size() &&
                      std::all_of(state.begin(), state.end(), [](const auto& s) { return s.second == "ok"; });
             });
  for (const AlertRule& a : alerts) EXPECT_EQ(state[a.name], "ok") << a.name;
}

}  // namespace
}  // namespace rendezvous::testing
