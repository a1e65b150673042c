// The split-TF32 family (tf32x3, tuner/core/families/tf32x3/) through the seams a family meets on
// the CPU: its registration and precision class, its names, each of its named rules, the values
// no config of it may have, its search space (every survivor simulated clean), its index
// simulation against broken variants of the kernel's index functions, the instance it asks for,
// its edge cases and the model's features.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "arch.hpp"
#include "config.hpp"
#include "edge_cases.hpp"
#include "error.hpp"
#include "families/tf32x3/simulation.hpp"
#include "family.hpp"
#include "features.hpp"
#include "index_sim.hpp"
#include "kernel_source.hpp"
#include "problem.hpp"
#include "space.hpp"
#include "test_support.hpp"
#include "tf32x3_geometry.h"

namespace sgt {
namespace {

const KernelFamily& tc3() {
  const auto* f = find_family("tf32x3");
  if (!f) throw std::runtime_error("family tf32x3 is not registered");
  return *f;
}

// A tf32x3 config by its fields; NUM_THREADS the one its tiles give unless stated.
WarpTileConfig tc3_config(int BM, int BN, int BK, int WM, int WN, int STAGES, int threads = 0) {
  WarpTileConfig c;
  c.family = "tf32x3";
  c.BM = BM, c.BN = BN, c.BK = BK, c.WM = WM, c.WN = WN, c.STAGES = STAGES;
  c.WNITER = c.TM = c.TN = c.MIN_BLOCKS = 1;
  c.NUM_THREADS = threads ? threads : (WM > 0 && WN > 0 ? (BM / WM) * (BN / WN) * 32 : 32);
  return c;
}

// The probe's fastest config at 4096^3 (docs/experiments/2026-12-03-tf32x3-kernel.md).
WarpTileConfig probe_config() {
  auto c = tc3_config(128, 128, 32, 64, 64, 3);
  c.GROUP_M = 8;
  return c;
}

std::set<std::string> rule_names(const std::vector<RuleViolation>& v) {
  std::set<std::string> out;
  for (const auto& r : v) out.insert(r.rule);
  return out;
}

std::vector<WarpTileConfig> space_survivors(const Limits* limits = nullptr) {
  auto space = load_space("tf32x3");
  if (limits) space.limits = *limits;
  return enumerate(space, {}, Precision::fp32_accurate).survivors;
}

TEST(Tf32x3Family, IsRegisteredAfterWsTmaInThePrecisionClassFp32Accurate) {
  const auto& all = families();
  ASSERT_GE(all.size(), 3u);
  EXPECT_EQ(all[0]->id(), "warptile");
  EXPECT_EQ(all[1]->id(), "ws_tma");
  EXPECT_EQ(all[2]->id(), "tf32x3");
  EXPECT_EQ(tc3().precision(), Precision::fp32_accurate);
  EXPECT_EQ(find_family("warptile")->precision(), Precision::fp32);
  EXPECT_EQ(find_family("ws_tma")->precision(), Precision::fp32);
  EXPECT_FALSE(tc3().legacy_tma());
  EXPECT_EQ(tc3().name_prefix(), "tc3_");
  EXPECT_EQ(tc3().launch_abi(), LaunchAbi::pointers);
  EXPECT_TRUE(tc3().has_split_k_reduce());
  // Its program is the kernel file, which includes the warp-tiling template for the split-K
  // reduction; every file it includes is among its sources, so the hash covers them.
  const auto src = tc3().sources();
  ASSERT_FALSE(src.empty());
  EXPECT_EQ(src.front().name, "sgemm_tf32x3.cuh");
  std::set<std::string> names;
  for (const auto& s : src) {
    EXPECT_FALSE(s.text.empty()) << s.name;
    names.insert(std::string(s.name));
  }
  EXPECT_EQ(names, (std::set<std::string>{"sgemm_tf32x3.cuh", std::string(kKernelMainFile),
                                          "warptile_geometry.h", "tf32x3_geometry.h"}));
  EXPECT_NE(src.front().text.find("#include \"sgemm_warptile.cuh\""), std::string::npos);
  EXPECT_NE(embedded_kernel_file(kKernelMainFile).text.find("sgemm_splitk_reduce"),
            std::string::npos);
  EXPECT_EQ(current_family_hashes().at("tf32x3"), tc3().source_hash());
  EXPECT_NE(tc3().source_hash(), find_family("ws_tma")->source_hash());
}

TEST(Tf32x3Family, NamesLeaveTheImpliedFieldsOutAndRoundTrip) {
  auto c = probe_config();
  c.SPLIT_K = 4;
  EXPECT_EQ(to_name(c), "tc3_128x128x32_w64x64_n128_s3_g8_k4");
  const auto back = from_name("tc3_128x128x32_w64x64_n128_s3_g8_k4");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, c);
  EXPECT_EQ(&family_of(*back), &tc3());
  // JSON names the family by id (it has no legacy TMA value).
  const nlohmann::json j = c;
  EXPECT_EQ(j.at("family"), "tf32x3");
  EXPECT_FALSE(j.contains("TMA"));
  EXPECT_EQ(j.get<WarpTileConfig>(), c);
  // One config, one name: the implied fields written out, a suffix of an implied knob, or a
  // default restated are no names of the family.
  for (const char* bad :
       {"tc3_128x128x32_w64x64_wn1_t1x1_n128_mb1_s3", "tc3_128x128x32_w64x64_n128_mb1_s3",
        "tc3_128x128x32_w64x64_n128_s3_p4", "tc3_128x128x32_w64x64_n128_s3_g1",
        "tc3_128x128x32_w64x64_n128_s3_o1", "tc3_128x128x32_w64x64_n128_s3_x1",
        "tc3_128x128x32_w64x64_n128_s3_m1", "tc3_128x128x32_w64x64"}) {
    EXPECT_FALSE(from_name(bad)) << bad;
  }
  // The other families' names are as they were.
  for (const char* name : {test::kSeed, "wt_128x128x16_w64x64_wn2_t8x4_n128_mb1_s3_p4_g8_m1",
                           "wt_64x128x8_w32x64_wn2_t4x4_n128_mb2_s2_k4_o1_b4_x1_c1"}) {
    const auto w = from_name(name);
    ASSERT_TRUE(w) << name;
    EXPECT_EQ(to_name(*w), name);
  }
  // Every survivor of the space.
  const auto survivors = space_survivors();
  ASSERT_FALSE(survivors.empty());
  std::set<std::string> seen;
  for (const auto& s : survivors) {
    const auto name = to_name(s);
    EXPECT_EQ(name.rfind("tc3_", 0), 0u) << name;
    EXPECT_EQ(name.find("_wn"), std::string::npos) << name;
    EXPECT_EQ(name.find("_mb"), std::string::npos) << name;
    const auto parsed = from_name(name);
    ASSERT_TRUE(parsed) << name;
    EXPECT_EQ(*parsed, s) << name;
    EXPECT_TRUE(seen.insert(name).second) << name;
  }
}

TEST(Tf32x3Family, ValidConfigsPassEveryRule) {
  for (const auto& c : {probe_config(), tc3_config(64, 128, 32, 32, 64, 4),
                        tc3_config(128, 128, 32, 64, 32, 3), tc3_config(256, 128, 16, 64, 64, 3),
                        tc3_config(32, 32, 16, 16, 16, 2), tc3_config(128, 256, 32, 64, 64, 3)}) {
    EXPECT_TRUE(check(c).empty()) << to_name(c) << ": " << check(c).front().reason;
  }
}

// Each condition broken alone (or with the rules it cannot be broken without), and the rules that
// fire, by name; every rule the family reports is in its rules() and the registry's.
TEST(Tf32x3Family, EachRuleFiresByItsNameForItsCondition) {
  struct Case {
    const char* what;
    WarpTileConfig c;
    Limits limits;
    std::set<std::string> rules;
  };
  std::vector<Case> cases;
  auto add = [&](const char* what, WarpTileConfig c, std::set<std::string> rules,
                 Limits limits = {}) {
    cases.push_back({what, c, limits, std::move(rules)});
  };
  {
    auto c = probe_config();
    c.TM = 4;
    add("a thread tile", c, {"tf32x3_fixed_fields"});
    c = probe_config();
    c.PACK = 1;
    c.PAD_A = 4;
    add("PACK and PAD_A", c, {"tf32x3_fixed_fields"});
    c = probe_config();
    c.MIN_BLOCKS = 2;
    add("MIN_BLOCKS", c, {"tf32x3_fixed_fields"});
  }
  add("BM % WM", tc3_config(64, 64, 16, 48, 32, 3), {"tf32x3_warp_grid"});
  add("NUM_THREADS", tc3_config(128, 128, 32, 64, 64, 3, 256), {"thread_count"});
  add("WM % 16", tc3_config(32, 32, 16, 8, 32, 2), {"tf32x3_warp_tile"});
  add("WN % 8", tc3_config(64, 96, 32, 32, 12, 2, 2 * 8 * 32),
      {"tf32x3_warp_tile", "tf32x3_copy_mapping"});
  add("BK % 8", tc3_config(32, 32, 4, 32, 32, 2), {"tf32x3_bk"});
  add("BM % 32", tc3_config(48, 96, 48, 16, 32, 2), {"tf32x3_block_tile"});
  add("copies", tc3_config(256, 32, 16, 64, 32, 3), {"tf32x3_copy_mapping"});
  add("one stage", tc3_config(64, 64, 16, 32, 32, 1), {"tf32x3_stages"});
  add("nine stages", tc3_config(64, 64, 16, 32, 32, 9), {"tf32x3_stages"});
  {
    Limits l;
    l.max_threads_per_block = 64;
    add("threads per block", probe_config(), {"max_threads_per_block"}, l);
    l = {};
    l.max_dynamic_shared_bytes = 64 * 1024;
    add("shared memory", probe_config(), {"tf32x3_shared_memory"}, l);
    l = {};
    l.max_accumulators = 64;
    add("accumulators", probe_config(), {"accumulator_budget"}, l);
    l = {};
    l.registers_per_sm = 16384;  // 128 registers for 128 threads, below 128 + 64
    add("registers", probe_config(), {"tf32x3_register_cap"}, l);
    l = {};
    l.compute_capability = 75;
    add("architecture", probe_config(), {"tf32x3_architecture"}, l);
  }
  {
    auto c = tc3_config(32768, 32768, 65536, 16, 16, 8);
    add("products", c, {"positive_values"});
  }
  std::set<std::string> own;
  for (const auto& r : tc3().rules()) own.insert(std::string(r.name));
  std::set<std::string> all;
  for (const auto& r : rules()) all.insert(std::string(r.name));
  for (const auto& k : cases) {
    SCOPED_TRACE(k.what);
    const auto v = check(k.c, k.limits);
    EXPECT_EQ(rule_names(v), k.rules) << to_name(k.c);
    for (const auto& r : v) {
      EXPECT_TRUE(own.contains(r.rule)) << r.rule;
      EXPECT_TRUE(all.contains(r.rule)) << r.rule;
      EXPECT_FALSE(r.reason.empty()) << r.rule;
    }
  }
  // The architecture's limits: sm_75 has no mma.sync on TF32; sm_80 and sm_90 run the kernel.
  EXPECT_TRUE(rule_names(check(probe_config(), limits_on(parse_arch("sm_75"))))
                  .contains("tf32x3_architecture"));
  EXPECT_TRUE(check(probe_config(), limits_on(parse_arch("sm_80"))).empty());
  EXPECT_TRUE(check(probe_config(), limits_on(parse_arch("sm_90"))).empty());
  EXPECT_FALSE(tc3().implemented_for(75));
  EXPECT_TRUE(tc3().implemented_for(80));
  EXPECT_TRUE(tc3().implemented_for(90));
  EXPECT_EQ(tc3().architecture_rule(), "tf32x3_architecture");
  EXPECT_EQ(tc3().refusal_on("sm_75").rfind("rule tf32x3_architecture:", 0), 0u);
}

// The dynamic shared memory differs by layout (k-contiguous rows pad by 4 floats, m- or
// n-contiguous ones by 8): check() holds the least to the limit, the shape rule the problem's.
TEST(Tf32x3Family, TheSharedMemoryShapeRuleTakesTheProblemsLayout) {
  const auto c = probe_config();
  // 3 x (128 x 36 + 32 x 136) floats in NN, 3 x (32 x 136 + 32 x 136) in TN, ...
  EXPECT_EQ(tc3().dynamic_shared_bytes(c, false, false), 107520);
  EXPECT_EQ(tc3().dynamic_shared_bytes(c, true, false), 104448);
  EXPECT_EQ(tc3().dynamic_shared_bytes(c, false, true), 110592);
  EXPECT_EQ(tc3().block_shared_bytes(c, true, true), tc3().dynamic_shared_bytes(c, true, true));
  EXPECT_EQ(tc3().block_threads(c), 128);
  Limits l;
  l.max_dynamic_shared_bytes = 105000;
  EXPECT_TRUE(check(c, l).empty());
  auto p = parse_shape("4096x4096x4096");
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    p.layout = layout;
    const auto v = check_shape(c, p, l);
    if (std::string(layout) == "TN") {
      EXPECT_TRUE(v.empty()) << layout;
    } else {
      EXPECT_EQ(rule_names(v), (std::set<std::string>{"shape_tf32x3_shared_memory"})) << layout;
    }
  }
  const auto names = tc3().shape_rules();
  EXPECT_EQ(names, (std::vector<std::string_view>{"shape_tf32x3_shared_memory"}));
}

