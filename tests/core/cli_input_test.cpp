// Bad input as a new user types it: every case is exit 2 with a message that names what was wrong,
// and never a hang or a misleading diagnosis.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

TEST(CliInput, AnUnknownCommandIsNamedWithTheKnownOnes) {
  const auto r = run_cli("tuen --shape 64x64x64");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "unknown command 'tuen'")) << r.out;
  EXPECT_TRUE(contains(r.out, "tune")) << r.out;
  EXPECT_FALSE(contains(r.out, "__worker")) << r.out;  // hidden stays hidden
}

TEST(CliInput, ADirectoryGivenAsASpaceIsCalledADirectory) {
  test::TempDir dir;
  const auto r = run_cli("space --space " + test::sh_quote(dir.path()));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "is a directory")) << r.out;
  EXPECT_FALSE(contains(r.out, "invalid JSON")) << r.out;
}

TEST(CliInput, AnEmptyOrZeroShapeIsRefusedBySpaceAndCheck) {
  for (const std::string cmd :
       {"space --space quick --shape ''", "space --space quick --shape 0x64x64",
        "check wt_128x64x16_w64x32_wn2_t4x4_n128_mb1 --shape ''",
        "check wt_128x64x16_w64x32_wn2_t4x4_n128_mb1 --shape 64x64"}) {
    const auto r = run_cli(cmd);
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.out;
    EXPECT_TRUE(contains(r.out, "--shape")) << cmd << ": " << r.out;
  }
}

// Each list legal, the product astronomically large: refused at once with the product and its
// factors named, where enumerating it would run for days.
TEST(CliInput, AnAstronomicallyLargeSpaceIsRefusedUpFront) {
  test::TempDir dir;
  nlohmann::json every4 = nlohmann::json::array();
  for (int v = 4; v <= 65536; v += 4) every4.push_back(v);
  const nlohmann::json space = {{"name", "huge"},
                                {"parameters",
                                 {{"BM", every4},
                                  {"BN", every4},
                                  {"BK", {8}},
                                  {"WM", every4},
                                  {"WN", every4},
                                  {"WNITER", {1}},
                                  {"TM", {4}},
                                  {"TN", {4}},
                                  {"NUM_THREADS", {128}},
                                  {"MIN_BLOCKS", {1}}}}};
  const auto file = dir.path() / "huge.json";
  std::ofstream(file) << space.dump();
  const auto r = run_cli("space --explain --space " + test::sh_quote(file));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "72057594037927936 combinations")) << r.out;
  EXPECT_TRUE(contains(r.out, "BM 16384 x BN 16384 x WM 16384 x WN 16384")) << r.out;
  // The limit leaves every built-in space far inside it.
  for (const auto& name : builtin_space_names()) {
    EXPECT_LT(load_space(name).combinations(), kMaxSpaceCombinations / 100) << name;
  }
}

// The layout reaches the shape rules of space and check: a TMA config's stages differ by layout
// (NT stages both operands), so NT keeps fewer TMA survivors at the same shape; --layout without
// --shape is bad input.
TEST(CliInput, LayoutIsAppliedBySpaceAndCheck) {
  auto survivors = [](const std::string& layout) {
    const auto r =
        run_cli("space --space tma --shape 4096x4096x4096 --layout " + layout + " --json", false);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("layout"), layout);
    return j.at("survivors").get<int>();
  };
  const int nn = survivors("NN"), nt = survivors("NT");
  EXPECT_GT(nn, 0);
  EXPECT_LT(nt, nn);
  EXPECT_EQ(run_cli("space --space tma --layout NT").exit_code, 2);
  EXPECT_EQ(
      run_cli("check wt_128x64x16_w64x32_wn2_t4x4_n128_mb1 --shape 64x64x64 --layout XY").exit_code,
      2);
  const auto ok =
      run_cli("check wt_128x64x16_w64x32_wn2_t4x4_n128_mb1 --shape 64x64x64 --layout TT");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_TRUE(contains(ok.out, "fits 64x64x64 TT")) << ok.out;
}

// The logging options work before and after the command; -v and -q together are bad input.
TEST(CliInput, LoggingOptionsWorkAfterTheCommandToo) {
  for (const std::string cmd : {"-q space --space quick", "space --space quick -q",
                                "space --space quick --log-level warn", "space -v --space quick"}) {
    EXPECT_EQ(run_cli(cmd).exit_code, 0) << cmd;
  }
  // A replayed tune logs its progress at info level: -q after the command silences it.
  test::TempDir dir;
  const std::string replay =
      "tune --replay " +
      test::sh_quote(std::filesystem::path(SGT_TEST_SOURCE_DIR) / "datasets" / "h200" /
                     "1024x1024x1024-NN.json.gz") +
      " --shape 1024x1024x1024 --space quick --strategy random --max-evals 3 --top 1 --db " +
      test::sh_quote(dir.path() / "r.db");
  const auto loud = run_cli(replay);
  const auto quiet = run_cli(replay + " --retune -q");
  ASSERT_EQ(loud.exit_code, 0) << loud.out;
  ASSERT_EQ(quiet.exit_code, 0) << quiet.out;
  EXPECT_TRUE(contains(loud.out, "[info]")) << loud.out;
  EXPECT_FALSE(contains(quiet.out, "[info]")) << quiet.out;
  const auto both = run_cli("space --space quick -v -q");
  EXPECT_EQ(both.exit_code, 2) << both.out;
}

}  // namespace
}  // namespace sgt
