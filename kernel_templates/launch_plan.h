// Host side of one SGEMM call with a tuned config: which kernels are launched, in which order, on
// which grids, with which memory. The tuner's worker times exactly this sequence and the
// sgemm_tuned dispatch library runs it, both through plan_call() and run_call(), so that a figure
// the tuner measured is the figure the library ships. Host code only: NVRTC never compiles this
// file.
//
// A family launched as split_maps (LaunchAbi, tuner/core/family.hpp; tf32x3_wg) has a plan of
// its own: plan_split_call and run_split_call below (the split-K workspace, the panel workspace,
// the split prepass on each operand, the tile kernel on four maps of the panels, the same
// split-K reduction).
//
// The sequence: the split-K workspace and PACK's panels in stream-ordered memory from a pool that
// keeps its memory between calls (make_call_pool); sgemm_pack; the tile kernel;
// sgemm_splitk_reduce; for a TAIL config whose tiles leave a partial last wave, the tail's tile
// launch and its reduction (CallTail); the frees. The
// tile kernel is a dependent launch after a pack (sm_90 and up) except for the TMA kernel, whose
// launch takes dynamic shared memory; the reduction is a dependent launch after the tile kernel.
#pragma once

#include <cstdint>
#include <initializer_list>

#include <cuda.h>
#include <cuda_runtime.h>

#include "dependent_launch.h"
#include "launch_tail.h"
#include "tf32x3_wg_geometry.h"
#include "warptile_geometry.h"

namespace sgt_kernel {

// sgemm_splitk_reduce's launch: 256-thread blocks striding over C, four blocks per SM.
constexpr int kReduceThreads = 256;
constexpr int kReduceBlocksPerSm = 4;

// What a config contributes to a call's launches.
struct CallTile {
  int BM = 0, BN = 0, BK = 0, split_k = 1;
  bool pack = false;  // PACK = 1: operands packed into panels, the kernel's TN instance reads them
  bool tma = false;   // TMA = 1: the tile kernel is sgemm_ws_tma
  bool tail = false;  // TAIL = 1 (with SPLIT_K 1): the wave-aware tail (CallPlan::tail)
  int group_m = 1;    // GROUP_M: the block order the tail is found in
};

// The launches of one call.
struct CallPlan {
  LaunchDims dims{};  // the tile grid and its k splits (workspace_floats > 0: a reduction)
  PackPlan pack{};    // what sgemm_pack copies (packs: it runs)
  bool packs = false;
  bool trans_a = false;  // the layout of the tile kernel's instance: the call's, or TN on panels
  bool trans_b = false;
  bool tile_dependent = false;  // the tile kernel is a dependent launch on the pack
  bool overlap = false;         // dependent launches are programmatic (sm_90 and up)
  unsigned reduce_blocks = 0;   // sgemm_splitk_reduce's grid; 0: no reduction
  bool empty = false;           // M or N is 0: nothing to launch
  bool too_large = false;       // the tile or pack grid exceeds what a launch takes
  // With a tail, dims.grid_x is the first launch's blocks (the whole waves' tiles, grid z 1, into
  // C) and the tail is the second launch.
  CallTail tail{};  // the wave-aware tail (launch_tail.h)
};

// a_aligned, b_aligned: the operands' pointers are 16-byte aligned. overlap: the device takes
// programmatic dependent launches (compute capability 9.0 and up). resident: the tile kernel's
// blocks an SM holds at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor on the loaded
// kernel); a wave is sm_count * resident tiles. Only a TAIL config's plan reads it.
inline CallPlan plan_call(const CallTile& t, int M, int N, int K, bool trans_a, bool trans_b,
                          const float* A, bool a_aligned, int lda, const float* B, bool b_aligned,
                          int ldb, int sm_count, bool overlap, int resident = 1) {
  CallPlan p;
  p.overlap = overlap;
  p.empty = M == 0 || N == 0;
  p.dims = launch_dims(M, N, K, t.BM, t.BN, t.BK, t.split_k);
  p.trans_a = t.pack ? true : trans_a;
  p.trans_b = t.pack ? false : trans_b;
  if (t.pack && K > 0) {
    p.pack = plan_pack(trans_a, trans_b, M, N, K, A, a_aligned, lda, B, b_aligned, ldb);
    p.packs = p.pack.floats > 0;
  }
  p.tile_dependent = p.packs && overlap && !t.tma;
  if (p.dims.grid_z > 1) p.reduce_blocks = static_cast<unsigned>(sm_count * kReduceBlocksPerSm);
  p.too_large = p.dims.grid_x > 0x7fffffffLL || (p.packs && p.pack.grid_x > 0x7fffffffLL);
  if (t.tail && t.split_k <= 1 && !p.empty && !p.too_large) {
    p.tail = plan_tail(t.BM, t.BN, t.BK, t.group_m, M, N, K,
                       static_cast<long long>(sm_count) * resident);
    if (p.tail.dims.grid_z > 1)
      p.tail.reduce_blocks = static_cast<unsigned>(sm_count * kReduceBlocksPerSm);
    p.dims.grid_x -= p.tail.dims.grid_x;
  }
  return p;
}

// A TAIL config's wave (plan_call's resident): into *blocks, how many blocks of `kernel` (a
// function or a cudaKernel_t cast to a pointer, its dynamic shared memory limit already raised)
// an SM holds at once with `threads` and `smem_bytes` of dynamic shared memory. The worker,
// sgemm_tuned and the preload all ask it here; an error is left for the caller to report, never
// taken as "no tail" (the call would not be the one that was measured).
inline cudaError_t resident_blocks(const void* kernel, int threads, size_t smem_bytes,
                                   int* blocks) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, smem_bytes);
}