TEST(Tf32x3Family, ImpossibleValuesNameTheirRule) {
  const auto& f = tc3();
  const std::vector<std::pair<std::pair<std::string, int>, std::string>> refused = {
      {{"BM", 48}, "tf32x3_block_tile"},
      {{"BN", 16}, "tf32x3_block_tile"},
      {{"BK", 12}, "tf32x3_bk"},
      {{"WM", 24}, "tf32x3_warp_tile"},
      {{"WN", 12}, "tf32x3_warp_tile"},
      {{"STAGES", 1}, "tf32x3_stages"},
      {{"STAGES", 9}, "tf32x3_stages"},
      {{"NUM_THREADS", 48}, "thread_count"},
      {{"TM", 4}, "tf32x3_fixed_fields"},
      {{"WNITER", 2}, "tf32x3_fixed_fields"},
      {{"MIN_BLOCKS", 2}, "tf32x3_fixed_fields"},
      {{"PACK", 1}, "tf32x3_fixed_fields"},
      {{"STAGE_C", 1}, "tf32x3_fixed_fields"},
      {{"PAD_B", 4}, "tf32x3_fixed_fields"},
      {{"FMA_ORDER", 1}, "tf32x3_fixed_fields"},
  };
  for (const auto& [fv, rule] : refused) {
    const auto why = f.impossible_value(fv.first, fv.second);
    ASSERT_TRUE(why) << fv.first << " = " << fv.second;
    EXPECT_NE(why->find("rule " + rule), std::string::npos) << *why;
  }
  for (const auto& [field, v] : std::vector<std::pair<std::string, int>>{{"BM", 96},
                                                                         {"BK", 24},
                                                                         {"WM", 48},
                                                                         {"WN", 8},
                                                                         {"STAGES", 8},
                                                                         {"GROUP_M", 3},
                                                                         {"SPLIT_K", 7},
                                                                         {"NUM_THREADS", 96},
                                                                         {"TM", 1},
                                                                         {"PACK", 0}}) {
    EXPECT_FALSE(f.impossible_value(field, v)) << field << " = " << v;
  }
  // A space that selects tf32x3 alone refuses such a value; one that also selects warptile keeps
  // it for warptile.
  auto j = nlohmann::json::parse(R"({"name": "t", "parameters": {"BM": [48, 64], "BN": [64],
      "BK": [16], "WM": [16], "WN": [32], "WNITER": [1], "TM": [1], "TN": [1],
      "NUM_THREADS": [256], "MIN_BLOCKS": [1], "STAGES": [2], "family": ["tf32x3"]}})");
  try {
    (void)parse_space(j, "t.json");
    ADD_FAILURE() << "a tf32x3 space took BM = 48";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tf32x3_block_tile"), std::string::npos) << e.what();
  }
  j["parameters"]["family"] = {"tf32x3", "warptile"};
  j["parameters"]["STAGES"] = {2};
  EXPECT_NO_THROW((void)parse_space(j, "t.json"));
}

