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
// Every vector access moves one float4.
constexpr int kVec = 4;

// Division that yields 0 instead of trapping, so that a wrong config derives to a degenerate
// geometry (which the rules and the simulation reject) rather than crashing the host.
SGT_HD constexpr int safe_div(int a, int b) {
  return b == 0 ? 0 : a / b;
}
SGT_HD constexpr int safe_mod(int a, int b) {
  return b == 0 ? a : a % b;
}

// The tile parameters and everything derived from them. One derivation, used everywhere.
struct Geometry {
  int BM, BN, BK, WM, WN, WNITER, TM, TN, NUM_THREADS;
  int STAGES;        // shared-memory buffers: 1 = load, sync, compute, sync (the seed);
                     // 2 = the next k-slice is fetched into registers while this one is computed
  int PAD_A;         // floats of padding after each k-row of As (bank-conflict relief)
  int PAD_B;         // the same after each k-row of Bs (for B^T, stored transposed like A)
  int WMITER;        // sub-tiles of a warp tile along M: what is left once the others are fixed
  int WSUBM, WSUBN;  // size of one warp sub-tile
  int LANES_N;       // lanes along N within a sub-tile (WSUBN / TN)
  int WARPS_N;       // warps along N within the block (BN / WN)
  int AS_LD;         // row length of As: BM + PAD_A
  int AS_SIZE;       // floats of one As buffer: BK * AS_LD
  int BS_LD;         // row length of Bs: BN + PAD_B
  int BS_SIZE;       // floats of one Bs buffer: BK * BS_LD
  int A_PASSES;      // float4 loads of the A tile per thread: BM*BK / (4*NUM_THREADS)
  int B_PASSES;      // float4 loads of the B tile per thread: BK*BN / (4*NUM_THREADS)
  int SMEM_BYTES;    // all buffers of As and Bs
  int ACCUMULATORS;  // per thread
  int FRAGMENTS;     // regM + regN per thread
};

