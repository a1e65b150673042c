// The launch plan that the worker times and sgemm_tuned runs (kernel_templates/launch_plan.h):
// what plan_call() decides for a config and a call, on the CPU (run_call needs a GPU, and the
// device run of the dispatch and worker tests executes it).
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
  const auto nn = plan_split_call(128, 128, 1000, 777, 1001, false, false);
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
  const auto tt = plan_split_call(128, 128, 64, 64, 64, true, true);
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
  EXPECT_TRUE(plan_split_call(128, 128, 0, 64, 64, false, false).empty);
  EXPECT_TRUE(plan_split_call(128, 128, 64, 0, 64, false, false).empty);
  // K = 0: no workspace and no prepass; the tile kernel still writes C = beta C.
  const auto k0 = plan_split_call(128, 128, 300, 200, 0, false, true);
  EXPECT_FALSE(k0.empty);
  EXPECT_FALSE(k0.too_large);
  EXPECT_EQ(k0.blocks, 3 * 2);
  EXPECT_EQ(k0.kp, 0);
  EXPECT_EQ(k0.workspace_floats, 0);
  EXPECT_EQ(k0.a_grid_x, 0u);
  EXPECT_EQ(k0.b_grid_y, 0u);
  // K = 1 still takes whole 16-byte rows.
  const auto k1 = plan_split_call(128, 128, 5, 3, 1, true, false);
  EXPECT_EQ(k1.kp, 4);
  EXPECT_EQ(k1.workspace_floats, 2LL * 8 * 4);
  // The prepass takes at most 65535 blocks of 32 rows of an operand.
  EXPECT_FALSE(plan_split_call(128, 128, 65535 * 32, 64, 64, false, false).too_large);
  EXPECT_TRUE(plan_split_call(128, 128, 65535 * 32 + 1, 64, 64, false, false).too_large);
  EXPECT_TRUE(plan_split_call(128, 128, 64, 65535 * 32 + 1, 64, false, false).too_large);
  // ... but a K = 0 call has no prepass.
  EXPECT_FALSE(plan_split_call(128, 128, 65535 * 32 + 1, 64, 0, false, false).too_large);
}

}  // namespace