// The built-in space: a strict request enumerates none of it (the precision class), one that
// admits fp32-accurate gets every survivor, each valid, each simulated clean.
TEST(Tf32x3Family, TheSpacesSurvivorsAreValidAndSimulateClean) {
  const auto space = load_space("tf32x3");
  EXPECT_EQ(space.families, (std::vector<std::string>{"tf32x3"}));
  EXPECT_EQ(space.combinations(), 51840);
  const auto strict = enumerate(space);
  EXPECT_TRUE(strict.survivors.empty());
  const auto accurate = enumerate(space, {}, Precision::fp32_accurate);
  // 123 block and warp tiles with their one thread count, x 3 STAGES x 2 GROUP_M x 5 SPLIT_K.
  EXPECT_EQ(accurate.survivors.size(), 3690u);
  RecordProperty("survivors", std::to_string(accurate.survivors.size()));
  for (const auto& c : accurate.survivors) {
    EXPECT_EQ(c.family, "tf32x3");
    EXPECT_TRUE(check(c, space.limits).empty()) << to_name(c);
  }
  const auto reports = simulate_configs(accurate.survivors, 2);
  int defective = 0;
  for (size_t i = 0; i < reports.size(); ++i) {
    if (!reports[i].ok() && ++defective <= 5)
      ADD_FAILURE() << to_name(accurate.survivors[i]) << ":\n" << reports[i].summary();
  }
  EXPECT_EQ(defective, 0);
  // On an sm_80 GPU (163 KB of shared memory per block) fewer fit; on sm_75 none.
  const auto sm80 = limits_on(parse_arch("sm_80"), space.limits);
  const auto on80 = space_survivors(&sm80);
  EXPECT_GT(on80.size(), 0u);
  EXPECT_LT(on80.size(), accurate.survivors.size());
  const auto sm75 = limits_on(parse_arch("sm_75"), space.limits);
  EXPECT_TRUE(space_survivors(&sm75).empty());
}