// The operands of a tail's launch: the instance's (plan.trans_a, trans_b: the call's, or TN on
// PACK's panels) offset to the tail's first row of op(A) and first column of op(B). Each offset is
// a multiple of BM or BN floats along a row, or of whole rows, so a 16-byte aligned operand with
// a leading dimension that is a multiple of 4 stays so.
inline const float* tail_a(const CallPlan& plan, const float* A, int lda) {
  return A + (plan.trans_a ? static_cast<long long>(plan.tail.row0)
                           : static_cast<long long>(plan.tail.row0) * lda);
}
inline const float* tail_b(const CallPlan& plan, const float* B, int ldb) {
  return B + (plan.trans_b ? static_cast<long long>(plan.tail.col0) * ldb
                           : static_cast<long long>(plan.tail.col0));
}

// The memory pool a call's workspace and panels come from: on `device`, keeping what was freed for
// the next call (no release threshold). From a pool that returns its memory at every
// synchronization, as the device's default pool does, each call would map its workspace afresh:
// measured on the H200, up to 1.8x the time of a split-K or PACK call that synchronizes after
// each call (docs/experiments/2026-12-02-launch-plan.md).
inline cudaError_t make_call_pool(int device, cudaMemPool_t* pool) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  if (const cudaError_t e = cudaMemPoolCreate(pool, &props); e != cudaSuccess) return e;
  std::uint64_t keep = UINT64_MAX;
  return cudaMemPoolSetAttribute(*pool, cudaMemPoolAttrReleaseThreshold, &keep);
}

// sgemm_splitk_reduce over `splits` partial products of M x N floats at `partial`, into C =
// alpha sum + beta C; a programmatic dependent launch where `overlap` says the device takes one.
// Both plans' reduction (run_call, run_split_call).
inline cudaError_t launch_reduce(const void* reduce_kernel, bool overlap, unsigned blocks, int M,
                                 int N, int splits, float alpha, const float* partial, float beta,
                                 float* C, int ldc, cudaStream_t stream) {
  void* args[] = {&M, &N, &splits, &alpha, &partial, &beta, &C, &ldc};
  return launch_dependent(overlap, reduce_kernel, dim3(blocks), dim3(kReduceThreads), args, stream);
}

// Frees (stream-ordered) what a call allocated; the first error, the call's `e` before any free's.
inline cudaError_t free_after(cudaError_t e, std::initializer_list<float*> allocated,
                              cudaStream_t stream) {
  for (float* f : allocated) {
    if (!f) continue;
    const cudaError_t r = cudaFreeAsync(f, stream);
    if (e == cudaSuccess) e = r;
  }
  return e;
}

