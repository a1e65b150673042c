// One block of the warp-tiling kernel in the index simulation: boundary blocks in every layout and
// on both instances, the clamped loads at the edge, the rule breaks each shown by the defect the
// kernel would have, the PACK instance on panels, and the staged epilogue.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "config.hpp"
#include "index_sim.hpp"
#include "index_sim_test_util.hpp"

namespace sgt {
namespace {

// The shared helpers; kLayouts also by name, to hide sgt::kLayouts (the layouts' spellings).
using namespace sim_test;
using sim_test::kLayouts;

// Boundary blocks: every remainder of M, N and K the seed's tile can leave, in every layout, on
// the scalar instance, on the float4 instance with operands that refuse float4s and, where the
// kernel could take them, with float4 loads.
TEST(IndexSim, BoundaryBlocksOfTheSeedAreClean) {
  const auto c = named(kSeed);
  const int ms[] = {0, 1, 2, 3, 4, 5, 8, 63, 64, 65, 124, 125, 127, 128};
  const int ns[] = {0, 1, 2, 3, 4, 5, 12, 33, 60, 61, 63, 64};
  int runs = 0, vec_runs = 0, vec_main_runs = 0, scalar_main_runs = 0;
  for (const auto& lay : kLayouts) {
    for (int m : ms) {
      for (int n : ns) {
        for (int k = 0; k <= c.BK; ++k) {
          // Every k with a few (m, n), every (m, n) with a few k.
          if (k > 1 && k < c.BK - 1 && m != 1 && m != 4 && m != 65 && n != 3 && n != 60) continue;
          for (const auto& [vec_kernel, vec] : kInstances) {
            const SimCase sc = edge(lay, m, n, k, vec, vec_kernel);
            if (vec && !vec_legal(sc)) continue;
            const auto r = simulate_block(c, sc);
            ++runs;
            vec_runs += vec;
            const bool main = (m % c.BM != 0 || n % c.BN != 0) && k % c.BK == 0;
            vec_main_runs += vec && main;
            scalar_main_runs += !vec_kernel && main;
            ASSERT_TRUE(r.ok()) << describe(sc) << "\n" << r.summary();
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 3000);
  // Float4 loads clamped at the edge, in the main loop, in every layout.
  EXPECT_GT(vec_runs, 500);
  EXPECT_GT(vec_main_runs, 100);
  // Single-float loads clamped at the edge, at every remainder.
  EXPECT_GT(scalar_main_runs, 500);
}

// The scalar instance (VEC = false) at odd remainders: a float4's worth of elements straddles the
// end of the matrix in M and N, element j read from clamp_mn(col + j); whole slices through the
// main loop (no guard, no alignment needed), partial ones through the edge loop with the same
// clamped pointers. Every layout of the seed is clean.
TEST(IndexSim, ScalarInstanceBoundaryBlocksWithOddRemaindersAreClean) {
  const auto c = named(kSeed);
  const int ms[] = {0, 1, 2, 3, 5, 6, 7, 9, 61, 63, 65, 67, 121, 125, 126, 127};
  const int ns[] = {0, 1, 2, 3, 5, 7, 29, 31, 33, 57, 61, 62, 63};
  int runs = 0;
  for (const auto& lay : kLayouts) {
    for (int m : ms) {
      for (int n : ns) {
        for (int k : {0, 1, 3, 13, 15, 16}) {
          const SimCase sc = scalar_kernel(lay, m, n, k);
          const auto r = simulate_block(c, sc);
          ++runs;
          ASSERT_TRUE(r.ok()) << describe(sc) << "\n" << r.summary();
        }
      }
    }
  }
  EXPECT_EQ(runs, 4 * 16 * 13 * 6);
  // The same blocks' float4 loads would read past the end of the matrix where they run along it.
  EXPECT_TRUE(simulate_block(c, edge(layout(true, false), 65, 33, 0, true)).has("a_out_of_matrix"));
}

// The scalar instance's element j of a pass along m (n) is read at the pointer clamp_mn(col, ext)
// + min(j, clamp_last(col, ext)): exactly element clamp_mn(col + j, ext), the last inside the
// matrix for each element past it, never one before the pointer or past the end.
TEST(IndexSim, ClampLastReadsClampMnOfEachElement) {
  for (int ext = 1; ext <= 40; ++ext) {
    for (int col = 0; col <= 48; col += 4) {
      const int last = sgt_kernel::clamp_last(col, ext);
      const int p = sgt_kernel::clamp_mn(col, ext);
      EXPECT_GE(last, 0);
      EXPECT_LE(last, 3);
      for (int j = 0; j < 4; ++j) {
        EXPECT_EQ(p + std::min(j, last), sgt_kernel::clamp_mn(col + j, ext))
            << "col " << col << " ext " << ext << " j " << j;
      }
    }
  }
  EXPECT_EQ(sgt_kernel::clamp_last(60, 61), 0);
  EXPECT_EQ(sgt_kernel::clamp_last(56, 61), 3);
  EXPECT_EQ(sgt_kernel::clamp_last(64, 61), 0);
  EXPECT_EQ(sgt_kernel::clamp_last(0, 2), 1);
}

// The kernel's condition for float4 loads is needed: where a float4 runs along M (A^T) or N (B)
// and the matrix ends inside one, an unguarded float4 read crosses the end of the matrix. The
// scalar instance (which the tuner picks there) and the float4 one's edge loop are clean.
TEST(IndexSim, Float4LoadsAcrossTheEndOfTheMatrixReadOutsideIt) {
  const auto c = named(kSeed);
  const struct {
    SimCase sc;
    const char* kind;
  } cases[] = {
      {edge(layout(true, false), 65, 0, 0, true), "a_out_of_matrix"},
      {edge(layout(true, true), 127, 33, 0, true), "a_out_of_matrix"},
      {edge(layout(false, false), 0, 33, 0, true), "b_out_of_matrix"},
      {edge(layout(true, false), 64, 61, 0, true), "b_out_of_matrix"},
  };
  for (const auto& [sc, kind] : cases) {
    ASSERT_FALSE(vec_legal(sc)) << describe(sc);
    const auto r = simulate_block(c, sc);
    EXPECT_TRUE(r.has(kind)) << describe(sc) << "\n" << r.summary();
    SimCase edge_only = sc;
    edge_only.vec_loads = false;
    EXPECT_TRUE(simulate_block(c, edge_only).ok()) << describe(edge_only);
    SimCase scalar = edge_only;
    scalar.vec_kernel = false;
    EXPECT_TRUE(simulate_block(c, scalar).ok()) << describe(scalar);
  }
  // Along K nothing is clamped: NT reads float4s at any remainder of M and N.
  EXPECT_TRUE(simulate_block(c, edge(layout(false, true), 65, 33, 0, true)).ok());
}

// Which main-loop loads the kernel takes: float4s where both leading dimensions (the stored row
// lengths) are multiples of 4, and M (N) too where A^T's (B's) float4s run along it.
TEST(IndexSim, KernelVecLoadsFollowsTheLayout) {
  // {trans_a, trans_b, M, N, K, vec}
  const std::tuple<bool, bool, int, int, int, bool> rows[] = {
      {false, false, 8, 8, 8, true},  {false, false, 7, 8, 8, true},  // M is free in NN
      {false, false, 8, 7, 8, false}, {false, false, 8, 8, 7, false},
      {false, true, 7, 7, 8, true},   {false, true, 8, 8, 7, false},  // NT: K alone
      {true, false, 8, 8, 7, true},   {true, false, 7, 8, 8, false},  // TN: M and N
      {true, false, 8, 7, 8, false},  {true, true, 8, 7, 8, true},    // TT: M and K
      {true, true, 7, 8, 8, false},   {true, true, 8, 8, 7, false},
  };
  for (const auto& [ta, tb, m, n, k, vec] : rows) {
    EXPECT_EQ(kernel_vec_loads(ta, tb, m, n, k), vec)
        << describe(layout(ta, tb)) << " " << m << "x" << n << "x" << k;
  }
}

// The knobs that change indexing (PAD_A, STAGES, thread tiles read as float4 or not) at the edges.
TEST(IndexSim, BoundaryBlocksOfKnobConfigsAreClean) {
  for (const char* name : {
           "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_s2_p4",
           "wt_128x64x16_w64x32_wn2_t2x4_n128_mb1_p8",  // TM = 2: scalar As reads
           "wt_64x256x16_w64x32_wn4_t4x4_n256_mb2_s2_p4",
           "wt_128x128x8_w64x64_wn4_t8x4_n128_mb1_p4_g8_k4",
           "wt_64x128x16_w32x64_wn2_t4x8_n128_mb1_s2_p12_g3_k3",
       }) {
    const auto c = named(name);
    ASSERT_TRUE(check(c).empty()) << name << ": " << check(c).front().reason;
    for (const auto& lay : kLayouts) {
      for (int rem : {0, 1, 3, 4, 5, 8}) {
        for (int k_rem : {0, std::min(c.BK, rem + 2)}) {
          for (const auto& [vec_kernel, vec] : kInstances) {
            const SimCase sc =
                edge(lay, rem == 0 ? 0 : std::min(c.BM, c.BM - rem), rem, k_rem, vec, vec_kernel);
            if (vec && !vec_legal(sc)) continue;
            const auto r = simulate_block(c, sc);
            EXPECT_TRUE(r.ok()) << name << " " << describe(sc) << "\n" << r.summary();
          }
        }
      }
    }
    const auto all = simulate_config(c);
    EXPECT_TRUE(all.ok()) << name << "\n" << all.summary();
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
    if (d.kind == "as_hole") {
      EXPECT_NE(d.detail.find("512"), std::string::npos) << d.detail;
    }
  }
  EXPECT_FALSE(r.has("bs_hole")) << r.summary();
  EXPECT_FALSE(r.has("c_hole")) << r.summary();
}

TEST(IndexSim, PartialLoadPassLeavesHoles) {
  // The 12x64 B slice is 192 float4s: one pass of 128 threads and a half. The kernel runs whole
  // passes only, so the last 64 float4s (256 elements) of Bs are never loaded.
  const auto c = named("wt_128x64x12_w64x32_wn2_t4x4_n128_mb1");
  EXPECT_EQ(joined(structural_violations(c)), "load_stride_b");
  for (const auto& sc : kLayouts) {
    const auto r = simulate_block(c, sc);
    ASSERT_TRUE(r.has("bs_hole")) << describe(sc) << "\n" << r.summary();
    for (const auto& d : r.defects) {
      if (d.kind == "bs_hole") {
        EXPECT_NE(d.detail.find("(256 elements"), std::string::npos) << d.detail;
      }
    }
    // A's 3 passes are exact.
    EXPECT_FALSE(r.has("as_hole") || r.has("as_overlap")) << describe(sc) << "\n" << r.summary();
  }
}

// BM = 6 breaks only float4_alignment: harmless while A is read along K (NN), fatal when A^T is
// read along M as float4s (6 is one float4 and a half).
TEST(IndexSim, Bm6BreaksOnlyTheTransposedALayouts) {
  const auto c = named("wt_6x64x64_w6x64_wn1_t3x4_n32_mb1");
  ASSERT_EQ(joined(structural_violations(c)), "float4_alignment");
  EXPECT_TRUE(simulate_block(c, layout(false, false)).ok());
  EXPECT_TRUE(simulate_block(c, layout(false, true)).ok());
  for (const auto& sc : {layout(true, false), layout(true, true)}) {
    const auto r = simulate_block(c, sc);
    EXPECT_TRUE(r.has("as_hole")) << describe(sc) << "\n" << r.summary();
    EXPECT_TRUE(r.has("a_out_of_tile")) << describe(sc) << "\n" << r.summary();
  }
  const auto all = simulate_config(c);
  ASSERT_FALSE(all.ok());
  // The merged report names the case each defect was first seen in.
  EXPECT_EQ(all.defects.front().detail.rfind("[T", 0), 0u) << all.summary();
}

// PAD_A = 2 misaligns every As row but the first. With TM = 2 the compute loop reads As element by
// element, so only the layouts that store A^T into As as float4s break.
TEST(IndexSim, PadA2MisalignsTheFloat4AccessesOfAs) {
  const auto scalar = named("wt_128x64x16_w64x32_wn2_t2x4_n128_mb1_p2");
  ASSERT_EQ(joined(structural_violations(scalar)), "pad_alignment");
  EXPECT_TRUE(simulate_block(scalar, layout(false, false)).ok());
  EXPECT_TRUE(simulate_block(scalar, layout(false, true)).ok());
  for (const auto& sc : {layout(true, false), layout(true, true)}) {
    const auto r = simulate_block(scalar, sc);
    ASSERT_TRUE(r.has("misaligned_vector")) << describe(sc) << "\n" << r.summary();
    EXPECT_NE(r.summary().find("stores a float4 to As"), std::string::npos) << r.summary();
    // Everything else is in place: only the alignment is wrong.
    EXPECT_EQ(r.defects.size(), 1u) << r.summary();
  }
  EXPECT_TRUE(simulate_config(scalar).has("misaligned_vector"));
  // With TM = 4 the compute loop's float4 reads of As break even in NN.
  const auto vector = named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p2");
  const auto r = simulate_block(vector, layout(false, false));
  ASSERT_TRUE(r.has("misaligned_vector")) << r.summary();
  EXPECT_NE(r.summary().find("reads a float4 from As"), std::string::npos) << r.summary();
  // PAD_A = 4 is fine everywhere.
  EXPECT_TRUE(simulate_config(named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p4")).ok());
}

// On the last, partial k-slice the slots past K must hold zeros: a loader that leaves them holds
// the previous slice's data, which the compute loop would add into C.
TEST(IndexSim, KTailMustBeZeroFilled) {
  // A_PASSES = 0: As is never written at all.
  const auto c = named("wt_64x128x8_w32x32_wn1_t4x8_n256_mb1");
  SimCase whole;
  const auto r0 = simulate_block(c, whole);
  EXPECT_TRUE(r0.has("as_hole"));
  EXPECT_FALSE(r0.has("k_tail_not_zeroed")) << "a whole slice has no tail\n" << r0.summary();
  SimCase tail;
  tail.k_rem = 3;
  const auto r = simulate_block(c, tail);
  ASSERT_TRUE(r.has("k_tail_not_zeroed")) << r.summary();
  for (const auto& d : r.defects) {
    if (d.kind == "k_tail_not_zeroed") {
      EXPECT_NE(d.detail.find("stale data of an earlier slice"), std::string::npos) << d.detail;
    }
  }
  // The real loader zero-fills: every k_rem of the seed is clean (BoundaryBlocksOfTheSeedAreClean)
  // and no tail defect appears in the boundary cases of the default space.
}

// --- PACK: the TN float4 instance on panels
// -------------------------------------------------------

// A PACK config is simulated as it runs: its TN float4 instance on panels, at remainders that are
// not multiples of 4 (a float4 running into the padding, one clamped back to the last float4 that
// starts inside the matrix), whatever the problem's layout.
TEST(IndexSim, PackRunsItsTnInstanceOnPanelsAtOddRemainders) {
  const auto c = named("wt_64x128x16_w32x64_wn1_t4x4_n128_mb2_s2_p4_g8_k3_o1_x1");
  const auto cases = standard_cases(c);
  ASSERT_FALSE(cases.empty());
  bool odd_m = false, odd_n = false;
  for (const auto& sc : cases) {
    EXPECT_TRUE(sc.panel && sc.trans_a && !sc.trans_b && sc.vec_kernel && sc.vec_loads)
        << describe(sc);
    odd_m = odd_m || sc.m_rem % 4 != 0;
    odd_n = odd_n || sc.n_rem % 4 != 0;
  }
  EXPECT_TRUE(odd_m && odd_n);
  EXPECT_TRUE(simulate_config(c).ok()) << simulate_config(c).summary();
  for (const auto& layout_free : grid_cases(c, 1023, 777, 513)) {
    EXPECT_TRUE(layout_free.panel && layout_free.trans_a && !layout_free.trans_b)
        << describe(layout_free);
  }
  EXPECT_TRUE(simulate_grid(c, 1023, 777, 513).ok()) << simulate_grid(c, 1023, 777, 513).summary();
}

// Without the panel's padding the same float4s read past the matrix: the panel is what makes them
// legal, and the simulation knows the difference.
TEST(IndexSim, PanelFloat4sPastTheMatrixNeedThePanel) {
  const auto c = named("wt_64x128x16_w32x64_wn1_t4x4_n128_mb2_s2_p4_g8_o1_x1");
  SimCase sc{true, false, 61, 125, 0, true, true, true};
  EXPECT_TRUE(simulate_block(c, sc).ok()) << simulate_block(c, sc).summary();
  sc.panel = false;
  const auto r = simulate_block(c, sc);
  EXPECT_TRUE(r.has("a_out_of_matrix")) << r.summary();
  EXPECT_TRUE(r.has("b_out_of_matrix")) << r.summary();
}

// What the worker and the dispatch library pack, and where: only the operands the TN float4
// instance cannot read in place, both panels in one workspace, each 16-byte aligned.
TEST(PackPlan, PacksWhatTheTnInstanceCannotReadInPlace) {
  const float* A = reinterpret_cast<const float*>(0x1000);
  const float* B = reinterpret_cast<const float*>(0x2000);
  // TN, aligned, extents multiples of 4: nothing to do.
  auto tn = sgt_kernel::plan_pack(true, false, 64, 128, 33, A, true, 64, B, true, 128);
  EXPECT_EQ(tn.floats, 0);
  EXPECT_EQ(tn.a.src, nullptr);
  EXPECT_EQ(tn.b.src, nullptr);
  // NN: A (M x K) is transposed, B (K x N) read in place.
  auto nn = sgt_kernel::plan_pack(false, false, 1023, 128, 513, A, true, 513, B, true, 128);
  EXPECT_EQ(nn.a.src, A);
  EXPECT_EQ(nn.a.rows_major, 1);
  EXPECT_EQ(nn.a.ext, 1023);
  EXPECT_EQ(nn.a.panel_ld, 1024);
  EXPECT_EQ(nn.b.src, nullptr);
  EXPECT_EQ(nn.floats, 513LL * 1024);
  EXPECT_EQ(nn.grid_x, 1024 / sgt_kernel::kPackTile);
  EXPECT_EQ(nn.grid_y, (513 + sgt_kernel::kPackTile - 1) / sgt_kernel::kPackTile);
  // NT with an odd N: both, B^T (N x K) transposed into a panel padded to 780.
  auto nt = sgt_kernel::plan_pack(false, true, 1023, 777, 513, A, true, 513, B, true, 513);
  EXPECT_EQ(nt.b.src, B);
  EXPECT_EQ(nt.b.rows_major, 1);
  EXPECT_EQ(nt.b.panel_ld, 780);
  EXPECT_EQ(nt.b_offset, 513LL * 1024);
  EXPECT_EQ(nt.floats, 513LL * 1024 + 513LL * 780);
  // TN but B misaligned: B alone is copied, not transposed.
  auto tn_b = sgt_kernel::plan_pack(true, false, 64, 128, 8, A, true, 64, B, false, 128);
  EXPECT_EQ(tn_b.a.src, nullptr);
  EXPECT_EQ(tn_b.b.rows_major, 0);
  EXPECT_EQ(tn_b.b_offset, 0);
  EXPECT_EQ(tn_b.floats, 8LL * 128);

  std::vector<float> work(static_cast<size_t>(nt.floats));
  const float* a = A;
  const float* b = B;
  int lda = 513, ldb = 513;
  sgt_kernel::bind_pack(nt, work.data(), a, lda, b, ldb);
  EXPECT_EQ(a, work.data());
  EXPECT_EQ(b, work.data() + nt.b_offset);
  EXPECT_EQ(nt.a.panel, a);
  EXPECT_EQ(nt.b.panel, b);
  EXPECT_EQ(lda, 1024);
  EXPECT_EQ(ldb, 780);
  EXPECT_EQ(nt.b_offset % sgt_kernel::kVec, 0);
  // An operand read in place keeps its pointer and leading dimension.
  a = A;
  lda = 513;
  b = B;
  ldb = 128;
  sgt_kernel::bind_pack(nn, work.data(), a, lda, b, ldb);
  EXPECT_EQ(a, work.data());
  EXPECT_EQ(b, B);
  EXPECT_EQ(ldb, 128);
}

// A panel clamp that moves a float4 past the matrix back to ext - 4 (clamp_mn_vec's rule, right
// only for extents that are multiples of 4) misaligns it.
TEST(IndexSimMutation, PanelClampThatIgnoresOddExtentsIsCaught) {
  SimIndexing ix;
  ix.clamp_mn_panel = sgt_kernel::clamp_mn_vec;
  const auto c = named("wt_64x128x16_w32x64_wn1_t4x4_n128_mb2_s2_p4_g8_o1_x1");
  bool caught = false;
  for (const auto& sc : standard_cases(c)) {
    caught = caught || simulate_block_with(c, sc, ix).has("misaligned_vector");
  }
  EXPECT_TRUE(caught);
  EXPECT_TRUE(simulate_config(c).ok());
}

}  // namespace

// --- The staged epilogue -----------------------------------------------------------------------

TEST(StagedEpilogue, BufferIsWhicheverOfAsAndBsHoldsEveryWarpsBlock) {
  // 8 warps x (32 / 4 lanes along N) rows x 64 columns = 4096 floats.
  auto g = sgt_kernel::make_geometry(256, 128, 8, 64, 64, 4, 8, 4, 256, 2, 4, 0);
  EXPECT_EQ(sgt_kernel::stage_warp_floats(g), 32 * 4 * 4);
  EXPECT_EQ(sgt_kernel::stage_buffer(g), 1);  // As: 2 x 8 x 260 = 4160 floats
  g = sgt_kernel::make_geometry(128, 256, 8, 64, 64, 4, 8, 4, 256, 2, 4, 0);
  EXPECT_EQ(sgt_kernel::stage_buffer(g), 2);  // As 2112 floats, Bs 4096
  g = sgt_kernel::make_geometry(128, 256, 8, 64, 64, 4, 8, 4, 256, 1, 4, 0);
  EXPECT_EQ(sgt_kernel::stage_buffer(g), 0);  // one buffer: 1056 and 2048 floats
}

TEST(StagedEpilogue, EdgeBlocksOfStagedConfigsAreClean) {
  for (const auto* n : {"wt_256x128x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o1_c1",
                        "wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o1_c1",
                        "wt_64x128x16_w16x64_wn1_t8x4_n256_mb1_s2_p4_g8_o1_b4_c1",
                        "wt_64x128x16_w32x64_wn1_t4x4_n128_mb1_s2_p4_g8_o1_x1_c1",
                        "wt_128x128x8_w64x32_wn2_t8x4_n256_mb2_s2_g8_k4_o1_x1_c1"}) {
    const auto c = named(n);
    ASSERT_NE(sgt_kernel::stage_buffer(derive(c)), 0) << n;
    const auto r = simulate_config(c);
    EXPECT_TRUE(r.ok()) << n << "\n" << r.summary();
  }
}

namespace {
int slot_without_lane_col(const sgt_kernel::Geometry& g, int tid, int ws, int n) {
  return sgt_kernel::lane_row(g, tid) * g.WN + ws * g.WSUBN + n;
}
int slot_one_off(const sgt_kernel::Geometry& g, int tid, int ws, int n) {
  return sgt_kernel::stage_slot(g, tid, ws, n) + 1;
}
int stage_row_without_tm(const sgt_kernel::Geometry& g, int tid, int ws, int m, int s) {
  return sgt_kernel::warp_row(g, tid) * g.WM + ws * g.WSUBM + s / g.WN + m;
}
int stage_col_within_the_subtile(const sgt_kernel::Geometry& g, int tid, int s) {
  return sgt_kernel::warp_col(g, tid) * g.WN + s % g.WSUBN;
}
}  // namespace

TEST(StagedEpilogueMutation, EveryBrokenStagingFunctionIsCaughtAtTheEdgeOnly) {
  auto c = named("wt_256x128x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o1_c1");
  SimCase edge;
  edge.m_rem = 61;
  edge.n_rem = 76;  // B's float4s run along N: a multiple of 4 keeps the float4 instance legal
  SimCase whole;
  struct Mutation {
    const char* what;
    SimIndexing ix;
    std::vector<std::string> kinds;
  };
  std::vector<Mutation> mutations(4);
  mutations[0] = {"slot without the lane's column", {}, {"c_stage_slot"}};
  mutations[0].ix.stage_slot = slot_without_lane_col;
  mutations[1] = {"slot one float late", {}, {"c_stage_out_of_buffer", "misaligned_vector"}};
  mutations[1].ix.stage_slot = slot_one_off;
  mutations[2] = {"read-back row without TM", {}, {"c_stage_misplaced"}};
  mutations[2].ix.stage_tile_row = stage_row_without_tm;
  mutations[3] = {"read-back column within one sub-tile", {}, {"c_stage_misplaced"}};
  mutations[3].ix.stage_tile_col = stage_col_within_the_subtile;
  for (const auto& mu : mutations) {
    const auto r = simulate_block_with(c, edge, mu.ix);
    for (const auto& k : mu.kinds) EXPECT_TRUE(r.has(k)) << mu.what << ": " << r.summary();
    // A whole tile stores float4s directly: the staging functions are not used there; nor by
    // STAGE_C = 0.
    EXPECT_TRUE(simulate_block_with(c, whole, mu.ix).ok()) << mu.what;
    c.STAGE_C = 0;
    EXPECT_TRUE(simulate_block_with(c, edge, mu.ix).ok()) << mu.what;
    c.STAGE_C = 1;
  }
}

TEST(StagedEpilogue, WithoutABufferForEveryWarpTheRuleAndTheSimulationAgree) {
  // One buffer of As (132 x 8) and Bs (256 x 8) against 8 warps x 512 floats.
  const auto c = named("wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_p4_c1");
  EXPECT_EQ(joined(structural_violations(c)), "stage_c_buffer");
  const auto r = simulate_config(c);
  EXPECT_TRUE(r.has("c_stage_out_of_buffer")) << r.summary();
  auto direct = c;
  direct.STAGE_C = 0;
  EXPECT_TRUE(simulate_config(direct).ok());
}

}  // namespace sgt