// Rules and simulation agree over a sweep with values the space never takes: a config passing
// every structural rule simulates clean, one breaking a structural rule shows a defect.
TEST(Tf32x3Family, StructuralRulesAndTheSimulationAgreeOverASweep) {
  std::set<std::string> structural;
  for (const auto& r : tc3().rules())
    if (r.structural) structural.insert(std::string(r.name));
  EXPECT_EQ(structural,
            (std::set<std::string>{"positive_values", "tf32x3_warp_grid", "thread_count",
                                   "tf32x3_warp_tile", "tf32x3_bk", "tf32x3_copy_mapping"}));
  int clean = 0, rejects = 0;
  std::map<std::string, int> seen;
  for (const int BM : {16, 32, 48, 64})
    for (const int BN : {16, 32, 64})
      for (const int BK : {4, 8, 12, 16})
        for (const int WM : {8, 16, 32, 48})
          for (const int WN : {8, 12, 16, 32})
            for (const int threads : {0, 64}) {
              auto c = tc3_config(BM, BN, BK, WM, WN, 2, threads);
              if (c.NUM_THREADS < 32 || c.NUM_THREADS > 512) continue;
              std::vector<std::string> names;
              for (const auto& v : check(c))
                if (structural.contains(v.rule)) names.push_back(v.rule);
              const auto r = simulate_config(c);
              if (names.empty()) {
                EXPECT_TRUE(r.ok()) << to_name(c) << " passes the rules but:\n" << r.summary();
                ++clean;
              } else {
                EXPECT_FALSE(r.ok())
                    << to_name(c) << " breaks " << names.front() << " but simulates clean";
                for (const auto& n : names) ++seen[n];
                ++rejects;
              }
            }
  EXPECT_GT(clean, 20);
  EXPECT_GT(rejects, 100);
  for (const char* rule :
       {"tf32x3_warp_grid", "thread_count", "tf32x3_warp_tile", "tf32x3_bk", "tf32x3_copy_mapping"})
    EXPECT_GT(seen[rule], 0) << rule;
}