// Runs a call's plan in `stream`, its memory from `pool` (make_call_pool): allocates, packs,
// launches the tile kernel through tile(A, lda, B, ldb, work, false) (A, lda, B, ldb: the panels
// where the plan packs), reduces; with a tail (plan.tail.dims.grid_x > 0), then
// tile(tail_a(A), lda, tail_b(B), ldb, work, true) for the tail's launch and the reduction of its
// splits into its part of C; frees. Returns the first error; what was allocated is freed
// (stream-ordered) either way.
template <class Tile>
cudaError_t run_call(const CallPlan& plan, const void* pack_kernel, const void* reduce_kernel,
                     int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                     int ldb, float beta, float* C, int ldc, cudaMemPool_t pool,
                     cudaStream_t stream, Tile&& tile) {
  if (plan.empty) return cudaSuccess;  // nothing to compute, nothing to write
  if (plan.too_large) return cudaErrorInvalidConfiguration;
  float* work = nullptr;
  float* panels = nullptr;
  cudaError_t e = cudaSuccess;
  // The workspace first, so that the pack, tile and reduction kernels follow each other directly,
  // as a dependent launch needs.
  const long long work_floats = plan.dims.workspace_floats > plan.tail.dims.workspace_floats
                                    ? plan.dims.workspace_floats
                                    : plan.tail.dims.workspace_floats;
  if (work_floats > 0)
    e = cudaMallocFromPoolAsync(reinterpret_cast<void**>(&work),
                                static_cast<size_t>(work_floats) * sizeof(float), pool, stream);
  if (e == cudaSuccess && plan.packs) {
    e = cudaMallocFromPoolAsync(reinterpret_cast<void**>(&panels),
                                static_cast<size_t>(plan.pack.floats) * sizeof(float), pool,
                                stream);
    if (e == cudaSuccess) {
      PackPlan pk = plan.pack;
      bind_pack(pk, panels, A, lda, B, ldb);
      void* args[] = {&K, &pk.a, &pk.b};
      e = cudaLaunchKernel(pack_kernel, dim3(static_cast<unsigned>(pk.grid_x), pk.grid_y, 2),
                           dim3(kPackThreads), args, 0, stream);
    }
  }
  if (e == cudaSuccess) e = tile(A, lda, B, ldb, work, false);
  if (e == cudaSuccess && plan.reduce_blocks > 0)
    e = launch_reduce(reduce_kernel, plan.overlap, plan.reduce_blocks, M, N, plan.dims.grid_z,
                      alpha, work, beta, C, ldc, stream);
  // The tail: its splits, then their sum into its part of C.
  const CallTail& t = plan.tail;
  if (e == cudaSuccess && t.dims.grid_x > 0)
    e = tile(tail_a(plan, A, lda), lda, tail_b(plan, B, ldb), ldb, work, true);
  if (e == cudaSuccess && t.reduce_blocks > 0)
    e = launch_reduce(reduce_kernel, plan.overlap, t.reduce_blocks, t.M, t.N, t.dims.grid_z, alpha,
                      work, beta, C + static_cast<long long>(t.row0) * ldc + t.col0, ldc, stream);
  return free_after(e, {panels, work}, stream);
}

// The grid of a tile launch of `plan`, and its problem: the call's M x N and C, or with `tail`
// the tail's sub-problem (its M x N, C from its row0, col0).
inline const LaunchDims& tile_launch(const CallPlan& plan, bool tail, int& M, int& N, float*& C,
                                     int ldc) {
  if (!tail) return plan.dims;
  M = plan.tail.M;
  N = plan.tail.N;
  C += static_cast<long long>(plan.tail.row0) * ldc + plan.tail.col0;
  return plan.tail.dims;
}

