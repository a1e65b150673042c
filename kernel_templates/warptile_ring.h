// The schedule of the cp.async ring of family warptile_ring (sgemm_warptile_ring.cuh), shared by
// the kernel (nvcc, NVRTC) and by the host: the rules and the CPU index simulation replay these
// very functions.
//
// A ring of STAGES shared-memory buffers (3 or 4), one commit group a k-slice:
//   prologue: slices 0 .. ring_lead - 1 issued, each into ring_buffer(s), one group each (a group
//     stays empty past the last whole slice, so that every thread counts the same groups);
//   iteration t: cp.async.wait_group ring_wait (slice t has landed), __syncthreads (every thread's
//     copies of slice t are visible and every thread has computed slice t - 1), slice
//     t + ring_lead issued into ring_buffer(t + ring_lead) (the buffer slice t - 1 held) and its
//     group committed, then slice t computed from ring_buffer(t);
//   after the last whole slice: every group waited for, __syncthreads (the edge loop reuses the
//     buffers).
//
// No includes: NVRTC compiles this file as is.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SGT_RING_HD __host__ __device__
#else
#define SGT_RING_HD
#endif

namespace sgt_kernel {

constexpr int kMinRingStages = 3;
constexpr int kMaxRingStages = 4;

SGT_RING_HD constexpr int ring_lead(int stages) {
  return stages - 1;
}
SGT_RING_HD constexpr int ring_wait(int stages) {
  return stages - 2;
}
SGT_RING_HD constexpr int ring_buffer(int t, int stages) {
  return stages == 0 ? t : t % stages;
}

// Operands stored with k contiguous (A as M x K, B as N x K: NN, NT, TT) cannot be copied into
// the k-major buffers straight. Their ring buffers are k-contiguous instead: one row of BK k a
// tile row m (column n), which each stored row's float4s are copied into as they are. The compute
// loop reads a fragment element's 4 consecutive k as one float4.
//
// Whether the ring's copy of an operand is k-contiguous: A stored M x K (not transposed), B
// stored N x K (transposed).
SGT_RING_HD constexpr bool ring_a_kc(bool trans_a) {
  return !trans_a;
}
SGT_RING_HD constexpr bool ring_b_kc(bool trans_b) {
  return trans_b;
}
// A k-contiguous buffer holds BK floats a row, with 4 floats of pad after every `stride` rows,
// where `stride` is how far apart the rows are that a warp's lanes read at once (TM for A, TN for
// B: a thread's tile rows are consecutive, the next lane's TM further). Without it, rows `stride`
// apart share two of the eight 16-byte bank groups (measured on the H100, 2026-12-07: 1.9 bank
// conflicts a shared load, a uniform pad of 4 a row). With it, row mn starts mn * BK / 4 + mn /
// stride chunks in: the 8 rows a quarter-warp reads step 1 bank group each (stride * BK / 4 + 1
// chunks, odd, for a stride of 4 or 8 and BK 8 or 16), and the 2 (BK 16) or 4 (BK 8) consecutive
// rows a quarter-warp's copies write fill the 8 groups once.
constexpr int kKcPad = 4;
// Floats of one k-contiguous buffer of a tile side of `tile_mn` (BM or BN) rows.
SGT_RING_HD constexpr int kc_size(int tile_mn, int bk, int stride) {
  return tile_mn * bk + (stride > 0 ? (tile_mn + stride - 1) / stride : tile_mn) * kKcPad;
}
// Where element (mn, k) of the slice lives in a k-contiguous buffer.
SGT_RING_HD constexpr int kc_index(int bk, int stride, int mn, int k) {
  return mn * bk + (stride > 0 ? mn / stride : mn) * kKcPad + k;
}
// The compute loop's read of element (row0 + i, k), for row0 the first of a thread's `stride`
// consecutive tile rows (a multiple of stride) and i < stride: kc_index of row0 plus i rows, so
// that a thread's rows share one base address (the compiler cannot see that row0 + i and row0
// have one pad count between them: 50 registers more a thread on the NT 128x32 tile).
SGT_RING_HD constexpr int kc_group_index(int bk, int stride, int row0, int i, int k) {
  return kc_index(bk, stride, row0, k) + i * bk;
}

}  // namespace sgt_kernel
