// The CPU index simulation against the named rules: every survivor must simulate clean, every
// structural reject must show a defect, and a wide sweep pins down where the two may differ.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "config.hpp"
#include "index_sim.hpp"
#include "space.hpp"

namespace sgt {
namespace {

WarpTileConfig named(const std::string& name) {
  auto c = from_name(name);
  EXPECT_TRUE(c.has_value()) << name;
  return c.value_or(WarpTileConfig{});
}

const std::string kSeed = "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1";

bool is_structural(const std::string& rule) {
  for (const auto& r : rules()) {
    if (r.name == rule) return r.structural;
  }
  ADD_FAILURE() << "check() reported a rule missing from rules(): " << rule;
  return false;
}

std::vector<std::string> structural_violations(const WarpTileConfig& c) {
  std::vector<std::string> out;
  for (const auto& v : check(c)) {
    if (is_structural(v.rule)) out.push_back(v.rule);
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

// Calls f for every combination of per-field value lists (kConfigFields order).
template <typename F>
void for_each_combo(const std::vector<std::vector<int>>& values, F&& f) {
  std::vector<size_t> idx(values.size(), 0);
  for (;;) {
    WarpTileConfig c;
    for (size_t i = 0; i < values.size(); ++i) c.*kConfigFields[i].member = values[i][idx[i]];
    f(c);
    size_t i = values.size();
    while (i > 0) {
      --i;
      if (++idx[i] < values[i].size()) break;
      idx[i] = 0;
      if (i == 0) return;
    }
  }
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

void expect_all_clean(const std::vector<WarpTileConfig>& configs) {
  int bad = 0;
  for (const auto& c : configs) {
    const auto r = simulate_block(c);
    if (!r.ok() && ++bad <= 5) ADD_FAILURE() << to_name(c) << ":\n" << r.summary();
  }
  EXPECT_EQ(bad, 0) << "survivors with defects";
}

TEST(IndexSim, SeedConfigIsClean) {
  const auto r = simulate_block(named(kSeed));
  EXPECT_TRUE(r.ok()) << r.summary();
}

TEST(IndexSim, DefaultSpaceSurvivorsAreCleanAndFast) {
  const auto e = enumerate(load_space("default"));
  ASSERT_GT(e.survivors.size(), 1000u);
  const auto t0 = std::chrono::steady_clock::now();
  expect_all_clean(e.survivors);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
#ifdef NDEBUG
  EXPECT_LT(secs, 5.0) << "simulating " << e.survivors.size() << " survivors";
#endif
  RecordProperty("seconds", std::to_string(secs));
}

TEST(IndexSim, QuickSpaceSurvivorsAreClean) {
  const auto e = enumerate(load_space("quick"));
  ASSERT_FALSE(e.survivors.empty());
  expect_all_clean(e.survivors);
}

// Every reject of the default space that breaks a structural rule must break the kernel too:
// otherwise the rule prunes configs the kernel could run, or (worse) the rule's reason is not the
// kernel's.
TEST(IndexSim, StructuralRejectsOfDefaultSpaceHaveDefects) {
  const auto space = load_space("default");
  std::map<std::string, std::vector<WarpTileConfig>> by_rule;
  for_each_combo(space.values, [&](const WarpTileConfig& c) {
    for (const auto& v : check(c, space.limits)) {
      if (is_structural(v.rule)) by_rule[v.rule].push_back(c);
    }
  });

  constexpr size_t kSamples = 200;
  for (const auto& rule : rules()) {
    if (!rule.structural) continue;
    const auto& rejects = by_rule[std::string(rule.name)];
    if (rejects.empty()) {
      // The space loader refuses such values outright; the hand-made configs below cover them.
      EXPECT_TRUE(rule.name == "positive_values" || rule.name == "float4_alignment")
          << "no default-space reject breaks " << rule.name << ", and no test covers it";
      continue;
    }
    // Spread the samples over the whole enumeration rather than its first corner.
    const size_t step = std::max<size_t>(1, rejects.size() / kSamples);
    for (size_t i = 0; i < rejects.size(); i += step) {
      const auto r = simulate_block(rejects[i]);
      EXPECT_FALSE(r.ok()) << rule.name << ": " << to_name(rejects[i]) << " simulates clean";
    }
  }
}

TEST(IndexSim, NonPositiveValuesAreDegenerate) {
  const auto seed = named(kSeed);
  for (const auto& f : kConfigFields) {
    for (int v : {0, -1, -128}) {
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

TEST(IndexSim, Float4AlignmentViolationsHaveDefects) {
  const std::vector<std::string> configs = {
      "wt_128x64x16_w64x32_wn2_t4x2_n128_mb1",  // TN = 2: the epilogue's float4 spills over
      "wt_192x64x6_w64x64_wn2_t8x4_n96_mb1",    // BK = 6: every other rule holds
      "wt_128x64x6_w64x32_wn2_t4x4_n128_mb1",   // BK = 6 in the seed
      "wt_128x60x16_w64x30_wn2_t4x4_n128_mb1",  // BN = 60, WN = 30
      "wt_128x48x16_w64x24_wn2_t4x6_n128_mb1",  // TN = 6
      "wt_64x64x12_w32x32_wn2_t2x2_n128_mb1",   // TN = 2, BK = 12
  };
  for (const auto& n : configs) {
    const auto c = named(n);
    const auto names = structural_violations(c);
    ASSERT_NE(std::find(names.begin(), names.end(), "float4_alignment"), names.end()) << n;
    const auto r = simulate_block(c);
    EXPECT_FALSE(r.ok()) << n;
    EXPECT_FALSE(r.has("degenerate_geometry")) << n << ": the sample should exercise the loops";
  }
}

TEST(IndexSim, Bk6IsTheOnlyBrokenRuleAndTheKernelStillBreaks) {
  // 96 threads over BK/4 = 1 float4 column load 64 rows of A per pass: BM = 192 divides, and
  // 96 threads over 16 float4 columns of B give 6 rows = BK. Only the alignment rule is left.
  const auto c = named("wt_192x64x6_w64x64_wn2_t8x4_n96_mb1");
  EXPECT_EQ(joined(structural_violations(c)), "float4_alignment");
  const auto r = simulate_block(c);
  // Columns 4 and 5 of every A row are never loaded, and k-step 1 starts at column 6.
  EXPECT_TRUE(r.has("as_hole")) << r.summary();
  EXPECT_TRUE(r.has("misaligned_vector")) << r.summary();
}

TEST(IndexSim, Tn2OverlapsNeighboursAndMixesOperands) {
  const auto c = named("wt_128x64x16_w64x32_wn2_t4x2_n128_mb1");
  EXPECT_EQ(joined(structural_violations(c)), "float4_alignment");
  const auto r = simulate_block(c);
  EXPECT_TRUE(r.has("c_overlap")) << r.summary();
  EXPECT_TRUE(r.has("operand_mismatch")) << r.summary();
  EXPECT_TRUE(r.has("misaligned_vector")) << r.summary();
  EXPECT_FALSE(r.has("as_hole"));
  EXPECT_FALSE(r.has("bs_hole"));
}

TEST(IndexSim, WmiterViolationLeavesHolesOrOverlapsInC) {
  // WM*WN = 1536 is 1.5 warp passes of 32*4*4*2 = 1024: WMITER truncates to 1.
  const auto c = named("wt_96x64x16_w48x32_wn2_t4x4_n128_mb1");
  const auto names = structural_violations(c);
  ASSERT_NE(std::find(names.begin(), names.end(), "wmiter_divisibility"), names.end());
  const auto r = simulate_block(c);
  EXPECT_TRUE(r.has("c_hole") || r.has("c_overlap")) << r.summary();
  // The loaders are fine: 32 rows of A per pass divide 96, 8 rows of B per pass divide 16.
  EXPECT_FALSE(r.has("as_hole") || r.has("bs_hole") || r.has("as_overlap")) << r.summary();
}

TEST(IndexSim, LoadStrideViolationLeavesAsEmpty) {
  // 256 threads over BK/4 = 2 float4 columns would load 128 rows per pass: more than BM = 64, so
  // the seed's loop bound skips the A load entirely.
  const auto c = named("wt_64x128x8_w32x32_wn1_t4x8_n256_mb1");
  EXPECT_EQ(joined(structural_violations(c)), "load_stride_a");
  const auto r = simulate_block(c);
  ASSERT_TRUE(r.has("as_hole")) << r.summary();
  for (const auto& d : r.defects) {
    if (d.kind == "as_hole") EXPECT_NE(d.detail.find("512"), std::string::npos) << d.detail;
  }
  EXPECT_FALSE(r.has("bs_hole")) << r.summary();
  EXPECT_FALSE(r.has("c_hole")) << r.summary();
}

TEST(IndexSim, PartialLoadPassOverlapsOrOverruns) {
  // 128 threads over BK/4 = 3 columns: thread 126 lands on row 42 = ROW_STRIDE_A, the row the next
  // pass starts on.
  const auto c = named("wt_128x64x12_w64x32_wn2_t4x4_n128_mb1");
  const auto names = structural_violations(c);
  ASSERT_NE(std::find(names.begin(), names.end(), "load_stride_a"), names.end());
  const auto r = simulate_block(c);
  EXPECT_TRUE(r.has("as_overlap") || r.has("as_hole")) << r.summary();
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
  auto no_stride = seed;  // BK > 4*NUM_THREADS: ROW_STRIDE_A = 0, a loop that never advances
  no_stride.BK = 1024;
  auto overflow = seed;
  overflow.WM = 1 << 19;
  overflow.WN = 1 << 19;
  for (const auto& c : {huge, threads, no_lanes, wide_warp, no_stride, overflow}) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = simulate_block(c);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(r.has("degenerate_geometry")) << to_name(c) << "\n" << r.summary();
    EXPECT_EQ(r.defects.size(), 1u) << to_name(c) << "\n" << r.summary();
    EXPECT_LT(secs, 0.5) << to_name(c);
  }
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
    const auto r = simulate_block(c);
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
  // The sweep must actually reach valid configs and rejects of every structural rule.
  EXPECT_GT(both_ok, 100);
  for (const auto& rule : rules()) {
    if (rule.structural && rule.name != "positive_values") {
      EXPECT_GT(rejects_with_defects[std::string(rule.name)], 0) << rule.name;
    }
  }
  RecordProperty("combinations", std::to_string(total));
  RecordProperty("partial_warp", std::to_string(partial_warp));
  RecordProperty("oversized_warp_tile", std::to_string(oversized_warp_tile));
}

}  // namespace
}  // namespace sgt
