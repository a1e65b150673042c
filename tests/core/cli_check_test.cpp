// `sgemm-tune check` and `space --simulate` through the CLI: the rules and the index simulation
// as a user sees them.
#include <gtest/gtest.h>

#include <fmt/format.h>
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
  // The kernel serves any shape now (edge tiles are guarded): 1000 is no multiple of the tile, and
  // the JSON leaves the knobs to their defaults.
  const auto r =
      test::run_cli(R"(check '{"BM":128,"BN":64,"BK":16,"WM":64,"WN":32,"WNITER":2,"TM":4,"TN":4,)"
                    R"("NUM_THREADS":128,"MIN_BLOCKS":1}' --shape 1000x1000x1000)");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fits 1000x1000x1000"), std::string::npos) << r.out;
  // A zero-sized shape is still refused.
  const auto bad = test::run_cli("check wt_128x64x16_w64x32_wn2_t4x4_n128_mb1 --shape 0x0x0");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
}

TEST(CheckCli, ShowsTheKnobsAndWhatTheSimulationCovered) {
  const auto r = test::run_cli("check wt_64x256x16_w64x32_wn4_t4x4_n256_mb2_s2_p4");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("load passes A 1 B 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("AS_LD 68"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shared 41472 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("STAGES 2  PAD_A 4  GROUP_M 1  SPLIT_K 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("simulation: clean in layouts NN NT TN TT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("boundary blocks"), std::string::npos) << r.out;

  const auto j = nlohmann::json::parse(
      test::run_cli("check --json wt_64x256x16_w64x32_wn4_t4x4_n256_mb2_s2_p4_g8_k4", false).out);
  const auto& d = j.at("derived");
  EXPECT_EQ(d.at("A_PASSES"), 1);
  EXPECT_EQ(d.at("B_PASSES"), 4);
  EXPECT_EQ(d.at("AS_LD"), 68);
  EXPECT_EQ(d.at("STAGES"), 2);
  EXPECT_EQ(d.at("PAD_A"), 4);
  EXPECT_EQ(d.at("GROUP_M"), 8);
  EXPECT_EQ(d.at("SPLIT_K"), 4);
  EXPECT_FALSE(d.contains("ROW_STRIDE_A"));
  EXPECT_TRUE(j.at("simulation").empty()) << j.dump(2);
  EXPECT_NE(j.at("simulation_scope").get<std::string>().find("split-K"), std::string::npos);
}

TEST(CheckCli, APaddingTheRulesRefuseShowsInTheTransposedLayout) {
  const auto r = test::run_cli("check --json wt_128x64x16_w64x32_wn2_t2x4_n128_mb1_p2", false);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("violations").size(), 1u) << r.out;
  EXPECT_EQ(j.at("violations")[0].at("rule"), "pad_alignment");
  bool misaligned = false;
  for (const auto& d : j.at("simulation")) {
    if (d.at("kind") == "misaligned_vector") {
      misaligned = true;
      // Found where A^T is stored into As as float4s.
      EXPECT_EQ(d.at("detail").get<std::string>().rfind("[T", 0), 0u) << d.dump();
    }
  }
  EXPECT_TRUE(misaligned) << r.out;
}

TEST(CheckCli, BadInputIsExitTwoWithTheText) {
  for (const char* bad : {"nonsense", "wt_128x64x16", "'{\"BM\":128}'", "'{not json'"}) {
    const auto r = test::run_cli(std::string("check ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("error"), std::string::npos) << r.out;
  }
}

TEST(SpaceCli, SimulateProvesEverySurvivorOfTheDefaultSpace) {
  const auto r = test::run_cli("space --space default --simulate --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("simulation").at("simulated").get<size_t>(),
            enumerate(load_space("default")).survivors.size());
  EXPECT_TRUE(j.at("simulation").at("defective").empty());
  EXPECT_NE(j.at("simulation").at("scope").get<std::string>().find("NN NT TN TT"),
            std::string::npos);
  EXPECT_GT(j.at("simulation").at("seconds").get<double>(), 0.0);
}

TEST(SpaceCli, SimulateSaysWhatItCovered) {
  const auto r = test::run_cli("space --space quick --simulate");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto n = enumerate(load_space("quick")).survivors.size();
  EXPECT_NE(r.out.find(fmt::format("simulation: {} of {} survivors replay clean in layouts NN NT "
                                   "TN TT",
                                   n, n)),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace sgt
