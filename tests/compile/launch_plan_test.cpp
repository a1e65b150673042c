// The launch plan that the worker times and sgemm_tuned runs (kernel_templates/launch_plan.h):
// what plan_call() decides for a config and a call, on the CPU (run_call needs a GPU, and the
// device run of the dispatch and worker tests executes it).
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "launch_plan.h"

namespace {

using sgt_kernel::CallTile;
using sgt_kernel::plan_call;

const float* const kAligned = reinterpret_cast<const float*>(std::uintptr_t{0x10000});

TEST(LaunchPlan, PlainTileHasOneLaunchAndNoMemory) {
  const auto p = plan_call({128, 128, 16, 1, false, false}, 1000, 1000, 1000, false, false,
                           kAligned, true, 1000, kAligned, true, 1000, 132, true);
  EXPECT_FALSE(p.empty);
  EXPECT_FALSE(p.too_large);
  EXPECT_EQ(p.dims.grid_x, 8 * 8);
  EXPECT_EQ(p.dims.grid_z, 1);
  EXPECT_EQ(p.dims.workspace_floats, 0);
  EXPECT_FALSE(p.packs);
  EXPECT_FALSE(p.tile_dependent);
  EXPECT_EQ(p.reduce_blocks, 0u);
  EXPECT_FALSE(p.trans_a);
  EXPECT_FALSE(p.trans_b);
}

TEST(LaunchPlan, SplitKReducesOverFourBlocksPerSm) {
  const auto p = plan_call({64, 64, 32, 4, false, false}, 256, 256, 32768, false, false, kAligned,
                           true, 32768, kAligned, true, 256, 132, true);
  EXPECT_EQ(p.dims.grid_z, 4);
  EXPECT_EQ(p.dims.workspace_floats, 4LL * 256 * 256);
  EXPECT_EQ(p.reduce_blocks, 132u * sgt_kernel::kReduceBlocksPerSm);
  EXPECT_TRUE(p.overlap);
  // Without dependent launches the same plan, its launches ordered by the stream alone.
  const auto old = plan_call({64, 64, 32, 4, false, false}, 256, 256, 32768, false, false, kAligned,
                             true, 32768, kAligned, true, 256, 108, false);
  EXPECT_EQ(old.reduce_blocks, 108u * sgt_kernel::kReduceBlocksPerSm);
  EXPECT_FALSE(old.overlap);
}

TEST(LaunchPlan, PackRunsTheTnInstanceAndOnlyPacksWhatNeedsIt) {
  // NN: A (M x K, row-major) is not k-major, so it is packed; B (K x N) is, aligned with N % 4 ==
  // 0.
  const auto nn = plan_call({128, 128, 16, 1, true, false}, 4096, 4096, 1024, false, false,
                            kAligned, true, 1024, kAligned, true, 4096, 132, true);
  EXPECT_TRUE(nn.packs);
  EXPECT_NE(nn.pack.a.src, nullptr);
  EXPECT_EQ(nn.pack.b.src, nullptr);
  EXPECT_TRUE(nn.trans_a);
  EXPECT_FALSE(nn.trans_b);
  EXPECT_TRUE(nn.tile_dependent);  // after the pack, a dependent launch
  // TN with aligned operands and extents that are multiples of 4: nothing to pack, same instance.
  const auto tn = plan_call({128, 128, 16, 1, true, false}, 4096, 4096, 1024, true, false, kAligned,
                            true, 4096, kAligned, true, 4096, 132, true);
  EXPECT_FALSE(tn.packs);
  EXPECT_TRUE(tn.trans_a);
  EXPECT_FALSE(tn.trans_b);
  EXPECT_FALSE(tn.tile_dependent);
  // An odd N packs B too.
  const auto odd = plan_call({128, 128, 16, 1, true, false}, 4095, 4097, 1023, false, false,
                             kAligned, true, 1023, kAligned, true, 4097, 132, true);
  EXPECT_NE(odd.pack.b.src, nullptr);
  EXPECT_EQ(odd.pack.floats, 1023LL * 4096 + 1023LL * 4100);
}

TEST(LaunchPlan, TheTmaKernelIsAPlainLaunchEvenAfterAPack) {
  const auto p = plan_call({64, 64, 16, 1, true, true}, 4095, 4097, 1023, false, false, kAligned,
                           true, 1023, kAligned, true, 4097, 132, true);
  EXPECT_TRUE(p.packs);
  EXPECT_FALSE(p.tile_dependent);
  const auto split = plan_call({64, 64, 16, 2, false, true}, 2048, 512, 2048, true, false, kAligned,
                               true, 2048, kAligned, true, 512, 132, true);
  EXPECT_EQ(split.dims.grid_z, 2);
  EXPECT_GT(split.reduce_blocks, 0u);  // the reduction is still a dependent launch
}

TEST(LaunchPlan, EmptyAndOversizedCallsAreNamed) {
  EXPECT_TRUE(plan_call({64, 64, 16, 1, false, false}, 0, 64, 64, false, false, kAligned, true, 64,
                        kAligned, true, 64, 132, true)
                  .empty);
  EXPECT_TRUE(plan_call({64, 64, 16, 1, false, false}, 64, 0, 64, false, false, kAligned, true, 64,
                        kAligned, true, 1, 132, true)
                  .empty);
  // K = 0 still launches: C = beta * C.
  const auto k0 = plan_call({64, 64, 16, 1, true, false}, 64, 64, 0, false, false, kAligned, true,
                            4, kAligned, true, 64, 132, true);
  EXPECT_FALSE(k0.empty);
  EXPECT_FALSE(k0.packs);
  // 2^31 tiles or more: more blocks than a grid takes.
  EXPECT_TRUE(plan_call({1, 1, 1, 1, false, false}, 65536, 65536, 1, false, false, kAligned, true,
                        1, kAligned, true, 65536, 132, true)
                  .too_large);
}

// split_maps (family tf32x3_wg): the panel workspace, the prepass on each operand, the tile grid.
TEST(LaunchPlan, SplitMapsSplitsBothOperandsIntoPanelsFirst) {
  using sgt_kernel::plan_split_call;
  // NN: A (M x K) is k-contiguous, B (K x N) is not; K = 1001 rounds up to 1004.
  const auto nn = plan_split_call(128, 128, 1, 1000, 777, 1001, false, false, 132, true);
  EXPECT_FALSE(nn.empty);
  EXPECT_FALSE(nn.too_large);
  EXPECT_EQ(nn.blocks, 8 * 7);
  EXPECT_EQ(nn.kp, 1004);
  EXPECT_EQ(nn.workspace_floats, 2LL * (1000 + 777) * 1004);
  EXPECT_EQ(nn.a_k_contig, 1);
  EXPECT_EQ(nn.b_k_contig, 0);
  // A block per 32 x 32 tile of (k, row) of each operand.
  EXPECT_EQ(nn.a_grid_x, (1004u + 31) / 32);
  EXPECT_EQ(nn.a_grid_y, (1000u + 31) / 32);
  EXPECT_EQ(nn.b_grid_x, nn.a_grid_x);
  EXPECT_EQ(nn.b_grid_y, (777u + 31) / 32);
  EXPECT_EQ(sgt_kernel::kSplitThreadsX * sgt_kernel::kSplitThreadsY, 256u);
  // TT: A^T is not k-contiguous, B^T (N x K) is.
  const auto tt = plan_split_call(128, 128, 1, 64, 64, 64, true, true, 132, true);
  EXPECT_EQ(tt.a_k_contig, 0);
  EXPECT_EQ(tt.b_k_contig, 1);
  EXPECT_EQ(tt.kp, 64);
  EXPECT_EQ(tt.workspace_floats, 2LL * 128 * 64);
  // The panels: A big, A small (M rows), B big, B small (N rows), each on a 16-byte unit.
  for (int p = 0; p < 4; ++p)
    EXPECT_EQ(sgt_kernel::tf32x3_wg_panel_offset(p, 1000, 777, 1001) % 4, 0) << p;
  EXPECT_EQ(sgt_kernel::tf32x3_wg_panel_offset(3, 1000, 777, 1001) + 777LL * 1004,
            nn.workspace_floats);
}

TEST(LaunchPlan, SplitMapsEmptyKZeroAndOversizedCalls) {
  using sgt_kernel::plan_split_call;
  EXPECT_TRUE(plan_split_call(128, 128, 1, 0, 64, 64, false, false, 132, true).empty);
  EXPECT_TRUE(plan_split_call(128, 128, 1, 64, 0, 64, false, false, 132, true).empty);
  // K = 0: no workspace and no prepass; the tile kernel still writes C = beta C.
  const auto k0 = plan_split_call(128, 128, 1, 300, 200, 0, false, true, 132, true);
  EXPECT_FALSE(k0.empty);
  EXPECT_FALSE(k0.too_large);
  EXPECT_EQ(k0.blocks, 3 * 2);
  EXPECT_EQ(k0.kp, 0);
  EXPECT_EQ(k0.workspace_floats, 0);
  EXPECT_EQ(k0.a_grid_x, 0u);
  EXPECT_EQ(k0.b_grid_y, 0u);
  // K = 1 still takes whole 16-byte rows.
  const auto k1 = plan_split_call(128, 128, 1, 5, 3, 1, true, false, 132, true);
  EXPECT_EQ(k1.kp, 4);
  EXPECT_EQ(k1.workspace_floats, 2LL * 8 * 4);
  // The prepass takes at most 65535 blocks of 32 rows of an operand.
  EXPECT_FALSE(plan_split_call(128, 128, 1, 65535 * 32, 64, 64, false, false, 132, true).too_large);
  EXPECT_TRUE(
      plan_split_call(128, 128, 1, 65535 * 32 + 1, 64, 64, false, false, 132, true).too_large);
  EXPECT_TRUE(
      plan_split_call(128, 128, 1, 64, 65535 * 32 + 1, 64, false, false, 132, true).too_large);
  // ... but a K = 0 call has no prepass.
  EXPECT_FALSE(
      plan_split_call(128, 128, 1, 65535 * 32 + 1, 64, 0, false, false, 132, true).too_large);
  // Unsplit: the unsplit entry on one split, no split-K workspace, no reduction.
  EXPECT_FALSE(k1.split_entry);
  EXPECT_EQ(k1.grid_z, 1);
  EXPECT_EQ(k1.partial_floats, 0);
  EXPECT_EQ(k1.reduce_blocks, 0u);
}

// split_maps with SPLIT_K (the split entry, sgemm_tf32x3_wgmma_splitk): launch_dims' splits of
// whole 32-float slices, a workspace of grid_z M N floats and the pointers ABI's reduction.
TEST(LaunchPlan, SplitMapsSplitKPlansTheWorkspaceAndTheReduction) {
  using sgt_kernel::plan_split_call;
  // 1536 x 1536 x 6144 NT: 144 tiles (1.09 waves of 132 SMs), 192 slices; SPLIT_K 2 runs 288
  // blocks of 96 slices each.
  const auto s2 = plan_split_call(128, 128, 2, 1536, 1536, 6144, false, true, 132, true);
  EXPECT_FALSE(s2.too_large);
  EXPECT_TRUE(s2.split_entry);
  EXPECT_EQ(s2.blocks, 144);
  EXPECT_EQ(s2.grid_z, 2);
  EXPECT_EQ(s2.k_chunk, 96 * 32);
  EXPECT_EQ(s2.partial_floats, 2LL * 1536 * 1536);
  EXPECT_EQ(s2.reduce_blocks, 132u * sgt_kernel::kReduceBlocksPerSm);
  EXPECT_TRUE(s2.overlap);
  // The panels are as unsplit: the prepass does not change with SPLIT_K.
  const auto s1 = plan_split_call(128, 128, 1, 1536, 1536, 6144, false, true, 132, true);
  EXPECT_EQ(s2.workspace_floats, s1.workspace_floats);
  EXPECT_EQ(s2.a_grid_x, s1.a_grid_x);
  EXPECT_EQ(s2.b_grid_y, s1.b_grid_y);
  EXPECT_EQ(s2.b_k_contig, 1);
  // 2560^3: 400 tiles, 80 slices; SPLIT_K 3 runs 27 + 27 + 26 slices.
  const auto s3 = plan_split_call(128, 128, 3, 2560, 2560, 2560, true, true, 132, false);
  EXPECT_EQ(s3.blocks, 400);
  EXPECT_EQ(s3.grid_z, 3);
  EXPECT_EQ(s3.k_chunk, 27 * 32);
  EXPECT_EQ(s3.partial_floats, 3LL * 2560 * 2560);
  EXPECT_FALSE(s3.overlap);  // before sm_90: the stream orders the reduction
  EXPECT_EQ(sgt_kernel::tf32x3_wg_split_slices(2560, 2, s3.k_chunk), 26);
  // K not a multiple of 32: 1000 is 32 slices (the last 8 floats); SPLIT_K 4 runs 4 x 8 slices,
  // the last one's last slice partial.
  const auto odd = plan_split_call(128, 128, 4, 300, 200, 1000, false, false, 132, true);
  EXPECT_EQ(odd.grid_z, 4);
  EXPECT_EQ(odd.k_chunk, 8 * 32);
  EXPECT_EQ(odd.partial_floats, 4LL * 300 * 200);
  EXPECT_EQ(sgt_kernel::tf32x3_wg_split_first_slice(3, odd.k_chunk), 24);
  EXPECT_EQ(sgt_kernel::tf32x3_wg_split_slices(1000, 3, odd.k_chunk), 8);
  // Fewer slices than SPLIT_K: K = 40 is 2 slices, so SPLIT_K 4 runs 2 splits of one slice.
  const auto few = plan_split_call(128, 128, 4, 64, 64, 40, false, false, 132, true);
  EXPECT_TRUE(few.split_entry);
  EXPECT_EQ(few.grid_z, 2);
  EXPECT_EQ(few.k_chunk, 32);
  EXPECT_EQ(few.partial_floats, 2LL * 64 * 64);
  // One slice: the split entry runs unsplit and writes C itself (k_chunk K, no workspace, no
  // reduction).
  const auto one = plan_split_call(128, 128, 4, 64, 64, 20, false, false, 132, true);
  EXPECT_TRUE(one.split_entry);
  EXPECT_EQ(one.grid_z, 1);
  EXPECT_EQ(one.k_chunk, 20);
  EXPECT_EQ(one.partial_floats, 0);
  EXPECT_EQ(one.reduce_blocks, 0u);
  // K = 0: nothing to split, C = beta C by the split entry on one split.
  const auto k0 = plan_split_call(128, 128, 3, 64, 64, 0, false, false, 132, true);
  EXPECT_EQ(k0.grid_z, 1);
  EXPECT_EQ(k0.k_chunk, 0);
  EXPECT_EQ(k0.workspace_floats, 0);
  EXPECT_EQ(k0.partial_floats, 0);
  EXPECT_FALSE(k0.too_large);
  // M or N 0: nothing at all.
  EXPECT_TRUE(plan_split_call(128, 128, 2, 0, 64, 4096, false, false, 132, true).empty);
  // The splits are the grid's z (at most 65535), and a split launch needs the SM count for its
  // reduction.
  EXPECT_FALSE(
      plan_split_call(128, 128, 65535, 1, 1, 65535 * 32, false, false, 132, true).too_large);
  EXPECT_TRUE(
      plan_split_call(128, 128, 65536, 1, 1, 65536 * 32, false, false, 132, true).too_large);
  EXPECT_TRUE(plan_split_call(128, 128, 2, 64, 64, 4096, false, false, 0, true).too_large);
  EXPECT_FALSE(plan_split_call(128, 128, 2, 64, 64, 20, false, false, 0, true).too_large);
}

// Every k slice (of bk values) in exactly one split of the plan for BK = bk, and the split entry's
// ranges are launch_dims' k ranges: the slice functions first, count and k are the kernel's.
void expect_splits_cover_every_slice(int bk, int (*first_slice)(int, int),
                                     int (*split_slices)(int, int, int), int (*slice_k)(int, int),
                                     const std::vector<int>& ks, const std::vector<int>& splits) {
  for (const int K : ks) {
    for (const int S : splits) {
      const auto p =
          sgt_kernel::plan_split_call(128, 128, S, 256, 256, K, false, false, 132, true, bk);
      const int slices = (K + bk - 1) / bk;
      std::vector<int> seen(static_cast<size_t>(slices), 0);
      for (int z = 0; z < p.grid_z; ++z) {
        const int first = first_slice(z, p.k_chunk);
        const int n = split_slices(K, z, p.k_chunk);
        EXPECT_GT(n, 0) << K << " " << S << " split " << z;
        for (int kb = 0; kb < n; ++kb) {
          const int k0 = slice_k(first, kb);
          ASSERT_EQ(k0 % bk, 0);
          ASSERT_LT(k0 / bk, slices) << K << " " << S;
          ++seen[static_cast<size_t>(k0 / bk)];
          // Inside the split's k range [z k_chunk, min(K, (z + 1) k_chunk)).
          EXPECT_GE(k0, z * p.k_chunk);
          EXPECT_LT(k0, std::min(K, (z + 1) * p.k_chunk));
        }
      }
      for (int sl = 0; sl < slices; ++sl)
        EXPECT_EQ(seen[static_cast<size_t>(sl)], 1) << K << " " << S << " slice " << sl;
      EXPECT_LE(p.grid_z, std::max(1, S));
    }
  }
}

TEST(LaunchPlan, SplitMapsSplitsCoverEverySliceOnce) {
  expect_splits_cover_every_slice(sgt_kernel::kWgBK, sgt_kernel::tf32x3_wg_split_first_slice,
                                  sgt_kernel::tf32x3_wg_split_slices, sgt_kernel::tf32x3_wg_slice_k,
                                  {1, 31, 32, 33, 40, 100, 1000, 4096, 6144}, {1, 2, 3, 4, 7});
}

// The BF16 split (FMA_ORDER 3, BK kB6BK = 64): three panels of 2-byte values an operand, rows
// of K rounded up to 8, slices of 64 values, and the TF32 plan's prepass grid (rounding K up to 4
// or to 8 gives the same count of 32-wide tiles).
TEST(LaunchPlan, SplitMapsBf16PlansThreeBf16PanelsAndSlicesOf64) {
  using sgt_kernel::kB6BK;
  using sgt_kernel::plan_split_call;
  const auto nn = plan_split_call(128, 128, 1, 1000, 777, 1001, false, false, 132, true, kB6BK);
  EXPECT_TRUE(nn.bf16);
  EXPECT_EQ(nn.kp, 1008);
  // 3 (M + N) Kp values of 2 bytes, in floats rounded up.
  EXPECT_EQ(nn.workspace_floats, (3LL * (1000 + 777) * 1008 + 1) / 2);
  EXPECT_EQ(nn.blocks, 8 * 7);
  EXPECT_FALSE(plan_split_call(128, 128, 1, 1000, 777, 1001, false, false, 132, true).bf16);
  for (int K = 1; K <= 300; ++K) {
    const auto b = plan_split_call(128, 128, 1, 100, 60, K, false, true, 132, true, kB6BK);
    const auto t = plan_split_call(128, 128, 1, 100, 60, K, false, true, 132, true);
    EXPECT_EQ(b.a_grid_x, t.a_grid_x) << K;
    EXPECT_EQ(b.a_grid_x, static_cast<unsigned>((b.kp + 31) / 32)) << K;
    EXPECT_EQ(b.kp % 8, 0);
    EXPECT_GE(b.kp, K);
    EXPECT_LT(b.kp, K + 8);
  }
  // The panels: part j of A at j M Kp, of B after A's three; each on a 16-byte unit (8 values),
  // the last ending at the workspace's end.
  for (const bool b : {false, true})
    for (int j = 0; j < sgt_kernel::kB6Parts; ++j)
      EXPECT_EQ(sgt_kernel::bf16x6_panel_offset(b, j, 1000, 777, 1001) % 8, 0) << b << j;
  EXPECT_EQ(sgt_kernel::bf16x6_panel_offset(true, 2, 1000, 777, 1001) + 777LL * 1008,
            sgt_kernel::bf16x6_workspace_values(1000, 777, 1001));
  // The "small" map's planes: part 1's, then part 2's; "big" has one.
  EXPECT_EQ(sgt_kernel::bf16x6_map_plane(0), 0);
  EXPECT_EQ(sgt_kernel::bf16x6_map_plane(1), 0);
  EXPECT_EQ(sgt_kernel::bf16x6_map_plane(2), 1);
  // Split-K in slices of 64: 1536 x 1536 x 6144 is 96 slices, SPLIT_K 2 runs 2 x 48.
  const auto s2 = plan_split_call(128, 128, 2, 1536, 1536, 6144, false, true, 132, true, kB6BK);
  EXPECT_EQ(s2.grid_z, 2);
  EXPECT_EQ(s2.k_chunk, 48 * kB6BK);
  EXPECT_EQ(s2.partial_floats, 2LL * 1536 * 1536);
  // K = 100 is 2 slices: SPLIT_K 3 runs 2 splits of one.
  const auto few = plan_split_call(128, 128, 3, 64, 64, 100, false, false, 132, true, kB6BK);
  EXPECT_EQ(few.grid_z, 2);
  EXPECT_EQ(few.k_chunk, kB6BK);
  expect_splits_cover_every_slice(kB6BK, sgt_kernel::bf16x6_split_first_slice,
                                  sgt_kernel::bf16x6_split_slices, sgt_kernel::bf16x6_slice_k,
                                  {1, 63, 64, 65, 100, 1000, 6144}, {1, 2, 3, 4});
}

// The wave-aware tail (TAIL 1): 2560^3 is 400 tiles of 128 x 128, 3 waves of 132 SMs and 4 left
// over; the tail plan runs 396 tiles whole and the last 4 (in GROUP_M 8 order: block rows 16..19
// of the last group, block column 19) as a sub-problem split over K.
TEST(LaunchPlan, TheWaveAwareTailRunsTheTilesPastTheLastFullWaveSplitOverK) {
  using sgt_kernel::plan_split_call;
  const auto t = plan_split_call(128, 128, 1, 2560, 2560, 2560, true, true, 132, true,
                                 sgt_kernel::kWgBK, true, 8);
  EXPECT_FALSE(t.too_large);
  EXPECT_TRUE(t.split_entry);  // the first launch is the split entry on one split, into C
  EXPECT_EQ(t.blocks, 396);
  EXPECT_EQ(t.grid_z, 1);
  EXPECT_EQ(t.k_chunk, 2560);
  EXPECT_EQ(t.partial_floats, 0);
  EXPECT_EQ(t.reduce_blocks, 0u);
  EXPECT_EQ(t.tail.row0, 16 * 128);
  EXPECT_EQ(t.tail.col0, 19 * 128);
  EXPECT_EQ(t.tail.M, 512);
  EXPECT_EQ(t.tail.N, 128);
  EXPECT_EQ(t.tail.blocks, 4);
  // 33 splits would fill the SMs, but each takes at least kTailMinSlices of the 80: 20 of 4.
  EXPECT_EQ(t.tail.grid_z, 80 / sgt_kernel::kTailMinSlices);
  EXPECT_EQ(t.tail.k_chunk, 4 * 32);
  EXPECT_EQ(t.tail.partial_floats, 20LL * 512 * 128);
  EXPECT_EQ(t.tail.reduce_blocks, 132u * sgt_kernel::kReduceBlocksPerSm);
  // The panels and the prepass are the plain plan's.
  const auto plain = plan_split_call(128, 128, 1, 2560, 2560, 2560, true, true, 132, true);
  EXPECT_FALSE(plain.split_entry);
  EXPECT_EQ(plain.tail.blocks, 0);
  EXPECT_EQ(plain.blocks, 400);
  EXPECT_EQ(t.workspace_floats, plain.workspace_floats);
  EXPECT_EQ(t.a_grid_y, plain.a_grid_y);
  // Row-major block order (GROUP_M 1): the last block row's last 4 tiles.
  const auto r = plan_split_call(128, 128, 1, 2560, 2560, 2560, false, false, 132, true,
                                 sgt_kernel::kWgBK, true, 1);
  EXPECT_EQ(r.tail.row0, 19 * 128);
  EXPECT_EQ(r.tail.col0, 16 * 128);
  EXPECT_EQ(r.tail.M, 128);
  EXPECT_EQ(r.tail.N, 512);
  // The BF16 split's 40 slices of 64: 10 splits of 4.
  const auto b = plan_split_call(128, 128, 1, 2560, 2560, 2560, false, false, 132, true,
                                 sgt_kernel::kB6BK, true, 8);
  EXPECT_TRUE(b.bf16);
  EXPECT_EQ(b.tail.grid_z, 10);
  EXPECT_EQ(b.tail.k_chunk, 4 * 64);
  // 1536 x 1536 x 6144: 144 tiles, 12 left over: block rows 8..11 (the last group's 4), columns
  // 9..11, split 132 / 12 = 11 ways.
  const auto n = plan_split_call(128, 128, 1, 1536, 1536, 6144, false, true, 132, true,
                                 sgt_kernel::kWgBK, true, 8);
  EXPECT_EQ(n.blocks, 132);
  EXPECT_EQ(n.tail.blocks, 12);
  EXPECT_EQ(n.tail.row0, 8 * 128);
  EXPECT_EQ(n.tail.col0, 9 * 128);
  EXPECT_EQ(n.tail.grid_z, 11);
  // No tail: whole waves (4096^3's last wave is 100 of 132 tiles: a tail of 104 cannot split
  // twice in one wave), one wave or less, K too short for two splits of kTailMinSlices, SPLIT_K.
  for (const auto& none :
       {plan_split_call(128, 128, 1, 4096, 4096, 4096, false, false, 132, true, 32, true, 8),
        plan_split_call(128, 128, 1, 1024, 1024, 4096, false, false, 132, true, 32, true, 8),
        plan_split_call(128, 128, 1, 16896, 128, 4096, false, false, 132, true, 32, true, 8),
        plan_split_call(128, 128, 1, 2560, 2560, 200, false, false, 132, true, 32, true, 8),
        plan_split_call(128, 128, 2, 2560, 2560, 2560, false, false, 132, true, 32, true, 8)}) {
    EXPECT_EQ(none.tail.blocks, 0);
    EXPECT_EQ(none.tail.partial_floats, 0);
    EXPECT_EQ(none.tail.reduce_blocks, 0u);
    EXPECT_TRUE(none.split_entry);
  }
  // Over many problems and SM counts: where there is a tail, the first launch fills whole waves
  // only, the tail's blocks and splits fit one wave, and the two launches take every tile.
  int tails = 0;
  for (const int sms : {132, 114, 16, 7})
    for (int M = 100; M <= 4000; M += 300)
      for (int N = 128; N <= 4000; N += 350)
        for (const int g : {1, 8}) {
          const auto p = plan_split_call(128, 128, 1, M, N, 1024, false, false, sms, true,
                                         sgt_kernel::kWgBK, true, g);
          const long long tiles = 1LL * ((M + 127) / 128) * ((N + 127) / 128);
          if (p.tail.blocks == 0) {
            EXPECT_EQ(p.blocks, tiles);
            continue;
          }
          ++tails;
          EXPECT_EQ(p.blocks + p.tail.blocks, tiles) << M << "x" << N << " on " << sms;
          EXPECT_LE(p.blocks, tiles / sms * sms) << M << "x" << N << " on " << sms;
          EXPECT_LE(p.tail.blocks * p.tail.grid_z, sms) << M << "x" << N << " on " << sms;
          EXPECT_GE(p.tail.grid_z, 2);
          EXPECT_EQ(p.tail.M, M - p.tail.row0);
          EXPECT_EQ(p.tail.N, N - p.tail.col0);
          EXPECT_EQ(p.tail.partial_floats, 1LL * p.tail.grid_z * p.tail.M * p.tail.N);
        }
  EXPECT_GT(tails, 50);
}

// The FFMA families' tail (plan_call with TAIL 1, launch_tail.h): a wave is SMs x resident
// blocks, the first launch is the whole waves' tiles into C, the tail the rest split over K.
TEST(LaunchPlan, AnFfmaTailRunsTheTilesPastTheLastWaveOfResidentBlocks) {
  // 2560^3 NN in 64 x 128 tiles, three blocks an SM: 800 tiles on 396 slots, 8 left over, the
  // last column of the last group of 8 block rows, split min(396 / 8, 160 / 4) = 40 ways.
  const CallTile tile{64, 128, 16, 1, false, false, true, 8};
  const auto p = plan_call(tile, 2560, 2560, 2560, false, false, kAligned, true, 2560, kAligned,
                           true, 2560, 132, true, 3);
  EXPECT_FALSE(p.too_large);
  EXPECT_EQ(p.dims.grid_x, 792);
  EXPECT_EQ(p.dims.grid_z, 1);
  EXPECT_EQ(p.dims.k_chunk, 2560);
  EXPECT_EQ(p.reduce_blocks, 0u);
  EXPECT_EQ(p.tail.row0, 32 * 64);
  EXPECT_EQ(p.tail.col0, 19 * 128);
  EXPECT_EQ(p.tail.M, 512);
  EXPECT_EQ(p.tail.N, 128);
  EXPECT_EQ(p.tail.dims.grid_x, 8);
  EXPECT_EQ(p.tail.dims.grid_z, 160 / sgt_kernel::kTailMinSlices);
  EXPECT_EQ(p.tail.dims.k_chunk, sgt_kernel::kTailMinSlices * 16);
  EXPECT_EQ(p.tail.dims.workspace_floats, 40LL * 512 * 128);
  EXPECT_EQ(p.tail.reduce_blocks, 132u * sgt_kernel::kReduceBlocksPerSm);

  // The operands of the tail's launch, in each instance layout: op(A)'s row 2048, op(B)'s column
  // 2432. A PACK config runs TN on its panels (A^T and B as K rows) whatever the call's layout.
  const float* A = kAligned;
  const float* B = kAligned + (1 << 24);
  const int lda = 3000, ldb = 4000;
  const auto at = [&](bool ta, bool tb, bool pack) {
    CallTile t = tile;
    t.pack = pack;
    const auto q = plan_call(t, 2560, 2560, 2560, ta, tb, A, true, lda, B, true, ldb, 132, true, 3);
    return std::make_pair(static_cast<long long>(sgt_kernel::tail_a(q, A, lda) - A),
                          static_cast<long long>(sgt_kernel::tail_b(q, B, ldb) - B));
  };
  EXPECT_EQ(at(false, false, false), std::make_pair(2048LL * lda, 2432LL));
  EXPECT_EQ(at(false, true, false), std::make_pair(2048LL * lda, 2432LL * ldb));
  EXPECT_EQ(at(true, false, false), std::make_pair(2048LL, 2432LL));
  EXPECT_EQ(at(true, true, false), std::make_pair(2048LL, 2432LL * ldb));
  EXPECT_EQ(at(false, true, true), std::make_pair(2048LL, 2432LL));

  // The wave is the resident blocks': on one block an SM, 800 tiles leave 8 over 132 as well,
  // now split min(132 / 8, 40) = 16 ways.
  const auto one = plan_call(tile, 2560, 2560, 2560, false, false, kAligned, true, 2560, kAligned,
                             true, 2560, 132, true, 1);
  EXPECT_EQ(one.tail.dims.grid_x, 8);
  EXPECT_EQ(one.tail.dims.grid_z, 16);

  // No tail: TAIL 0, SPLIT_K 2, no resident block (the runtime could not say), K = 0, whole
  // waves (1024 tiles on 2 x 64), one wave or less, K too short for two splits of 4 slices.
  CallTile plain = tile;
  plain.tail = false;
  CallTile split = tile;
  split.split_k = 2;
  const auto none = [&](const CallTile& t, int M, int N, int K, int sms, int resident) {
    return plan_call(t, M, N, K, false, false, kAligned, true, K, kAligned, true, N, sms, true,
                     resident);
  };
  for (const auto& q :
       {none(plain, 2560, 2560, 2560, 132, 3), none(split, 2560, 2560, 2560, 132, 3),
        none(tile, 2560, 2560, 2560, 132, 0), none(tile, 2560, 2560, 0, 132, 3),
        none(tile, 4096, 4096, 4096, 64, 2), none(tile, 1024, 1024, 4096, 132, 3),
        none(tile, 2560, 2560, 100, 132, 3)}) {
    EXPECT_EQ(q.tail.dims.grid_x, 0);
    EXPECT_EQ(q.tail.dims.workspace_floats, 0);
    EXPECT_EQ(q.tail.reduce_blocks, 0u);
  }
  EXPECT_EQ(none(tile, 4096, 4096, 4096, 64, 2).dims.grid_x, 64 * 32);

  // Over many problems, SM counts and resident blocks: where there is a tail, the first launch
  // holds whole waves' tiles at most, the tail's blocks and splits fit one wave, and the two
  // launches take every tile.
  int tails = 0;
  for (const int sms : {132, 114, 16, 7})
    for (const int resident : {1, 2, 3})
      for (int M = 100; M <= 4000; M += 450)
        for (int N = 64; N <= 4000; N += 500)
          for (const int g : {1, 8}) {
            const CallTile t{64, 128, 16, 1, false, false, true, g};
            const auto q = plan_call(t, M, N, 1024, false, false, kAligned, true, 1024, kAligned,
                                     true, N, sms, true, resident);
            const long long tiles = 1LL * ((M + 63) / 64) * ((N + 127) / 128);
            const long long slots = 1LL * sms * resident;
            if (q.tail.dims.grid_x == 0) {
              EXPECT_EQ(q.dims.grid_x, tiles);
              continue;
            }
            ++tails;
            EXPECT_EQ(q.dims.grid_x + q.tail.dims.grid_x, tiles) << M << "x" << N << " " << slots;
            EXPECT_LE(q.dims.grid_x, tiles / slots * slots) << M << "x" << N << " " << slots;
            EXPECT_LE(q.tail.dims.grid_x * q.tail.dims.grid_z, slots) << M << "x" << N;
            EXPECT_GE(q.tail.dims.grid_z, 2);
            EXPECT_EQ(q.tail.row0 % 64, 0);
            EXPECT_EQ(q.tail.col0 % 128, 0);
            EXPECT_EQ(q.tail.M, M - q.tail.row0);
            EXPECT_EQ(q.tail.N, N - q.tail.col0);
            EXPECT_EQ(q.tail.dims.workspace_floats, 1LL * q.tail.dims.grid_z * q.tail.M * q.tail.N);
          }
  EXPECT_GT(tails, 100);
}

// The kernels' contract on the CPU (sgemm_warptile.cuh, sgemm_ws_tma.cuh): block b of a launch of
// d on an M x N x K problem takes tile (block_tile_row, block_tile_col) of the grid its M and N
// give, split z takes k in [z k_chunk, (z + 1) k_chunk), and writes alpha acc + beta C into C, or
// with grid_z > 1 its raw partial product to partial[z M N + i N + j]; sgemm_splitk_reduce sums
// the splits in split order into C.
struct CpuCall {
  int M, N, K, BM, BN, group_m;
  float alpha, beta;
  const float* A;
  int lda;
  bool ta;
  const float* B;
  int ldb;
  bool tb;
  float* C;
  int ldc;
};

void cpu_launch(const CpuCall& c, const sgt_kernel::LaunchDims& d, std::vector<float>& partial) {
  const int gm = (c.M + c.BM - 1) / c.BM, gn = (c.N + c.BN - 1) / c.BN;
  if (d.grid_z > 1) partial.assign(static_cast<size_t>(d.grid_z) * c.M * c.N, 0.0f);
  for (int z = 0; z < d.grid_z; ++z)
    for (long long b = 0; b < d.grid_x; ++b) {
      const int r0 = sgt_kernel::block_tile_row(static_cast<int>(b), gm, gn, c.group_m) * c.BM;
      const int c0 = sgt_kernel::block_tile_col(static_cast<int>(b), gm, gn, c.group_m) * c.BN;
      const int k0 = z * d.k_chunk, k1 = std::min(c.K, k0 + d.k_chunk);
      for (int i = r0; i < std::min(c.M, r0 + c.BM); ++i)
        for (int j = c0; j < std::min(c.N, c0 + c.BN); ++j) {
          float acc = 0;
          for (int k = k0; k < k1; ++k)
            acc += (c.ta ? c.A[k * c.lda + i] : c.A[i * c.lda + k]) *
                   (c.tb ? c.B[j * c.ldb + k] : c.B[k * c.ldb + j]);
          if (d.grid_z > 1)
            partial[static_cast<size_t>(z) * c.M * c.N + i * c.N + j] = acc;
          else
            c.C[i * c.ldc + j] = c.alpha * acc + c.beta * c.C[i * c.ldc + j];
        }
    }
  if (d.grid_z > 1)
    for (int i = 0; i < c.M; ++i)
      for (int j = 0; j < c.N; ++j) {
        float sum = 0;
        for (int z = 0; z < d.grid_z; ++z)
          sum += partial[static_cast<size_t>(z) * c.M * c.N + i * c.N + j];
        c.C[i * c.ldc + j] = c.alpha * sum + c.beta * c.C[i * c.ldc + j];
      }
}

// A TAIL call run on the CPU through its plan, as run_call runs it (the first launch on the
// whole problem, then the tail on tail_a, tail_b and C from row0, col0), gives alpha op(A) op(B)
// + beta C in every layout, on PACK's panels too, with padded leading dimensions: the tail's
// offsets and its split and reduction are the call's, not only its tiles.
TEST(LaunchPlan, ATailCallOnTheCpuComputesTheProduct) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int tails = 0, calls = 0;
  for (const auto& [M, N, K, slots] : std::vector<std::tuple<int, int, int, int>>{
           {193, 214, 64, 16}, {186, 269, 70, 12}, {186, 93, 64, 16}, {298, 247, 66, 6}})
    for (const int group_m : {1, 2, 8})
      for (const int layout : {0, 1, 2, 3, 4}) {  // NN, NT, TN, TT, then PACK's panels (TN)
        const bool pack = layout == 4;
        const bool ta = pack || (layout & 2) != 0, tb = !pack && (layout & 1) != 0;
        const int lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 5, ldc = N + 2;
        std::vector<float> A(static_cast<size_t>(lda) * (ta ? K : M)),
            B(static_cast<size_t>(ldb) * (tb ? N : K)), C0(static_cast<size_t>(ldc) * M);
        for (auto* v : {&A, &B, &C0})
          for (auto& x : *v) x = u(rng);
        const float alpha = 0.5f, beta = 2.0f;
        std::vector<float> ref = C0;
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) {
            double acc = 0;
            for (int k = 0; k < K; ++k)
              acc += static_cast<double>(ta ? A[k * lda + i] : A[i * lda + k]) *
                     (tb ? B[j * ldb + k] : B[k * ldb + j]);
            ref[i * ldc + j] = static_cast<float>(alpha * acc + beta * C0[i * ldc + j]);
          }
        // slots = SMs x resident: 1 x slots.
        const CallTile t{32, 32, 4, 1, pack, false, true, group_m};
        const auto plan =
            plan_call(t, M, N, K, ta, tb, A.data(), true, lda, B.data(), true, ldb, slots, true, 1);
        ASSERT_EQ(plan.trans_a, ta);
        ASSERT_EQ(plan.trans_b, tb);
        // Each launch as run_call makes it: its grid and problem from tile_launch, the tail's
        // operands from tail_a and tail_b.
        std::vector<float> C = C0, partial;
        for (const bool tail : {false, true}) {
          if (tail && plan.tail.dims.grid_x == 0) continue;
          tails += tail;
          int m = M, n = N;
          float* c = C.data();
          const auto& d = sgt_kernel::tile_launch(plan, tail, m, n, c, ldc);
          const float* a = tail ? sgt_kernel::tail_a(plan, A.data(), lda) : A.data();
          const float* b = tail ? sgt_kernel::tail_b(plan, B.data(), ldb) : B.data();
          cpu_launch({m, n, K, 32, 32, group_m, alpha, beta, a, lda, ta, b, ldb, tb, c, ldc}, d,
                     partial);
        }
        ++calls;
        double worst = 0;
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j)
            worst =
                std::max(worst, static_cast<double>(std::abs(C[i * ldc + j] - ref[i * ldc + j])));
        EXPECT_LT(worst, 1e-4) << M << "x" << N << "x" << K << " layout " << layout << " group "
                               << group_m << " on " << slots;
      }
  EXPECT_EQ(calls, 60);
  EXPECT_EQ(tails, 60);  // every one of these problems leaves a tail in every block order
}

}  // namespace
