// `sgemm-tune space` end to end: the real binary's output, JSON shape and exit codes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "space.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

using test::run_cli;

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

TEST(CliSpace, ExplainPrintsSurvivorsAndEveryRule) {
  const auto r = run_cli("space --space default --explain");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto e = enumerate(load_space("default"));
  EXPECT_TRUE(contains(r.out, std::to_string(e.survivors.size()) + " survivors")) << r.out;
  EXPECT_TRUE(contains(r.out, std::to_string(e.total) + " combinations")) << r.out;
  for (const auto& rule : rules())
    EXPECT_TRUE(contains(r.out, std::string(rule.name))) << rule.name;
}

TEST(CliSpace, JsonListMatchesTheLibrary) {
  const auto r = run_cli("space --space default --json --explain --list");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out.substr(0, 2000);
  ASSERT_TRUE(j.contains("configs"));
  ASSERT_TRUE(j["configs"].is_array());
  EXPECT_EQ(j["survivors"].get<size_t>(), j["configs"].size());
  EXPECT_EQ(j["rejected"].get<long long>() + j["survivors"].get<long long>(),
            j["combinations"].get<long long>());

  const auto e = enumerate(load_space("default"));
  ASSERT_EQ(j["configs"].size(), e.survivors.size());
  for (size_t i = 0; i < e.survivors.size(); ++i) {
    const auto& cj = j["configs"][i];
    EXPECT_EQ(cj["name"].get<std::string>(), to_name(e.survivors[i]));
    EXPECT_EQ(cj["params"].get<WarpTileConfig>(), e.survivors[i]);
  }
  ASSERT_EQ(j["rules"].size(), e.rejections.size());
  for (size_t i = 0; i < e.rejections.size(); ++i) {
    EXPECT_EQ(j["rules"][i]["rule"].get<std::string>(), e.rejections[i].rule);
    EXPECT_EQ(j["rules"][i]["first"].get<long long>(), e.rejections[i].first);
  }
}

// --list alone keeps stdout to the names (the summary goes to stderr), so it pipes into
// `compile --configs`.
TEST(CliSpace, ListAloneWritesOnlyNamesToStdout) {
  const auto r = run_cli("space --space quick --list", false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::istringstream in(r.out);
  size_t names = 0;
  for (std::string line; std::getline(in, line);) {
    EXPECT_TRUE(from_name(line).has_value()) << "not a name on stdout: " << line;
    ++names;
  }
  EXPECT_EQ(names, enumerate(load_space("quick")).survivors.size());
}

TEST(CliSpace, QuickListPrintsOneNamePerSurvivor) {
  const auto r = run_cli("space --space quick --list");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto e = enumerate(load_space("quick"));
  std::istringstream in(r.out);
  std::string line;
  size_t names = 0;
  while (std::getline(in, line)) {
    if (line.rfind("wt_", 0) != 0) continue;
    EXPECT_TRUE(from_name(line).has_value()) << line;
    ++names;
  }
  EXPECT_EQ(names, e.survivors.size());
}

TEST(CliSpace, ShapeIsReportedAndApplied) {
  const auto r = run_cli("space --space default --json --shape 4096x4096x4088");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["shape"], "4096x4096x4088");
  const auto e = enumerate(load_space("default"), parse_shape("4096x4096x4088"));
  EXPECT_EQ(j["survivors"].get<size_t>(), e.survivors.size());
}

TEST(CliSpace, MissingSpaceFileIsAnInputError) {
  const auto r = run_cli("space --space /nonexistent.json");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "/nonexistent.json")) << r.out;
}

TEST(CliSpace, BadShapesAreInputErrors) {
  for (const char* shape : {"0x0x0", "abc", "4096x4096"}) {
    const auto r = run_cli(std::string("space --space default --shape ") + shape);
    EXPECT_EQ(r.exit_code, 2) << shape << ": " << r.out;
    EXPECT_TRUE(contains(r.out, std::string("'") + shape + "'")) << r.out;
  }
}

TEST(CliSpace, BadSpaceFilesAreInputErrors) {
  test::TempDir dir;
  const auto broken = (dir.path() / "broken.json").string();
  std::ofstream(broken) << "{\"parameters\": ";
  auto r = run_cli("space --space '" + broken + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, broken)) << r.out;

  const auto bk6 = (dir.path() / "bk6.json").string();
  std::ofstream(bk6) << R"({"parameters": {"BM": [64], "BN": [64], "BK": [6], "WM": [32],
      "WN": [32], "WNITER": [1], "TM": [4], "TN": [4], "NUM_THREADS": [128],
      "MIN_BLOCKS": [1]}})";
  r = run_cli("space --space '" + bk6 + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, bk6)) << r.out;
  EXPECT_TRUE(contains(r.out, "BK")) << r.out;
}

TEST(CliSpace, HelpExitsZero) {
  auto r = run_cli("--help");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "space")) << r.out;
  r = run_cli("space --help");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "--explain")) << r.out;
}

TEST(CliSpace, UnknownOptionIsAUsageError) {
  const auto r = run_cli("space --no-such-flag");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "--no-such-flag")) << r.out;
}

}  // namespace
}  // namespace sgt