SGT_HD constexpr Geometry make_geometry(int BM, int BN, int BK, int WM, int WN, int WNITER, int TM,
                                        int TN, int NUM_THREADS, int STAGES = 1, int PAD_A = 0,
                                        int PAD_B = 0) {
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
  g.STAGES = STAGES;
  g.PAD_A = PAD_A;
  g.PAD_B = PAD_B;
  g.WMITER = safe_div(WM * WN, kWarpSize * TM * TN * WNITER);
  g.WSUBM = safe_div(WM, g.WMITER);
  g.WSUBN = safe_div(WN, WNITER);
  g.LANES_N = safe_div(g.WSUBN, TN);
  g.WARPS_N = safe_div(BN, WN);
  g.AS_LD = BM + PAD_A;
  g.AS_SIZE = BK * g.AS_LD;
  g.BS_LD = BN + PAD_B;
  g.BS_SIZE = BK * g.BS_LD;
  g.A_PASSES = safe_div(BM * BK, kVec * NUM_THREADS);
  g.B_PASSES = safe_div(BK * BN, kVec * NUM_THREADS);
  g.SMEM_BYTES = STAGES * (g.AS_SIZE + g.BS_SIZE) * static_cast<int>(sizeof(float));
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

// --- The order of the outer product -----------------------------------------------------------
// Each k-step adds the outer product of a thread's fragments to its accumulators: row i = wm * TM
// + m of the thread tile (regM[i]) times column j = wn * TN + n (regN[j]) into acc[i * cols + j],
// rows = WMITER * TM, cols = WNITER * TN. The order of those FFMAs decides the accumulators'
// register allocation and which operand each FFMA can take from the operand reuse cache, so it is
// a knob (FMA_ORDER): 0 walks wm, wn, m, n (rows first, a sub-tile at a time); 1 walks the columns,
// each over every row; 2 walks the rows, every other one backwards; 3 walks the columns, every
// other one backwards, so that each column starts on the A value the last one ended on.
struct FmaStep {
  int i, j;
};
SGT_HD constexpr FmaStep fma_step(const Geometry& g, int order, int s) {
  const int rows = g.WMITER * g.TM, cols = g.WNITER * g.TN;
  if (order == 0) {
    const int per_wm = g.WNITER * g.TM * g.TN, per_wn = g.TM * g.TN;
    const int wm = s / per_wm, wn = s % per_wm / per_wn, m = s % per_wn / g.TN, n = s % g.TN;
    return {wm * g.TM + m, wn * g.TN + n};
  }
  if (order == 1) return {s % rows, s / rows};
  if (order == 2) {
    const int i = s / cols, jj = s % cols;
    return {i, i % 2 == 0 ? jj : cols - 1 - jj};
  }
  const int j = s / rows, ii = s % rows;
  return {j % 2 == 0 ? ii : rows - 1 - ii, j};
}

// --- Loading a k-slice into shared memory ----------------------------------------------------
// Each operand's slice is read as stored: a rows x cols row-major tile with cols contiguous in
// memory. A (M x K) is BM x BK when not transposed and BK x BM when stored transposed; B (K x N)
// is BK x BN, or BN x BK when stored transposed. The block reads it as float4s numbered row by
// row; pass p of thread tid takes float4 number tid + p * NUM_THREADS.
SGT_HD constexpr int a_slice_cols(const Geometry& g, bool trans_a) {
  return trans_a ? g.BM : g.BK;
}
SGT_HD constexpr int b_slice_cols(const Geometry& g, bool trans_b) {
  return trans_b ? g.BK : g.BN;
}
SGT_HD constexpr int load_row(const Geometry& g, int cols, int tid, int pass) {
  return safe_div(tid + pass * g.NUM_THREADS, cols / kVec);
}
SGT_HD constexpr int load_col(const Geometry& g, int cols, int tid, int pass) {
  return safe_mod(tid + pass * g.NUM_THREADS, cols / kVec) * kVec;
}
// Where element (k, m) of op(A)'s slice and (k, n) of op(B)'s slice live in shared memory. Both are
// k-major so that the compute loop reads a row of M (or N) values per k.
SGT_HD constexpr int as_index(const Geometry& g, int k, int m) {
  return k * g.AS_LD + m;
}
SGT_HD constexpr int bs_index(const Geometry& g, int k, int n) {
  return k * g.BS_LD + n;
}
// The (k, m) or (k, n) coordinates of element (row, col) of a stored slice.
SGT_HD constexpr int slice_k(bool trans, bool is_a, int row, int col) {
  // A: untransposed rows are m, columns k. B: untransposed rows are k, columns n.
  return (is_a != trans) ? col : row;
}
SGT_HD constexpr int slice_mn(bool trans, bool is_a, int row, int col) {
  return (is_a != trans) ? row : col;
}

// --- Reading edge blocks without guards --------------------------------------------------------
// The main loop reads the whole k-slices of every block, edge blocks included, with no guard: a
// load whose m (or n) lies past the matrix is moved back inside it. What it reads there feeds only
// accumulators whose outputs lie outside the matrix, which the epilogue never stores; in k nothing
// moves, as the main loop takes whole slices only (the partial last one goes to the guarded edge
// loop, which reads outside elements as 0). `ext` is M for A and N for B, at least 1.
//
// The m (n) an element at m (n) `mn` is read from: the element itself inside the matrix, else the
// last one. Element j of a scalar load whose stored columns run along m (n) is read from
// clamp_mn(mn + j, ext).
SGT_HD constexpr int clamp_mn(int mn, int ext) {
  return mn < ext ? mn : ext - 1;
}
// Where a float4 load whose stored columns run along m (n) starts, for ext a multiple of 4: itself
// inside the matrix (then whole inside it, as mn is too), else the last whole float4, so that the
// access stays 16-byte aligned.
SGT_HD constexpr int clamp_mn_vec(int mn, int ext) {
  return mn < ext ? mn : ext - kVec;
}
// The same for a packed panel (PACK = 1), whose rows hold zeros from ext up to the next multiple
// of 4, so that a float4 starting inside the matrix may run into them: itself inside the matrix,
// else the last float4 that starts inside it. For ext a multiple of 4 this is clamp_mn_vec.
SGT_HD constexpr int clamp_mn_panel(int mn, int ext) {
  return mn < ext ? mn : (ext - 1) / kVec * kVec;
}

// Whether one operand allows the float4 instance's main-loop loads: a 16-byte aligned pointer, a
// leading dimension that is a multiple of 4 and, where its float4s run along m or n (its stored
// columns do not run along k), an extent `ext` (M for A, N for B) that is a multiple of 4 there, so
// that a float4 lies either whole inside the matrix or whole outside it.
SGT_HD constexpr bool float4_operand(bool aligned, int ld, bool cols_k, int ext) {
  return aligned && ld % kVec == 0 && (cols_k || ext % kVec == 0);
}

// Scalar main-loop loads (the kernel's VEC = false) whose stored columns run along m (n): a pass
// reads elements mn..mn+3 from clamp_mn(mn + j, ext). Its pointer starts at clamp_mn(mn, ext) and
// element j is read at that pointer + min(j, clamp_last(mn, ext)): the offset of the last of the
// four inside the matrix (0 when the first is already outside).
SGT_HD constexpr int clamp_last(int mn, int ext) {
  const int last = ext - 1 - mn;
  return last < 0 ? 0 : (last > kVec - 1 ? kVec - 1 : last);
}

// --- The staged epilogue ---------------------------------------------------------------------
// Where C cannot take float4 stores (an edge tile, or rows that are not 16-byte aligned, as with
// ldc = 4097), a thread's accumulators would go out as single floats at tile_row/tile_col: one
// warp store then covers 32 / LANES_N rows with a float every 16 bytes, 4 to 5 times the write
// sectors of the data (ncu, bench/NOTES.md). Instead each warp passes them through shared memory,
// one (wSubRow, m) step at a time: its lanes store their WNITER * TN values of the step as float4s
// at stage_slot, a block of stage_rows() rows of WN floats, and read it back row by row, slot s
// by lane s % 32, for stores of 32 consecutive columns. The buffer is As or Bs, idle after the
// last k-slice's barrier; a config for which neither holds every warp's block stores directly.
SGT_HD constexpr int stage_rows(const Geometry& g) {
  return safe_div(kWarpSize, g.LANES_N);
}
// Floats of one warp's block: 32 * WNITER * TN, every lane's share of one step.
SGT_HD constexpr int stage_warp_floats(const Geometry& g) {
  return stage_rows(g) * g.WN;
}
// 1: staged in As, 2: in Bs, 0: not staged (the block's warps need more than either holds).
SGT_HD constexpr int stage_buffer(const Geometry& g) {
  const int need = safe_div(g.NUM_THREADS, kWarpSize) * stage_warp_floats(g);
  return need <= g.STAGES * g.AS_SIZE ? 1 : (need <= g.STAGES * g.BS_SIZE ? 2 : 0);
}
// Where thread tid's warp block starts in the buffer.
SGT_HD constexpr int stage_base(const Geometry& g, int tid) {
  return tid / kWarpSize * stage_warp_floats(g);
}
// The slot (in its warp's block) of the accumulator in column n of sub-tile wSubCol: row lane_row,
// column its offset in the warp tile.
SGT_HD constexpr int stage_slot(const Geometry& g, int tid, int wSubCol, int n) {
  return lane_row(g, tid) * g.WN + wSubCol * g.WSUBN + lane_col(g, tid) * g.TN + n;
}
// The block-tile row and column that slot s of thread tid's warp block holds in step (wSubRow,
// m): what tile_row and tile_col give the lane that stored it.
SGT_HD constexpr int stage_tile_row(const Geometry& g, int tid, int wSubRow, int m, int s) {
  return warp_row(g, tid) * g.WM + wSubRow * g.WSUBM + safe_div(s, g.WN) * g.TM + m;
}
SGT_HD constexpr int stage_tile_col(const Geometry& g, int tid, int s) {
  return warp_col(g, tid) * g.WN + safe_mod(s, g.WN);
}

// --- Block order -----------------------------------------------------------------------------
// Blocks are launched as a 1-D sequence per k-split and take their tile from block_tile_row/col:
// GROUP_M block rows are walked column by column, so consecutive blocks share tiles of B and a
// narrow band of A stays in L2. GROUP_M = 1 is plain row-major order.
SGT_HD constexpr int block_tile_row(int bid, int grid_m, int grid_n, int group_m) {
  const int per_group = group_m * grid_n;
  const int first = safe_div(bid, per_group) * group_m;
  const int rows = (grid_m - first) < group_m ? (grid_m - first) : group_m;
  return first + safe_mod(safe_mod(bid, per_group), rows);
}
SGT_HD constexpr int block_tile_col(int bid, int grid_m, int grid_n, int group_m) {
  const int per_group = group_m * grid_n;
  const int first = safe_div(bid, per_group) * group_m;
  const int rows = (grid_m - first) < group_m ? (grid_m - first) : group_m;
  return safe_div(safe_mod(bid, per_group), rows);
}

// --- Split-K -----------------------------------------------------------------------------------
// The k range of split z: whole BK slices, the last split taking what is left (possibly nothing).
SGT_HD constexpr int split_k_chunk(int K, int BK, int splits) {
  return safe_div(safe_div(K + BK - 1, BK) + splits - 1, splits) * BK;
}

// --- Launch ------------------------------------------------------------------------------------
// What the host launches for one problem: grid_x blocks (the tiles, in block_tile_row/col order)
// times grid_z k-splits of k_chunk each. With grid_z > 1 every split writes its raw partial product
// to a workspace of grid_z * M * N floats and sgemm_splitk_reduce sums them in split order.
struct LaunchDims {
  long long grid_m, grid_n, grid_x;
  int grid_z;
  int k_chunk;
  long long workspace_floats;
};

SGT_HD constexpr LaunchDims launch_dims(long long M, long long N, long long K, int BM, int BN,
                                        int BK, int split_k) {
  LaunchDims d{};
  d.grid_m = BM > 0 ? (M + BM - 1) / BM : 0;
  d.grid_n = BN > 0 ? (N + BN - 1) / BN : 0;
  d.grid_x = d.grid_m * d.grid_n;
  d.grid_z = 1;
  d.k_chunk = static_cast<int>(K);
  if (split_k > 1 && K > 0 && BK > 0) {
    d.k_chunk = split_k_chunk(static_cast<int>(K), BK, split_k);
    d.grid_z = static_cast<int>((K + d.k_chunk - 1) / d.k_chunk);  // no split left empty
    if (d.grid_z == 1) d.k_chunk = static_cast<int>(K);
  }
  d.workspace_floats = d.grid_z > 1 ? static_cast<long long>(d.grid_z) * M * N : 0;
  return d;
}

// --- Packing (PACK = 1) ----------------------------------------------------------------------
// Before the tile kernel, sgemm_pack copies each operand that is not already a k-major, 16-byte
// aligned matrix with a multiple-of-4 extent into a panel: K rows of panel_ld(ext) floats, row k
// holding op(X)(i, k) for i < ext (i is m for A, n for B) and zeros after it. The tile kernel's
// TN, float4 instance then reads both operands as A^T (K x M) and B (K x N) with whole float4s:
// no transposing store into shared memory, and no scalar loads for odd sizes.
SGT_HD constexpr int panel_ld(int ext) {
  return (ext + kVec - 1) / kVec * kVec;
}
// Whether one operand must be packed: k_major is whether it is stored k-major already (A^T:
// TRANS_A; B: not TRANS_B), and the rest are float4_operand's conditions for a float4 run along m
// (n).
SGT_HD constexpr bool needs_pack(bool k_major, bool aligned, int ld, int ext) {
  return !(k_major && aligned && ld % kVec == 0 && ext % kVec == 0);
}
// One operand for sgemm_pack: src == nullptr leaves it alone. rows_major: op(X)(i, k) is stored at
// src[i * ld + k] (A, or B^T), else at src[k * ld + i].
struct PackOperand {
  const float* src;
  float* panel;
  int ld;
  int ext;
  int panel_ld;
  int rows_major;
};
// sgemm_pack's launch: 32 x 32 tiles of (i, k), blockIdx.z picking the operand, the k tiles
// walked by a grid-stride loop beyond the grid's 65535 limit in y.
constexpr int kPackTile = 32;
constexpr int kPackThreads = 256;
SGT_HD constexpr long long pack_grid_x(int ext_a, int ext_b) {
  return (static_cast<long long>(panel_ld(ext_a > ext_b ? ext_a : ext_b)) + kPackTile - 1) /
         kPackTile;
}
SGT_HD constexpr int pack_grid_y(int K) {
  const int tiles = (K + kPackTile - 1) / kPackTile;
  return tiles < 1 ? 1 : (tiles > 65535 ? 65535 : tiles);
}

// Everything a host needs for one PACK launch, from the problem alone: which operands sgemm_pack
// copies (src set; nullptr: read in place), the one workspace of `floats` floats both panels
// live in (A's first, B's at b_offset: a multiple of 4, so both start 16-byte aligned), and the
// grid. Nothing to pack: floats == 0. bind_pack then places the panels in the caller's workspace.
struct PackPlan {
  PackOperand a, b;
  long long b_offset;
  long long floats;
  long long grid_x;
  int grid_y;
};
SGT_HD constexpr PackPlan plan_pack(bool trans_a, bool trans_b, int M, int N, int K, const float* A,
                                    bool a_aligned, int lda, const float* B, bool b_aligned,
                                    int ldb) {
  PackPlan p{};
  const bool pack_a = needs_pack(trans_a, a_aligned, lda, M);
  const bool pack_b = needs_pack(!trans_b, b_aligned, ldb, N);
  if (pack_a) p.a = {A, nullptr, lda, M, panel_ld(M), trans_a ? 0 : 1};
  if (pack_b) p.b = {B, nullptr, ldb, N, panel_ld(N), trans_b ? 1 : 0};
  p.b_offset = pack_a ? static_cast<long long>(K) * panel_ld(M) : 0;
  p.floats = p.b_offset + (pack_b ? static_cast<long long>(K) * panel_ld(N) : 0);
  p.grid_x = pack_grid_x(pack_a ? M : 0, pack_b ? N : 0);
  p.grid_y = pack_grid_y(K);
  return p;
}
// Places the plan's panels in `workspace` (p.floats floats) and points A, lda, B, ldb at what the
// tile kernel's TN float4 instance reads: a panel where the operand is packed, else itself.
SGT_HD inline void bind_pack(PackPlan& p, float* workspace, const float*& A, int& lda,
                             const float*& B, int& ldb) {
  if (p.a.src) {
    p.a.panel = workspace;
    A = p.a.panel;
    lda = p.a.panel_ld;
  }
  if (p.b.src) {
    p.b.panel = workspace + p.b_offset;
    B = p.b.panel;
    ldb = p.b.panel_ld;
  }
}

}  // namespace sgt_kernel
