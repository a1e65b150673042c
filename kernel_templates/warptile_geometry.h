// Index arithmetic of the warp-tiling SGEMM kernel, shared by the kernel itself (nvcc, NVRTC) and
// by the host: the tuner's config model derives its quantities here and the CPU index simulation
// replays these very functions, so the pruning rules and the kernel cannot drift apart.
//
// No includes: NVRTC compiles this file as is.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SGT_HD __host__ __device__
#else
#define SGT_HD
#endif

namespace sgt_kernel {

constexpr int kWarpSize = 32;
// Every global and shared vector access moves one float4.
constexpr int kVec = 4;

// Division that yields 0 instead of trapping, so that a wrong config derives to a degenerate
// geometry (which the rules and the simulation reject) rather than crashing the host.
SGT_HD constexpr int safe_div(int a, int b) {
  return b == 0 ? 0 : a / b;
}
SGT_HD constexpr int safe_mod(int a, int b) {
  return b == 0 ? a : a % b;
}

// The nine tile parameters and everything derived from them. One derivation, used everywhere.
struct Geometry {
  int BM, BN, BK, WM, WN, WNITER, TM, TN, NUM_THREADS;
  int WMITER;        // sub-tiles of a warp tile along M: what is left once the others are fixed
  int WSUBM, WSUBN;  // size of one warp sub-tile
  int LANES_N;       // lanes along N within a sub-tile (WSUBN / TN)
  int WARPS_N;       // warps along N within the block (BN / WN)
  int ROW_STRIDE_A;  // rows of A loaded per pass by the whole block
  int ROW_STRIDE_B;  // rows of B loaded per pass by the whole block
  int SMEM_BYTES;    // As + Bs
  int ACCUMULATORS;  // per thread
  int FRAGMENTS;     // regM + regN per thread
};

SGT_HD constexpr Geometry make_geometry(int BM, int BN, int BK, int WM, int WN, int WNITER, int TM,
                                        int TN, int NUM_THREADS) {
  Geometry g{};
  g.BM = BM;
  g.BN = BN;
  g.BK = BK;
  g.WM = WM;
  g.WN = WN;
  g.WNITER = WNITER;
  g.TM = TM;
  g.TN = TN;
  g.NUM_THREADS = NUM_THREADS;
  g.WMITER = safe_div(WM * WN, kWarpSize * TM * TN * WNITER);
  g.WSUBM = safe_div(WM, g.WMITER);
  g.WSUBN = safe_div(WN, WNITER);
  g.LANES_N = safe_div(g.WSUBN, TN);
  g.WARPS_N = safe_div(BN, WN);
  g.ROW_STRIDE_A = safe_div(NUM_THREADS * kVec, BK);
  g.ROW_STRIDE_B = safe_div(NUM_THREADS, safe_div(BN, kVec));
  g.SMEM_BYTES = (BM + BN) * BK * static_cast<int>(sizeof(float));
  g.ACCUMULATORS = g.WMITER * TM * WNITER * TN;
  g.FRAGMENTS = g.WMITER * TM + WNITER * TN;
  return g;
}

// --- Where a thread sits -------------------------------------------------------------------
SGT_HD constexpr int warp_row(const Geometry& g, int tid) {
  return safe_div(tid / kWarpSize, g.WARPS_N);
}
SGT_HD constexpr int warp_col(const Geometry& g, int tid) {
  return safe_mod(tid / kWarpSize, g.WARPS_N);
}
SGT_HD constexpr int lane_row(const Geometry& g, int tid) {
  return safe_div(tid % kWarpSize, g.LANES_N);
}
SGT_HD constexpr int lane_col(const Geometry& g, int tid) {
  return safe_mod(tid % kWarpSize, g.LANES_N);
}

// Row (within the block tile) of accumulator row m of sub-tile wSubRow; also the As column read.
SGT_HD constexpr int tile_row(const Geometry& g, int tid, int wSubRow, int m) {
  return warp_row(g, tid) * g.WM + wSubRow * g.WSUBM + lane_row(g, tid) * g.TM + m;
}
// Column (within the block tile) of accumulator column n of sub-tile wSubCol; also the Bs column.
SGT_HD constexpr int tile_col(const Geometry& g, int tid, int wSubCol, int n) {
  return warp_col(g, tid) * g.WN + wSubCol * g.WSUBN + lane_col(g, tid) * g.TN + n;
}

// --- Loading a k-slice into shared memory ----------------------------------------------------
// A (BM x BK slice, row-major) is read as float4 along K and stored transposed: As[k][m].
SGT_HD constexpr int a_load_row(const Geometry& g, int tid) {
  return safe_div(tid, g.BK / kVec);
}
SGT_HD constexpr int a_load_col(const Geometry& g, int tid) {
  return safe_mod(tid, g.BK / kVec) * kVec;
}
// The seed's loop bound: a stride that does not divide the tile silently loads less than it.
SGT_HD constexpr bool a_load_continues(const Geometry& g, int offset) {
  return offset + g.ROW_STRIDE_A <= g.BM;
}
SGT_HD constexpr int as_index(const Geometry& g, int row, int col) {
  return col * g.BM + row;
}

// B (BK x BN slice, row-major) is read and stored as float4 along N: Bs[k][n].
SGT_HD constexpr int b_load_row(const Geometry& g, int tid) {
  return safe_div(tid, g.BN / kVec);
}
SGT_HD constexpr int b_load_col(const Geometry& g, int tid) {
  return safe_mod(tid, g.BN / kVec) * kVec;
}
SGT_HD constexpr bool b_load_continues(const Geometry& g, int offset) {
  return offset + g.ROW_STRIDE_B <= g.BK;
}
SGT_HD constexpr int bs_index(const Geometry& g, int row, int col) {
  return row * g.BN + col;
}

}  // namespace sgt_kernel