// The tile kernel of a family with sgemm_warptile's argument list (LaunchAbi pointers), as
// run_call's tile step: k_chunk and the grid from the plan, `threads` per block, `smem_bytes` of
// dynamic shared memory (0 for a kernel with static shared memory only; sgemm_tf32x3 takes its
// stages there). A launch call returns this launch's own error (<<<>>> would leave it to a later
// cudaGetLastError that may return an earlier, unrelated one).
// With `tail`, the plan's tail launch (A and B already offset: tail_a, tail_b): its sub-problem
// (plan.tail's M x N, C from its row0, col0) on its blocks and splits, a plain launch that the
// stream orders after the first.
inline cudaError_t launch_warptile(const void* kernel, const CallPlan& plan, unsigned threads,
                                   int M, int N, int K, float alpha, const float* A, int lda,
                                   const float* B, int ldb, float beta, float* C, int ldc,
                                   float* work, cudaStream_t stream, size_t smem_bytes = 0,
                                   bool tail = false) {
  const LaunchDims& d = tile_launch(plan, tail, M, N, C, ldc);
  int k_chunk = d.k_chunk;
  void* args[] = {&M, &N, &K, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc, &k_chunk, &work};
  const dim3 grid(static_cast<unsigned>(d.grid_x), 1, static_cast<unsigned>(d.grid_z));
  return launch_dependent(plan.tile_dependent && !tail, kernel, grid, dim3(threads), args, stream,
                          smem_bytes);
}

// The tile kernel of sgemm_ws_tma, as run_call's tile step: the operands as tensor maps (encoded by
// the caller for the plan's instance layout), `threads` (consumers and the producer warpgroup) and
// `smem_bytes` of dynamic shared memory. A plain launch: the stream orders it after a pack.
// With `tail`, the plan's tail launch on maps the caller encoded over the tail's sub-problem
// (its M x N from tail_a and tail_b), C from its row0, col0.
inline cudaError_t launch_ws_tma(const void* kernel, const CallPlan& plan, unsigned threads,
                                 size_t smem_bytes, const CUtensorMap& map_a,
                                 const CUtensorMap& map_b, int M, int N, int K, float alpha,
                                 float beta, float* C, int ldc, float* work, cudaStream_t stream,
                                 bool tail = false) {
  const LaunchDims& d = tile_launch(plan, tail, M, N, C, ldc);
  int k_chunk = d.k_chunk;
  void* args[] = {&M,
                  &N,
                  &K,
                  &alpha,
                  const_cast<CUtensorMap*>(&map_a),
                  const_cast<CUtensorMap*>(&map_b),
                  &beta,
                  &C,
                  &ldc,
                  &k_chunk,
                  &work};
  const dim3 grid(static_cast<unsigned>(d.grid_x), 1, static_cast<unsigned>(d.grid_z));
  return cudaLaunchKernel(kernel, grid, dim3(threads), args, smem_bytes, stream);
}

// --- split_maps: the split-TF32 kernel on wgmma (sgemm_tf32x3_wgmma.cuh, family tf32x3_wg) ------
// tf32x3_split_operand's launch: 32 x 8 threads (tf32x3_wg_geometry.h).
constexpr unsigned kSplitThreadsX = kSplitTile, kSplitThreadsY = kSplitRowsPerPass;
// A grid's y (and z) extent is at most 65535 blocks.
constexpr long long kMaxGridY = 65535;