// A broken variant of each kind of index function the kernel takes from tf32x3_geometry.h is
// noticed: the copies' mapping, the shared-memory slots, the warps' and lanes' places, the
// fragments' and accumulators' positions, and the geometry's padding.
namespace broken {
int copy_col(int cols, bool vec, int tid) {
  return sgt_kernel::tf32x3_copy_col(cols, vec, tid) + (tid == 5 ? 1 : 0);
}
int copy_row(int cols, bool vec, int tid) {
  return sgt_kernel::tf32x3_copy_row(cols, vec, tid == 40 ? 0 : tid);
}
int copy_row_step(int cols, bool vec, int nt) {
  return sgt_kernel::tf32x3_copy_row_step(cols, vec, nt) / 2;
}
int a_slot(const sgt_kernel::Tf32x3Geometry& g, bool t, int m, int k) {
  return t ? m * g.A_LD + k : k * g.A_LD + m;  // the layouts swapped
}
int b_slot(const sgt_kernel::Tf32x3Geometry& g, bool t, int k, int n) {
  return sgt_kernel::tf32x3_b_slot(g, t, k, n) + (n >= 8 ? 1 : 0);
}
int warp_n0(const sgt_kernel::Tf32x3Geometry& g, int warp) {
  return sgt_kernel::tf32x3_warp_n0(g, warp) / 2;
}
int lane_group(int lane) {
  return lane % 8;
}
int a_frag_k(int ks, int r) {
  return ks * 8 + 2 * (r >> 1);
}
int b_frag_k(int ks, int r) {
  return ks * 8 + r;
}
int acc_m(int i, int r) {
  return i * 16 + 4 * (r >> 1);
}
int acc_n(int j, int r) {
  return j * 4 + (r & 1);
}
sgt_kernel::Tf32x3Geometry unpadded(int BM, int BN, int BK, int WM, int WN, int S, bool ta,
                                    bool tb) {
  auto g = sgt_kernel::make_tf32x3_geometry(BM, BN, BK, WM, WN, S, ta, tb);
  g.B_LD = g.B_COLS - 4;  // shorter rows than the slice's
  g.B_FLOATS = g.B_ROWS * g.B_LD;
  g.STAGE_FLOATS = g.A_FLOATS + g.B_FLOATS;
  g.SMEM_BYTES = S * g.STAGE_FLOATS * 4;
  return g;
}
}  // namespace broken

