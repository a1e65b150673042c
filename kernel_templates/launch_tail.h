// The wave-aware tail of a call of the pointers and tensor_maps ABIs (sgemm_warptile,
// sgemm_warptile_ring, sgemm_ws_tma with TAIL 1): which tiles the launch plan (launch_plan.h)
// takes out of the first launch and runs as a second one split over K. Plain host arithmetic on
// the geometry headers, with no CUDA header, so that the tuner's CPU index simulation replays the
// very plan that the worker, sgemm_tuned and the launch plan's tests run.
//
// A wave is sm_count x resident tiles (resident: the blocks of the tile kernel an SM holds at
// once). wave_tail (tf32x3_wg_geometry.h) finds the tiles past the last full wave in the GROUP_M
// block order: the last c columns of the last group's h block rows. The first launch is the whole
// grid's first tiles - c h blocks, unsplit, into C; the tail is the sub-problem of C's rows
// row0 .. M - 1 and columns col0 .. N - 1, its operands offset to that corner (a multiple of BM
// or BN floats along a row, or of whole rows), split over K (launch_dims), its partial products
// summed into that part of C by sgemm_splitk_reduce. No kernel changes: a sub-problem is only
// pointer offsets, and the kernel's block order follows from its M and N.
#pragma once

#include "tf32x3_wg_geometry.h"
#include "warptile_geometry.h"

namespace sgt_kernel {

struct CallTail {
  int row0 = 0, col0 = 0;      // the tail's first row and column of C
  int M = 0, N = 0;            // its sub-problem
  LaunchDims dims{};           // its grid, splits and partial products; grid_x == 0: no tail
  unsigned reduce_blocks = 0;  // sgemm_splitk_reduce's grid (plan_call sets it); 0: none
};

// The tail of an unsplit M x N x K launch of BM x BN x BK tiles in the block order of group_m,
// `slots` tiles a wave (sm_count x resident); none (dims.grid_x == 0) where wave_tail finds none.
inline CallTail plan_tail(int BM, int BN, int BK, int group_m, long long M, long long N,
                          long long K, long long slots) {
  CallTail t{};
  if (BM <= 0 || BN <= 0 || BK <= 0 || group_m <= 0 || M <= 0 || N <= 0 || K <= 0 || slots <= 0)
    return t;
  const LaunchDims d = launch_dims(M, N, K, BM, BN, BK, 1);
  const int waves = static_cast<int>(slots < 0x7fffffffLL ? slots : 0x7fffffffLL);
  const WaveTail w = wave_tail(d.grid_m, d.grid_n, group_m, waves, (K + BK - 1) / BK);
  if (w.splits < 2) return t;
  t.row0 = w.tile_row0 * BM;
  t.col0 = w.tile_col0 * BN;
  t.M = static_cast<int>(M - t.row0);
  t.N = static_cast<int>(N - t.col0);
  t.dims = launch_dims(t.M, t.N, K, BM, BN, BK, w.splits);
  return t;
}

}  // namespace sgt_kernel
