// The CPU index simulation against the named rules: every survivor must simulate clean in every
// layout and at the edges of the matrix, every structural reject must show a defect, and a wide
// sweep pins down where the two may differ. The simulation's concerns have their own tests:
// index_sim_warptile_test.cpp (the block of the warp-tiling kernel), index_sim_mutation_test.cpp
// (broken index functions), index_sim_grid_test.cpp (the launch) and index_sim_tma_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "config.hpp"
#include "family.hpp"
#include "index_sim.hpp"
#include "index_sim_test_util.hpp"
#include "space.hpp"

namespace sgt {
namespace {

// The shared helpers; kLayouts also by name, to hide sgt::kLayouts (the layouts' spellings).
using namespace sim_test;
using sim_test::kLayouts;

TEST(IndexSim, SeedConfigIsClean) {
  const auto r = simulate_block(named(kSeed));
  EXPECT_TRUE(r.ok()) << r.summary();
}

TEST(IndexSim, EveryLayoutOfTheSeedIsClean) {
  for (const auto& sc : kLayouts) {
    const auto r = simulate_block(named(kSeed), sc);
    EXPECT_TRUE(r.ok()) << describe(sc) << "\n" << r.summary();
  }
  EXPECT_TRUE(simulate_config(named(kSeed)).ok());
}

TEST(IndexSim, StandardCasesCoverEveryLayoutWholeAndAtTheEdges) {
  const auto c = named(kSeed);
  const auto cases = standard_cases(c);
  const std::set<std::string> all = {"NN", "NT", "TN", "TT"};
  std::set<std::string> whole, main_vec, edge_only, partial, scalar_main, scalar_partial;
  std::set<std::string> scalar_straddle_m, scalar_straddle_n;
  std::set<int> m_rems, n_rems, k_rems;
  for (const auto& sc : cases) {
    const std::string lay = describe(layout(sc.trans_a, sc.trans_b));
    // Every float4 case is one the kernel could run.
    EXPECT_TRUE(!sc.vec_kernel || !sc.vec_loads || vec_legal(sc)) << describe(sc);
    if (!sc.vec_kernel) {
      // The scalar instance is picked for operands that refuse float4s.
      EXPECT_FALSE(sc.vec_loads) << describe(sc);
      EXPECT_TRUE(sc.m_rem > 0 || sc.n_rem > 0) << describe(sc);
      if (sc.k_rem == 0 || sc.k_rem == c.BK) {
        scalar_main.insert(lay);
        // A float4's worth of elements straddles the end of the matrix: tile-3 and 1.
        if (sc.m_rem == c.BM - 3 && sc.n_rem == 1) scalar_straddle_m.insert(lay);
        if (sc.m_rem == 1 && sc.n_rem == c.BN - 3) scalar_straddle_n.insert(lay);
      } else {
        scalar_partial.insert(lay);
      }
    } else if (sc.m_rem == 0 && sc.n_rem == 0 && sc.k_rem == 0) {
      EXPECT_TRUE(sc.vec_loads) << describe(sc);
      whole.insert(lay);
    } else if (sc.k_rem == 0) {
      // The main loop at the edge of the matrix in M and N: loads clamped.
      EXPECT_TRUE(sc.m_rem > 0 && sc.n_rem > 0) << describe(sc);
      (sc.vec_loads ? main_vec : edge_only).insert(lay);
    } else {
      partial.insert(lay);
    }
    m_rems.insert(sc.m_rem);
    n_rems.insert(sc.n_rem);
    k_rems.insert(sc.k_rem);
  }
  EXPECT_EQ(whole, all);
  EXPECT_EQ(main_vec, all);
  EXPECT_EQ(edge_only, all);
  EXPECT_EQ(partial, all);
  EXPECT_EQ(scalar_main, all);
  EXPECT_EQ(scalar_partial, all);
  EXPECT_EQ(scalar_straddle_m, all);
  EXPECT_EQ(scalar_straddle_n, all);
  // Remainders 1 and tile-1 and a few between, and each dimension also whole at an edge.
  for (const auto& [rems, tile] : {std::pair{m_rems, c.BM}, {n_rems, c.BN}, {k_rems, c.BK}}) {
    EXPECT_TRUE(rems.count(0) && rems.count(1) && rems.count(tile - 1) && rems.count(tile - 3))
        << tile;
  }
  EXPECT_EQ(describe(cases[12]), "NN edge -x33 k15 edge-only");
  EXPECT_EQ(describe(cases[10]), "TN edge 124x4 k-");
  EXPECT_EQ(describe(cases[19]), "NN edge 125x1 k- scalar-kernel");
  EXPECT_EQ(describe(cases[23]), "NT edge 125x1 k16 scalar-kernel");
  EXPECT_EQ(cases.size(), 31u);
  EXPECT_EQ(standard_grids(c).size(), 5u);
  EXPECT_NE(simulate_config_scope().find("NN NT TN TT"), std::string::npos);
  EXPECT_NE(simulate_config_scope().find("clamped"), std::string::npos);
  EXPECT_NE(simulate_config_scope().find("single-float"), std::string::npos);
  EXPECT_NE(simulate_config_scope().find("27 boundary blocks"), std::string::npos);
  EXPECT_NE(simulate_config_scope().find("5 launch grids"), std::string::npos);
}

TEST(IndexSim, RemaindersOutsideTheTileAreDegenerate) {
  const auto c = named(kSeed);
  for (auto [m, n, k] : {std::tuple{129, 0, 0}, {0, 65, 0}, {0, 0, 17}, {-1, 0, 0}, {0, 0, -3}}) {
    SimCase sc;
    sc.m_rem = m;
    sc.n_rem = n;
    sc.k_rem = k;
    const auto r = simulate_block(c, sc);
    EXPECT_TRUE(r.has("degenerate_geometry")) << m << " " << n << " " << k << "\n" << r.summary();
    EXPECT_EQ(r.defects.size(), 1u);
  }
}

TEST(IndexSim, DefaultSpaceSurvivorsAreClean) {
  const auto e = enumerate(load_space("default"));
  ASSERT_GT(e.survivors.size(), 100u);
  // Each survivor's cases include the scalar instance's boundary blocks in every layout.
  for (const auto& c : e.survivors) {
    std::set<std::pair<bool, bool>> scalar_layouts;
    for (const auto& sc : standard_cases(c)) {
      if (!sc.vec_kernel) scalar_layouts.insert({sc.trans_a, sc.trans_b});
    }
    ASSERT_EQ(scalar_layouts.size(), 4u) << to_name(c);
  }
  // Every layout, the boundary blocks and the launch grids of each survivor. (How long that takes
  // is for `space --simulate` to show, not for a unit test on a shared machine to assert.)
  expect_all_clean(e.survivors);
}

TEST(IndexSim, QuickSpaceSurvivorsAreClean) {
  const auto e = enumerate(load_space("quick"));
  ASSERT_FALSE(e.survivors.empty());
  expect_all_clean(e.survivors);
}

// The spaces users tune the shipped suite with (suite, skinny, small, ...): every survivor clean.
TEST(IndexSim, EveryOtherBuiltinSpaceSurvivorIsClean) {
  int spaces = 0;
  for (const auto& name : builtin_space_names()) {
    if (name == "default" || name == "quick") continue;  // the tests above
    SCOPED_TRACE(name);
    const auto space = load_space(name);
    const auto e = enumerate(space);
    // A space of a non-strict family alone (tf32x3) has no strict survivors; its own test
    // simulates them (Tf32x3Family.TheSpacesSurvivorsAreValidAndSimulateClean).
    if (e.survivors.empty() &&
        std::all_of(space.families.begin(), space.families.end(), [](const std::string& id) {
          return find_family(id) && find_family(id)->precision() != Precision::fp32;
        }))
      continue;
    ASSERT_FALSE(e.survivors.empty());
    expect_all_clean(e.survivors);
    ++spaces;
  }
  EXPECT_GE(spaces, 3);
}

TEST(IndexSim, SimulateConfigsMatchesOneByOne) {
  auto configs = enumerate(load_space("quick")).survivors;
  for (const char* broken :
       {"wt_96x64x16_w48x32_wn2_t4x4_n128_mb1", "wt_6x64x64_w6x64_wn1_t3x4_n32_mb1",
        "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p2"}) {
    configs.push_back(named(broken));
  }
  const auto reports = simulate_configs(configs, 2);
  ASSERT_EQ(reports.size(), configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    EXPECT_EQ(reports[i].summary(), simulate_config(configs[i]).summary()) << to_name(configs[i]);
  }
  EXPECT_FALSE(reports.back().ok());
  EXPECT_TRUE(simulate_configs({}).empty());
}

// One hand-made config per structural rule that breaks it (alone where the rules allow), for the
// rules a search space rarely or never rejects.
const std::map<std::string, std::string> kBreaks = {
    {"wmiter_divisibility", "wt_96x64x16_w48x32_wn2_t4x4_n128_mb1"},
    {"positive_values", "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_g0"},  // parsed, then checked
    {"warp_tiles_cover_block", "wt_64x64x8_w48x16_wn1_t2x4_n128_mb1"},
    {"thread_count", "wt_32x32x8_w32x32_wn1_t4x4_n64_mb1"},
    {"subtile_divisibility", "wt_128x32x8_w128x16_wn4_t2x8_n64_mb1"},
    {"subtile_lane_grid", "wt_96x32x8_w48x32_wn1_t4x8_n64_mb1"},
    {"load_stride_a", "wt_64x128x8_w32x32_wn1_t4x8_n256_mb1"},
    {"load_stride_b", "wt_128x64x12_w64x32_wn2_t4x4_n128_mb1"},
    {"float4_alignment", "wt_6x64x64_w6x64_wn1_t3x4_n32_mb1"},
    {"pad_alignment", "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p2"},
    {"stage_c_buffer", "wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_p4_c1"},
    {"tma_slice", "wt_64x128x8_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o1_m1"},
    {"tma_transpose", "wt_16x128x16_w16x32_wn1_t4x4_n128_mb2_s3_m1"},
    {"tma_box", "wt_128x256x16_w64x64_wn4_t8x4_n256_mb1_s4_p4_g8_o3_b4_m1"},
    {"tma_warpgroups", "wt_64x64x32_w64x32_wn1_t4x4_n64_mb2_s3_m1"},
    {"tf32x3_warp_grid", "tc3_64x64x16_w48x32_n64_s2"},
    {"tf32x3_warp_tile", "tc3_32x32x16_w8x32_n128_s2"},
    {"tf32x3_bk", "tc3_32x32x4_w32x32_n32_s2"},
    {"tf32x3_copy_mapping", "tc3_256x32x16_w64x32_n128_s3"},
};

// Every structural rule must break the kernel: each hand-made example, and every reject of the
// default space (sampled), must show a defect. Otherwise the rule prunes configs the kernel could
// run, or (worse) the rule's reason is not the kernel's.
TEST(IndexSim, StructuralRejectsHaveDefects) {
  for (const auto& rule : rules()) {
    if (!rule.structural) continue;
    const auto it = kBreaks.find(std::string(rule.name));
    ASSERT_NE(it, kBreaks.end()) << "no example breaks the structural rule " << rule.name;
    auto c = from_name(it->second);
    if (!c) {
      // GROUP_M = 0 is not a name; build it.
      c = named(kSeed);
      c->GROUP_M = 0;
    }
    const auto names = structural_violations(*c);
    EXPECT_NE(std::find(names.begin(), names.end(), rule.name), names.end())
        << it->second << " does not break " << rule.name << " but " << joined(names);
    const auto r = simulate_config(*c);
    EXPECT_FALSE(r.ok()) << rule.name << ": " << it->second << " simulates clean";
  }

  const auto space = load_space("default");
  std::map<std::string, std::vector<WarpTileConfig>> by_rule;
  for_each_combo(space.values, [&](const WarpTileConfig& c) {
    for (const auto& v : check(c, space.limits)) {
      if (is_structural(v.rule)) by_rule[v.rule].push_back(c);
    }
  });
  constexpr size_t kSamples = 100;
  size_t sampled = 0;
  for (const auto& [rule, rejects] : by_rule) {
    // Spread the samples over the whole enumeration rather than its first corner.
    const size_t step = std::max<size_t>(1, rejects.size() / kSamples);
    for (size_t i = 0; i < rejects.size(); i += step, ++sampled) {
      const auto r = simulate_config(rejects[i]);
      EXPECT_FALSE(r.ok()) << rule << ": " << to_name(rejects[i]) << " simulates clean";
    }
  }
  EXPECT_GT(sampled, 0u);
}

TEST(IndexSim, NonPositiveValuesAreDegenerate) {
  const auto seed = named(kSeed);
  for (const auto& f : kConfigFields) {
    for (int v : {f.min_value - 1, -1, -128}) {
      auto c = seed;
      c.*f.member = v;
      const auto names = structural_violations(c);
      ASSERT_NE(std::find(names.begin(), names.end(), "positive_values"), names.end())
          << f.name << " = " << v;
      const auto r = simulate_block(c);
      EXPECT_TRUE(r.has("degenerate_geometry")) << f.name << " = " << v << "\n" << r.summary();
    }
  }
}

TEST(IndexSim, ReportsEachKindOnceWithExampleAndCount) {
  const auto r = simulate_block(named("wt_128x60x16_w64x30_wn2_t4x4_n128_mb1"));
  ASSERT_FALSE(r.ok());
  std::set<std::string> seen;
  const auto& kinds = sim_defect_kinds();
  size_t last = 0;
  for (const auto& d : r.defects) {
    EXPECT_TRUE(seen.insert(d.kind).second) << "reported twice: " << d.kind;
    const auto pos = std::find(kinds.begin(), kinds.end(), d.kind);
    ASSERT_NE(pos, kinds.end()) << "undocumented kind " << d.kind;
    const size_t at = static_cast<size_t>(pos - kinds.begin());
    EXPECT_GE(at, last) << "defects out of order";
    last = at;
    EXPECT_NE(d.detail.find("in all"), std::string::npos) << d.detail;
    EXPECT_TRUE(d.kind == "degenerate_geometry" || d.detail.find("thread") != std::string::npos ||
                d.detail.find('[') != std::string::npos)
        << d.detail;
  }
}

TEST(IndexSim, AbsurdOrZeroStrideGeometriesReturnPromptly) {
  const auto seed = named(kSeed);
  auto huge = seed;
  huge.BM = 1 << 20;
  huge.WM = 1 << 20;
  auto threads = seed;
  threads.NUM_THREADS = 1 << 16;
  auto no_lanes = seed;  // TN > WSUBN: LANES_N = 0
  no_lanes.TN = 32;
  auto wide_warp = seed;  // WN > BN: WARPS_N = 0
  wide_warp.WN = 128;
  auto no_float4 = seed;  // BK = 2: not one whole float4 in a row of the A slice
  no_float4.BK = 2;
  auto overflow = seed;
  overflow.WM = 1 << 19;
  overflow.WN = 1 << 19;
  for (const auto& c : {huge, threads, no_lanes, wide_warp, no_float4, overflow}) {
    // Refused before any loop runs: a simulation that tried would not end within ctest's timeout.
    const auto r = simulate_block(c);
    EXPECT_TRUE(r.has("degenerate_geometry")) << to_name(c) << "\n" << r.summary();
    EXPECT_EQ(r.defects.size(), 1u) << to_name(c) << "\n" << r.summary();
    const auto all = simulate_config(c);
    EXPECT_TRUE(all.has("degenerate_geometry")) << to_name(c) << "\n" << all.summary();
    EXPECT_EQ(all.defects.size(), 1u) << to_name(c) << "\n" << all.summary();
  }
  // A deep slice (the seed with BK = 1024: 256 A passes) is no problem, only slow on a GPU.
  auto deep = seed;
  deep.BK = 1024;
  const auto r = simulate_config(deep);
  EXPECT_TRUE(r.ok()) << r.summary();
}

// Whether two configs place every accumulator of every thread at the same C element.
bool same_indexing(const WarpTileConfig& a, const WarpTileConfig& b) {
  const auto ga = derive(a), gb = derive(b);
  if (ga.WMITER != gb.WMITER || ga.WNITER != gb.WNITER || ga.TM != gb.TM || ga.TN != gb.TN ||
      a.NUM_THREADS != b.NUM_THREADS) {
    return false;
  }
  for (int tid = 0; tid < a.NUM_THREADS; ++tid) {
    for (int ws = 0; ws < ga.WMITER; ++ws) {
      for (int i = 0; i < ga.TM; ++i) {
        if (sgt_kernel::tile_row(ga, tid, ws, i) != sgt_kernel::tile_row(gb, tid, ws, i)) {
          return false;
        }
      }
    }
    for (int ws = 0; ws < ga.WNITER; ++ws) {
      for (int i = 0; i < ga.TN; ++i) {
        if (sgt_kernel::tile_col(ga, tid, ws, i) != sgt_kernel::tile_col(gb, tid, ws, i)) {
          return false;
        }
      }
    }
  }
  return true;
}

// A wide sweep, with non-power-of-two values, partial warps and float4-breaking sizes, compared
// both ways. Rules that pass must mean a clean kernel. A clean kernel is expected to pass the
// rules too, except for two classes where the rules are deliberately stricter than the index
// arithmetic; each is recognised by an exact predicate so that any other disagreement fails.
TEST(IndexSim, WideSweepRulesAndSimulationAgree) {
  const std::vector<std::vector<int>> values = {
      {16, 32, 48, 64},       // BM
      {8, 16, 24, 32, 64},    // BN
      {4, 6, 8},              // BK
      {8, 16, 24, 32, 64},    // WM
      {4, 8, 16, 24, 32},     // WN
      {1, 2, 3},              // WNITER
      {1, 2, 3, 4},           // TM
      {2, 4, 8},              // TN
      {32, 48, 64, 96, 128},  // NUM_THREADS
      {1},                    // MIN_BLOCKS
  };
  long long total = 0, both_ok = 0, partial_warp = 0, oversized_warp_tile = 0, unexplained = 0;
  long long rules_ok_sim_bad = 0;
  std::map<std::string, long long> rejects_with_defects;
  for_each_combo(values, [&](const WarpTileConfig& c) {
    ++total;
    const auto names = structural_violations(c);
    // A valid config must be clean in every layout and at the edges; a reject only needs one
    // defect, usually found in the first layout already.
    auto r = names.empty() ? simulate_config(c) : simulate_block(c);
    if (!names.empty() && r.ok()) r = simulate_config(c);
    if (names.empty()) {
      if (!r.ok() && ++rules_ok_sim_bad <= 5) {
        ADD_FAILURE() << to_name(c) << " passes the rules but:\n" << r.summary();
      }
      if (r.ok()) ++both_ok;
      return;
    }
    if (!r.ok()) {
      for (const auto& n : names) ++rejects_with_defects[n];
      return;
    }
    // The kernel's static_assert(thread_count) refuses a trailing partial warp, even where its
    // lanes happen to cover the rows the full warps leave.
    if (c.NUM_THREADS % 32 != 0 &&
        std::all_of(names.begin(), names.end(), [](const std::string& n) {
          return n == "warp_tiles_cover_block" || n == "thread_count";
        })) {
      ++partial_warp;
      return;
    }
    // WM > BM with a single warp row only acts through WMITER and WSUBM: the same kernel as the
    // config whose warp tile is the block's height, which the rules accept. Pruning the duplicate
    // spelling keeps the search from timing one kernel twice.
    if (c.WM > c.BM) {
      auto canonical = c;
      canonical.WM = c.BM;
      if (structural_violations(canonical).empty() && same_indexing(c, canonical)) {
        ++oversized_warp_tile;
        return;
      }
    }
    if (++unexplained <= 10) {
      ADD_FAILURE() << to_name(c) << " simulates clean but breaks " << joined(names)
                    << ": a rule is stricter than the kernel needs";
    }
  });
  EXPECT_EQ(rules_ok_sim_bad, 0);
  EXPECT_EQ(unexplained, 0);
  // The sweep must actually reach valid configs and rejects of every structural rule but the
  // knobs' (KnobSweepRulesAndSimulationAgree).
  EXPECT_GT(both_ok, 100);
  // (The TMA rules: TmaSweepRulesAndSimulationAgree.)
  for (const auto& rule : rules()) {
    // (tf32x3's: Tf32x3Family.StructuralRulesAndTheSimulationAgreeOverASweep.)
    if (rule.structural && rule.name != "positive_values" && rule.name != "pad_alignment" &&
        rule.name != "stage_c_buffer" && rule.name.rfind("tma_", 0) != 0 &&
        rule.name.rfind("tf32x3_", 0) != 0) {
      EXPECT_GT(rejects_with_defects[std::string(rule.name)], 0) << rule.name;
    }
  }
  RecordProperty("combinations", std::to_string(total));
  RecordProperty("partial_warp", std::to_string(partial_warp));
  RecordProperty("oversized_warp_tile", std::to_string(oversized_warp_tile));
}

// The knobs over a few tile configs (one with scalar As reads): the structural rules and the
// simulation of every layout, edge and launch grid must agree exactly.
TEST(IndexSim, KnobSweepRulesAndSimulationAgree) {
  long long valid = 0, rejected = 0;
  for (const char* base :
       {"wt_128x64x16_w64x32_wn2_t4x4_n128_mb1", "wt_128x64x16_w64x32_wn2_t2x4_n128_mb1",
        "wt_64x256x16_w64x32_wn4_t4x4_n256_mb2", "wt_256x128x8_w128x64_wn4_t8x4_n128_mb1"}) {
    for (int stages : {1, 2, 3}) {
      for (int pad : {0, 1, 2, 4, 6, 8}) {
        for (int group : {1, 3, 8}) {
          for (int split : {1, 2, 5}) {
            auto c = named(base);
            c.STAGES = stages;
            c.PAD_A = pad;
            c.GROUP_M = group;
            c.SPLIT_K = split;
            // The staged epilogue where the split leaves the tiles whole and where it does not.
            c.STAGE_C = split == 2 ? 1 : 0;
            const auto names = structural_violations(c);
            const auto r = simulate_config(c);
            if (names.empty()) {
              ++valid;
              EXPECT_TRUE(r.ok()) << to_name(c) << " passes the rules but:\n" << r.summary();
            } else {
              ++rejected;
              EXPECT_EQ(joined(names), "pad_alignment") << to_name(c);
              EXPECT_TRUE(r.has("misaligned_vector")) << to_name(c) << "\n" << r.summary();
            }
          }
        }
      }
    }
  }
  EXPECT_GT(valid, 100);
  EXPECT_GT(rejected, 100);
}

}  // namespace
}  // namespace sgt
