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

}  // namespace sgt_kernel
