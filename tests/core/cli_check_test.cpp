// `sgemm-tune check` and `space --simulate` through the CLI: the rules and the index simulation
// as a user sees them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "space.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

TEST(CheckCli, ValidConfigPassesRulesAndSimulation) {
  const auto r = test::run_cli("check wt_128x64x16_w64x32_wn2_t4x4_n128_mb1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("WMITER 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("valid: passes every rule"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("simulation c_"), std::string::npos) << r.out;
}

TEST(CheckCli, InvalidConfigNamesEveryRuleAndTheDefectTheKernelWouldHave) {
  const auto r = test::run_cli("check --json wt_96x64x16_w48x32_wn2_t4x4_n128_mb1", false);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j.at("valid").get<bool>());
  std::vector<std::string> rules;
  for (const auto& v : j.at("violations")) rules.push_back(v.at("rule"));
  EXPECT_NE(std::find(rules.begin(), rules.end(), "wmiter_divisibility"), rules.end());
  EXPECT_NE(std::find(rules.begin(), rules.end(), "subtile_lane_grid"), rules.end());
  ASSERT_FALSE(j.at("simulation").empty()) << "the simulation must see the broken kernel";
}

TEST(CheckCli, AcceptsJsonAndAppliesShapeRules) {
  const auto r =
      test::run_cli(R"(check '{"BM":128,"BN":64,"BK":16,"WM":64,"WN":32,"WNITER":2,"TM":4,"TN":4,)"
                    R"("NUM_THREADS":128,"MIN_BLOCKS":1}' --shape 1000x1000x1000)");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("shape_tile_multiple"), std::string::npos) << r.out;
}

TEST(CheckCli, BadInputIsExitTwoWithTheText) {
  for (const char* bad : {"nonsense", "wt_128x64x16", "'{\"BM\":128}'", "'{not json'"}) {
    const auto r = test::run_cli(std::string("check ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("error"), std::string::npos) << r.out;
  }
}

TEST(SpaceCli, SimulateProvesEverySurvivorOfTheDefaultSpace) {
  const auto r = test::run_cli("space --simulate --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("simulation").at("simulated").get<size_t>(),
            enumerate(load_space("default")).survivors.size());
  EXPECT_TRUE(j.at("simulation").at("defective").empty());
}

}  // namespace
}  // namespace sgt
