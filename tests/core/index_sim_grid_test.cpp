// The launch in the index simulation: the last blocks it replays on the instance the tuner picks,
// the block order over the tile grid and the split-K ranges, and broken variants of both.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "config.hpp"
#include "index_sim.hpp"
#include "index_sim_test_util.hpp"

namespace sgt {
namespace {

using namespace sim_test;

// simulate_grid replays the launch's last block in every layout on the instance the tuner picks
// (kernel_vec_loads); the standard grids reach both instances in every layout, each with a whole
// k-slice through the main loop, and float4 loads only where they are legal.
TEST(IndexSimGrid, GridCasesTakeTheTunersInstance) {
  const auto c = named(kSeed);
  std::set<std::string> seen, main_loop;
  for (const auto& gr : standard_grids(c)) {
    const auto cases = grid_cases(c, gr.M, gr.N, gr.K);
    EXPECT_EQ(cases.size(), 4u) << gr.M << "x" << gr.N << "x" << gr.K;
    for (const auto& sc : cases) {
      EXPECT_EQ(sc.vec_loads, kernel_vec_loads(sc.trans_a, sc.trans_b, gr.M, gr.N, gr.K));
      EXPECT_EQ(sc.vec_kernel, sc.vec_loads) << describe(sc);
      if (sc.vec_loads) {
        EXPECT_TRUE(vec_legal(sc)) << describe(sc);
      }
      EXPECT_EQ(sc.m_rem, gr.M - (gr.M - 1) / c.BM * c.BM) << describe(sc);
      EXPECT_EQ(sc.n_rem, gr.N - (gr.N - 1) / c.BN * c.BN) << describe(sc);
      const std::string label =
          describe(layout(sc.trans_a, sc.trans_b)) + (sc.vec_kernel ? " vec" : " scalar");
      seen.insert(label);
      if (sc.k_rem == 0 || sc.k_rem == c.BK) main_loop.insert(label);
    }
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(main_loop.size(), 8u);
  for (auto knobs : {std::pair{1, 1}, {8, 2}, {3, 5}, {1, 32}}) {
    auto k = c;
    k.GROUP_M = knobs.first;
    k.SPLIT_K = knobs.second;
    const auto grids = standard_grids(k);
    ASSERT_EQ(grids.size(), 5u);
    // The last grid: odd M, N and K, the scalar instance's main loop at the corner.
    for (const auto& sc : grid_cases(k, grids[4].M, grids[4].N, grids[4].K)) {
      EXPECT_FALSE(sc.vec_kernel) << describe(sc);
      EXPECT_EQ(sc.k_rem, 0) << to_name(k) << " " << describe(sc);
      EXPECT_EQ(sc.m_rem % 4, 3) << describe(sc);
      EXPECT_EQ(sc.n_rem, 1) << describe(sc);
    }
  }
  // 200 x 100 x 40 with BK 16: the last block is 72 x 36, its last whole slice has a partial one
  // after it; float4s everywhere (M, N, K multiples of 4).
  auto cases = grid_cases(c, 200, 100, 40);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(describe(cases[2]), "TN edge 72x36 k-");
  // K = 7: no whole slice, the partial one; K is odd, so scalars where A or B^T is read along K.
  cases = grid_cases(c, 200, 100, 7);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(describe(cases[0]), "NN edge 72x36 k7 scalar-kernel");
  EXPECT_EQ(describe(cases[2]), "TN edge 72x36 k7");
  // K = 32: the last whole slice ends the matrix.
  EXPECT_EQ(describe(grid_cases(c, 200, 100, 32)[1]), "NT edge 72x36 k16");
  EXPECT_TRUE(simulate_grid(c, 200, 100, 40).ok());
  EXPECT_TRUE(grid_cases(c, 0, 100, 40).empty());
}

// --- Broken block order and split-K -------------------------------------------------------

// The last group of block rows treated as a whole group.
int block_tile_row_whole_groups(int bid, int, int grid_n, int group_m) {
  const int per_group = group_m * grid_n;
  return bid / per_group * group_m + bid % per_group % group_m;
}
int block_tile_col_whole_groups(int bid, int, int grid_n, int group_m) {
  return bid % (group_m * grid_n) / group_m;
}

TEST(IndexSimMutation, ARasterThatForgetsThePartialGroupIsCaught) {
  SimIndexing ix;
  ix.block_tile_row = block_tile_row_whole_groups;
  ix.block_tile_col = block_tile_col_whole_groups;
  auto c = named(kSeed);
  c.GROUP_M = 3;
  // 6 block rows: whole groups, the mistake is invisible.
  EXPECT_TRUE(simulate_grid_with(c, 6 * 128, 5 * 64, 64, ix).ok());
  // 7 block rows: the last group has one row.
  const auto r = simulate_grid_with(c, 7 * 128 - 5, 5 * 64 - 1, 64, ix);
  EXPECT_TRUE(r.has("raster_out_of_grid")) << r.summary();
  EXPECT_TRUE(r.has("raster_hole")) << r.summary();
}

sgt_kernel::LaunchDims every_split(long long M, long long N, long long K, int BM, int BN, int BK,
                                   int splits) {
  auto d = sgt_kernel::launch_dims(M, N, K, BM, BN, BK, splits);
  if (splits > 1) {
    d.k_chunk = sgt_kernel::split_k_chunk(static_cast<int>(K), BK, splits);
    d.grid_z = splits;  // even those past K
    d.workspace_floats = d.grid_z * M * N;
  }
  return d;
}
sgt_kernel::LaunchDims floor_splits(long long M, long long N, long long K, int BM, int BN, int BK,
                                    int splits) {
  auto d = sgt_kernel::launch_dims(M, N, K, BM, BN, BK, splits);
  if (d.grid_z > 1) d.grid_z = static_cast<int>(K / d.k_chunk);  // drops a short last split
  return d;
}
sgt_kernel::LaunchDims one_workspace(long long M, long long N, long long K, int BM, int BN, int BK,
                                     int splits) {
  auto d = sgt_kernel::launch_dims(M, N, K, BM, BN, BK, splits);
  d.workspace_floats = M * N;
  return d;
}

TEST(IndexSimMutation, SplitKMistakesAreCaught) {
  auto c = named(kSeed);
  c.SPLIT_K = 4;
  const std::pair<sgt_kernel::LaunchDims (*)(long long, long long, long long, int, int, int, int),
                  const char*>
      mutations[] = {{unrounded_chunk, "split_k_misaligned"},
                     {every_split, "split_k_empty"},
                     {floor_splits, "split_k_hole"},
                     {one_workspace, "split_k_workspace"}};
  for (const auto& [fn, kind] : mutations) {
    SimIndexing ix;
    ix.launch_dims = fn;
    // K = 3 slices and a bit: 4 splits of one slice each, the last one short; with every_split
    // a fifth... none, but 4 splits of 16 over K = 35 leave the fourth empty.
    bool caught = false;
    for (int K : {3 * 16 + 5, 35, 2 * 16 + 1}) {
      const auto r = simulate_grid_with(c, 200, 100, K, ix);
      caught = caught || r.has(kind);
    }
    EXPECT_TRUE(caught) << kind;
  }
}

// --- Block order and split-K -------------------------------------------------------------------

TEST(IndexSimGrid, BlockOrderIsABijectionForEveryGroupSize) {
  for (int group : {1, 2, 3, 8}) {
    auto c = named(kSeed);
    c.GROUP_M = group;
    for (int gm : {1, 2, 3, 5, 7, 9, 17}) {
      for (int gn : {1, 3, 5, 11}) {
        // Partial last tiles: the grid still counts them.
        const auto r = simulate_grid(c, gm * c.BM - 7, gn * c.BN - 1, 64);
        EXPECT_TRUE(r.ok()) << "GROUP_M " << group << " grid " << gm << "x" << gn << "\n"
                            << r.summary();
      }
    }
  }
  // GROUP_M = 1 is plain row-major order.
  for (int bid = 0; bid < 35; ++bid) {
    EXPECT_EQ(sgt_kernel::block_tile_row(bid, 7, 5, 1), bid / 5);
    EXPECT_EQ(sgt_kernel::block_tile_col(bid, 7, 5, 1), bid % 5);
  }
  // GROUP_M = 3 walks three block rows column by column.
  EXPECT_EQ(sgt_kernel::block_tile_row(1, 7, 5, 3), 1);
  EXPECT_EQ(sgt_kernel::block_tile_col(1, 7, 5, 3), 0);
  EXPECT_EQ(sgt_kernel::block_tile_row(3, 7, 5, 3), 0);
  EXPECT_EQ(sgt_kernel::block_tile_col(3, 7, 5, 3), 1);
}

TEST(IndexSimGrid, SplitKCoversEveryKOnceWithWholeSlices) {
  for (int splits : {1, 2, 3, 4, 7, 16}) {
    auto c = named(kSeed);
    c.SPLIT_K = splits;
    for (int K : {1, 15, 16, 17, 49, 64, 1607}) {
      const auto r = simulate_grid(c, 300, 100, K);
      EXPECT_TRUE(r.ok()) << "SPLIT_K " << splits << " K " << K << "\n" << r.summary();
      const auto d = sgt_kernel::launch_dims(300, 100, K, c.BM, c.BN, c.BK, splits);
      EXPECT_LE(d.grid_z, splits);
      EXPECT_GE(d.grid_z, 1);
      if (d.grid_z > 1) {
        EXPECT_EQ(d.k_chunk % c.BK, 0);
      }
    }
  }
}

TEST(IndexSimGrid, StandardGridsOfTheKnobsAreClean) {
  for (int group : {1, 3, 8, 64}) {
    for (int splits : {1, 2, 5, 32}) {
      auto c = named(kSeed);
      c.GROUP_M = group;
      c.SPLIT_K = splits;
      const auto grids = standard_grids(c);
      EXPECT_EQ(grids.size(), 5u);
      for (const auto& gr : grids) {
        const auto r = simulate_grid(c, gr.M, gr.N, gr.K);
        EXPECT_TRUE(r.ok()) << to_name(c) << " " << gr.M << "x" << gr.N << "x" << gr.K << "\n"
                            << r.summary();
      }
    }
  }
}

TEST(IndexSimGrid, EmptyOrAbsurdProblemsAreDegenerate) {
  const auto c = named(kSeed);
  for (auto [m, n, k] : {std::tuple{0, 64, 64}, {64, 0, 64}, {64, 64, 0}, {-1, 64, 64}}) {
    const auto r = simulate_grid(c, m, n, k);
    EXPECT_TRUE(r.has("degenerate_geometry")) << m << "x" << n << "x" << k;
    EXPECT_EQ(r.defects.size(), 1u);
  }
  auto bad = c;
  bad.GROUP_M = 0;
  EXPECT_TRUE(simulate_grid(bad, 64, 64, 64).has("degenerate_geometry"));
}

}  // namespace
}  // namespace sgt