// The launches of one split_maps call: the panel workspace (A big, A small, B big, B small; rows
// of kp floats, tf32x3_wg_geometry.h), the prepass once per operand (A: M rows, k-contiguous when
// A is not transposed; B: op(B)^T's N rows, k-contiguous when B is), then the tile kernel on
// `blocks` x grid_z blocks and, where it splits K, sgemm_splitk_reduce. With K = 0 nothing is
// split: no workspace, no prepass, and the tile kernel (which then copies nothing) writes
// alpha 0 + beta C.
// Split-K (the config's SPLIT_K > 1): the tile kernel is the split entry
// (sgemm_tf32x3_wgmma_splitk), which takes k_chunk and the partial products' workspace; its
// splits are launch_dims' with BK = kWgBK (whole slices, no split left empty), so a K too short
// for SPLIT_K splits runs fewer, and one of a single split (grid_z 1) writes C itself. With
// grid_z > 1 the splits write grid_z M N floats of partial products, which sgemm_splitk_reduce
// sums in split order into C = alpha sum + beta C, as a dependent launch after the tile kernel
// (the pointers ABI's reduction, run_call).
struct SplitCallPlan {
  long long blocks = 0;            // the tile kernel's grid x: ceil(M / BM) ceil(N / BN)
  bool bf16 = false;               // the BF16 split (BK kB6BK): three BF16 panels an operand
  int kp = 0;                      // K rounded up to 4 (BF16: to 8): the panels' row length
  long long workspace_floats = 0;  // 2 (M + N) kp (BF16: 3 (M + N) kp values); 0: no prepass
  unsigned a_grid_x = 0, a_grid_y = 0, b_grid_x = 0, b_grid_y = 0;  // the prepass grids
  int a_k_contig = 1, b_k_contig = 0;  // the prepass's k_contig for each operand
  bool split_entry = false;            // the tile kernel is the split entry (SPLIT_K > 1)
  int grid_z = 1;                      // the tile kernel's k splits
  int k_chunk = 0;               // the k of each split (the split entry's argument; K unsplit)
  long long partial_floats = 0;  // the split-K workspace: grid_z M N floats; 0: none
  unsigned reduce_blocks = 0;    // sgemm_splitk_reduce's grid; 0: no reduction
  bool overlap = false;          // the reduction is a programmatic dependent launch (sm_90 up)
  bool empty = false;            // M or N is 0: nothing to launch
  bool too_large = false;        // a grid exceeds what a launch takes
  // The wave-aware tail (a TAIL config, wave_tail in tf32x3_wg_geometry.h): the fields above are
  // then the first launch's (the split entry on `blocks` tiles, grid_z 1, k_chunk K, into C), and
  // these the second's: the split entry on the sub-problem of C's rows row0 .. M - 1 and columns
  // col0 .. N - 1 (M x N here; maps of A's panel rows row0.. and B's col0..), `blocks` tiles
  // (h x c) on grid_z splits of k_chunk, writing grid_z M N floats of partial products that
  // sgemm_splitk_reduce sums into that part of C. blocks == 0: no tail.
  struct Tail {
    int row0 = 0, col0 = 0;
    int M = 0, N = 0;
    long long blocks = 0;
    int grid_z = 1;
    int k_chunk = 0;
    long long partial_floats = 0;
    unsigned reduce_blocks = 0;
  } tail{};
};

// split_k: the config's SPLIT_K. sm_count: the device's SMs (the reduction's grid). overlap: the
// device takes programmatic dependent launches (compute capability 9.0 and up). BK: the config's,
// kWgBK (TF32 panels) or kB6BK (the BF16 split, FMA_ORDER 3: slices of 64 BF16 values, panels of
// rows of bf16x6_kp(K) values, the same prepass grid: a multiple of 32 is one of 8, so rounding K
// up to 4 or to 8 gives the same count of 32-wide tiles).
// tail: the config's TAIL (with SPLIT_K 1, GROUP_M group_m): the split entry runs the whole problem
// (grid_z 1, k_chunk K) and, where wave_tail finds one on sm_count SMs, the tiles past the last
// full wave as a second launch split over K (SplitCallPlan::tail).
inline SplitCallPlan plan_split_call(int BM, int BN, int split_k, int M, int N, int K, bool trans_a,
                                     bool trans_b, int sm_count, bool overlap, int BK = kWgBK,
                                     bool tail = false, int group_m = 1) {
  SplitCallPlan p;
  p.empty = M == 0 || N == 0;
  p.overlap = overlap;
  p.bf16 = BK == kB6BK;
  const int bk = p.bf16 ? kB6BK : kWgBK;
  const LaunchDims d = launch_dims(M, N, K, BM, BN, bk, split_k);
  p.blocks = d.grid_x;
  p.split_entry = split_k > 1 || tail;
  p.grid_z = d.grid_z;
  p.k_chunk = d.k_chunk;
  p.partial_floats = d.workspace_floats;
  if (d.grid_z > 1) p.reduce_blocks = static_cast<unsigned>(sm_count * kReduceBlocksPerSm);
  if (tail && split_k <= 1 && !p.empty && K > 0) {
    const WaveTail w = wave_tail(d.grid_m, d.grid_n, group_m, sm_count, (K + bk - 1) / bk);
    if (w.splits > 1) {
      auto& t = p.tail;
      t.row0 = w.tile_row0 * BM;
      t.col0 = w.tile_col0 * BN;
      t.M = M - t.row0;
      t.N = N - t.col0;
      const LaunchDims td = launch_dims(t.M, t.N, K, BM, BN, bk, w.splits);
      t.blocks = td.grid_x;
      t.grid_z = td.grid_z;
      t.k_chunk = td.k_chunk;
      t.partial_floats = td.workspace_floats;
      if (td.grid_z > 1) t.reduce_blocks = static_cast<unsigned>(sm_count * kReduceBlocksPerSm);
      p.blocks = d.grid_x - t.blocks;
    }
  }
  const long long kp = p.bf16 ? bf16x6_kp(K) : tf32x3_wg_kp(K);
  p.kp = static_cast<int>(kp < 0x7fffffffLL ? kp : 0x7fffffffLL);
  p.a_k_contig = trans_a ? 0 : 1;
  p.b_k_contig = trans_b ? 1 : 0;
  long long gx = 0, gya = 0, gyb = 0;
  if (!p.empty && K > 0) {
    p.workspace_floats =
        p.bf16 ? (bf16x6_workspace_values(M, N, K) + 1) / 2 : tf32x3_wg_workspace_floats(M, N, K);
    gx = tf32x3_split_grid_x(K);
    gya = tf32x3_split_grid_y(M);
    gyb = tf32x3_split_grid_y(N);
    p.a_grid_x = p.b_grid_x = static_cast<unsigned>(gx);
    p.a_grid_y = static_cast<unsigned>(gya);
    p.b_grid_y = static_cast<unsigned>(gyb);
  }
  p.too_large = p.blocks > 0x7fffffffLL || gx > 0x7fffffffLL || gya > kMaxGridY ||
                gyb > kMaxGridY || kp > 0x7fffffffLL || d.grid_z > kMaxGridY ||
                (d.grid_z > 1 && sm_count <= 0);
  return p;
}