TEST(Tf32x3Family, TheSimulationCatchesABrokenGeometry) {
  const auto c = tc3_config(64, 64, 16, 32, 32, 2);
  ASSERT_TRUE(tf32x3::simulate(c).ok()) << tf32x3::simulate(c).summary();
  EXPECT_TRUE(tf32x3::Indexing{}.is_kernels());
  struct Mutation {
    const char* name;
    tf32x3::Indexing ix;
    std::vector<std::string> kinds;  // each must be reported
  };
  std::vector<Mutation> ms;
  auto add = [&](const char* name, auto set, std::vector<std::string> kinds) {
    tf32x3::Indexing ix;
    set(ix);
    ms.push_back({name, ix, std::move(kinds)});
  };
  add("copy_col", [](auto& ix) { ix.copy_col = broken::copy_col; },
      {"as_hole", "misaligned_vector"});
  add("copy_row", [](auto& ix) { ix.copy_row = broken::copy_row; }, {"as_hole", "as_overlap"});
  add("copy_row_step", [](auto& ix) { ix.copy_row_step = broken::copy_row_step; },
      {"as_hole", "as_overlap"});
  add("a_slot", [](auto& ix) { ix.a_slot = broken::a_slot; }, {"operand_mismatch"});
  add("b_slot", [](auto& ix) { ix.b_slot = broken::b_slot; }, {"operand_mismatch"});
  add("warp_n0", [](auto& ix) { ix.warp_n0 = broken::warp_n0; }, {"c_hole", "c_overlap"});
  add("lane_group", [](auto& ix) { ix.lane_group = broken::lane_group; }, {"operand_mismatch"});
  add("a_frag_k", [](auto& ix) { ix.a_frag_k = broken::a_frag_k; }, {"operand_mismatch"});
  add("b_frag_k", [](auto& ix) { ix.b_frag_k = broken::b_frag_k; }, {"operand_mismatch"});
  add("acc_m", [](auto& ix) { ix.acc_m = broken::acc_m; }, {"operand_mismatch", "c_overlap"});
  add("acc_n", [](auto& ix) { ix.acc_n = broken::acc_n; },
      {"operand_mismatch", "c_hole", "c_overlap"});
  add("geometry", [](auto& ix) { ix.make_geometry = broken::unpadded; }, {"bs_overlap"});
  for (const auto& m : ms) {
    SCOPED_TRACE(m.name);
    EXPECT_FALSE(m.ix.is_kernels());
    const auto r = tf32x3::simulate(c, m.ix);
    ASSERT_FALSE(r.ok());
    for (const auto& k : m.kinds) EXPECT_TRUE(r.has(k)) << k << " not in:\n" << r.summary();
    // Every kind is one the simulation documents, and each detail names its case.
    const auto& kinds = sim_defect_kinds();
    for (const auto& d : r.defects) {
      EXPECT_NE(std::find(kinds.begin(), kinds.end(), d.kind), kinds.end()) << d.kind;
      EXPECT_NE(d.detail.find('['), std::string::npos) << d.detail;
    }
  }
}

