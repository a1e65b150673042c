// Broken variants of the warp-tiling kernel's index functions, swapped in through SimIndexing,
// must be caught by the index simulation: transposes, FMA orders, loaders, the pads, the clamps of
// the main loop's loads at the edge of the matrix, and the cp.async ring's schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "config.hpp"
#include "index_sim.hpp"
#include "index_sim_test_util.hpp"
#include "space.hpp"
#include "warptile_geometry.h"

namespace sgt {
namespace {

// The shared helpers; kLayouts also by name, to hide sgt::kLayouts (the layouts' spellings).
using namespace sim_test;
using sim_test::kLayouts;

// --- Broken index functions ------------------------------------------------------------------
// The simulation replays warptile_geometry.h. A change there that breaks the kernel must show up
// as a defect: each test swaps one function for a plausible mistake.

int slice_k_ignoring_trans(bool, bool is_a, int row, int col) {
  return sgt_kernel::slice_k(false, is_a, row, col);
}
int slice_mn_ignoring_trans(bool, bool is_a, int row, int col) {
  return sgt_kernel::slice_mn(false, is_a, row, col);
}

TEST(IndexSimMutation, IgnoringTheTransposeIsCaughtInTheTransposedLayoutsOnly) {
  SimIndexing ix;
  ix.slice_k = slice_k_ignoring_trans;
  ix.slice_mn = slice_mn_ignoring_trans;
  const auto c = named(kSeed);
  EXPECT_TRUE(simulate_block_with(c, layout(false, false), ix).ok());
  for (const auto& sc : {layout(true, false), layout(false, true), layout(true, true)}) {
    const auto r = simulate_block_with(c, sc, ix);
    EXPECT_FALSE(r.ok()) << describe(sc);
    EXPECT_TRUE(r.has("as_misplaced") || r.has("bs_misplaced") || r.has("as_out_of_tile") ||
                r.has("bs_out_of_tile"))
        << describe(sc) << "\n"
        << r.summary();
  }
}

// Every FMA_ORDER updates each accumulator once per k-step, the serpentine orders included.
TEST(IndexSim, EveryFmaOrderCoversTheThreadTileOnce) {
  for (const char* tile :
       {"wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8",
        "wt_128x128x16_w64x64_wn2_t4x4_n128_mb1_s2_p4_g8", "wt_64x64x8_w32x32_wn1_t4x4_n128_mb1"}) {
    for (int order = 0; order <= 3; ++order) {
      auto c = named(tile);
      c.FMA_ORDER = order;
      const auto r = simulate_block(c);
      EXPECT_TRUE(r.ok()) << tile << " o" << order << "\n" << r.summary();
    }
  }
}

// A serpentine order that turns back one step too early: the last column of every other row is
// updated twice and its first never.
sgt_kernel::FmaStep fma_step_off_by_one(const sgt_kernel::Geometry& g, int order, int s) {
  auto f = sgt_kernel::fma_step(g, order, s);
  const int cols = g.WNITER * g.TN;
  if (order == 2 && f.i % 2 == 1) f.j = std::min(f.j + 1, cols - 1);
  return f;
}

TEST(IndexSimMutation, AnFmaOrderThatSkipsAnAccumulatorIsCaught) {
  SimIndexing ix;
  ix.fma_step = fma_step_off_by_one;
  auto c = named("wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o2");
  const auto r = simulate_block_with(c, {}, ix);
  EXPECT_TRUE(r.has("fma_step_coverage")) << r.summary();
  c.FMA_ORDER = 3;  // the mutation leaves the other orders alone
  EXPECT_TRUE(simulate_block_with(c, {}, ix).ok()) << simulate_block_with(c, {}, ix).summary();
}

// An order whose last step runs one row past the thread tile.
sgt_kernel::FmaStep fma_step_past_the_tile(const sgt_kernel::Geometry& g, int order, int s) {
  auto f = sgt_kernel::fma_step(g, order, s);
  if (s == g.ACCUMULATORS - 1) f.i = g.WMITER * g.TM;
  return f;
}

TEST(IndexSimMutation, AnFmaStepOutsideTheThreadTileIsCaught) {
  SimIndexing ix;
  ix.fma_step = fma_step_past_the_tile;
  const auto r =
      simulate_block_with(named("wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o3"), {}, ix);
  ASSERT_TRUE(r.has("fma_step_coverage")) << r.summary();
  EXPECT_NE(r.summary().find("outside the 8 x 16 tile"), std::string::npos) << r.summary();
}

int load_row_ignoring_pass(const sgt_kernel::Geometry& g, int cols, int tid, int) {
  return sgt_kernel::load_row(g, cols, tid, 0);
}

TEST(IndexSimMutation, ALoaderThatRepeatsItsFirstPassIsCaught) {
  SimIndexing ix;
  ix.load_row = load_row_ignoring_pass;
  for (const auto& sc : kLayouts) {
    const auto r = simulate_block_with(named(kSeed), sc, ix);
    EXPECT_TRUE(r.has("as_hole") && r.has("as_overlap")) << describe(sc) << "\n" << r.summary();
  }
}

// The seed's last k (15) stored as k 14: slot 15 keeps the previous slice's data.
int slice_k_clamped(bool trans, bool is_a, int row, int col) {
  return std::min(sgt_kernel::slice_k(trans, is_a, row, col), 14);
}

TEST(IndexSimMutation, AStaleKTailIsCaught) {
  SimIndexing ix;
  ix.slice_k = slice_k_clamped;
  SimCase sc;
  sc.k_rem = 13;
  const auto r = simulate_block_with(named(kSeed), sc, ix);
  EXPECT_TRUE(r.has("k_tail_not_zeroed")) << r.summary();
  EXPECT_TRUE(r.has("as_hole") && r.has("bs_hole")) << r.summary();
}

// A compute loop that reads the pad instead of the tile: As column tile_row + PAD_A.
int as_index_shifted(const sgt_kernel::Geometry& g, int k, int m) {
  return sgt_kernel::as_index(g, k, m) + g.PAD_A;
}

TEST(IndexSimMutation, ReadingOrWritingThePadIsCaught) {
  SimIndexing ix;
  ix.as_index = as_index_shifted;
  const auto r = simulate_block_with(named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p4"), {}, ix);
  EXPECT_TRUE(r.has("as_pad_written")) << r.summary();
  EXPECT_TRUE(r.has("as_misplaced")) << r.summary();
  EXPECT_TRUE(r.has("as_pad_read")) << r.summary();
}

// Bs indexed as if it were never padded: with PAD_B the stores and reads land in the wrong rows,
// in every layout (the B^T ones, which the pad is for, included).
int bs_index_unpadded(const sgt_kernel::Geometry& g, int k, int n) {
  return k * g.BN + n;
}

// PAD_B = 2 breaks pad_alignment, and the simulation sees why: Bs rows no longer start 16-byte
// aligned, so the float4 accesses to them are misaligned.
TEST(IndexSim, MisalignedPadBIsADefect) {
  const auto c = named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_b2");
  EXPECT_EQ(joined(structural_violations(c)), "pad_alignment");
  EXPECT_FALSE(simulate_config(c).ok());
  EXPECT_TRUE(simulate_config(named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_b4")).ok());
}

TEST(IndexSimMutation, BsIndexThatIgnoresPadBIsCaught) {
  SimIndexing ix;
  ix.bs_index = bs_index_unpadded;
  const auto padded = named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p4_b4");
  ASSERT_EQ(padded.PAD_B, 4);
  EXPECT_EQ(sgt::derive(padded).BS_LD, 64 + 4);
  for (const bool trans_b : {false, true}) {
    SimCase sc;
    sc.trans_b = trans_b;
    const auto r = simulate_block_with(padded, sc, ix);
    EXPECT_TRUE(r.has("bs_misplaced")) << trans_b << ": " << r.summary();
    // The kernel's own bs_index is right, and the mutation is harmless where there is no pad.
    EXPECT_TRUE(simulate_block(padded, sc).ok()) << trans_b;
    EXPECT_TRUE(simulate_block_with(named(kSeed), sc, ix).ok()) << trans_b;
  }
}

// --- Clamped loads at the edge ---------------------------------------------------------------
// The main loop reads edge blocks unguarded, loads past the matrix in M or N moved back inside it
// by clamp_mn / clamp_mn_vec. Broken clamps must show up.

// One past the end: the last element plus one.
int clamp_one_past(int mn, int ext) {
  return mn < ext ? mn : ext;
}
// The scalar clamp where a float4 needs a whole aligned one: starts at the last element.
int clamp_vec_as_scalar(int mn, int ext) {
  return sgt_kernel::clamp_mn(mn, ext);
}
// Clamps too early: the last element (float4) inside the matrix is read from its neighbour.
int clamp_too_early(int mn, int ext) {
  return std::min(mn, ext - 2);
}
int clamp_vec_too_early(int mn, int ext) {
  return std::min(mn, ext - 8);
}

// Boundary blocks of every layout with whole slices: on the float4 instance with float4 loads (the
// main loop) and without (the edge loop), at remainders that are multiples of 4; on the scalar
// instance at remainders one past a multiple of 4 (a float4's worth of elements straddling the
// end of the matrix with one inside), with float4s starting past the end.
std::vector<SimCase> main_loop_edges(const WarpTileConfig& c) {
  std::vector<SimCase> out;
  for (const auto& lay : kLayouts) {
    for (const bool vec : {false, true}) {
      out.push_back(edge(lay, c.BM - 4, c.BN - 8, 0, vec));
      out.push_back(edge(lay, 4, 4, c.BK, vec));
    }
    out.push_back(scalar_kernel(lay, c.BM - 7, c.BN - 7, 0));
    out.push_back(scalar_kernel(lay, 5, 9, c.BK));
  }
  return out;
}

// Whether the kernel's main loop runs for the case's operands, and so clamps its pointers.
bool clamps(const SimCase& sc) {
  return !sc.vec_kernel || sc.vec_loads;
}

// The block of `sc` reads outside the matrix through A exactly when `a`, through B when `b`.
void expect_reads_outside(const SimReport& r, const SimCase& sc, bool a, bool b) {
  EXPECT_EQ(r.has("a_out_of_matrix"), a) << describe(sc) << "\n" << r.summary();
  EXPECT_EQ(r.has("b_out_of_matrix"), b) << describe(sc) << "\n" << r.summary();
}

TEST(IndexSimMutation, AClampOnePastTheEndReadsOutsideTheMatrix) {
  SimIndexing ix;
  ix.clamp_mn = clamp_one_past;
  const auto c = named(kSeed);
  for (const auto& sc : main_loop_edges(c)) {
    const auto r = simulate_block_with(c, sc, ix);
    // With float4 loads clamp_mn moves A's rows in NN and NT and B^T's in NT and TT; the scalar
    // instance moves every pass with it (rows, or start columns along M and N); without float4
    // loads the float4 instance clamps nothing (the edge loop's guard reads nothing outside).
    const bool a = clamps(sc) && (!sc.vec_kernel || !sc.trans_a);
    const bool b = clamps(sc) && (!sc.vec_kernel || sc.trans_b);
    expect_reads_outside(r, sc, a, b);
  }
  // Inside the matrix nothing is clamped: whole tiles are clean.
  for (const auto& sc : kLayouts) {
    EXPECT_TRUE(simulate_block_with(c, sc, ix).ok()) << describe(sc);
    EXPECT_TRUE(simulate_block_with(c, scalar_kernel(sc, 0, 0, 0), ix).ok()) << describe(sc);
  }
}

TEST(IndexSimMutation, AScalarClampOnTheFloat4PathIsCaught) {
  SimIndexing ix;
  ix.clamp_mn_vec = clamp_vec_as_scalar;
  const auto c = named(kSeed);
  for (const auto& sc : main_loop_edges(c)) {
    const auto r = simulate_block_with(c, sc, ix);
    // Only float4s along M (A^T) or N (B) use clamp_mn_vec, in the main loop of the float4
    // instance.
    if (!sc.vec_kernel || !sc.vec_loads || (!sc.trans_a && sc.trans_b)) {
      EXPECT_TRUE(r.ok()) << describe(sc) << "\n" << r.summary();
      continue;
    }
    EXPECT_TRUE(r.has("misaligned_vector")) << describe(sc) << "\n" << r.summary();
    EXPECT_TRUE(r.has(sc.trans_a ? "a_out_of_matrix" : "b_out_of_matrix")) << describe(sc) << "\n"
                                                                           << r.summary();
  }
}

TEST(IndexSimMutation, AClampThatMovesElementsInsideTheMatrixIsCaught) {
  const auto c = named(kSeed);
  for (const bool vec_mutation : {false, true}) {
    SimIndexing ix;
    if (vec_mutation) {
      ix.clamp_mn_vec = clamp_vec_too_early;
    } else {
      ix.clamp_mn = clamp_too_early;
    }
    for (const auto& sc : main_loop_edges(c)) {
      const auto r = simulate_block_with(c, sc, ix);
      // With 4 left in M and N there is no other float4 inside the matrix to move to.
      if (vec_mutation && sc.m_rem == 4) continue;
      // The float4 clamp acts on float4s along M (A^T) or N (B), the other on rows along M (A) or
      // N (B^T) on the float4 instance (TN uses no clamp_mn, NT none of clamp_mn_vec), and on
      // every pass on the scalar one, which never uses clamp_mn_vec.
      const bool tn = sc.trans_a && !sc.trans_b, nt = !sc.trans_a && sc.trans_b;
      const bool used = vec_mutation ? sc.vec_kernel && sc.vec_loads && !nt
                                     : !sc.vec_kernel || (sc.vec_loads && !tn);
      if (!used) {
        EXPECT_TRUE(r.ok()) << describe(sc) << "\n" << r.summary();
        continue;
      }
      // Every read stays inside the matrix and the slice: only the data is wrong, and it reaches
      // C elements inside the matrix.
      EXPECT_TRUE(r.has("operand_mismatch")) << describe(sc) << "\n" << r.summary();
      EXPECT_FALSE(r.has("a_out_of_matrix") || r.has("b_out_of_matrix")) << r.summary();
      EXPECT_NE(r.summary().find("read from a clamped position"), std::string::npos) << r.summary();
    }
  }
  // The edge loop reads a partial slice through the same clamped pointers, its guard on the
  // unclamped coordinates: it catches it too, on the float4 instance (except in TN, which has no
  // rows along M or N to clamp) and on the scalar one in every layout (the last element inside
  // the matrix, at 60 of 61 and 32 of 33, read from its neighbour).
  SimIndexing ix;
  ix.clamp_mn = clamp_too_early;
  for (const auto& lay : kLayouts) {
    auto r = simulate_block_with(c, edge(lay, 60, 32, 5, true), ix);
    const bool tn = lay.trans_a && !lay.trans_b;
    EXPECT_EQ(r.has("operand_mismatch"), !tn) << describe(lay) << "\n" << r.summary();
    const SimCase sc = scalar_kernel(lay, 61, 33, 5);
    r = simulate_block_with(c, sc, ix);
    EXPECT_TRUE(r.has("operand_mismatch")) << describe(sc) << "\n" << r.summary();
    EXPECT_FALSE(r.has("a_out_of_matrix") || r.has("b_out_of_matrix")) << r.summary();
  }
  // Whole tiles never clamp.
  for (const auto& sc : kLayouts) {
    EXPECT_TRUE(simulate_block_with(c, sc, ix).ok()) << describe(sc);
    EXPECT_TRUE(simulate_block_with(c, scalar_kernel(sc, 0, 0, 0), ix).ok()) << describe(sc);
  }
}

// The real clamps put other elements' data only where no C element inside the matrix reads it:
// with the clamp removed, the edge blocks read outside the matrix; with it, they are clean.
int no_clamp(int mn, int) {
  return mn;
}

TEST(IndexSimMutation, WithoutTheClampEdgeBlocksReadOutsideTheMatrix) {
  SimIndexing ix;
  ix.clamp_mn = no_clamp;
  ix.clamp_mn_vec = no_clamp;
  const auto c = named(kSeed);
  for (const auto& sc : main_loop_edges(c)) {
    const auto r = simulate_block_with(c, sc, ix);
    // The float4 instance without float4 loads guards every slice and clamps nothing.
    EXPECT_EQ(r.has("a_out_of_matrix") && r.has("b_out_of_matrix"), clamps(sc))
        << describe(sc) << "\n"
        << r.summary();
    EXPECT_TRUE(simulate_block(c, sc).ok()) << describe(sc);
  }
  // The partial slice is guarded: the clamp does not matter there, on either instance.
  for (const auto& lay : kLayouts) {
    EXPECT_TRUE(simulate_block_with(c, edge(lay, 61, 33, 5, false), ix).ok()) << describe(lay);
    EXPECT_TRUE(simulate_block_with(c, scalar_kernel(lay, 61, 33, 5), ix).ok()) << describe(lay);
  }
}

// A grid's last block takes the instance the tuner picks, and a broken clamp shows there.
TEST(IndexSimMutation, ABrokenClampShowsInTheLastBlockOfAGrid) {
  const auto c = named(kSeed);
  SimIndexing ix;
  ix.clamp_mn_vec = clamp_vec_as_scalar;
  // M, N, K multiples of 4: float4 loads, and the scalar clamp misaligns them.
  auto r = simulate_grid_with(c, 200, 100, 40, ix);
  EXPECT_TRUE(r.has("misaligned_vector")) << r.summary();
  EXPECT_NE(r.summary().find("[TN edge 72x36 k-]"), std::string::npos) << r.summary();
  // K odd: the scalar instance where A or B^T is read along K, and TN reads float4s.
  r = simulate_grid_with(c, 200, 100, 41, ix);
  EXPECT_TRUE(r.has("misaligned_vector")) << r.summary();
  // M and N odd: the scalar instance in every layout, clamp_mn_vec unused.
  EXPECT_TRUE(simulate_grid_with(c, 201, 101, 40, ix).ok());
  ix = SimIndexing{};
  ix.clamp_mn = clamp_too_early;
  r = simulate_grid_with(c, 201, 101, 40, ix);
  EXPECT_TRUE(r.has("operand_mismatch")) << r.summary();
  EXPECT_NE(r.summary().find("scalar-kernel]"), std::string::npos) << r.summary();
}

// --- The scalar instance's loads ---------------------------------------------------------------
// VEC = false reads a pass along M (N) from clamp_mn(col) + min(j, clamp_last(col)): element j
// from clamp_mn(col + j). Broken variants of clamp_last, or the float4 clamp in its place, must
// show up.

int clamp_last_all_four(int, int) {
  return sgt_kernel::kVec - 1;
}
int clamp_last_first_only(int, int) {
  return 0;
}

// The scalar instance's boundary blocks with whole slices, a float4's worth of elements
// straddling the end of the matrix in M and N (and others starting past it).
std::vector<SimCase> scalar_edges(const WarpTileConfig& c) {
  std::vector<SimCase> out;
  for (const auto& lay : kLayouts) {
    out.push_back(scalar_kernel(lay, c.BM - 3, 1, 0));
    out.push_back(scalar_kernel(lay, 1, c.BN - 3, c.BK));
    out.push_back(scalar_kernel(lay, 66, 31, 0));
  }
  return out;
}

TEST(IndexSimMutation, AClampLastThatReadsAllFourReadsPastTheEnd) {
  SimIndexing ix;
  ix.clamp_last = clamp_last_all_four;
  const auto c = named(kSeed);
  for (const auto& sc : scalar_edges(c)) {
    const auto r = simulate_block_with(c, sc, ix);
    // clamp_last only acts where the stored columns run along M (A^T) or N (B).
    expect_reads_outside(r, sc, sc.trans_a, !sc.trans_b);
    EXPECT_EQ(r.ok(), !sc.trans_a && sc.trans_b) << describe(sc) << "\n" << r.summary();
  }
  // Whole tiles read all four anyway; the float4 instance never calls it; the edge loop reads a
  // partial slice element by element under its guard.
  for (const auto& lay : kLayouts) {
    EXPECT_TRUE(simulate_block_with(c, scalar_kernel(lay, 0, 0, 0), ix).ok()) << describe(lay);
    EXPECT_TRUE(simulate_block_with(c, scalar_kernel(lay, 61, 33, 5), ix).ok()) << describe(lay);
  }
  for (const auto& sc : main_loop_edges(c)) {
    if (sc.vec_kernel) EXPECT_TRUE(simulate_block_with(c, sc, ix).ok()) << describe(sc);
  }
  // The last block of an odd grid runs the scalar instance: caught there too.
  const auto r = simulate_grid_with(c, 201, 101, 40, ix);
  EXPECT_TRUE(r.has("a_out_of_matrix") && r.has("b_out_of_matrix")) << r.summary();
}

TEST(IndexSimMutation, AClampLastOfZeroFeedsTheFirstElementToAllFour) {
  SimIndexing ix;
  ix.clamp_last = clamp_last_first_only;
  const auto c = named(kSeed);
  // Elements 1..3 of every pass along M (N) read from element 0, inside the matrix: whole tiles
  // and boundary blocks alike, every read inside the matrix, the data of another m (n) reaching
  // C elements inside it. Where the matrix ends one element into the block, 0 is the right
  // answer (the real clamp_last gives it too) and nothing is wrong; NT reads both operands along
  // K and never calls it.
  std::vector<SimCase> cases = scalar_edges(c);
  for (const auto& lay : kLayouts) cases.push_back(scalar_kernel(lay, 0, 0, 0));
  int caught = 0;
  for (const auto& sc : cases) {
    const auto r = simulate_block_with(c, sc, ix);
    const bool along_mn = (sc.trans_a && sc.m_rem != 1) || (!sc.trans_b && sc.n_rem != 1);
    caught += along_mn;
    EXPECT_EQ(r.has("operand_mismatch"), along_mn) << describe(sc) << "\n" << r.summary();
    EXPECT_EQ(r.ok(), !along_mn) << describe(sc) << "\n" << r.summary();
    EXPECT_FALSE(r.has("a_out_of_matrix") || r.has("b_out_of_matrix")) << r.summary();
    if (along_mn) {
      EXPECT_NE(r.summary().find("read from a clamped position"), std::string::npos) << r.summary();
    }
  }
  EXPECT_EQ(caught, 10);
  // The float4 instance never calls it; the edge loop does not use it.
  for (const auto& sc : main_loop_edges(c)) {
    if (sc.vec_kernel) EXPECT_TRUE(simulate_block_with(c, sc, ix).ok()) << describe(sc);
  }
  for (const auto& lay : kLayouts) {
    EXPECT_TRUE(simulate_block_with(c, scalar_kernel(lay, 61, 33, 5), ix).ok()) << describe(lay);
  }
}

// clamp_mn_vec in place of clamp_mn on the scalar instance: it moves a pass that lies wholly past
// the end of the matrix to ext - 4 instead of ext - 1. Where the matrix ends less than a float4
// into the block (remainder 1..3) that is before the block's first m (n): outside the matrix in
// the first block of the row (column), and caught. Where it ends later, ext - 4 is inside the
// matrix and the pass's four elements all lie past its end, so they reach only C elements the
// epilogue never stores: harmless, and the simulation does not report it.
TEST(IndexSimMutation, TheFloat4ClampOnTheScalarInstanceIsCaughtBelowOneFloat4) {
  SimIndexing ix;
  ix.clamp_mn = sgt_kernel::clamp_mn_vec;
  const auto c = named(kSeed);
  for (const auto& lay : kLayouts) {
    for (int rem : {1, 2, 3}) {
      for (int k : {0, c.BK}) {
        const SimCase sc = scalar_kernel(lay, rem, rem, k);
        const auto r = simulate_block_with(c, sc, ix);
        EXPECT_TRUE(r.has("a_out_of_matrix") && r.has("b_out_of_matrix")) << describe(sc) << "\n"
                                                                          << r.summary();
        EXPECT_TRUE(simulate_block(c, sc).ok()) << describe(sc);
      }
      // Only M, or only N, that short.
      auto r = simulate_block_with(c, scalar_kernel(lay, rem, 0, 0), ix);
      EXPECT_TRUE(r.has("a_out_of_matrix") && !r.has("b_out_of_matrix")) << r.summary();
      r = simulate_block_with(c, scalar_kernel(lay, 0, rem, 0), ix);
      EXPECT_TRUE(!r.has("a_out_of_matrix") && r.has("b_out_of_matrix")) << r.summary();
    }
    for (const auto& [m, n] : {std::pair{5, 6}, {61, 33}, {127, 63}, {66, 7}}) {
      const SimCase sc = scalar_kernel(lay, m, n, 0);
      EXPECT_TRUE(simulate_block_with(c, sc, ix).ok()) << describe(sc);
    }
  }
  // The odd grids' last blocks leave at least 4 in M and N; a grid whose last block leaves 3 in N
  // catches it.
  EXPECT_TRUE(simulate_grid_with(c, 201, 101, 40, ix).ok());
  const auto r = simulate_grid_with(c, 201, 67, 41, ix);
  EXPECT_TRUE(r.has("b_out_of_matrix")) << r.summary();
}

// --- The cp.async ring (STAGES 3, 4) -----------------------------------------------------------
// Family warptile_ring: the ring's schedule is warptile_ring.h's ring_lead, ring_wait and
// ring_buffer; the simulation replays it over 1 to 2 * STAGES + 1 slices.

int wait_one_group_too_few(int stages) {
  return stages - 1;
}
int lead_one_slice_too_far(int stages) {
  return stages;
}
int buffer_of_a_ring_one_short(int t, int stages) {
  return t % (stages - 1);
}
int buffer_past_the_ring(int t, int stages) {
  return t % (stages + 1);
}

TEST(IndexSim, TheCpAsyncRingIsCleanAndOtherFamiliesHaveNone) {
  for (int stages : {3, 4}) {
    auto c = named("wr_128x64x16_w64x16_wn2_t4x4_n256_mb2_s3_p4_g8_o1");
    c.STAGES = stages;
    const auto r = simulate_ring(c);
    EXPECT_TRUE(r.ok()) << stages << "\n" << r.summary();
    const auto whole = simulate_config(c);
    EXPECT_TRUE(whole.ok()) << stages << "\n" << whole.summary();
    // Its PACK twin runs the ring on panels.
    c.PACK = 1;
    EXPECT_TRUE(simulate_config(c).ok()) << stages;
  }
  // A config of another family runs no ring: nothing to replay, however broken its functions.
  SimIndexing ix;
  ix.ring_buffer = buffer_past_the_ring;
  EXPECT_TRUE(simulate_ring(named("wt_128x64x16_w64x16_wn2_t4x4_n256_mb2_s2_p4_g8_o1"), ix).ok());
  EXPECT_FALSE(simulate_ring(named("wr_128x64x16_w64x16_wn2_t4x4_n256_mb2_s3_p4_g8_o1"), ix).ok());
}

// Broken k-contiguous buffers: rows that overlap (12 floats apart for 16 k), rows of k-major order
// by mistake (past the buffer), neighbouring k swapped (a float4 read then brings k in the wrong
// order), and the k of a row rotated by 2 (a float4 of 4 k then straddles two chunks).
int kc_rows_overlap(int bk, int, int mn, int k) {
  return mn * (bk - 4) + k;
}
int kc_as_k_major(int, int, int mn, int k) {
  return k * 256 + mn;
}
int kc_k_pairs_swapped(int bk, int stride, int mn, int k) {
  return sgt_kernel::kc_index(bk, stride, mn, k ^ 1);
}
int kc_k_rotated(int bk, int stride, int mn, int k) {
  return sgt_kernel::kc_index(bk, stride, mn, (k + 2) % bk);
}
// A fragment read that steps a row by BK + 4 floats from the first of the thread's rows, as if
// every row had its own pad.
int kc_group_padded_rows(int bk, int stride, int row0, int i, int k) {
  return sgt_kernel::kc_index(bk, stride, row0, k) + i * (bk + 4);
}
// Layouts that would only be slower (no pad: rows stride apart share banks; the pad of another
// stride) if the compute loop's kc_group_index read them too: it reads by the kernel's layout, so
// the copies and the reads disagree.
int kc_without_pad(int bk, int, int mn, int k) {
  return mn * bk + k;
}
int kc_other_stride(int bk, int stride, int mn, int k) {
  return sgt_kernel::kc_index(bk, stride * 2, mn, k);
}

// The ring copies an operand stored with k contiguous (A in NN and NT, B in NT and TT) into
// k-contiguous buffers: its float4 instance simulates clean in every layout, at whole and edge
// blocks, and a broken kc_index is caught in exactly the layouts that use it.
TEST(IndexSimMutation, ABrokenKContiguousBufferIsCaughtWhereTheLayoutUsesIt) {
  const auto c = named("wr_128x32x16_w64x16_wn2_t4x4_n128_mb1_s3_p4_g8_o1");
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    SCOPED_TRACE(layout);
    SimCase sc;
    sc.trans_a = layout[0] == 'T';
    sc.trans_b = layout[1] == 'T';
    EXPECT_TRUE(simulate_block(c, sc).ok()) << simulate_block(c, sc).summary();
    // An edge block with a partial k-slice (the guarded loop), one whose operands take float4s
    // (the main loop, rows clamped), and one whose operands refuse them (every slice guarded).
    for (auto [m, n, k, vec] : {std::tuple{60, 16, 13, true}, std::tuple{60, 16, 0, true},
                                std::tuple{61, 17, 0, false}}) {
      SimCase edge = sc;
      edge.m_rem = m;
      edge.n_rem = n;
      edge.k_rem = k;
      edge.vec_loads = vec;
      EXPECT_TRUE(simulate_block(c, edge).ok()) << describe(edge) << "\n"
                                                << simulate_block(c, edge).summary();
    }
    const bool uses = !sc.trans_a || sc.trans_b;
    for (auto broken : {kc_rows_overlap, kc_as_k_major, kc_k_pairs_swapped, kc_k_rotated,
                        kc_without_pad, kc_other_stride}) {
      SimIndexing ix;
      ix.kc_index = broken;
      const auto r = simulate_block_with(c, sc, ix);
      EXPECT_EQ(r.ok(), !uses) << r.summary();
      if (uses) {
        const bool a = !sc.trans_a;
        EXPECT_TRUE(r.has(a ? "as_misplaced" : "bs_misplaced") ||
                    r.has(a ? "as_overlap" : "bs_overlap") ||
                    r.has(a ? "as_out_of_tile" : "bs_out_of_tile") || r.has("misaligned_vector") ||
                    r.has("operand_mismatch"))
            << r.summary();
      }
      // The scalar instance is the k-major twin, whatever the layout.
      SimCase scalar = sc;
      scalar.vec_kernel = false;
      EXPECT_TRUE(simulate_block_with(c, scalar, ix).ok());
    }
    SimIndexing ix;
    ix.kc_group_index = kc_group_padded_rows;
    const auto r = simulate_block_with(c, sc, ix);
    EXPECT_EQ(r.has("operand_mismatch"), uses) << r.summary();
  }
}

// The 16-byte wavefronts one quarter of a warp's float4 accesses to shared memory take: the most
// distinct 16-byte chunks that fall in one of the 8 bank groups (lanes on one chunk share it).
int wavefronts(const std::vector<int>& slots) {
  std::map<int, std::set<int>> groups;
  for (int s : slots) groups[s / 4 % 8].insert(s / 4);
  int most = 0;
  for (const auto& [group, chunks] : groups) most = std::max(most, static_cast<int>(chunks.size()));
  return most;
}

// The k-contiguous layout (kc_index, kc_group_index) is free of bank conflicts for every tiling of
// the ring space: each quarter-warp's float4 reads of the compute loop (A rows TM apart, B rows TN
// apart) and of the copies (consecutive float4s of the stored rows) take one wavefront. A uniform
// row of BK + 4 floats, measured at 1.9 conflicts a load on an H100, does not.
TEST(IndexSim, TheKContiguousBuffersHaveNoBankConflictsInTheRingSpace) {
  auto conflicts = [](const WarpTileConfig& c, auto read_slot, auto copy_slot) {
    const auto g = derive(c);
    long long extra = 0;
    for (bool is_a : {true, false}) {
      const int stride = is_a ? c.TM : c.TN, iters = is_a ? g.WMITER : c.WNITER;
      for (int warp = 0; warp < c.NUM_THREADS / 32; ++warp) {
        for (int ws = 0; ws < iters; ++ws) {
          for (int i = 0; i < stride; ++i) {
            for (int k = 0; k < c.BK; k += 4) {
              for (int q = 0; q < 4; ++q) {
                std::vector<int> slots;
                for (int lane = q * 8; lane < q * 8 + 8; ++lane) {
                  const int tid = warp * 32 + lane;
                  const int row0 = is_a ? sgt_kernel::tile_row(g, tid, ws, 0)
                                        : sgt_kernel::tile_col(g, tid, ws, 0);
                  slots.push_back(read_slot(c.BK, stride, row0, i, k));
                }
                extra += wavefronts(slots) - 1;
              }
            }
          }
        }
      }
      const int cols = c.BK, passes = is_a ? g.A_PASSES : g.B_PASSES;
      for (int p = 0; p < passes; ++p) {
        for (int q = 0; q < c.NUM_THREADS / 8; ++q) {
          std::vector<int> slots;
          for (int tid = q * 8; tid < q * 8 + 8; ++tid) {
            slots.push_back(copy_slot(c.BK, stride, sgt_kernel::load_row(g, cols, tid, p),
                                      sgt_kernel::load_col(g, cols, tid, p)));
          }
          extra += wavefronts(slots) - 1;
        }
      }
    }
    return extra;
  };
  const auto e = enumerate(load_space("ring"));
  std::set<std::tuple<int, int, int, int, int, int, int, int, int>> tilings;
  long long uniform = 0;
  for (const auto& c : e.survivors) {
    if (!tilings.insert({c.BM, c.BN, c.BK, c.WM, c.WN, c.WNITER, c.TM, c.TN, c.NUM_THREADS}).second)
      continue;
    SCOPED_TRACE(to_name(c));
    EXPECT_EQ(conflicts(c, sgt_kernel::kc_group_index, sgt_kernel::kc_index), 0);
    uniform += conflicts(
        c, [](int bk, int, int row0, int i, int k) { return (row0 + i) * (bk + 4) + k; },
        [](int bk, int, int mn, int k) { return mn * (bk + 4) + k; });
  }
  EXPECT_GE(tilings.size(), 30u);
  EXPECT_GT(uniform, 0);
}

TEST(IndexSimMutation, ABrokenRingScheduleIsCaught) {
  auto c = named("wr_128x64x16_w64x16_wn2_t4x4_n256_mb2_s3_p4_g8_o1");
  for (int stages : {3, 4}) {
    c.STAGES = stages;
    SCOPED_TRACE(stages);
    SimIndexing ix;
    // Waiting for one group fewer computes a slice whose copies may still be in flight.
    ix.ring_wait = wait_one_group_too_few;
    auto r = simulate_ring(c, ix);
    EXPECT_TRUE(r.has("pipeline_not_landed")) << r.summary();
    EXPECT_NE(r.summary().find("rule ring_stages"), std::string::npos) << r.summary();
    // Issuing one slice further ahead copies into the buffer being computed.
    ix = {};
    ix.ring_lead = lead_one_slice_too_far;
    r = simulate_ring(c, ix);
    EXPECT_TRUE(r.has("pipeline_overwrite")) << r.summary();
    // A ring one buffer short overwrites a slice still to be computed.
    ix = {};
    ix.ring_buffer = buffer_of_a_ring_one_short;
    r = simulate_ring(c, ix);
    EXPECT_TRUE(r.has("pipeline_overwrite") || r.has("pipeline_not_landed")) << r.summary();
    // A buffer index past the ring is outside the shared memory.
    ix = {};
    ix.ring_buffer = buffer_past_the_ring;
    r = simulate_ring(c, ix);
    EXPECT_TRUE(r.has("smem_overflow")) << r.summary();
  }
}

}  // namespace
}  // namespace sgt