// Runs a split_maps call in `stream`, its memory from `pool` (make_call_pool): allocates the
// split-K workspace (where the plan splits) and the panels, launches split_kernel
// (tf32x3_split_operand, or bf16x6_split_operand for the BF16 split: the same arguments) on A and
// on B, then the tile kernel through tile(panels, partial, false)
// (panels: nullptr when K = 0; partial: nullptr unless the plan splits), then reduce_kernel
// (sgemm_splitk_reduce) over the splits; with a tail (plan.tail.blocks > 0), then
// tile(panels, partial, true) for the tail's launch and the reduction of its splits into its part
// of C; and frees. Returns the first error; what was allocated is
// freed (stream-ordered) either way.
template <class Tile>
cudaError_t run_split_call(const SplitCallPlan& plan, const void* split_kernel,
                           const void* reduce_kernel, int M, int N, int K, float alpha,
                           const float* A, int lda, const float* B, int ldb, float beta, float* C,
                           int ldc, cudaMemPool_t pool, cudaStream_t stream, Tile&& tile) {
  if (plan.empty) return cudaSuccess;  // nothing to compute, nothing to write
  if (plan.too_large) return cudaErrorInvalidConfiguration;
  if (plan.workspace_floats > 0 && !split_kernel) return cudaErrorInvalidDeviceFunction;
  if (plan.reduce_blocks > 0 && !reduce_kernel) return cudaErrorInvalidDeviceFunction;
  if (plan.tail.reduce_blocks > 0 && !reduce_kernel) return cudaErrorInvalidDeviceFunction;
  float* partial = nullptr;
  float* work = nullptr;
  cudaError_t e = cudaSuccess;
  // The split-K workspace first, so that the tile kernel and the reduction follow each other
  // directly, as a dependent launch needs (a tail's: only the tail splits).
  const long long partial_floats = plan.partial_floats > plan.tail.partial_floats
                                       ? plan.partial_floats
                                       : plan.tail.partial_floats;
  if (partial_floats > 0)
    e = cudaMallocFromPoolAsync(reinterpret_cast<void**>(&partial),
                                static_cast<size_t>(partial_floats) * sizeof(float), pool, stream);
  if (e == cudaSuccess && plan.workspace_floats > 0) {
    e = cudaMallocFromPoolAsync(reinterpret_cast<void**>(&work),
                                static_cast<size_t>(plan.workspace_floats) * sizeof(float), pool,
                                stream);
    if (e == cudaSuccess) {
      int kp = plan.kp, a_contig = plan.a_k_contig, b_contig = plan.b_k_contig;
      // The panels the prepass writes (bf16x6_split_operand: part 2 after part 1's "small").
      float* panel[4];
      for (int i = 0; i < 4; ++i)
        panel[i] = reinterpret_cast<float*>(reinterpret_cast<char*>(work) +
                                            wg_panel_byte_offset(i, M, N, K, plan.bf16));
      float *a_big = panel[0], *a_small = panel[1], *b_big = panel[2], *b_small = panel[3];
      const dim3 block(kSplitThreadsX, kSplitThreadsY);
      void* a_args[] = {&M, &K, &kp, &A, &lda, &a_contig, &a_big, &a_small};
      e = cudaLaunchKernel(split_kernel, dim3(plan.a_grid_x, plan.a_grid_y), block, a_args, 0,
                           stream);
      if (e == cudaSuccess) {
        void* b_args[] = {&N, &K, &kp, &B, &ldb, &b_contig, &b_big, &b_small};
        e = cudaLaunchKernel(split_kernel, dim3(plan.b_grid_x, plan.b_grid_y), block, b_args, 0,
                             stream);
      }
    }
  }
  if (e == cudaSuccess && plan.blocks > 0)
    e = tile(static_cast<const float*>(work), plan.grid_z > 1 ? partial : nullptr, false);
  if (e == cudaSuccess && plan.reduce_blocks > 0)
    e = launch_reduce(reduce_kernel, plan.overlap, plan.reduce_blocks, M, N, plan.grid_z, alpha,
                      partial, beta, C, ldc, stream);
  // The tail: its splits, then their sum into its part of C.
  const auto& t = plan.tail;
  if (e == cudaSuccess && t.blocks > 0)
    e = tile(static_cast<const float*>(work), t.grid_z > 1 ? partial : nullptr, true);
  if (e == cudaSuccess && t.reduce_blocks > 0)
    e = launch_reduce(reduce_kernel, plan.overlap, t.reduce_blocks, t.M, t.N, t.grid_z, alpha,
                      partial, beta, C + static_cast<long long>(t.row0) * ldc + t.col0, ldc,
                      stream);
  return free_after(e, {work, partial}, stream);
}