// The ring: STAGES 2 to 8 compute every slice after it has landed and overwrite no stage still
// to be computed; one stage cannot (the kernel's static_assert refuses it too).
TEST(Tf32x3Family, TheSimulationReplaysTheRingOfStages) {
  for (int s = 2; s <= 8; ++s) {
    const auto r = tf32x3::simulate_pipeline(tc3_config(64, 64, 16, 32, 32, s));
    EXPECT_TRUE(r.ok()) << s << ":\n" << r.summary();
  }
  const auto one = tf32x3::simulate_pipeline(tc3_config(64, 64, 16, 32, 32, 1));
  EXPECT_TRUE(one.has("pipeline_not_landed")) << one.summary();
  const auto r = simulate_config(tc3_config(64, 64, 16, 32, 32, 1));
  EXPECT_TRUE(r.has("pipeline_not_landed")) << r.summary();
  EXPECT_NE(tc3().simulation_scope().find("split-TF32"), std::string::npos);
}

// The boundary blocks: each k-slice element outside the matrix a zero fill, every C element inside
// stored once (simulate_block on its own).
TEST(Tf32x3Family, BoundaryBlocksSimulateCleanInEveryLayoutAndCopyWidth) {
  const auto c = probe_config();
  const auto cases = tf32x3::block_cases(c);
  EXPECT_EQ(cases.size(), 48u);
  for (const auto& bc : cases) {
    const auto r = tf32x3::simulate_block(c, bc);
    EXPECT_TRUE(r.ok()) << tf32x3::describe(bc) << ":\n" << r.summary();
  }
}

