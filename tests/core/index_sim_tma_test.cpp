// The TMA-fed kernel (TMA = 1) in the index simulation: clean configs in every layout and at every
// remainder, each TMA rule's break caught where the kernel breaks, and broken variants of
// tma_geometry.h's functions.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "config.hpp"
#include "index_sim.hpp"
#include "index_sim_test_util.hpp"

namespace sgt {
namespace {

// The shared helpers; kLayouts also by name, to hide sgt::kLayouts (the layouts' spellings).
using namespace sim_test;
using sim_test::kLayouts;

// --- TMA = 1 ---------------------------------------------------------------------------------
// The TMA-fed kernel (sgemm_ws_tma.cuh): the producer's copies, the hardware swizzle, the
// transposing warpgroup and the shared-memory layout replayed from tma_geometry.h, then the
// consumers and the epilogue. Each rule's break is simulated directly, never through check().

// 64x128 tiles, 3 stages, PAD_A 4; 128x256 at BK = 16 (64-byte staging rows), BN + PAD_B = 256.
const std::string kTma64 = "wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o1_m1";
const std::string kTma128 = "wt_128x256x16_w64x64_wn4_t8x4_n256_mb1_s4_p4_g8_o3_m1";

std::string detail_of(const SimReport& r, const std::string& kind) {
  for (const auto& d : r.defects) {
    if (d.kind == kind) return d.detail;
  }
  return {};
}

// Which operands a layout stages: A where it is stored m-major (NN, NT), B where n-major (NT, TT).
std::set<std::string> staging_a() {
  return {"NN", "NT"};
}
std::set<std::string> staging_b() {
  return {"NT", "TT"};
}
const std::set<std::string> kAllLayouts = {"NN", "NT", "TN", "TT"};

// Simulates `c` in every layout with `ix`: the layouts in `broken` must show every kind in
// `kinds`, the others none at all.
void expect_broken_in(const WarpTileConfig& c, const SimIndexing& ix,
                      const std::set<std::string>& broken, const std::vector<std::string>& kinds,
                      const std::string& what) {
  for (const auto& sc : kLayouts) {
    const auto r = simulate_block_with(c, sc, ix);
    if (broken.count(describe(sc)) == 0) {
      EXPECT_TRUE(r.ok()) << what << " " << describe(sc) << "\n" << r.summary();
      continue;
    }
    for (const auto& k : kinds) {
      EXPECT_TRUE(r.has(k)) << what << " " << describe(sc) << " lacks " << k << "\n" << r.summary();
    }
  }
}

TEST(IndexSimTma, ValidConfigsAreCleanInEveryLayout) {
  for (const auto& name : {kTma64, kTma128}) {
    const auto c = named(name);
    ASSERT_TRUE(check(c).empty()) << name;
    for (const auto& sc : kLayouts) {
      const auto r = simulate_block(c, sc);
      EXPECT_TRUE(r.ok()) << name << " " << describe(sc) << "\n" << r.summary();
    }
    const auto all = simulate_config(c);
    EXPECT_TRUE(all.ok()) << name << "\n" << all.summary();
  }
}

// A TMA config with PACK runs as its TN instance on the panels, whatever the layout: that is the
// only instance the whole-config proof replays, and it is clean.
TEST(IndexSimTma, PackedConfigsRunTheirTnInstanceOnly) {
  auto c = named(kTma64);
  c.PACK = 1;
  ASSERT_TRUE(check(c).empty());
  const auto all = simulate_config(c);
  EXPECT_TRUE(all.ok()) << all.summary();
  EXPECT_TRUE(simulate_block(c, {true, false, 0, 0, 0}).ok());
}

// Boundary blocks: remainders in M and N from 1 to the tile, every k remainder; the copies fill
// zeros outside the matrix, and every slice, edge or not, runs the one loop.
TEST(IndexSimTma, BoundaryBlocksAreCleanAtEveryRemainder) {
  int runs = 0;
  for (const auto& name : {kTma64, kTma128}) {
    const auto c = named(name);
    const int ms[] = {0, 1, 3, 4, c.BM / 2 + 1, c.BM - 3, c.BM};
    const int ns[] = {0, 1, 5, 8, c.BN / 2 + 1, c.BN - 1};
    for (const auto& lay : kLayouts) {
      for (int m : ms) {
        for (int n : ns) {
          for (int k = 0; k <= c.BK; ++k) {
            // Every k with a few (m, n), every (m, n) with a few k.
            if (k > 1 && k < c.BK - 1 && k != c.BK / 2 && m != 1 && n != 5) continue;
            const SimCase sc = edge(lay, m, n, k, true);
            const auto r = simulate_block(c, sc);
            ++runs;
            ASSERT_TRUE(r.ok()) << name << " " << describe(sc) << "\n" << r.summary();
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 1000);
}

TEST(IndexSimTma, LaunchGridsAndSplitKAreClean) {
  for (const auto& name : {kTma64, kTma128}) {
    for (int splits : {1, 2, 3, 7}) {
      for (int group : {1, 8}) {
        auto c = named(name);
        c.SPLIT_K = splits;
        c.GROUP_M = group;
        for (const auto& gr : standard_grids(c)) {
          const auto r = simulate_grid(c, gr.M, gr.N, gr.K);
          EXPECT_TRUE(r.ok()) << to_name(c) << " " << gr.M << "x" << gr.N << "x" << gr.K << "\n"
                              << r.summary();
        }
        for (int K : {1, c.BK - 1, c.BK, c.BK + 1, 1000, 3999, 4000}) {
          const auto r = simulate_grid(c, 300, 200, K);
          EXPECT_TRUE(r.ok()) << to_name(c) << " K " << K << "\n" << r.summary();
        }
      }
    }
  }
}

// One instance, every layout: standard_cases and the launch's last blocks.
TEST(IndexSimTma, CasesRunTheOneInstanceInEveryLayout) {
  const auto c = named(kTma64);
  const auto cases = standard_cases(c);
  EXPECT_EQ(cases.size(), 24u);
  std::set<std::string> whole, edges, partial;
  std::set<int> m_rems, n_rems, k_rems;
  for (const auto& sc : cases) {
    EXPECT_TRUE(sc.vec_kernel && sc.vec_loads && !sc.panel) << describe(sc);
    const std::string lay = describe(layout(sc.trans_a, sc.trans_b));
    if (sc.m_rem == 0 && sc.n_rem == 0 && sc.k_rem == 0) {
      whole.insert(lay);
    } else {
      edges.insert(lay);
    }
    if (sc.k_rem > 0 && sc.k_rem < c.BK) partial.insert(lay);
    m_rems.insert(sc.m_rem);
    n_rems.insert(sc.n_rem);
    k_rems.insert(sc.k_rem);
  }
  EXPECT_EQ(whole, kAllLayouts);
  EXPECT_EQ(edges, kAllLayouts);
  EXPECT_EQ(partial, kAllLayouts);
  for (const auto& [rems, tile] : {std::pair{m_rems, c.BM}, {n_rems, c.BN}, {k_rems, c.BK}}) {
    EXPECT_TRUE(rems.count(0) && rems.count(1) && rems.count(tile - 1) && rems.count(tile - 3))
        << tile;
  }
  EXPECT_NE(simulate_config_scope().find("TMA"), std::string::npos);
  // The launch's last block in every layout, at its last slice: 300 = 4 * 64 + 44, 200 = 128 + 72,
  // 100 = 3 * 32 + 4.
  auto grid = grid_cases(c, 300, 200, 100);
  ASSERT_EQ(grid.size(), 4u);
  std::set<std::string> lays;
  for (const auto& sc : grid) {
    lays.insert(describe(layout(sc.trans_a, sc.trans_b)));
    EXPECT_EQ(describe(sc).substr(2), " edge 44x72 k4") << describe(sc);
  }
  EXPECT_EQ(lays, kAllLayouts);
  // Four splits of 1024 over K = 4000 leave the last one 29 whole slices; 3999, a partial one.
  auto split = c;
  split.SPLIT_K = 4;
  EXPECT_EQ(grid_cases(split, 256, 256, 4000).front().k_rem, c.BK);
  EXPECT_EQ(grid_cases(split, 256, 256, 3999).front().k_rem, 31);
}

// No thread loads a slice: a tile whose A slice is less than a pass of its threads is fine.
TEST(IndexSimTma, NeedsNoThreadLoadPasses) {
  const auto c = named("wt_32x256x16_w32x32_wn1_t4x4_n256_mb1_s2_m1");
  ASSERT_EQ(derive(c).A_PASSES, 0);
  ASSERT_TRUE(structural_violations(c).empty());
  const auto r = simulate_config(c);
  EXPECT_TRUE(r.ok()) << r.summary();
  auto plain = c;
  plain.family = "warptile";
  EXPECT_EQ(joined(structural_violations(plain)), "load_stride_a");
  EXPECT_TRUE(simulate_block(plain).has("as_hole"));
}

// Every structural rule a TMA config can break alone, simulated directly: the layouts that use
// what it guards break, with defects that name it; the others are clean.
TEST(IndexSimTma, EachRuleBreakIsCaughtWhereTheKernelBreaks) {
  struct Break {
    std::string rule, name;
    std::set<std::string> layouts;
    std::vector<std::string> kinds;
  };
  const Break breaks[] = {
      // A's 16 x 16 staging box is 64 float4s for 128 producer threads: no pass at all.
      {"tma_transpose",
       "wt_16x128x16_w16x32_wn1_t4x4_n128_mb2_s3_m1",
       staging_a(),
       {"tma_transpose_hole"}},
      // 32-byte staging rows under the 64-byte swizzle.
      {"tma_slice",
       "wt_64x128x8_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o1_m1",
       {"NN", "NT", "TT"},
       {"tma_swizzle_mismatch", "tma_transpose_misplaced"}},
      // 256-byte staging rows: wider than any swizzle, the host cannot encode the box.
      {"tma_slice",
       "wt_64x128x64_w64x16_wn2_t4x4_n256_mb1_s2_p4_g8_o1_m1",
       {"NN", "NT", "TT"},
       {"tma_copy_refused"}},
      // BN + PAD_B = 260: B's straight box (NN, TN).
      {"tma_box",
       "wt_128x256x16_w64x64_wn4_t8x4_n256_mb1_s4_p4_g8_o3_b4_m1",
       {"NN", "TN"},
       {"tma_copy_refused"}},
      // Two consumer warps share warpgroup 0 with the producer's first two.
      {"tma_warpgroups",
       "wt_64x64x32_w64x32_wn1_t4x4_n64_mb2_s3_m1",
       kAllLayouts,
       {"tma_warpgroups"}},
      // TM = 2: the consumers' float4 reads of As take two rows of the next sub-tile.
      {"float4_alignment",
       "wt_64x128x32_w64x16_wn2_t2x4_n256_mb1_s3_p4_g8_o1_m1",
       kAllLayouts,
       {"operand_mismatch", "misaligned_vector"}},
  };
  for (const auto& b : breaks) {
    const auto c = named(b.name);
    EXPECT_EQ(joined(structural_violations(c)), b.rule) << b.name;
    expect_broken_in(c, SimIndexing{}, b.layouts, b.kinds, b.name);
    for (const auto& sc : kLayouts) {
      if (b.layouts.count(describe(sc)) == 0) continue;
      const auto r = simulate_block(c, sc);
      for (const auto& k : b.kinds) {
        if (k.rfind("tma_", 0) != 0) continue;
        EXPECT_NE(detail_of(r, k).find("rule " + b.rule), std::string::npos)
            << k << ": " << detail_of(r, k);
      }
    }
    const auto all = simulate_config(c);
    EXPECT_FALSE(all.ok()) << b.name;
    EXPECT_FALSE(all.has("degenerate_geometry")) << all.summary();
  }
  // The same tiles with TMA = 0 where the template runs them: the TMA rules were the reason.
  auto tm2 = named("wt_64x128x32_w64x16_wn2_t2x4_n256_mb1_s3_p4_g8_o1_m1");
  tm2.family = "warptile";
  tm2.STAGES = 1;
  EXPECT_TRUE(simulate_config(tm2).ok());
  auto wg = named("wt_64x64x32_w64x32_wn1_t4x4_n64_mb2_s3_m1");
  wg.family = "warptile";
  wg.STAGES = 1;
  EXPECT_TRUE(simulate_config(wg).ok());
}

// The hardware swizzle is stated independently of tma_staged_index: element (r, k) of a box on a
// 1024-byte boundary at byte (r * BK + k) * 4, bits [4:6] ^= [7:9] (BK 32) or [4:5] ^= [7:8] (16).
TEST(IndexSimTma, StagedIndexIsTheHardwareSwizzle) {
  for (int bk : {16, 32}) {
    for (int r = 0; r < 64; ++r) {
      for (int chunk = 0; chunk < bk / 4; ++chunk) {
        const int byte = (r * bk + chunk * 4) * 4;
        const int swizzled =
            bk == 32 ? byte ^ (((byte >> 7) & 7) << 4) : byte ^ (((byte >> 7) & 3) << 4);
        EXPECT_EQ(sgt_kernel::tma_staged_index(bk, r, chunk) * 4, swizzled) << bk << " " << r;
      }
    }
  }
}

// --- Broken TMA functions ------------------------------------------------------------------

int staged_index_unswizzled(int bk, int row, int chunk) {
  return row * bk + chunk * sgt_kernel::kVec;
}
int transpose_row_of_pass_0(int rows, int p, int) {
  return sgt_kernel::tma_transpose_row(rows, p, 0);
}
int transpose_chunk_of_pass_0(int rows, int p, int) {
  return sgt_kernel::tma_transpose_chunk(rows, p, 0);
}
int transpose_passes_one_short(int rows, int bk) {
  return sgt_kernel::tma_transpose_passes(rows, bk) - 1;
}
int transpose_passes_one_more(int rows, int bk) {
  return sgt_kernel::tma_transpose_passes(rows, bk) + 1;
}
int box_inner_unpadded(const sgt_kernel::Geometry& g, bool is_a, bool staged) {
  return staged ? g.BK : (is_a ? g.BM : g.BN);
}
int box_outer_one_short(const sgt_kernel::Geometry& g, bool is_a, bool staged) {
  return sgt_kernel::tma_box_outer(g, is_a, staged) - 1;
}
bool staged_a_backwards(bool trans_a) {
  return trans_a;
}
// As placed where B's staging ring starts: the layout forgets that ring.
sgt_kernel::TmaLayout layout_without_staging_b(const sgt_kernel::Geometry& g, bool ta, bool tb,
                                               int mb) {
  auto t = sgt_kernel::make_tma_layout(g, ta, tb, mb);
  const int lost = t.AS_OFFSET - t.STAGE_B_OFFSET;
  t.AS_OFFSET -= lost;
  t.BS_OFFSET -= lost;
  t.SMEM_BYTES -= 4 * lost;
  return t;
}
// No alignment slack: the last floats of the Bs ring lie past what the launch can count on.
sgt_kernel::TmaLayout layout_without_slack(const sgt_kernel::Geometry& g, bool ta, bool tb,
                                           int mb) {
  auto t = sgt_kernel::make_tma_layout(g, ta, tb, mb);
  t.SMEM_BYTES -= sgt_kernel::kTmaAlignBytes;
  return t;
}
// B's staging ring 128 bytes later (everything after it too): off the swizzle's 1024 bytes.
sgt_kernel::TmaLayout layout_staging_b_shifted(const sgt_kernel::Geometry& g, bool ta, bool tb,
                                               int mb) {
  auto t = sgt_kernel::make_tma_layout(g, ta, tb, mb);
  t.STAGE_B_OFFSET += 32;
  t.AS_OFFSET += 32;
  t.BS_OFFSET += 32;
  t.SMEM_BYTES += 128;
  return t;
}
// A's barrier expects the bytes of the padded tile even where A is staged.
sgt_kernel::TmaLayout layout_a_bytes_of_the_tile(const sgt_kernel::Geometry& g, bool ta, bool tb,
                                                 int mb) {
  auto t = sgt_kernel::make_tma_layout(g, ta, tb, mb);
  t.A_BOX_BYTES = g.AS_SIZE * 4;
  return t;
}
// A producer of three warps.
sgt_kernel::TmaLayout layout_96_producers(const sgt_kernel::Geometry& g, bool ta, bool tb, int mb) {
  auto t = sgt_kernel::make_tma_layout(g, ta, tb, mb);
  t.THREADS -= 32;
  return t;
}

TEST(IndexSimTmaMutation, EveryBrokenTmaFunctionIsCaughtWhereItIsUsed) {
  struct Mutation {
    std::string what;
    SimIndexing ix;
    std::set<std::string> layouts;
    std::vector<std::string> kinds;
  };
  std::vector<Mutation> mutations(12);
  mutations[0] = {"staged index without the swizzle",
                  {},
                  {"NN", "NT", "TT"},
                  {"tma_swizzle_mismatch", "tma_transpose_misplaced", "operand_mismatch"}};
  mutations[0].ix.tma_staged_index = staged_index_unswizzled;
  mutations[1] = {"every transpose pass repeats the first",
                  {},
                  {"NN", "NT", "TT"},
                  {"tma_transpose_hole", "tma_transpose_overlap"}};
  mutations[1].ix.tma_transpose_row = transpose_row_of_pass_0;
  mutations[1].ix.tma_transpose_chunk = transpose_chunk_of_pass_0;
  mutations[2] = {"one transpose pass short", {}, {"NN", "NT", "TT"}, {"tma_transpose_hole"}};
  mutations[2].ix.tma_transpose_passes = transpose_passes_one_short;
  mutations[3] = {"one transpose pass too many",
                  {},
                  {"NN", "NT", "TT"},
                  {"tma_transpose_out_of_stage", "tma_transpose_read_out_of_box"}};
  mutations[3].ix.tma_transpose_passes = transpose_passes_one_more;
  mutations[4] = {"straight box without PAD_A",
                  {},
                  {"TN", "TT"},
                  {"tma_copy_misplaced", "tma_barrier", "operand_mismatch"}};
  mutations[4].ix.tma_box_inner = box_inner_unpadded;
  mutations[5] = {"boxes one row short", {}, kAllLayouts, {"tma_barrier"}};
  mutations[5].ix.tma_box_outer = box_outer_one_short;
  mutations[6] = {
      "A staged where it is k-major", {}, kAllLayouts, {"tma_barrier", "operand_mismatch"}};
  mutations[6].ix.tma_staged_a = staged_a_backwards;
  mutations[7] = {"As over B's staging ring", {}, staging_b(), {"tma_smem_overlap"}};
  mutations[7].ix.make_tma_layout = layout_without_staging_b;
  mutations[8] = {"no alignment slack", {}, kAllLayouts, {"tma_smem_overflow"}};
  mutations[8].ix.make_tma_layout = layout_without_slack;
  mutations[9] = {"B's staging ring off 1024 bytes",
                  {},
                  staging_b(),
                  {"tma_smem_misaligned", "tma_transpose_misplaced"}};
  mutations[9].ix.make_tma_layout = layout_staging_b_shifted;
  mutations[10] = {"A's staged bytes of the padded tile", {}, staging_a(), {"tma_barrier"}};
  mutations[10].ix.make_tma_layout = layout_a_bytes_of_the_tile;
  mutations[11] = {"a producer of three warps", {}, kAllLayouts, {"tma_warpgroups"}};
  mutations[11].ix.make_tma_layout = layout_96_producers;
  const auto c = named(kTma64);
  for (const auto& mu : mutations) {
    expect_broken_in(c, mu.ix, mu.layouts, mu.kinds, mu.what);
    // The template never calls them: a TMA = 0 config is clean under every one.
    auto plain = c;
    plain.family = "warptile";
    plain.STAGES = 1;
    EXPECT_TRUE(simulate_config(plain).ok()) << mu.what;
  }
  // Where the producer is short of threads, the staged layouts also lose arrivals and rows.
  SimIndexing short_producer;
  short_producer.make_tma_layout = layout_96_producers;
  expect_broken_in(c, short_producer, kAllLayouts, {"tma_warpgroups"}, "three producer warps");
  const auto r = simulate_block_with(c, layout(false, false), short_producer);
  EXPECT_TRUE(r.has("tma_barrier") && r.has("tma_transpose_hole")) << r.summary();
}

// Split-K with TMA: the copies fill zeros only past K, so a split whose range is not whole slices
// copies the next split's first k again.
TEST(IndexSimTmaMutation, ASplitOfPartialSlicesCopiesKTwice) {
  auto c = named(kTma64);
  c.SPLIT_K = 3;
  SimIndexing ix;
  ix.launch_dims = unrounded_chunk;
  const auto r = simulate_grid_with(c, 300, 200, 1000, ix);
  EXPECT_TRUE(r.has("tma_k_overlap")) << r.summary();
  EXPECT_TRUE(r.has("split_k_misaligned")) << r.summary();
  EXPECT_NE(detail_of(r, "tma_k_overlap").find("zeros only past K"), std::string::npos)
      << r.summary();
  // The template reads only its own split's k: no TMA defect there.
  c.family = "warptile";
  c.STAGES = 1;
  const auto plain = simulate_grid_with(c, 300, 200, 1000, ix);
  EXPECT_FALSE(plain.has("tma_k_overlap")) << plain.summary();
  EXPECT_TRUE(plain.has("split_k_misaligned"));
}

// Refused as degenerate before any loop runs (a simulation that tried would outlast ctest's
// timeout).
TEST(IndexSimTma, AbsurdTmaGeometriesAreRefusedAsDegenerate) {
  auto stages = named(kTma64);
  stages.STAGES = 1000;
  auto blocks = named(kTma64);
  blocks.NUM_THREADS = 4096;
  blocks.MIN_BLOCKS = 1 << 20;
  for (const auto& c : {stages, blocks}) {
    const auto r = simulate_config(c);
    EXPECT_TRUE(r.has("degenerate_geometry")) << r.summary();
    EXPECT_EQ(r.defects.size(), 1u) << r.summary();
  }
}

// TMA tiles around the valid ones, through the values the TMA rules test (BK, the pads, a
// thread count that ends inside a warpgroup, boxes past 256, staging boxes below a float4 per
// producer thread): the structural rules and the simulation must agree exactly.
TEST(IndexSimTma, TmaSweepRulesAndSimulationAgree) {
  long long valid = 0, rejected = 0;
  std::map<std::string, long long> caught;
  for (const char* base :
       {"wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_g8_o1_m1",
        "wt_128x256x16_w64x64_wn4_t8x4_n256_mb1_s2_g8_o3_m1",
        "wt_16x128x16_w16x32_wn1_t4x4_n128_mb2_s2_m1", "wt_64x64x32_w64x32_wn1_t4x4_n64_mb2_s2_m1",
        "wt_48x128x32_w16x32_wn1_t4x4_n384_mb1_s2_m1",
        "wt_256x128x16_w64x64_wn2_t8x4_n256_mb1_s2_m1"}) {
    for (int bk : {8, 16, 32, 64}) {
      for (int pad_a : {0, 4}) {
        for (int pad_b : {0, 4}) {
          for (int split : {1, 3}) {
            auto c = named(base);
            c.BK = bk;
            c.PAD_A = pad_a;
            c.PAD_B = pad_b;
            c.SPLIT_K = split;
            const auto names = structural_violations(c);
            const auto r = simulate_config(c);
            if (names.empty()) {
              ++valid;
              EXPECT_TRUE(r.ok()) << to_name(c) << " passes the rules but:\n" << r.summary();
            } else {
              ++rejected;
              EXPECT_FALSE(r.ok())
                  << to_name(c) << " breaks " << joined(names) << " but simulates clean";
              EXPECT_FALSE(r.has("degenerate_geometry")) << to_name(c) << "\n" << r.summary();
              for (const auto& n : names) caught[n] += !r.ok();
            }
          }
        }
      }
    }
  }
  EXPECT_GT(valid, 20);
  EXPECT_GT(rejected, 50);
  for (const char* rule : {"tma_slice", "tma_transpose", "tma_box", "tma_warpgroups"}) {
    EXPECT_GT(caught[rule], 0) << rule;
  }
}

}  // namespace
}  // namespace sgt