// The tile kernel of a split_maps family (sgemm_tf32x3_wgmma, or sgemm_tf32x3_wgmma_splitk where
// the plan's split_entry says so), as run_split_call's tile step: the four panel maps
// (tma_encode_split_maps, tma_maps.h; zero maps when K = 0), `threads` (the consumer warpgroups
// and the producer one) and `smem_bytes` of dynamic shared memory; the split entry also takes the
// plan's k_chunk and the split-K workspace `partial` (nullptr when grid_z is 1), on grid_z splits.
// A plain launch: the stream orders it after the prepass.
// With `tail`, the plan's tail launch: its sub-problem (plan.tail's M x N, C from its row0, col0;
// maps the caller encoded over its panel rows) on its blocks and splits.
inline cudaError_t launch_split_maps(const void* kernel, const SplitCallPlan& plan,
                                     unsigned threads, size_t smem_bytes, const CUtensorMap& a_big,
                                     const CUtensorMap& a_small, const CUtensorMap& b_big,
                                     const CUtensorMap& b_small, int M, int N, int K, float alpha,
                                     float beta, float* C, int ldc, float* partial,
                                     cudaStream_t stream, bool tail = false) {
  const auto& t = plan.tail;
  if (tail) {
    M = t.M;
    N = t.N;
    C += static_cast<long long>(t.row0) * ldc + t.col0;
  }
  int k_chunk = tail ? t.k_chunk : plan.k_chunk;
  void* args[] = {&M,
                  &N,
                  &K,
                  &alpha,
                  const_cast<CUtensorMap*>(&a_big),
                  const_cast<CUtensorMap*>(&a_small),
                  const_cast<CUtensorMap*>(&b_big),
                  const_cast<CUtensorMap*>(&b_small),
                  &beta,
                  &C,
                  &ldc,
                  &k_chunk,
                  &partial};
  // The unsplit entry takes the first 11 arguments, the split entry all 13 on grid_z splits.
  const unsigned z = tail               ? static_cast<unsigned>(t.grid_z)
                     : plan.split_entry ? static_cast<unsigned>(plan.grid_z)
                                        : 1u;
  const dim3 grid(static_cast<unsigned>(tail ? t.blocks : plan.blocks), 1, z);
  return cudaLaunchKernel(kernel, grid, dim3(threads), args, smem_bytes, stream);
}

}  // namespace sgt_kernel