// The float4-capable instance is asked for exactly where tf32x3_vec_ok holds for operands at their
// row lengths from aligned allocations (what kernel_vec_loads decides for the tuner), and the edge
// cases keep to operands that instance takes.
TEST(Tf32x3Family, ItsInstanceIsTheCopyWidthItsOperandsAllow) {
  const auto c = probe_config();
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    const bool ta = layout[0] == 'T', tb = layout[1] == 'T';
    for (int M = 1; M <= 9; ++M)
      for (int N = 1; N <= 9; ++N)
        for (int K = 1; K <= 9; ++K) {
          const bool vec = kernel_vec_loads(ta, tb, M, N, K);
          const int lda = ta ? M : K, ldb = tb ? K : N;
          EXPECT_EQ(vec, sgt_kernel::tf32x3_vec_ok(0, lda, 0, ldb)) << layout << M << N << K;
          const auto [runs, runs_vec] = tc3().instance(c, layout, vec);
          EXPECT_EQ(runs, layout);
          EXPECT_EQ(runs_vec, vec);
        }
    for (const auto& e : edge_cases(c, layout)) {
      EXPECT_EQ(e.lda % 4, 0) << e.label;
      EXPECT_EQ(e.ldb % 4, 0) << e.label;
      EXPECT_EQ(e.offset % 4, 0) << e.label;
      EXPECT_GE(e.lda, min_lda(e.problem)) << e.label;
      EXPECT_GE(e.ldb, min_ldb(e.problem)) << e.label;
    }
  }
  EXPECT_EQ(tc3().name_expression(c, "NT", true),
            "sgemm_tf32x3<128,128,32,64,64,3,8,1,false,true,true>");
  EXPECT_EQ(tc3().name_expression(c, "TN", false),
            "sgemm_tf32x3<128,128,32,64,64,3,8,1,true,false,false>");
  // SPLIT_K is a launch parameter.
  auto split = c;
  split.SPLIT_K = 8;
  EXPECT_EQ(tc3().name_expression(split, "NN", true), tc3().name_expression(c, "NN", true));
}

// The model's features ask the family for a thread's work: the mma tiles' accumulators and
// fragments for tf32x3, the warp-tiling geometry's for the others (unchanged).
TEST(Tf32x3Family, TheModelsFeaturesReadTheFamilysThreadWork) {
  const auto& names = feature_names();
  auto at = [&](const std::vector<float>& v, const char* name) {
    const auto it = std::find(names.begin(), names.end(), name);
    EXPECT_NE(it, names.end()) << name;
    return v[static_cast<size_t>(it - names.begin())];
  };
  const auto p = parse_shape("4096x4096x4096");
  const auto f = features(probe_config(), p, 132);
  EXPECT_EQ(at(f, "accumulators"), 128.0f);
  EXPECT_EQ(at(f, "fragments"), 64.0f);
  EXPECT_EQ(at(f, "wmiter"), 4.0f);
  EXPECT_FLOAT_EQ(at(f, "thread_intensity"), 32.0f * 4 * 8 / (4 * 4 + 2 * 8));
  EXPECT_EQ(at(f, "family"), 2.0f);
  EXPECT_FLOAT_EQ(at(f, "smem_kb"), 107520 / 1024.0f);
  for (const float v : f) EXPECT_TRUE(std::isfinite(v));
  const auto seed = test::config(test::kSeed);
  const auto g = derive(seed);
  const auto w = features(seed, p, 132);
  EXPECT_EQ(at(w, "accumulators"), static_cast<float>(g.ACCUMULATORS));
  EXPECT_EQ(at(w, "fragments"), static_cast<float>(g.FRAGMENTS));
  EXPECT_EQ(at(w, "wmiter"), static_cast<float>(g.WMITER));
  EXPECT_FLOAT_EQ(at(w, "thread_intensity"), 4.0f * 4 / 8);
}

TEST(Tf32x3Family, CheckShowsItsDerivedGeometry) {
  const auto c = probe_config();
  const auto d = tc3().derived(c);
  EXPECT_EQ(d.at("MMA_TILES_M"), 4);
  EXPECT_EQ(d.at("MMA_TILES_N"), 8);
  EXPECT_EQ(d.at("ACCUMULATORS"), 128);
  EXPECT_EQ(d.at("ACC"), 1);
  EXPECT_EQ(d.at("SHARED_BYTES").at("TN"), 104448);
  EXPECT_NE(tc3().derived_line(c).find("accumulators 128"), std::string::npos);
  const auto r = test::run_cli("check tc3_128x128x32_w64x64_n128_s3_g8_k4 --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("family"), "tf32x3");
  EXPECT_TRUE(j.at("valid").get<bool>());
  EXPECT_TRUE(j.at("simulation").empty()) << r.out;
  const auto bad = test::run_cli("check tc3_256x32x16_w64x32_n128_s3", false);
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("rule tf32x3_copy_mapping"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace sgt
