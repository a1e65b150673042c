// Geometry and index arithmetic of the split-TF32 kernel on wgmma (sgemm_tf32x3_wgmma.cuh, kernel
// family tf32x3_wg), shared by the kernel (nvcc, NVRTC) and by hosts (the probe, the launch plan,
// the tuner's family and its CPU index simulation), so that none restates them.
//
// The call: a prepass (tf32x3_split_operand) writes op(A) as M rows and op(B)^T as N rows of Kp
// floats (Kp = K rounded up to 4; columns K..Kp-1 zero), each as its big and small TF32 parts,
// into one workspace of four panels; then the tile kernel reads the panels through four tensor
// maps (box 32 x 128, 128-byte swizzle) and writes C.
//
// With FMA_ORDER 3 the operands are split into three BF16 parts instead (the BF16 section below).
//
// No includes: NVRTC compiles this file as is.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#ifndef SGT_HD
#define SGT_HD __host__ __device__
#endif
#else
#ifndef SGT_HD
#define SGT_HD
#endif
#endif

namespace sgt_kernel {

// --- The tile kernel ---------------------------------------------------------------------------
// Block tile 128 x 128 x 32: two consumer warpgroups of 64 rows each (wgmma m64n128k8) and a
// producer warpgroup whose one thread issues the tensor copies.
constexpr int kWgBM = 128, kWgBN = 128, kWgBK = 32;
constexpr int kWgWarpgroupRows = 64;  // the rows of C one consumer warpgroup owns (wgmma m64)
constexpr int kWgConsumers = 256;     // two warpgroups
constexpr int kWgProducers = 128;     // and a producer warpgroup (setmaxnreg needs whole ones)
constexpr int kWgThreads = kWgConsumers + kWgProducers;
// Registers after setmaxnreg: the producer gives up what the consumers take (2 x 128 x 232 +
// 128 x 40 <= 65536); the launch bounds alone leave 168, too few for ACC 2's three sets.
constexpr int kWgProducerRegs = 40, kWgConsumerRegs = 232;
constexpr int kWgTileFloats = kWgBM * kWgBK;       // one 128 x 32 tile (BM == BN)
constexpr int kWgStageFloats = 4 * kWgTileFloats;  // A big, A small, B big, B small
// The accumulators of one consumer thread: a 64 x 128 tile over 128 threads.
constexpr int kWgAccumulators = kWgWarpgroupRows * kWgBN / 128;
// The ring's depth the kernel takes (static_assert stages); 4 stages would not fit 227 KB.
constexpr int kWgMinStages = 2, kWgMaxStages = 3;
// The block's dynamic shared memory: the ring, plus slack to align it to 1024 bytes (the 128-byte
// swizzle's period, which the wgmma descriptors assume).
SGT_HD constexpr int tf32x3_wg_smem_bytes(int stages) {
  return stages * kWgStageFloats * 4 + 1024;
}
// Its static shared memory: a full and an empty mbarrier per stage, which ptxas pads to the
// dynamic array's 1024-byte alignment (it reports 1024 bytes for 2 and 3 stages).
SGT_HD constexpr int tf32x3_wg_static_smem_bytes(int stages) {
  return (2 * 8 * stages + 1023) / 1024 * 1024;
}

// Where consumer thread `tid` (0..kWgConsumers-1) stores accumulator 4 j + 2 h + e in the block
// tile, as wgmma's m64nNk8 D fragment lays them out: row 16 warp + lane / 4 + 8 h of its
// warpgroup's 64, column 8 j + 2 (lane % 4) + e.
SGT_HD constexpr int tf32x3_wg_acc_row(int tid, int acc) {
  return (tid / 128) * kWgWarpgroupRows + ((tid % 128) / 32) * 16 + (tid % 32) / 4 +
         8 * ((acc / 2) % 2);
}
SGT_HD constexpr int tf32x3_wg_acc_col(int tid, int acc) {
  return 8 * (acc / 4) + 2 * (tid % 4) + acc % 2;
}

// --- Split-K (sgemm_tf32x3_wgmma_splitk) -------------------------------------------------------
// The launch's grid_z splits (launch_dims with BK = kWgBK: k_chunk a multiple of kWgBK when it
// splits, K when it does not, and no split left empty) as the other families take them: split z
// owns k in [z k_chunk, min(K, (z + 1) k_chunk)). Its K slices are the kWgBK-wide ones that range
// covers: they start at slice tf32x3_wg_split_first_slice and number tf32x3_wg_split_slices (0
// for an empty range); its local slice kb is copied from k = tf32x3_wg_slice_k(first, kb). Only
// the last split's last slice may run past K, into the panels' zero padding and TMA's zero fill.
// The same for slices of bk values (wg_split_*: kWgBK here, kB6BK for the BF16 split).
SGT_HD constexpr int wg_split_first_slice(int z, int k_chunk, int bk) {
  return static_cast<int>(static_cast<long long>(z) * k_chunk / bk);
}
SGT_HD constexpr int wg_split_slices(int K, int z, int k_chunk, int bk) {
  const long long kbeg = static_cast<long long>(z) * k_chunk;
  const long long kend = kbeg + k_chunk < K ? kbeg + k_chunk : K;
  return kend > kbeg ? static_cast<int>((kend - kbeg + bk - 1) / bk) : 0;
}
SGT_HD constexpr int tf32x3_wg_split_first_slice(int z, int k_chunk) {
  return wg_split_first_slice(z, k_chunk, kWgBK);
}
SGT_HD constexpr int tf32x3_wg_split_slices(int K, int z, int k_chunk) {
  return wg_split_slices(K, z, k_chunk, kWgBK);
}
SGT_HD constexpr int tf32x3_wg_slice_k(int first, int kb) {
  return (first + kb) * kWgBK;
}
// With grid_z > 1 split z writes its raw partial product (alpha 1, beta 0) as an M x N matrix
// with leading dimension N at this float of the workspace of grid_z M N floats; sgemm_splitk_reduce
// (sgemm_warptile.cuh) sums the splits in split order into C = alpha sum + beta C.
SGT_HD constexpr long long tf32x3_wg_partial_offset(int z, int M, int N) {
  return static_cast<long long>(z) * M * N;
}

// --- The panels and the prepass ------------------------------------------------------------------
// K rounded up to whole 16-byte rows: a tensor map's row pitch is a multiple of 16 bytes.
SGT_HD constexpr long long tf32x3_wg_kp(long long K) {
  return (K + 3) / 4 * 4;
}
// The workspace: A big (M x Kp), A small, B big (N x Kp), B small, in that order.
SGT_HD constexpr long long tf32x3_wg_workspace_floats(long long M, long long N, long long K) {
  return 2 * (M + N) * tf32x3_wg_kp(K);
}
// Panel p's first float in the workspace (0 A big, 1 A small, 2 B big, 3 B small).
SGT_HD constexpr long long tf32x3_wg_panel_offset(int p, long long M, long long N, long long K) {
  const long long kp = tf32x3_wg_kp(K);
  return p < 2 ? p * M * kp : 2 * M * kp + (p - 2) * N * kp;
}

// --- The BF16 split (FMA_ORDER 3: sgemm_bf16x6_wgmma.cuh) ----------------------------------------
// The same call with three BF16 parts an operand (x = b0 + b1 + b2, exact) instead of two TF32
// ones: a prepass (bf16x6_split_operand, the same block and indexing as tf32x3_split_operand)
// writes op(A) as panels b0, b1, b2 of M rows of Kp BF16 values each (Kp = K rounded up to 8,
// whole 16-byte rows; columns K..Kp-1 zero), then op(B)^T's three of N rows; the tile kernel
// reads them through the same four maps, "big" over b0 (R rows) and "small" over b1 and b2 (a 3-D
// map: part j's row r is row r of plane j - 1, bf16x6_map_plane), in boxes of kB6BK x 128 BF16
// values: the same 128-byte rows and 128-byte swizzle as the TF32 boxes, so the wgmma descriptors
// are the same.
constexpr int kB6Parts = 3;
constexpr int kB6BK = 64;                                   // BF16 values of k a slice (128 bytes)
constexpr int kB6TileBytes = kWgBM * kB6BK * 2;             // one 128 x 64 tile: 16 KB
constexpr int kB6StageBytes = 2 * kB6Parts * kB6TileBytes;  // A b0 b1 b2, B b0 b1 b2: 96 KB
// The ring the kernel takes: two stages (three would not fit 227 KB).
constexpr int kB6MinStages = 2, kB6MaxStages = 2;
SGT_HD constexpr int bf16x6_smem_bytes(int stages) {
  return stages * kB6StageBytes + 1024;
}
SGT_HD constexpr long long bf16x6_kp(long long K) {
  return (K + 7) / 8 * 8;
}
// The workspace in BF16 values: A's three panels, then B's.
SGT_HD constexpr long long bf16x6_workspace_values(long long M, long long N, long long K) {
  return kB6Parts * (M + N) * bf16x6_kp(K);
}
// Part j's panel of operand `b` (false: A, M rows; true: B, N rows): its first BF16 value.
SGT_HD constexpr long long bf16x6_panel_offset(bool b, int j, long long M, long long N,
                                               long long K) {
  const long long kp = bf16x6_kp(K);
  return b ? (kB6Parts * M + j * N) * kp : j * M * kp;
}
// The byte offset in the workspace of the panel a split_maps launch names p (0 A big, 1 A small,
// 2 B big, 3 B small), for TF32 panels or, with bf16, the BF16 split's (big: part 0; small: part 1,
// part 2 right after it): where the prepass writes and the maps start.
SGT_HD constexpr long long wg_panel_byte_offset(int p, long long M, long long N, long long K,
                                                bool bf16) {
  return bf16 ? 2 * bf16x6_panel_offset(p >= 2, p % 2, M, N, K)
              : 4 * tf32x3_wg_panel_offset(p, M, N, K);
}
// The plane of part j in its map: "big" (j = 0) is 2-D, "small" holds part j > 0 in plane j - 1
// of a 3-D map whose planes are an operand's R rows of Kp values apart; a part's row r is row r
// of its plane.
SGT_HD constexpr int bf16x6_map_plane(int j) {
  return j == 0 ? 0 : j - 1;
}
// Split-K in slices of kB6BK, as the TF32 functions above in slices of kWgBK.
SGT_HD constexpr int bf16x6_split_first_slice(int z, int k_chunk) {
  return wg_split_first_slice(z, k_chunk, kB6BK);
}
SGT_HD constexpr int bf16x6_split_slices(int K, int z, int k_chunk) {
  return wg_split_slices(K, z, k_chunk, kB6BK);
}
SGT_HD constexpr int bf16x6_slice_k(int first, int kb) {
  return (first + kb) * kB6BK;
}

// tf32x3_split_operand's block: 32 x 8 threads over a 32 x 32 tile of (k, r), each thread four
// elements, i = 0..3 (grid ceil(Kp / 32) x ceil(R / 32)).
constexpr int kSplitTile = 32;
constexpr int kSplitRowsPerPass = 8;
constexpr int kSplitPasses = kSplitTile / kSplitRowsPerPass;
SGT_HD constexpr long long tf32x3_split_grid_x(long long K) {
  return (tf32x3_wg_kp(K) + kSplitTile - 1) / kSplitTile;
}
SGT_HD constexpr long long tf32x3_split_grid_y(long long R) {
  return (R + kSplitTile - 1) / kSplitTile;
}
// Where thread (tx, ty) of block (k0, r0) reads in pass i when the operand is not k-contiguous
// (into the shared tile's row k - k0, column r - r0), and which element it writes in pass i: both
// through the tile so that reads and writes stay coalesced.
SGT_HD constexpr int tf32x3_split_load_k(int k0, int ty, int i) {
  return k0 + ty + kSplitRowsPerPass * i;
}
SGT_HD constexpr int tf32x3_split_load_r(int r0, int tx) {
  return r0 + tx;
}
SGT_HD constexpr int tf32x3_split_store_r(int r0, int ty, int i) {
  return r0 + ty + kSplitRowsPerPass * i;
}
SGT_HD constexpr int tf32x3_split_store_k(int k0, int tx) {
  return k0 + tx;
}
// The stored element of X(r, k): X[r ldx + k] when k-contiguous, else X[k ldx + r].
SGT_HD constexpr long long tf32x3_split_src(int r, int k, int ldx, bool k_contig) {
  return k_contig ? static_cast<long long>(r) * ldx + k : static_cast<long long>(k) * ldx + r;
}
// Its place in a panel of rows of Kp floats.
SGT_HD constexpr long long tf32x3_split_dst(int r, int k, int kp) {
  return static_cast<long long>(r) * kp + k;
}

// --- The wave-aware tail (the knob TAIL: launch_plan.h, plan_split_call) -------------------------
// One block per SM, a problem of `tiles` 128 x 128 tiles runs them in waves of sm_count. Where the
// last wave is nearly empty (2560^3: 400 tiles, 3 waves of 132 and 4 left over) it costs a whole
// wave's time for a few tiles. The tail plan runs the tiles of the full waves as one launch and the
// ones left over as a second launch split over K, so that they take a fraction of a wave.
// In the GROUP_M block order (block_tile_row/col) the last tiles are the last columns of the last
// group of block rows: with h rows in that group, the last c h blocks are its tiles in columns
// grid_n - c .. grid_n - 1, a rectangle of C, so the tail is the sub-problem of C's rows
// tile_row0 * 128 .. M - 1 and columns tile_col0 * 128 .. N - 1, which the split entry computes
// on maps of those panel rows, and the first launch is the unsplit grid's first
// grid_m grid_n - c h blocks, which are every other tile.
constexpr int kTailMinSlices = 4;  // a tail split's K slices at least (its ring fills on them)
struct WaveTail {
  int tile_row0 = 0, tile_col0 = 0;  // its first block row and block column
  int rows = 0, cols = 0;            // h block rows, c block columns
  int splits = 0;                    // its K splits; 0: no tail (one launch of every tile)
};
// grid_m x grid_n tiles in GROUP_M order on sm_count SMs, K of `slices` slices: the tail of
// c = ceil(left / h) columns of the last group (left: the tiles past the last full wave), split
// min(sm_count / (c h), slices / kTailMinSlices) ways, where that is at least 2; none where the
// tiles fill whole waves or fit in one, where the left-over tiles reach past the last group, or
// where no such split exists.
SGT_HD constexpr WaveTail wave_tail(long long grid_m, long long grid_n, int group_m, int sm_count,
                                    long long slices) {
  WaveTail t{};
  const long long tiles = grid_m * grid_n;
  if (sm_count <= 0 || group_m <= 0 || tiles <= sm_count || tiles % sm_count == 0) return t;
  const long long left = tiles % sm_count;
  const long long first = (grid_m - 1) / group_m * group_m;  // the last group's first block row
  const long long h = grid_m - first;
  const long long cols = (left + h - 1) / h;
  // The left-over tiles past the last group, or a tail of every tile: no such rectangle.
  if (cols > grid_n || (cols == grid_n && first == 0)) return t;
  const long long by_sms = sm_count / (cols * h), by_k = slices / kTailMinSlices;
  const long long splits = by_sms < by_k ? by_sms : by_k;
  if (splits < 2) return t;
  t.tile_row0 = static_cast<int>(first);
  t.tile_col0 = static_cast<int>(grid_n - cols);
  t.rows = static_cast<int>(h);
  t.cols = static_cast<int>(cols);
  t.splits = static_cast<int>(splits);
  return t;
}

}  // namespace sgt_kernel
