// Every architecture of the limits table: what the rules keep for it compiles there (spills at
// most in one sampled config) and never to an empty stub, and what it cannot run is refused by a
// named rule (the TMA family off sm_90, more threads per SM than it holds), in `space`, `check` and
// `compile`.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <nlohmann/json.hpp>

#include "arch.hpp"
#include "config.hpp"
#include "nvrtc_compiler.hpp"
#include "space.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

bool nvrtc_supports(const ArchInfo& a) {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS) return false;
  std::vector<int> archs(static_cast<size_t>(n));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return false;
  return std::find(archs.begin(), archs.end(), a.major * 10 + a.minor) != archs.end();
}

// First, middle and last survivor of each family (the TMA one where it exists).
std::vector<WarpTileConfig> sample(const ArchInfo& a) {
  std::vector<WarpTileConfig> out;
  for (const char* space : {"default", "tma"}) {
    const auto e = enumerate_spaces(space, {}, &a).enumeration;
    if (e.survivors.empty()) continue;
    for (size_t i : {size_t{0}, e.survivors.size() / 2, e.survivors.size() - 1})
      out.push_back(e.survivors[i]);
  }
  return out;
}

TEST(Arch, WhatTheRulesKeepCompilesOnEveryArchitectureToARealBody) {
  test::TempDir dir;
  int archs = 0;
  for (const char* name : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}) {
    const auto& a = parse_arch(name);
    if (!nvrtc_supports(a)) continue;
    ++archs;
    const auto configs = sample(a);
    ASSERT_FALSE(configs.empty()) << name;
    const bool has_tma = std::any_of(configs.begin(), configs.end(),
                                     [](const WarpTileConfig& c) { return c.family == "ws_tma"; });
    EXPECT_EQ(has_tma, a.tma_kernel) << name;
    gpu::KernelCompiler k(dir.path() / name, {name, {}});
    int ok = 0;
    for (const auto& r : k.compile_all(configs, 2)) {
      // ptxas is the judge of spills (the register rule is a model: sm_80 spills 8 bytes of one
      // 255-register config that every other target holds); a spill is a recorded status. What
      // the rules keep must compile, and to a real body.
      EXPECT_TRUE(r.status == TrialStatus::ok || r.status == TrialStatus::spills)
          << name << " " << r.config_name << ": " << r.reason;
      ok += r.status == TrialStatus::ok;
      // A body that does anything holds its accumulators: far more than a stub's few registers.
      EXPECT_GE(r.registers, 32) << name << " " << r.config_name;
    }
    EXPECT_GE(ok, static_cast<int>(configs.size()) - 1) << name;
  }
  EXPECT_GE(archs, 4);
}

// The TMA kernel compiled for another target would be the trapping stub: never "ok".
TEST(Arch, ATmaConfigIsNeverCompiledForAnotherArchitecture) {
  test::TempDir dir;
  const auto tma = enumerate_spaces("tma").enumeration.survivors.front();
  gpu::KernelCompiler k(dir.path(), {"sm_100", {}});
  const auto r = k.compile(tma, "NN", true);
  EXPECT_EQ(r.status, TrialStatus::compile_failed);
  EXPECT_NE(r.reason.find("tma_architecture"), std::string::npos) << r.reason;
  EXPECT_TRUE(r.cubin_path.empty());

  const auto listed = dir.path() / "list.txt";
  std::ofstream(listed) << to_name(tma) << "\n";
  const auto cli =
      test::run_cli("compile --arch sm_100 --json --configs " + test::sh_quote(listed) +
                        " --cache-dir " + test::sh_quote(dir.path() / "cache"),
                    false);
  // Refused for the architecture: not compiled, named, and the run exits 2 (a listed config that
  // is not built is not a success).
  EXPECT_EQ(cli.exit_code, 2) << cli.out;
  const auto j = nlohmann::json::parse(cli.out);
  EXPECT_EQ(j.at("configs"), 0);
  EXPECT_FALSE(j.at("statuses").contains("ok")) << cli.out;
  ASSERT_EQ(j.at("not_for_arch").size(), 1u);
  EXPECT_EQ(j.at("not_for_arch").at(0).at("name"), to_name(tma));
  const auto text = test::run_cli("compile --arch sm_100 --configs " + test::sh_quote(listed) +
                                  " --cache-dir " + test::sh_quote(dir.path() / "cache"));
  EXPECT_EQ(text.exit_code, 2) << text.out;
  EXPECT_NE(text.out.find("cannot run on sm_100"), std::string::npos) << text.out;
}

// Hopper's 2,048 threads per SM are 1,536 on sm_86, sm_89 and sm_120; an unknown architecture is
// bad input naming the known ones.
TEST(Arch, CheckAndSpacePruneForTheArchitectureAsked) {
  const std::string mb16 = "wt_64x32x16_w32x16_wn1_t4x4_n128_mb16";
  EXPECT_EQ(test::run_cli("check " + mb16).exit_code, 0);
  for (const char* a : {"sm_86", "8.9", "sm_120"}) {
    const auto r = test::run_cli("check " + mb16 + " --arch " + a);
    EXPECT_NE(r.exit_code, 0) << a << ": " << r.out;
    EXPECT_NE(r.out.find("resident_threads"), std::string::npos) << a << ": " << r.out;
  }
  const auto hopper = test::run_cli("space --space tma --arch sm_90 --json", false);
  const auto blackwell = test::run_cli("space --space tma --arch sm_100 --explain --json", false);
  ASSERT_EQ(hopper.exit_code, 0) << hopper.out;
  ASSERT_EQ(blackwell.exit_code, 0) << blackwell.out;
  EXPECT_GT(nlohmann::json::parse(hopper.out).at("survivors").get<int>(), 100);
  EXPECT_EQ(nlohmann::json::parse(blackwell.out).at("survivors").get<int>(), 0);
  EXPECT_NE(blackwell.out.find("tma_architecture"), std::string::npos);
  const auto bad = test::run_cli("space --arch sm_99");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("sm_86"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace sgt
