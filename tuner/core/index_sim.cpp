// Replays the warp-tiling kernel's index arithmetic on the CPU, thread by thread, and checks it
// against an independent statement of what the block must do: load each element of a k-slice once
// into the slot where the compute loop expects it, never reading outside the matrix, multiply the
// right operands, write each C element inside the matrix once, with aligned float4 accesses; and,
// for the launch, take every block tile and every k exactly once.
//
// Whole k-slices take the kernel's main loop, edge blocks included, in the scalar-load instance
// (VEC = false) always and in the float4 one (VEC) when both operands allow float4s: no guard, and
// a load whose m (n) lies past the matrix is read from where clamp_mn / clamp_mn_vec (float4s) or
// clamp_mn / clamp_last (single floats) move it, an element of another m (n). The simulation
// records which element each slot really received, flagged as clamped, so such data is fine in a
// register paired only with C elements outside the matrix (which the epilogue never stores) and a
// defect in one paired with an element inside it. The partial last slice takes the guarded edge
// loop (outside elements stored as 0, never read), through the same clamped pointers but with its
// guard on the unclamped coordinates; a VEC instance whose operands refuse float4s takes it for
// every slice, through unclamped pointers.
//
// The replay calls the kernel's functions (through SimIndexing); the checks do not: they state
// the layouts directly (A stored m-major or k-major, As k-major rows of BM+PAD_A floats, ...).
//
// A TMA = 1 config (sgemm_ws_tma.cuh) gets no thread loads: its producer warpgroup's copies and
// transposes are replayed into one model of the block's dynamic shared memory, every stage of the
// ring live at once. What the hardware does is stated here, not taken from tma_geometry.h: a copy
// brings the encoded box of the stored matrix, zeros outside it, row by row into shared memory,
// its 16-byte chunks swizzled by address bits where the map asks for a swizzle. Then the compute
// loop and the epilogue are the template's, read from the first stage's As and Bs.
#include "index_sim.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <optional>
#include <thread>

#include <fmt/format.h>

namespace sgt {

namespace {

using sgt_kernel::Geometry;
using sgt_kernel::kVec;
using sgt_kernel::kWarpSize;

enum Kind : int {
  kDegenerate,
  kCOut,
  kCMatrix,
  kCHole,
  kCOverlap,
  kStageSlot,
  kStageOut,
  kStageMisplaced,
  kAOut,
  kAMatrix,
  kAsOut,
  kAsPadWritten,
  kAsHole,
  kAsOverlap,
  kAsMisplaced,
  kBOut,
  kBMatrix,
  kBsOut,
  kBsHole,
  kBsOverlap,
  kBsMisplaced,
  kSmemRead,
  kAsPadRead,
  kOperand,
  kKTail,
  kMisaligned,
  kRasterOut,
  kRasterHole,
  kRasterOverlap,
  kSplitMisaligned,
  kSplitEmpty,
  kSplitHole,
  kSplitOverlap,
  kSplitWorkspace,
  kFmaSteps,
  kTmaRefused,
  kTmaBarrier,
  kTmaCopyOut,
  kTmaCopyHole,
  kTmaCopyMisplaced,
  kTmaSwizzle,
  kTmaTransposeRead,
  kTmaTransposeOut,
  kTmaTransposeHole,
  kTmaTransposeOverlap,
  kTmaTransposeMisplaced,
  kTmaSmemOverlap,
  kTmaSmemMisaligned,
  kTmaSmemOverflow,
  kTmaWarpgroups,
  kTmaKHole,
  kTmaKOverlap,
  kNumKinds
};

struct KindInfo {
  std::string_view name;
  std::string_view unit;  // what the count in the detail counts
};

constexpr std::array<KindInfo, kNumKinds> kKinds = {{
    {"degenerate_geometry", "problems"},
    {"c_out_of_tile", "element writes"},
    {"c_out_of_matrix", "element writes"},
    {"c_hole", "elements"},
    {"c_overlap", "elements"},
    {"c_stage_slot", "staging slots"},
    {"c_stage_out_of_buffer", "float4 stores"},
    {"c_stage_misplaced", "accumulator elements"},
    {"a_out_of_tile", "element reads"},
    {"a_out_of_matrix", "element reads"},
    {"as_out_of_tile", "element stores"},
    {"as_pad_written", "element stores"},
    {"as_hole", "elements"},
    {"as_overlap", "elements"},
    {"as_misplaced", "element stores"},
    {"b_out_of_tile", "element reads"},
    {"b_out_of_matrix", "element reads"},
    {"bs_out_of_tile", "element stores"},
    {"bs_hole", "elements"},
    {"bs_overlap", "elements"},
    {"bs_misplaced", "element stores"},
    {"smem_read_out_of_tile", "reads"},
    {"as_pad_read", "reads"},
    {"operand_mismatch", "accumulator elements"},
    {"k_tail_not_zeroed", "accumulator elements"},
    {"misaligned_vector", "float4 accesses"},
    {"raster_out_of_grid", "blocks"},
    {"raster_hole", "tiles"},
    {"raster_overlap", "tiles"},
    {"split_k_misaligned", "problems"},
    {"split_k_empty", "splits"},
    {"split_k_hole", "k values"},
    {"split_k_overlap", "k values"},
    {"split_k_workspace", "problems"},
    {"fma_step_coverage", "accumulators"},
    {"tma_copy_refused", "boxes"},
    {"tma_barrier", "barriers"},
    {"tma_copy_out_of_stage", "element writes"},
    {"tma_copy_hole", "elements"},
    {"tma_copy_misplaced", "elements"},
    {"tma_swizzle_mismatch", "floats"},
    {"tma_transpose_read_out_of_box", "float4 reads"},
    {"tma_transpose_out_of_stage", "element writes"},
    {"tma_transpose_hole", "elements"},
    {"tma_transpose_overlap", "elements"},
    {"tma_transpose_misplaced", "elements"},
    {"tma_smem_overlap", "floats"},
    {"tma_smem_misaligned", "stages"},
    {"tma_smem_overflow", "float writes"},
    {"tma_warpgroups", "warpgroups"},
    {"tma_k_hole", "k values"},
    {"tma_k_overlap", "k values"},
}};

// Counts per kind and keeps the first example; the example is only formatted once, so a config
// with millions of bad accesses costs no more than one with a single one.
class Tally {
 public:
  template <typename F>
  void note(Kind k, F&& example) {
    note_n(k, 1, example);
  }
  template <typename F>
  void note_n(Kind k, long long n, F&& example) {
    if (n <= 0) return;
    if (count_[k] == 0) example_[k] = example();
    count_[k] += n;
  }
  void add(Kind k, long long n, std::string example) {
    note_n(k, n, [&] { return std::move(example); });
  }
  SimReport report() const {
    SimReport r;
    for (int k = 0; k < kNumKinds; ++k) {
      if (count_[k] == 0) continue;
      r.defects.push_back(
          {std::string(kKinds[k].name),
           fmt::format("{} ({} {} in all)", example_[k], count_[k], kKinds[k].unit)});
    }
    return r;
  }

 private:
  std::array<long long, kNumKinds> count_{};
  std::array<std::string, kNumKinds> example_{};
};

// Caps that keep one simulation within a few million steps and every product within int.
constexpr long long kMaxParam = 1 << 20;
constexpr long long kMaxThreads = 4096;
constexpr long long kMaxTileElems = 1 << 20;
constexpr long long kMaxWork = 1LL << 26;
constexpr long long kMaxGridBlocks = 1 << 22;
constexpr long long kMaxK = 1 << 24;
// TMA = 1: the ring is replayed stage by stage in a model of the whole dynamic shared memory.
constexpr int kMaxTmaStages = 64;
constexpr long long kMaxTmaSmemBytes = 1 << 24;

// The kernel's index functions called directly, for the compiler to inline: the simulation's fast
// path, taken where a SimIndexing holds warptile_geometry.h's functions (is_kernel_indexing). The
// block's replay is a template over the two, with the same calls either way.
struct KernelIndexing {
  static int a_slice_cols(const Geometry& g, bool t) { return sgt_kernel::a_slice_cols(g, t); }
  static int b_slice_cols(const Geometry& g, bool t) { return sgt_kernel::b_slice_cols(g, t); }
  static int load_row(const Geometry& g, int cols, int tid, int pass) {
    return sgt_kernel::load_row(g, cols, tid, pass);
  }
  static int load_col(const Geometry& g, int cols, int tid, int pass) {
    return sgt_kernel::load_col(g, cols, tid, pass);
  }
  static int slice_k(bool trans, bool is_a, int row, int col) {
    return sgt_kernel::slice_k(trans, is_a, row, col);
  }
  static int slice_mn(bool trans, bool is_a, int row, int col) {
    return sgt_kernel::slice_mn(trans, is_a, row, col);
  }
  static int as_index(const Geometry& g, int k, int m) { return sgt_kernel::as_index(g, k, m); }
  static int bs_index(const Geometry& g, int k, int n) { return sgt_kernel::bs_index(g, k, n); }
  static int tile_row(const Geometry& g, int tid, int ws, int m) {
    return sgt_kernel::tile_row(g, tid, ws, m);
  }
  static int tile_col(const Geometry& g, int tid, int ws, int n) {
    return sgt_kernel::tile_col(g, tid, ws, n);
  }
  static int clamp_mn(int mn, int ext) { return sgt_kernel::clamp_mn(mn, ext); }
  static int clamp_mn_vec(int mn, int ext) { return sgt_kernel::clamp_mn_vec(mn, ext); }
  static int clamp_mn_panel(int mn, int ext) { return sgt_kernel::clamp_mn_panel(mn, ext); }
  static int clamp_last(int mn, int ext) { return sgt_kernel::clamp_last(mn, ext); }
  static int stage_slot(const Geometry& g, int tid, int ws, int n) {
    return sgt_kernel::stage_slot(g, tid, ws, n);
  }
  static int stage_tile_row(const Geometry& g, int tid, int ws, int m, int s) {
    return sgt_kernel::stage_tile_row(g, tid, ws, m, s);
  }
  static int stage_tile_col(const Geometry& g, int tid, int s) {
    return sgt_kernel::stage_tile_col(g, tid, s);
  }
  static sgt_kernel::FmaStep fma_step(const Geometry& g, int order, int s) {
    return sgt_kernel::fma_step(g, order, s);
  }
  static bool tma_staged_a(bool t) { return sgt_kernel::tma_staged_a(t); }
  static bool tma_staged_b(bool t) { return sgt_kernel::tma_staged_b(t); }
  static int tma_staged_index(int bk, int row, int chunk) {
    return sgt_kernel::tma_staged_index(bk, row, chunk);
  }
  static int tma_transpose_row(int rows, int p, int j) {
    return sgt_kernel::tma_transpose_row(rows, p, j);
  }
  static int tma_transpose_chunk(int rows, int p, int j) {
    return sgt_kernel::tma_transpose_chunk(rows, p, j);
  }
  static int tma_transpose_passes(int rows, int bk) {
    return sgt_kernel::tma_transpose_passes(rows, bk);
  }
  static int tma_box_inner(const Geometry& g, bool is_a, bool staged) {
    return sgt_kernel::tma_box_inner(g, is_a, staged);
  }
  static int tma_box_outer(const Geometry& g, bool is_a, bool staged) {
    return sgt_kernel::tma_box_outer(g, is_a, staged);
  }
  static sgt_kernel::TmaLayout make_tma_layout(const Geometry& g, bool ta, bool tb, int mb) {
    return sgt_kernel::make_tma_layout(g, ta, tb, mb);
  }
};

// Whether every function a block's replay calls is warptile_geometry.h's own.
bool is_kernel_indexing(const SimIndexing& ix) {
  const SimIndexing k;
  return ix.a_slice_cols == k.a_slice_cols && ix.b_slice_cols == k.b_slice_cols &&
         ix.load_row == k.load_row && ix.load_col == k.load_col && ix.slice_k == k.slice_k &&
         ix.slice_mn == k.slice_mn && ix.as_index == k.as_index && ix.bs_index == k.bs_index &&
         ix.tile_row == k.tile_row && ix.tile_col == k.tile_col && ix.clamp_mn == k.clamp_mn &&
         ix.clamp_mn_vec == k.clamp_mn_vec && ix.clamp_mn_panel == k.clamp_mn_panel &&
         ix.clamp_last == k.clamp_last && ix.stage_slot == k.stage_slot &&
         ix.stage_tile_row == k.stage_tile_row && ix.stage_tile_col == k.stage_tile_col &&
         ix.fma_step == k.fma_step && ix.tma_staged_a == k.tma_staged_a &&
         ix.tma_staged_b == k.tma_staged_b && ix.tma_staged_index == k.tma_staged_index &&
         ix.tma_transpose_row == k.tma_transpose_row &&
         ix.tma_transpose_chunk == k.tma_transpose_chunk &&
         ix.tma_transpose_passes == k.tma_transpose_passes && ix.tma_box_inner == k.tma_box_inner &&
         ix.tma_box_outer == k.tma_box_outer && ix.make_tma_layout == k.make_tma_layout;
}

std::optional<std::string> field_out_of_range(const WarpTileConfig& c) {
  for (const auto& f : kConfigFields) {
    const int v = c.*f.member;
    if (v < f.min_value)
      return fmt::format("{} = {} is below its minimum {}", f.name, v, f.min_value);
    if (v > kMaxParam) return fmt::format("{} = {} is absurdly large", f.name, v);
  }
  return std::nullopt;
}

// Why the block cannot be simulated, or nullopt. Checked before make_geometry runs, since its int
// products could overflow on absurd inputs.
template <typename Ix>
std::optional<std::string> degenerate(const WarpTileConfig& c, const SimCase& sc, const Ix& ix) {
  if (auto why = field_out_of_range(c)) return why;
  const long long BM = c.BM, BN = c.BN, BK = c.BK;
  if (c.NUM_THREADS > kMaxThreads) {
    return fmt::format("NUM_THREADS = {} is absurdly large", c.NUM_THREADS);
  }
  if (BM * BN > kMaxTileElems || BK * (BM + c.PAD_A) > kMaxTileElems ||
      BK * (BN + c.PAD_B) > kMaxTileElems) {
    return fmt::format("tile {}x{}x{} (PAD_A = {}, PAD_B = {}) is absurdly large", BM, BN, BK,
                       c.PAD_A, c.PAD_B);
  }
  if (4LL * c.STAGES * BK * (BM + c.PAD_A + BN + c.PAD_B) > INT_MAX) {
    return fmt::format("STAGES = {} buffers of the tile are absurdly large", c.STAGES);
  }
  const long long wmwn = static_cast<long long>(c.WM) * c.WN;
  // One factor at a time: TM*TN*WNITER alone could overflow long long.
  long long per_pass = kWarpSize;
  for (int v : {c.TM, c.TN, c.WNITER}) per_pass = std::min<long long>(per_pass * v, 1LL << 40);
  if (wmwn > INT_MAX || per_pass > INT_MAX) {
    return fmt::format("warp tile {}x{} with thread tile {}x{} and WNITER = {} is absurdly large",
                       c.WM, c.WN, c.TM, c.TN, c.WNITER);
  }
  const bool tma = c.TMA == 1;
  if (tma && c.STAGES > kMaxTmaStages) {
    return fmt::format("TMA = 1 with STAGES = {}: too many stages to simulate", c.STAGES);
  }
  if (tma && (1LL * c.NUM_THREADS + sgt_kernel::kTmaProducerThreads) * c.MIN_BLOCKS > INT_MAX) {
    return fmt::format(
        "TMA = 1: (NUM_THREADS + 128) * MIN_BLOCKS = ({} + 128) * {} is absurdly "
        "large",
        c.NUM_THREADS, c.MIN_BLOCKS);
  }
  const std::pair<std::string_view, std::pair<int, long long>> rems[] = {
      {"m_rem", {sc.m_rem, BM}}, {"n_rem", {sc.n_rem, BN}}, {"k_rem", {sc.k_rem, BK}}};
  for (const auto& [name, vt] : rems) {
    if (vt.first < 0 || vt.first > vt.second) {
      return fmt::format("{} = {} is outside 0..{} (0: the matrix goes on)", name, vt.first,
                         vt.second);
    }
  }

  const Geometry g = derive(c);
  const std::pair<std::string_view, int> must_be_positive[] = {
      {"WMITER", g.WMITER},
      {"WSUBM", g.WSUBM},
      {"WSUBN", g.WSUBN},
      {"LANES_N", g.LANES_N},
      {"WARPS_N", g.WARPS_N},
      {"float4 columns of the stored A slice", ix.a_slice_cols(g, sc.trans_a) / kVec},
      {"float4 columns of the stored B slice", ix.b_slice_cols(g, sc.trans_b) / kVec},
  };
  for (const auto& [name, v] : must_be_positive) {
    // Zero here is a divisor that safe_div hides: every thread would land on one row or column.
    if (v <= 0) return fmt::format("derived {} = {} is not positive", name, v);
  }
  const long long nt = c.NUM_THREADS;
  long long work = nt * (static_cast<long long>(g.FRAGMENTS) * g.BK + kVec * g.ACCUMULATORS) +
                   kVec * nt * (1LL + g.A_PASSES + g.B_PASSES);
  if (tma) {
    const auto L = ix.make_tma_layout(g, sc.trans_a, sc.trans_b, c.MIN_BLOCKS);
    if (L.SMEM_BYTES < 0 || L.SMEM_BYTES > kMaxTmaSmemBytes) {
      return fmt::format("TMA = 1: {} bytes of shared memory are too many to simulate",
                         L.SMEM_BYTES);
    }
    // Every stage's copies and transposes.
    work += 3LL * c.STAGES * (1LL * g.AS_SIZE + g.BS_SIZE + 1LL * (BM + BN) * BK);
  }
  if (work > kMaxWork) {
    return fmt::format("one block does about {} index steps, too many to simulate", work);
  }
  return std::nullopt;
}

// Where the matrix ends in a dimension, in the block's local coordinates: kOpen where it goes on
// past the tile.
constexpr int kOpen = INT_MAX;
int extent(int rem) {
  return rem > 0 ? rem : kOpen;
}

// What a shared-memory slot holds after the loads of the simulated k-slice: an element of the
// slice (k * tile_mn + mn, independent coordinates), or one of these.
constexpr std::int32_t kStale = -1;        // not written this slice: an earlier slice's data
constexpr std::int32_t kZero = -2;         // the zero a guarded load stores for an outside element
constexpr std::int32_t kFromOutside = -3;  // read from outside the tile or matrix (reported)
// Flags an element read from a clamped position: an element of another m (n) than the slot's.
constexpr std::int32_t kClamped = 1 << 30;
// What a register fragment holds across the k-loop.
constexpr int kUnknown = -1;  // its source is already reported (hole, overlap, read outside)
constexpr int kWrong = -2;    // it holds the wrong k, or a different row/column at different k
constexpr int kNone = -3;     // it holds no element at all (zeros only)

// One operand of the simulated block, stated independently of the kernel's index functions.
struct Operand {
  bool is_a = true;
  bool trans = false;
  int rows = 0, cols = 0;  // the stored slice: A is BM x BK (trans: BK x BM), B BK x BN (BN x BK)
  int kernel_cols = 0;     // what the kernel takes cols to be (ix.a_slice_cols / b_slice_cols)
  bool col_is_k = false;   // stored columns run along k (A not transposed, B transposed)
  int tile_mn = 0;         // BM or BN
  int ld = 0;              // row length of As / Bs: BM + PAD_A, or BN + PAD_B
  int size = 0;            // floats of one As / Bs buffer
  int passes = 0;
  int BK = 0;
  int k_valid = 0, mn_valid = 0;  // the slice's k and the tile's m (n) inside the matrix
  int row_ext = 0, col_ext = 0;   // where the matrix ends in stored rows / columns (kOpen)
  int mn_ext = 0;                 // where it ends in m (n): the clamps' extent (kOpen)
  int read_col_ext = 0;           // where reads may go in stored columns: col_ext, or a panel's
  bool panel = false;             // a packed panel (SimCase::panel)
  bool main_loop = false;         // a whole slice: no guard, loads clamped into the matrix
  bool clamp = true;              // the kernel's main loop runs: pass pointers clamped (any slice)
  bool vec_kernel = true;         // the main loop reads float4s (VEC), else single floats
  bool vector_store = false;      // stored columns run along m (n): one float4 store into As/Bs
  const char* name = "A";
  const char* smem = "As";
  const char* reg = "regM";
  const char* mn = "m";
  Kind out_of_tile = kAOut, out_of_matrix = kAMatrix, smem_out = kAsOut, hole = kAsHole,
       overlap = kAsOverlap, misplaced = kAsMisplaced;

  template <typename Ix>
  int index(const Geometry& g, const Ix& ix, int k, int pos) const {
    return is_a ? ix.as_index(g, k, pos) : ix.bs_index(g, k, pos);
  }
  bool is_pad(int slot) const { return ld != tile_mn && slot % ld >= tile_mn; }
};

template <typename Ix>
Operand make_operand(const Geometry& g, const Ix& ix, const SimCase& sc, bool is_a) {
  Operand op;
  op.is_a = is_a;
  op.trans = is_a ? sc.trans_a : sc.trans_b;
  op.tile_mn = is_a ? g.BM : g.BN;
  op.col_is_k = is_a != op.trans;
  op.rows = op.col_is_k ? op.tile_mn : g.BK;
  op.cols = op.col_is_k ? g.BK : op.tile_mn;
  op.kernel_cols = is_a ? ix.a_slice_cols(g, sc.trans_a) : ix.b_slice_cols(g, sc.trans_b);
  op.ld = is_a ? g.AS_LD : g.BS_LD;
  op.size = is_a ? g.AS_SIZE : g.BS_SIZE;
  op.passes = is_a ? g.A_PASSES : g.B_PASSES;
  op.BK = g.BK;
  const int mn_rem = is_a ? sc.m_rem : sc.n_rem;
  op.k_valid = sc.k_rem > 0 ? sc.k_rem : g.BK;
  op.mn_valid = mn_rem > 0 ? mn_rem : op.tile_mn;
  op.row_ext = extent(op.col_is_k ? mn_rem : sc.k_rem);
  op.col_ext = extent(op.col_is_k ? sc.k_rem : mn_rem);
  op.mn_ext = extent(mn_rem);
  // A panel's rows run on in zeros to the next multiple of 4 (blocks start on one: BM, BN are).
  op.panel = sc.panel;
  op.read_col_ext =
      sc.panel && !op.col_is_k && mn_rem > 0 ? sgt_kernel::panel_ld(mn_rem) : op.col_ext;
  // The kernel's main_loop: always in the scalar instance, in the float4 one where the operands
  // allow float4s. Then the main loop (no guard) runs every whole slice of every block, edge blocks
  // included, and only a partial slice takes the guarded edge loop, both operands, through the
  // same clamped pointers. Otherwise every slice takes the edge loop, pointers unclamped.
  op.clamp = !sc.vec_kernel || sc.vec_loads;
  op.main_loop = op.clamp && (sc.k_rem == 0 || sc.k_rem == g.BK);
  op.vec_kernel = sc.vec_kernel;
  op.vector_store = !op.col_is_k;
  if (!is_a) {
    op.name = "B";
    op.smem = "Bs";
    op.reg = "regN";
    op.mn = "n";
    op.out_of_tile = kBOut;
    op.out_of_matrix = kBMatrix;
    op.smem_out = kBsOut;
    op.hole = kBsHole;
    op.overlap = kBsOverlap;
    op.misplaced = kBsMisplaced;
  }
  return op;
}

struct SmemState {
  std::vector<std::uint8_t> count;  // stores per slot (saturating at 255)
  std::vector<std::int32_t> content;
};

// The loader of one k-slice. Pass p of thread tid takes the four elements at stored (row,
// col..col+3) of the slice through a pointer that, where the kernel's main loop runs, it clamps
// into the matrix in m (n), once for all slices, as its `place` does: where the stored rows run
// along m (n) its row is clamp_mn(row); else, in the float4 instance, its start column
// clamp_mn_vec(col), and in the scalar one clamp_mn(col), with last = clamp_last(col). The main
// loop reads with no guard: the float4 at the pointer (16-byte aligned), or single floats, element
// j at the pointer + j where the stored columns run along k and at the pointer + min(j, last)
// where they run along m (n) (load_slice_scalar). The edge loop reads element j at the pointer + j
// only where the unclamped (row, col + j) lies inside the matrix, and stores 0 otherwise. Either
// way the four go where slice_k / slice_mn and as_index / bs_index put the unclamped coordinates:
// one float4 store at the first element's slot where the stored columns run along m (n), else
// element by element. A slot records the element it really received, flagged when that was not
// the element its coordinates name (a clamped read).
template <typename Ix>
void load(const Geometry& g, const Ix& ix, const Operand& op, int nt, SmemState& s, Tally& t) {
  s.count.assign(static_cast<size_t>(op.size), 0);
  s.content.assign(static_cast<size_t>(op.size), kStale);
  // Successive k-slices (and split-K ranges, which start on whole slices) move a k-column by BK;
  // successive blocks move an m- or n-column by the tile. A float4 is aligned in every one of them
  // only if it is in the first four.
  const int step = op.col_is_k ? g.BK : op.tile_mn;
  // Only the main loop's float4 loads need 16-byte alignment in global memory.
  const bool vec_reads = op.main_loop && op.vec_kernel;
  // The scalar main loop's reads along m (n): element j at the pointer + min(j, last).
  const bool scalar_mn = op.main_loop && !op.vec_kernel && !op.col_is_k;
  auto slot_of = [&](int row, int c) {
    return op.index(g, ix, ix.slice_k(op.trans, op.is_a, row, c),
                    ix.slice_mn(op.trans, op.is_a, row, c));
  };
  for (int tid = 0; tid < nt; ++tid) {
    for (int p = 0; p < op.passes; ++p) {
      const int row = ix.load_row(g, op.kernel_cols, tid, p);
      const int col = ix.load_col(g, op.kernel_cols, tid, p);
      // The pass's pointer, clamped into the matrix in m (n) where the main loop runs.
      int prow = row, pcol = col, last = kVec - 1;
      if (op.clamp) {
        if (op.col_is_k) {
          prow = ix.clamp_mn(row, op.mn_ext);
        } else if (op.vec_kernel) {
          pcol = op.panel ? ix.clamp_mn_panel(col, op.mn_ext) : ix.clamp_mn_vec(col, op.mn_ext);
        } else {
          last = ix.clamp_last(col, op.mn_ext);
          pcol = ix.clamp_mn(col, op.mn_ext);
        }
      }
      for (int b = 0; vec_reads && b < kVec; ++b) {
        const long long gcol = 1LL * b * step + pcol;
        if (gcol % kVec != 0) {
          t.note(kMisaligned, [&] {
            return fmt::format(
                "thread {} reads {} as float4 at slice column {}{}, global column {} in {} {}", tid,
                op.name, pcol, pcol != col ? fmt::format(" (clamped from {})", col) : "", gcol,
                op.col_is_k ? "k-slice" : "block", b);
          });
          break;
        }
      }
      const int slot0 = slot_of(row, col);
      if (op.vector_store && slot0 % kVec != 0) {
        t.note(kMisaligned, [&] {
          return fmt::format("thread {} stores a float4 to {}[{}], not 16-byte aligned", tid,
                             op.smem, slot0);
        });
      }
      for (int j = 0; j < kVec; ++j) {
        const int c = col + j;
        const bool inside = row >= 0 && row < op.rows && c >= 0 && c < op.cols;
        const int k_true = op.col_is_k ? c : row;
        const int mn_true = op.col_is_k ? row : c;
        // Where element j is read from (load_slice_scalar reads element 0 at the pointer itself).
        const int rr = prow;
        const int rc = pcol + (scalar_mn && j > 0 ? std::min(j, last) : j);
        std::int32_t value = kZero;
        // The edge loop's guard: only the stored row and column's upper bounds, of the unclamped
        // coordinates, as in the kernel. The main loop has none.
        if (op.main_loop || (row < op.row_ext && c < op.col_ext)) {
          const bool moved = rr != row || rc != c;
          // (For a panel: inside it, its zero padding included.)
          const bool in_matrix = rr >= 0 && rc >= 0 && rr < op.row_ext && rc < op.read_col_ext;
          const bool read_inside = rr >= 0 && rr < op.rows && rc >= 0 && rc < op.cols;
          const int k_read = op.col_is_k ? rc : rr;
          const int mn_read = op.col_is_k ? rr : rc;
          auto clamped_from = [&] {
            return moved ? fmt::format(" (clamped from {}[{}][{}])", op.name, row, c)
                         : std::string();
          };
          value = kFromOutside;
          if (!in_matrix) {
            t.note(op.out_of_matrix, [&] {
              return fmt::format(
                  "thread {} reads {}[{}][{}] of the slice (k {}, {} {}){}, outside the matrix",
                  tid, op.name, rr, rc, k_read, op.mn, mn_read, clamped_from());
            });
          } else if (!read_inside) {
            t.note(op.out_of_tile, [&] {
              return fmt::format("thread {} reads {}[{}][{}]{} outside the {}x{} slice", tid,
                                 op.name, rr, rc, clamped_from(), op.rows, op.cols);
            });
          } else {
            value = k_read * op.tile_mn + mn_read;
            if (moved) value |= kClamped;
          }
        }
        const int slot = op.vector_store ? slot0 + j : slot_of(row, c);
        if (slot < 0 || slot >= op.size) {
          t.note(op.smem_out, [&] {
            return fmt::format("thread {} stores {}[{}][{}] to {}[{}], outside {}[{}]", tid,
                               op.name, row, c, op.smem, slot, op.smem, op.size);
          });
          continue;
        }
        if (op.is_pad(slot)) {
          t.note(kAsPadWritten, [&] {
            return fmt::format(
                "thread {} stores A[{}][{}] to As[{}], a pad slot (column {} of a row of {} + {} "
                "pad)",
                tid, row, c, slot, slot % op.ld, op.tile_mn, op.ld - op.tile_mn);
          });
          continue;
        }
        const int expected = k_true * op.ld + mn_true;
        if (inside && slot != expected) {
          t.note(op.misplaced, [&] {
            return fmt::format(
                "thread {} stores {}[{}][{}] (k {}, {} {}) to {}[{}], expected {}[{}]", tid,
                op.name, row, c, k_true, op.mn, mn_true, op.smem, slot, op.smem, expected);
          });
        }
        auto& n = s.count[static_cast<size_t>(slot)];
        if (n < 255) ++n;
        s.content[static_cast<size_t>(slot)] = value;
      }
    }
  }
}

// Whether each of the n counts is exactly 1 (a loop the compiler vectorizes: no early exit).
bool all_once(const std::uint8_t* count, int n) {
  unsigned bad = 0;
  for (int i = 0; i < n; ++i) bad |= count[i] ^ 1u;
  return bad == 0;
}

// Every non-pad slot of As / Bs must be stored exactly once per k-slice (zeros included).
void check_smem_coverage(const Operand& op, const SmemState& s, Tally& t) {
  long long holes = 0, overlaps = 0;
  int first_hole = -1, first_overlap = -1;
  // Row by row of ld slots, the pad at the end of each left out.
  const std::uint8_t* const count = s.count.data();
  for (int row = 0; row < op.size; row += op.ld) {
    const int end = std::min(op.size, row + op.tile_mn);
    if (all_once(count + row, end - row)) continue;
    for (int i = row; i < end; ++i) {
      const int n = count[i];
      if (n == 1) continue;
      if (n == 0) {
        if (holes++ == 0) first_hole = i;
      } else if (overlaps++ == 0) {
        first_overlap = i;
      }
    }
  }
  auto name = [&](int i) {
    return fmt::format("{}[{}] (k {}, {} {})", op.smem, i, i / op.ld, op.mn, i % op.ld);
  };
  if (holes > 0) {
    t.add(op.hole, holes, fmt::format("{} is stored by no thread", name(first_hole)));
  }
  if (overlaps > 0) {
    const int n = s.count[static_cast<size_t>(first_overlap)];
    t.add(op.overlap, overlaps,
          fmt::format("{} is stored {}{} times", name(first_overlap), n, n == 255 ? "+" : ""));
  }
}

// What one register holds across the k-loop when the compute loop reads slot index(k, pos) + j
// for k = 0..BK-1 (j > 0: element j of a float4 read at tile position pos).
struct Fragment {
  int source = kNone;  // the m (n) of the element it holds at every valid k, kUnknown, kWrong or
                       // kNone
  int zero_k = -1;     // first valid k (< k_rem) at which it reads a zero instead of an element
  int tail_k = -1;     // first k >= k_rem at which it reads something other than zero
  int tail_slot = -1;
  int clamped_k = -1;   // first valid k at which it reads an element from a clamped position,
  int clamped_mn = -1;  // and that element's m (n)
  int bad = 0, bad_k = 0, bad_slot = 0;  // reads outside the shared buffer
  int pad = 0, pad_k = 0, pad_slot = 0;  // reads of As pad slots
  int misaligned = 0, misaligned_k = 0;  // as a float4 base (j = 0): slots not 16-byte aligned
};

template <typename Ix>
Fragment fragment(const Geometry& g, const Ix& ix, const Operand& op, const SmemState& s, int pos,
                  int j) {
  Fragment f;
  bool unknown = false, wrong = false;
  for (int k = 0; k < op.BK; ++k) {
    const int slot = op.index(g, ix, k, pos) + j;
    if (slot < 0 || slot >= op.size) {
      if (f.bad++ == 0) f.bad_k = k, f.bad_slot = slot;
      unknown = true;
      continue;
    }
    if (j == 0 && slot % kVec != 0 && f.misaligned++ == 0) f.misaligned_k = k;
    if (op.is_pad(slot)) {
      if (f.pad++ == 0) f.pad_k = k, f.pad_slot = slot;
      unknown = true;
      continue;
    }
    const bool tail = k >= op.k_valid;
    const std::int32_t v = s.content[static_cast<size_t>(slot)];
    if (s.count[static_cast<size_t>(slot)] > 1 || v == kFromOutside) {
      unknown = true;  // an overlap or a read outside: reported where it happened
      continue;
    }
    if (v == kZero) {
      if (!tail && f.zero_k < 0) f.zero_k = k;
      continue;
    }
    if (tail) {
      // Stale data of an earlier slice (or an element beyond K): added into the accumulator.
      if (f.tail_k < 0) f.tail_k = k, f.tail_slot = slot;
      continue;
    }
    if (v == kStale) {
      unknown = true;  // a hole: reported by the coverage check
      continue;
    }
    const int e = v & ~kClamped;
    const int pk = e / op.tile_mn;
    const int pmn = e % op.tile_mn;
    if ((v & kClamped) != 0 && f.clamped_k < 0) f.clamped_k = k, f.clamped_mn = pmn;
    if (pk != k) {
      wrong = true;
    } else if (f.source == kNone) {
      f.source = pmn;
    } else if (f.source != pmn) {
      wrong = true;
    }
  }
  if (wrong) {
    f.source = kWrong;
  } else if (unknown) {
    f.source = kUnknown;
  }
  return f;
}

// Fragments depend on (pos, j) alone: computed once per position inside the tile.
class FragmentCache {
 public:
  void reset(int tile) {
    done_.assign(static_cast<size_t>(tile) * kVec, 0);
    frags_.resize(static_cast<size_t>(tile) * kVec);
    tile_ = tile;
  }
  template <typename Ix>
  const Fragment& get(const Geometry& g, const Ix& ix, const Operand& op, const SmemState& s,
                      int pos, int j) {
    if (pos < 0 || pos >= tile_) {
      scratch_ = fragment(g, ix, op, s, pos, j);
      return scratch_;
    }
    const size_t i = static_cast<size_t>(pos) * kVec + static_cast<size_t>(j);
    if (!done_[i]) {
      frags_[i] = fragment(g, ix, op, s, pos, j);
      done_[i] = 1;
    }
    return frags_[i];
  }

 private:
  std::vector<std::uint8_t> done_;
  std::vector<Fragment> frags_;
  Fragment scratch_;
  int tile_ = 0;
};

// One register of a thread's fragments: what it ends up holding.
struct Reg {
  int source = kNone;
  int zero_k = -1;
  int tail_k = -1;
  int tail_slot = -1;
  int clamped_k = -1;
  int clamped_mn = -1;
};

struct Scratch {
  SmemState as, bs;
  FragmentCache cache_a, cache_b;
  std::vector<std::uint8_t> c_count;
  std::vector<Reg> reg_m, reg_n;
  std::vector<int> row_of, col_of, pair_reg, pair_col;
  std::vector<std::uint8_t> a_flag, b_flag, pair_in, pair_flag;
};

// One per thread, reused by every block it simulates.
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

std::string show_source(int v) {
  if (v == kWrong) return "mixed/wrong-k data";
  if (v == kNone) return "nothing but zeros";
  return std::to_string(v);
}

// The staged epilogue of STAGE_C = 1 (stage_slot in warptile_geometry.h), taken where the direct
// one would store single floats: per warp and step (wm, m), the lanes' float4 stores must fill
// every slot of the warp's block once, inside the block and the buffer (As or Bs), 16-byte aligned;
// and what lane s % 32 reads back from slot s must go to the C element the direct epilogue gives
// the accumulator stored there (tile_row, tile_col of the lane that stored it), whose placement the
// rest of the replay checks.
template <typename Ix>
void check_staged_epilogue(const Geometry& g, const Ix& ix, Tally& t) {
  const int per_warp = sgt_kernel::stage_warp_floats(g);
  // Without a buffer that holds every warp's block (rule stage_c_buffer), the larger of the two.
  const int which = sgt_kernel::stage_buffer(g) != 0 ? sgt_kernel::stage_buffer(g)
                                                     : (g.AS_SIZE >= g.BS_SIZE ? 1 : 2);
  const int buffer = g.STAGES * (which == 1 ? g.AS_SIZE : g.BS_SIZE);
  const char* const name = which == 1 ? "As" : "Bs";
  const int regs_n = g.WNITER * g.TN;
  std::vector<int> writer(static_cast<size_t>(per_warp));
  std::vector<int> reg(static_cast<size_t>(per_warp));
  std::vector<int> writes(static_cast<size_t>(per_warp));
  for (int w = 0; w < g.NUM_THREADS / kWarpSize; ++w) {
    for (int wm = 0; wm < g.WMITER; ++wm) {
      for (int m = 0; m < g.TM; ++m) {
        std::fill(writes.begin(), writes.end(), 0);
        for (int lane = 0; lane < kWarpSize; ++lane) {
          const int tid = w * kWarpSize + lane;
          const int base = sgt_kernel::stage_base(g, tid);
          for (int wn = 0; wn < g.WNITER; ++wn) {
            for (int n = 0; n < g.TN; n += kVec) {
              const int slot = ix.stage_slot(g, tid, wn, n);
              if (slot < 0 || slot + kVec > per_warp || base + slot + kVec > buffer) {
                t.note(kStageOut, [&] {
                  return fmt::format(
                      "thread {} stores accumulators {}..{} of step ({}, {}) at {}[{}], outside "
                      "its warp's {} floats at {} or the buffer's {}",
                      tid, wn * g.TN + n, wn * g.TN + n + kVec - 1, wm, m, name, base + slot,
                      per_warp, base, buffer);
                });
                continue;
              }
              if ((base + slot) % kVec != 0) {
                t.note(kMisaligned, [&] {
                  return fmt::format("thread {} stores a float4 at {}[{}], not 16-byte aligned",
                                     tid, name, base + slot);
                });
              }
              for (int j = 0; j < kVec; ++j) {
                const int q = slot + j;
                writer[q] = tid;
                reg[q] = wn * g.TN + n + j;
                ++writes[q];
              }
            }
          }
        }
        for (int q = 0; q < per_warp; ++q) {
          const int reader = w * kWarpSize + q % kWarpSize;
          if (writes[q] != 1) {
            t.note(kStageSlot, [&] {
              return fmt::format(
                  "slot {} of warp {}'s block in step ({}, {}) is stored {} times before thread {} "
                  "reads it",
                  q, w, wm, m, writes[q], reader);
            });
            continue;
          }
          const int row = ix.stage_tile_row(g, reader, wm, m, q);
          const int col = ix.stage_tile_col(g, reader, q);
          const int r = reg[q], wn = r / g.TN, n = r % g.TN;
          const int want_row = ix.tile_row(g, writer[q], wm, m);
          const int want_col = ix.tile_col(g, writer[q], wn, n / kVec * kVec) + n % kVec;
          if (row != want_row || col != want_col) {
            t.note(kStageMisplaced, [&] {
              return fmt::format(
                  "thread {} writes C[{}][{}] of the tile from slot {}, which holds thread {}'s "
                  "accumulator ({}, {}) of C[{}][{}] (of {} per thread along N)",
                  reader, row, col, q, writer[q], wm * g.TM + m, r, want_row, want_col, regs_n);
            });
          }
        }
      }
    }
  }
}

// The outer product of one k-step, in the config's FMA_ORDER: its WMITER*TM x WNITER*TN steps must
// update every accumulator exactly once, each with its own row of regM and column of regN (the
// operand check below pairs acc[i * cols + j] with regM[i] and regN[j]).
template <typename Ix>
void check_fma_steps(const Geometry& g, int order, const Ix& ix, Tally& t) {
  const int rows = g.WMITER * g.TM, cols = g.WNITER * g.TN;
  std::vector<int> count(static_cast<size_t>(rows) * static_cast<size_t>(cols), 0);
  for (int step = 0; step < rows * cols; ++step) {
    const sgt_kernel::FmaStep f = ix.fma_step(g, order, step);
    if (f.i < 0 || f.i >= rows || f.j < 0 || f.j >= cols) {
      t.note(kFmaSteps, [&] {
        return fmt::format("FMA_ORDER {} step {} updates acc({}, {}), outside the {} x {} tile",
                           order, step, f.i, f.j, rows, cols);
      });
      continue;
    }
    ++count[static_cast<size_t>(f.i) * static_cast<size_t>(cols) + static_cast<size_t>(f.j)];
  }
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const int n =
          count[static_cast<size_t>(i) * static_cast<size_t>(cols) + static_cast<size_t>(j)];
      if (n != 1) {
        t.note(kFmaSteps, [&] {
          return fmt::format("FMA_ORDER {} updates acc({}, {}) {} times per k-step", order, i, j,
                             n);
        });
      }
    }
}

// --- TMA = 1: the producer warpgroup (sgemm_ws_tma.cuh) ---------------------------------------

// What a float of the block's shared memory holds besides an element code (k * tile_mn + mn of
// the operand's slice), kZero (a copy's fill outside the matrix) and kStale (written by nobody):
// an element of the matrix outside the block's tile or slice (a box too large or shifted).
constexpr std::int32_t kForeign = -4;

// The tensor copy's swizzle of a shared-memory byte address, from the hardware's definition (not
// from tma_staged_index): within each 1024-byte segment, address bits [4:6] are XORed with bits
// [7:9] (the 128-byte swizzle) or bits [4:5] with bits [7:8] (the 64-byte one).
long long hw_swizzle(long long byte, int span) {
  if (span == 128) return byte ^ (((byte >> 7) & 7) << 4);
  if (span == 64) return byte ^ (((byte >> 7) & 3) << 4);
  return byte;
}

// Shared-memory regions, for ownership and messages: region stage * 4 + one of these.
enum TmaRegion : int { kStagingA, kStagingB, kTileA, kTileB };

std::string region_name(int region) {
  constexpr const char* kNames[] = {"the A staging box", "the B staging box", "As", "Bs"};
  return fmt::format("{} of stage {}", kNames[region % 4], region / 4);
}

// One operand's side of the producer: what the host encodes (tma_maps.h's tma_encode_maps, stated
// here: the box tma_box_inner x tma_box_outer, a 128-byte swizzle for staged BK = 32 rows, 64-byte
// for other staged rows, none for a straight box) and where the kernel puts it (make_tma_layout).
struct TmaSide {
  const Operand* op = nullptr;
  bool staged = false;       // the kernel's path: make_tma_layout's STAGED_A / STAGED_B
  bool map_staged = false;   // what the host encodes: tma_staged_a / tma_staged_b
  int inner = 0, outer = 0;  // the box: stored columns, stored rows
  int span = 0;              // its swizzle, in bytes per row: 128, 64 or 0
  bool refused = false;      // the encoder refuses the box: the launch fails, nothing is copied
  int box_bytes = 0;         // what the kernel's barrier expects of the copy
  long long staging_offset = 0, staging_floats = 0;  // stage s at offset + s * floats
  long long tile_offset = 0, tile_stride = 0;
  int which = 0;        // 0: A, 1: B
  long long k_ext = 0;  // where the matrix ends in k, in the slice's coordinates (kOpen)
  // The rule an upstream defect of this operand comes back to (its box refused, or the staged
  // index not the hardware's), which the transpose's defects then inherit; nullptr: none.
  const char* cause = nullptr;
  // The rule the producer's defects come back to: the cause, else tma_transpose (whole float4s
  // for every producer thread).
  const char* rule() const { return cause ? cause : "tma_transpose"; }

  long long staging_start(int stage) const { return staging_offset + stage * staging_floats; }
  long long tile_start(int stage) const { return tile_offset + stage * tile_stride; }
  int staging_region(int stage) const { return stage * 4 + kStagingA + which; }
  int tile_region(int stage) const { return stage * 4 + kTileA + which; }
};

// The block's dynamic shared memory from the aligned base: what each float holds and which
// region wrote it.
struct TmaSmem {
  long long floats = 0;
  std::vector<std::int32_t> content;
  std::vector<std::int16_t> owner;  // region, -1: none
  // Stage 0's writes: (region % 4, float offset from the region's start).
  std::vector<std::pair<int, long long>> trace;
};

template <typename Ix>
class TmaProducer {
 public:
  TmaProducer(const Geometry& g, const Ix& ix, const WarpTileConfig& c, const SimCase& sc,
              const Operand& a, const Operand& b, Tally& t)
      : g_(g),
        ix_(ix),
        c_(c),
        t_(t),
        L_(ix.make_tma_layout(g, sc.trans_a, sc.trans_b, c.MIN_BLOCKS)) {
    side_[0] = side(a, 0, L_.STAGED_A, ix.tma_staged_a(sc.trans_a), L_.A_BOX_BYTES, 0,
                    L_.STAGE_A_FLOATS, L_.AS_OFFSET, L_.AS_STRIDE, sc);
    side_[1] = side(b, 1, L_.STAGED_B, ix.tma_staged_b(sc.trans_b), L_.B_BOX_BYTES,
                    L_.STAGE_B_OFFSET, L_.STAGE_B_FLOATS, L_.BS_OFFSET, L_.BS_STRIDE, sc);
  }

  // Replays every stage and leaves the first one's As and Bs in `as`, `bs` for the consumers. A
  // stage that repeats stage 0 but for its offsets (repeats_stage_0) only takes its floats: its
  // copies' and transposes' defects are stage 0's, reported (and counted) once.
  void run(SmemState& as, SmemState& bs, TmaSmem& smem, std::vector<std::uint8_t> (&count)[2]) {
    check_warpgroups();
    for (auto& x : side_) check_box(x);
    check_barriers();
    for (auto& x : side_) {
      if (x.staged && x.map_staged && !x.refused) check_swizzle(x);
    }
    check_alignment();
    smem.floats =
        std::max(0LL, (static_cast<long long>(L_.SMEM_BYTES) - sgt_kernel::kTmaAlignBytes) / 4);
    smem.content.assign(static_cast<size_t>(smem.floats), kStale);
    smem.owner.assign(static_cast<size_t>(smem.floats), -1);
    smem.trace.clear();
    smem_ = &smem;
    for (int stage = 0; stage < c_.STAGES; ++stage) {
      tracing_ = stage == 0;
      if (stage > 0 && repeats_stage_0(stage)) {
        // The same copies and transposes as stage 0's, each swizzled box shifted by whole
        // 1024-byte patterns: what lands in the stage is stage 0's, only where it lands differs.
        long long start[4];
        for (int kind = 0; kind < 4; ++kind) start[kind] = region_start(stage * 4 + kind);
        for (const auto& [kind, rel] : smem.trace) claim(start[kind] + rel, stage * 4 + kind);
        continue;
      }
      for (int i = 0; i < 2; ++i) {
        count[i].assign(static_cast<size_t>(side_[i].op->size), 0);
        count_[i] = count[i].data();
      }
      for (const auto& x : side_) copy(x, stage);
      for (const auto& x : side_) {
        if (x.staged) transpose(x, stage);
      }
      for (const auto& x : side_) check_tile(x, stage);
      if (stage == 0) {
        snapshot(side_[0], as);
        snapshot(side_[1], bs);
      }
    }
  }

 private:
  TmaSide side(const Operand& op, int which, bool staged, bool map_staged, int box_bytes,
               long long staging_offset, long long staging_floats, long long tile_offset,
               long long tile_stride, const SimCase& sc) const {
    TmaSide x;
    x.op = &op;
    x.which = which;
    x.staged = staged;
    x.map_staged = map_staged;
    x.inner = ix_.tma_box_inner(g_, which == 0, map_staged);
    x.outer = ix_.tma_box_outer(g_, which == 0, map_staged);
    x.span = !map_staged ? 0 : g_.BK == 32 ? 128 : 64;
    x.box_bytes = box_bytes;
    x.staging_offset = staging_offset;
    x.staging_floats = staging_floats;
    x.tile_offset = tile_offset;
    x.tile_stride = tile_stride;
    x.k_ext = extent(sc.k_rem);
    return x;
  }

  // The element a copy brings for stored (row, col) of the block's slice, the box's corner at
  // (0, 0): zero outside the matrix.
  std::int32_t code_of(const TmaSide& x, long long row, long long col) const {
    const Operand& op = *x.op;
    const long long k = op.col_is_k ? col : row;
    const long long mn = op.col_is_k ? row : col;
    if (k >= x.k_ext || mn >= op.mn_ext) return kZero;
    if (k < g_.BK && mn < op.tile_mn) return static_cast<std::int32_t>(k * op.tile_mn + mn);
    return kForeign;
  }
  std::int32_t expected(const TmaSide& x, int k, int mn) const {
    return k < x.k_ext && mn < x.op->mn_ext ? k * x.op->tile_mn + mn : kZero;
  }
  std::string show(const TmaSide& x, std::int32_t v) const {
    if (v == kZero) return "a zero";
    if (v == kStale) return "nothing written this slice";
    if (v == kForeign) return fmt::format("an element of {} outside the block's tile", x.op->name);
    return fmt::format("{}(k {}, {} {})", x.op->name, v / x.op->tile_mn, x.op->mn,
                       v % x.op->tile_mn);
  }

  // setmaxnreg is executed by whole warpgroups alike: every one of the block must be four whole
  // warps, all consumers (tid < NUM_THREADS) or all producers.
  void check_warpgroups() {
    const int threads = L_.THREADS, nt = g_.NUM_THREADS;
    for (int lo = 0; lo < threads; lo += 128) {
      const int hi = std::min(threads, lo + 128);
      const int consumers = std::clamp(nt - lo, 0, hi - lo), producers = hi - lo - consumers;
      if (hi - lo == 128 && (consumers == 0 || producers == 0)) continue;
      t_.note(kTmaWarpgroups, [&] {
        return fmt::format(
            "warpgroup {} (threads {}..{} of {}) holds {} consumer and {} producer threads: the "
            "consumers' setmaxnreg.inc and the producer's setmaxnreg.dec must each be executed "
            "by all four warps of a warpgroup (rule tma_warpgroups: NUM_THREADS a multiple of 128)",
            lo / 128, lo, hi - 1, threads, consumers, producers);
      });
    }
  }

  // The encoder's limits on a box: 1..256 elements each way, rows a multiple of 16 bytes and, when
  // swizzled, no wider than the swizzle.
  void check_box(TmaSide& x) {
    std::string why;
    if (x.inner < 1 || x.inner > 256 || x.outer < 1 || x.outer > 256) {
      why = "a box dimension is outside 1..256 (rule tma_box)";
      x.cause = "tma_box";
    } else if (x.inner * 4 % 16 != 0) {
      why = "its rows are not a multiple of 16 bytes (rules float4_alignment, pad_alignment)";
      x.cause = "float4_alignment";
    } else if (x.span > 0 && x.inner * 4 > x.span) {
      why = fmt::format("its {}-byte rows are wider than the {}-byte swizzle (rule tma_slice)",
                        x.inner * 4, x.span);
      x.cause = "tma_slice";
    }
    if (why.empty()) return;
    x.refused = true;
    t_.note(kTmaRefused, [&] {
      return fmt::format("the host cannot encode {}'s {} box of {} x {} floats: {}", x.op->name,
                         x.map_staged ? "staged" : "straight", x.inner, x.outer, why);
    });
  }

  // The stage's barriers: staged[s] expects the bytes of the staged copies, full[s] those of the
  // straight ones, plus the arrivals it was initialised with (1 for the straight copies' expect_tx,
  // 128 for the transposers) from the producer threads the launch has.
  void check_barriers() {
    int staged_expect = 0, staged_bring = 0, full_expect = 0, full_bring = 0;
    bool any_staged = false, any_straight = false;
    for (const auto& x : side_) {
      const int bytes = x.refused ? 0 : x.inner * x.outer * 4;
      (x.staged ? staged_expect : full_expect) += x.box_bytes;
      (x.staged ? staged_bring : full_bring) += bytes;
      (x.staged ? any_staged : any_straight) = true;
    }
    auto mismatch = [&](const char* bar, int expect, int bring) {
      if (expect == bring) return;
      t_.note(kTmaBarrier, [&] {
        return fmt::format("{}[s] expects {} bytes, the copies completing on it bring {}: it {}",
                           bar, expect, bring,
                           expect > bring ? "never completes" : "completes before they land");
      });
    };
    if (any_staged) mismatch("staged", staged_expect, staged_bring);
    if (any_straight) mismatch("full", full_expect, full_bring);
    const int init = (any_straight ? 1 : 0) + (any_staged ? sgt_kernel::kTmaProducerThreads : 0);
    const int arrivals = (any_straight ? 1 : 0) + (any_staged ? producers() : 0);
    if (init != arrivals) {
      t_.note(kTmaBarrier, [&] {
        return fmt::format("full[s] waits for {} arrivals, the {} producer threads make {}", init,
                           producers(), arrivals);
      });
    }
  }
  // Whether stage `stage` repeats stage 0 but for its offsets: every swizzled copy's destination
  // moved by whole 1024-byte swizzle patterns (an unswizzled copy or a transpose by anything).
  bool repeats_stage_0(int stage) const {
    for (const auto& x : side_) {
      if (x.span == 0 || x.refused) continue;
      const long long shift = stage * (x.staged ? x.staging_floats : x.tile_stride);
      if (shift % (sgt_kernel::kTmaAlignBytes / 4) != 0) return false;
    }
    return true;
  }
  long long region_start(int region) const {
    const TmaSide& x = side_[region % 2];
    return region % 4 < kTileA ? x.staging_start(region / 4) : x.tile_start(region / 4);
  }

  // The producer threads the launch has (a broken layout's absurd count capped).
  int producers() const {
    return static_cast<int>(
        std::clamp<long long>(1LL * L_.THREADS - g_.NUM_THREADS, 0, kMaxThreads));
  }
  static void bump(std::uint8_t& n) { n += n != 255; }

  // tma_staged_index against the hardware: in a box starting on a 1024-byte boundary, row r's
  // element k lies at byte (r * row + k) * 4, then swizzled.
  void check_swizzle(TmaSide& x) {
    for (int r = 0; r < x.outer; ++r) {
      for (int chunk = 0; chunk < g_.BK / kVec; ++chunk) {
        const int kernel = ix_.tma_staged_index(g_.BK, r, chunk);
        for (int e = 0; e < kVec; ++e) {
          const long long hw = hw_swizzle((1LL * r * x.inner + chunk * kVec + e) * 4, x.span) / 4;
          if (hw == kernel + e) continue;
          x.cause = "tma_slice";
          t_.note(kTmaSwizzle, [&] {
            return fmt::format(
                "the {}-byte swizzle puts element {} of row {} of {}'s staging box at float {}, "
                "tma_staged_index(BK = {}, {}, {}) + {} names {} (rule tma_slice)",
                x.span, chunk * kVec + e, r, x.op->name, hw, g_.BK, r, chunk, e, kernel + e);
          });
        }
      }
    }
  }

  // Staging boxes on 1024-byte boundaries (the swizzle pattern's), As and Bs stages on 128-byte
  // ones (a tensor copy's destination), from the aligned base.
  void check_alignment() {
    for (int stage = 0; stage < c_.STAGES; ++stage) {
      for (const auto& x : side_) {
        if (x.staged && (x.staging_start(stage) * 4) % sgt_kernel::kTmaAlignBytes != 0) {
          t_.note(kTmaSmemMisaligned, [&] {
            return fmt::format(
                "{} starts at byte {}, not on a 1024-byte boundary: the swizzle pattern is "
                "shifted (rule tma_transpose keeps staging boxes whole multiples of 2 KB)",
                region_name(x.staging_region(stage)), x.staging_start(stage) * 4);
          });
        }
        if ((x.tile_start(stage) * 4) % 128 != 0) {
          t_.note(kTmaSmemMisaligned, [&] {
            return fmt::format("{} starts at byte {}, not on a 128-byte boundary",
                               region_name(x.tile_region(stage)), x.tile_start(stage) * 4);
          });
        }
      }
    }
  }

  // Takes float idx for `region`: inside the shared memory, and no other region's.
  bool claim(long long idx, int region) {
    if (idx < 0 || idx >= smem_->floats) {
      t_.note(kTmaSmemOverflow, [&] {
        return fmt::format(
            "{} writes float {} of the shared memory, outside the {} floats "
            "SMEM_BYTES = {} leaves after the alignment slack",
            region_name(region), idx, smem_->floats, L_.SMEM_BYTES);
      });
      return false;
    }
    auto& owner = smem_->owner[static_cast<size_t>(idx)];
    if (owner >= 0 && owner != region) {
      t_.note(kTmaSmemOverlap, [&] {
        return fmt::format("float {} of the shared memory belongs to {} and to {}", idx,
                           region_name(owner), region_name(region));
      });
    }
    owner = static_cast<std::int16_t>(region);
    return true;
  }
  void write(long long idx, std::int32_t v, int region) {
    if (tracing_) smem_->trace.emplace_back(region % 4, idx - region_start(region));
    if (claim(idx, region)) smem_->content[static_cast<size_t>(idx)] = v;
  }
  std::int32_t read(long long idx, int region) const {
    if (idx < 0 || idx >= smem_->floats) return kStale;
    return smem_->owner[static_cast<size_t>(idx)] == region
               ? smem_->content[static_cast<size_t>(idx)]
               : kStale;
  }

  // Thread 0's copy of the slice: box element (row o, column i) of the stored slice lands at byte
  // (o * inner + i) * 4 from the destination, swizzled by its address.
  void copy(const TmaSide& x, int stage) {
    if (x.refused) return;
    const long long dst = x.staged ? x.staging_start(stage) : x.tile_start(stage);
    const long long room = x.staged ? x.staging_floats : x.op->size;
    const int region = x.staged ? x.staging_region(stage) : x.tile_region(stage);
    const char* what = x.staged ? "staging box" : "tile";
    for (int o = 0; o < x.outer; ++o) {
      for (int i = 0; i < x.inner; ++i) {
        const long long byte = dst * 4 + (1LL * o * x.inner + i) * 4;
        const long long idx = (byte < 0 ? byte : hw_swizzle(byte, x.span)) / 4;
        const long long rel = idx - dst;
        if (rel < 0 || rel >= room) {
          t_.note(kTmaCopyOut, [&] {
            return fmt::format(
                "{}'s copy puts element (row {}, column {}) of its {} x {} box at float {} of "
                "{}, a {} of {} floats",
                x.op->name, o, i, x.outer, x.inner, rel, region_name(region), what, room);
          });
        } else if (!x.staged) {
          bump(count_[x.which][rel]);
        }
        write(idx, code_of(x, o, i), region);
      }
    }
  }

  // tma_transpose: producer thread p's pass j takes the float4 at tma_staged_index(BK, row,
  // chunk) of the staging box and stores its element e at ((chunk * 4 + e) * ld + row) of As (Bs).
  void transpose(const TmaSide& x, int stage) {
    const Operand& op = *x.op;
    const int rows = op.tile_mn;
    // More passes than float4s of the box cannot be right; one more than that shows it.
    const int passes =
        std::clamp(ix_.tma_transpose_passes(rows, g_.BK), 0, rows * g_.BK / kVec + 1);
    for (int p = 0; p < producers(); ++p) {
      for (int j = 0; j < passes; ++j) {
        const int row = ix_.tma_transpose_row(rows, p, j);
        const int chunk = ix_.tma_transpose_chunk(rows, p, j);
        const int src = ix_.tma_staged_index(g_.BK, row, chunk);
        if (src < 0 || src + kVec > x.staging_floats) {
          t_.note(kTmaTransposeRead, [&] {
            return fmt::format(
                "producer thread {} pass {} (row {}, chunk {}) reads floats {}..{} of {}, which "
                "holds {} (rule {})",
                p, j, row, chunk, src, src + kVec - 1, region_name(x.staging_region(stage)),
                x.staging_floats, x.rule());
          });
          continue;
        }
        if (src % kVec != 0) {
          t_.note(kMisaligned, [&] {
            return fmt::format(
                "producer thread {} reads a float4 at float {} of {}, not 16-byte "
                "aligned",
                p, src, region_name(x.staging_region(stage)));
          });
        }
        for (int e = 0; e < kVec; ++e) {
          const std::int32_t v = read(x.staging_start(stage) + src + e, x.staging_region(stage));
          const int k = chunk * kVec + e;
          if (row < 0 || row >= rows || k < 0 || k >= g_.BK) {
            t_.note(kTmaTransposeOut, [&] {
              return fmt::format(
                  "producer thread {} pass {} stores element {} of row {}, chunk {} at k {}, {} "
                  "{}: outside the {} x {} tile of {} (rule {})",
                  p, j, e, row, chunk, k, op.mn, row, g_.BK, rows,
                  region_name(x.tile_region(stage)), x.rule());
            });
            continue;
          }
          const int slot = k * op.ld + row;
          bump(count_[x.which][slot]);
          write(x.tile_start(stage) + slot, v, x.tile_region(stage));
        }
      }
    }
  }

  // Every element (k, m) of the stage's tile, k < BK, m < BM (n < BN), written once this slice,
  // with op(A)'s element (op(B)'s) there, or a zero outside the matrix.
  void check_tile(const TmaSide& x, int stage) {
    const Operand& op = *x.op;
    const Kind hole = x.staged ? kTmaTransposeHole : kTmaCopyHole;
    const Kind misplaced = x.staged ? kTmaTransposeMisplaced : kTmaCopyMisplaced;
    // Holes and overlaps of the transpose come back to tma_transpose (or its cause), a misplaced
    // element only to a cause; a straight copy's defects only to a refused box.
    const std::string rule =
        x.staged || x.cause ? fmt::format(" (rule {})", x.rule()) : std::string();
    const std::string cause = x.cause ? fmt::format(" (rule {})", x.cause) : std::string();
    const std::uint8_t* const count = count_[x.which];
    for (int k = 0; k < g_.BK; ++k) {
      for (int mn = 0; mn < op.tile_mn; ++mn) {
        const int slot = k * op.ld + mn;
        const int n = count[slot];
        const std::int32_t v = read(x.tile_start(stage) + slot, x.tile_region(stage));
        const std::int32_t want = expected(x, k, mn);
        if (n == 1 && v == want) continue;
        auto where = [&] {
          return fmt::format("{}[{}] (k {}, {} {}) of stage {}", op.smem, slot, k, op.mn, mn,
                             stage);
        };
        if (n == 0) {
          t_.note(hole, [&] {
            return fmt::format("{} is written by no {}{}", where(),
                               x.staged ? "producer thread" : "copy", rule);
          });
        } else if (n > 1) {
          t_.note(x.staged ? kTmaTransposeOverlap : kTmaCopyMisplaced,
                  [&] { return fmt::format("{} is written {} times{}", where(), n, rule); });
        } else {
          t_.note(misplaced, [&] {
            return fmt::format("{} holds {}, not {}{}", where(), show(x, v), show(x, want), cause);
          });
        }
      }
    }
  }

  // The consumers' view of the first stage: As (Bs) as the thread-loaded replay leaves it.
  void snapshot(const TmaSide& x, SmemState& st) const {
    const int size = x.op->size;
    st.count.assign(count_[x.which], count_[x.which] + size);
    st.content.resize(static_cast<size_t>(size));
    for (int slot = 0; slot < size; ++slot) {
      const std::int32_t v = read(x.tile_start(0) + slot, x.tile_region(0));
      // An element from outside the tile is reported where it landed.
      st.content[static_cast<size_t>(slot)] = v == kForeign ? kFromOutside : v;
    }
  }

  const Geometry& g_;
  const Ix& ix_;
  const WarpTileConfig& c_;
  Tally& t_;
  const sgt_kernel::TmaLayout L_;
  TmaSide side_[2];
  TmaSmem* smem_ = nullptr;
  bool tracing_ = false;
  std::uint8_t* count_[2] = {nullptr, nullptr};
};

// One per thread, reused by every TMA block it simulates.
struct TmaScratch {
  TmaSmem smem;
  std::vector<std::uint8_t> count[2];
};
TmaScratch& tma_scratch() {
  thread_local TmaScratch s;
  return s;
}

template <typename Ix>
SimReport run_block_as(const WarpTileConfig& c, const SimCase& sc, const Ix& ix) {
  Tally t;
  if (auto why = degenerate(c, sc, ix)) {
    t.add(kDegenerate, 1, *why);
    return t.report();
  }
  const Geometry g = derive(c);
  const int nt = c.NUM_THREADS;
  const int BM = g.BM, BN = g.BN, TM = g.TM, TN = g.TN;
  const int WMITER = g.WMITER, WNITER = g.WNITER;
  Scratch& s = scratch();

  check_fma_steps(g, c.FMA_ORDER, ix, t);
  const Operand a = make_operand(g, ix, sc, true);
  const Operand b = make_operand(g, ix, sc, false);
  // TMA = 1: the producer's copies and transposes instead of the threads' loads, the consumers
  // reading As as float4s whatever TM, and only the direct epilogue.
  const bool tma = c.TMA == 1;
  if (tma) {
    TmaScratch& ts = tma_scratch();
    TmaProducer<Ix>(g, ix, c, sc, a, b, t).run(s.as, s.bs, ts.smem, ts.count);
  } else {
    load(g, ix, a, nt, s.as, t);
    load(g, ix, b, nt, s.bs, t);
    check_smem_coverage(a, s.as, t);
    check_smem_coverage(b, s.bs, t);
  }
  s.cache_a.reset(BM);
  s.cache_b.reset(BN);

  const int m_valid = a.mn_valid, n_valid = b.mn_valid, k_valid = a.k_valid;
  const int row_ext = extent(sc.m_rem), col_ext = extent(sc.n_rem);
  // The epilogue's float4 path: the whole tile inside the matrix.
  const bool fast_c = (sc.m_rem == 0 || sc.m_rem == BM) && (sc.n_rem == 0 || sc.n_rem == BN);
  if (!fast_c && c.STAGE_C == 1 && !tma) check_staged_epilogue(g, ix, t);
  const int regs_m = WMITER * TM;
  const int regs_n = WNITER * TN;
  s.c_count.assign(static_cast<size_t>(BM) * BN, 0);
  s.reg_m.resize(static_cast<size_t>(regs_m));
  s.reg_n.resize(static_cast<size_t>(regs_n));
  s.row_of.resize(static_cast<size_t>(regs_m));
  s.col_of.resize(static_cast<size_t>(regs_n));
  // The (register, column) pairs of a thread's float4 stores: WNITER * ceil(TN / 4) * 4.
  const size_t pairs = static_cast<size_t>(WNITER) * ((TN + kVec - 1) / kVec) * kVec;
  s.pair_reg.resize(pairs);
  s.pair_col.resize(pairs);
  s.pair_in.resize(pairs);
  s.pair_flag.resize(pairs);
  // Raw pointers: a store through the uint8_t counts may alias anything, which would make the
  // compiler reload every vector's data pointer in the hot loop.
  std::uint8_t* const c_count = s.c_count.data();
  Reg* const reg_m = s.reg_m.data();
  Reg* const reg_n = s.reg_n.data();
  int* const row_of = s.row_of.data();
  int* const col_of = s.col_of.data();
  int* const pair_reg = s.pair_reg.data();
  int* const pair_col = s.pair_col.data();
  std::uint8_t* const pair_in = s.pair_in.data();
  std::uint8_t* const pair_flag = s.pair_flag.data();

  // The compute loop of one operand: register ws*T + i + j takes slot index(k, tile_pos(ws, i))
  // + j; float4 reads (i in steps of 4) where `vec`, else one element per i.
  auto load_regs = [&](int tid, const Operand& op, FragmentCache& cache, const SmemState& st,
                       int iters, int T, bool vec, Reg* regs, int nregs) {
    const int step = vec ? kVec : 1;
    for (int ws = 0; ws < iters; ++ws) {
      for (int i = 0; i < T; i += step) {
        const int pos = op.is_a ? ix.tile_row(g, tid, ws, i) : ix.tile_col(g, tid, ws, i);
        for (int j = 0; j < step; ++j) {
          const int r = ws * T + i + j;
          const Fragment& f = cache.get(g, ix, op, st, pos, j);
          if (vec && j == 0) {
            t.note_n(kMisaligned, f.misaligned, [&] {
              return fmt::format(
                  "thread {} reads a float4 from {}[{}] at k = {}, not 16-byte "
                  "aligned",
                  tid, op.smem, op.index(g, ix, f.misaligned_k, pos), f.misaligned_k);
            });
          }
          t.note_n(kSmemRead, f.bad, [&] {
            return fmt::format("thread {} reads {}[{}] at k = {} into {}[{}], outside {}[{}]", tid,
                               op.smem, f.bad_slot, f.bad_k, op.reg, r, op.smem, op.size);
          });
          t.note_n(kAsPadRead, f.pad, [&] {
            return fmt::format(
                "thread {} reads As[{}] at k = {} into regM[{}]: a pad slot (column {} of a row "
                "of {} + {} pad)",
                tid, f.pad_slot, f.pad_k, r, f.pad_slot % op.ld, op.tile_mn, op.ld - op.tile_mn);
          });
          if (r >= nregs) {
            t.note(kOperand, [&] {
              return fmt::format("thread {} loads {}[{}], beyond its {} fragment registers", tid,
                                 op.reg, r, nregs);
            });
            continue;
          }
          regs[r] = {f.source, f.zero_k, f.tail_k, f.tail_slot, f.clamped_k, f.clamped_mn};
        }
      }
    }
  };

  // A register's verdict against the C row (column) the epilogue pairs it with.
  // Clamped data is fine in a register whose C elements all lie outside the matrix: the epilogue
  // skips those, so a register only meets the verdict against an element inside it.
  constexpr std::uint8_t kFlagSource = 1, kFlagZero = 2, kFlagTail = 4, kFlagClamped = 8;
  auto verdict = [](const Reg& r, int expected) {
    return static_cast<std::uint8_t>(
        (r.source != kUnknown && r.source != expected ? kFlagSource : 0) |
        (r.zero_k >= 0 ? kFlagZero : 0) | (r.tail_k >= 0 ? kFlagTail : 0) |
        (r.clamped_k >= 0 ? kFlagClamped : 0));
  };
  // With TN not a multiple of 4 the epilogue's float4 runs over into the next accumulators, and
  // accumulator and C column no longer pair up by index: every element takes the slow check.
  const bool spill = TN % kVec != 0;
  s.a_flag.resize(static_cast<size_t>(regs_m));
  s.b_flag.resize(static_cast<size_t>(regs_n));
  std::uint8_t* const a_flag = s.a_flag.data();
  std::uint8_t* const b_flag = s.b_flag.data();

  // acc[f], f = ia * regs_n + ib, accumulated regM[ia] * regN[ib]; written to C[row][ccol] it
  // must be the dot product of op(A)'s row `row` with op(B)'s column `ccol` over the valid k, plus
  // zeros. The slow path, taken only for a suspect element.
  auto check_acc = [&](int tid, int ia, int ib, int row, int ccol) {
    if (ib >= regs_n) {
      ia += ib / regs_n;
      ib %= regs_n;
    }
    if (ia >= regs_m) {
      t.note(kOperand, [&] {
        return fmt::format("thread {} writes acc[{}] (beyond its {} accumulators) to C[{}][{}]",
                           tid, ia * regs_n + ib, g.ACCUMULATORS, row, ccol);
      });
      return;
    }
    const Reg& fa = reg_m[ia];
    const Reg& fb = reg_n[ib];
    const bool a_bad = fa.source != kUnknown && fa.source != row;
    const bool b_bad = fb.source != kUnknown && fb.source != ccol;
    if (fa.clamped_k >= 0 || fb.clamped_k >= 0) {
      t.note(kOperand, [&] {
        const bool in_a = fa.clamped_k >= 0;
        const Reg& fc = in_a ? fa : fb;
        return fmt::format(
            "thread {} writes acc[{}] to C[{}][{}], inside the matrix, but multiplied {} {} {} at "
            "k = {}, read from a clamped position",
            tid, ia * regs_n + ib, row, ccol, in_a ? "A" : "B", in_a ? "row" : "column",
            fc.clamped_mn, fc.clamped_k);
      });
    } else if (a_bad || b_bad) {
      t.note(kOperand, [&] {
        return fmt::format(
            "thread {} writes acc[{}] to C[{}][{}] but it multiplied A row {} by B column {}", tid,
            ia * regs_n + ib, row, ccol, show_source(fa.source), show_source(fb.source));
      });
    } else if (fa.zero_k >= 0 || fb.zero_k >= 0) {
      t.note(kOperand, [&] {
        const bool in_a = fa.zero_k >= 0;
        return fmt::format(
            "thread {} writes acc[{}] to C[{}][{}] but multiplied a zero for the {} element at "
            "k = {}, which lies inside the matrix",
            tid, ia * regs_n + ib, row, ccol, in_a ? "A" : "B", in_a ? fa.zero_k : fb.zero_k);
      });
    }
    if (fa.tail_k >= 0 || fb.tail_k >= 0) {
      t.note(kKTail, [&] {
        const bool in_a = fa.tail_k >= 0;
        const Reg& ft = in_a ? fa : fb;
        return fmt::format(
            "thread {} accumulates C[{}][{}] with {}[{}] at k = {}, past the slice's last k {} "
            "inside the matrix, and it is not a zero but {}",
            tid, row, ccol, in_a ? "As" : "Bs", ft.tail_slot, ft.tail_k, k_valid - 1,
            (in_a ? s.as : s.bs).content[static_cast<size_t>(ft.tail_slot)] == kStale
                ? "stale data of an earlier slice"
                : "an element beyond K");
      });
    }
  };
  auto out_of_bounds = [&](int tid, int row, int ccol) {
    if (row < 0 || ccol < 0 || row >= row_ext || ccol >= col_ext) {
      t.note(kCMatrix, [&] {
        return fmt::format("thread {} writes C[{}][{}] of the tile, outside the matrix", tid, row,
                           ccol);
      });
    } else {
      t.note(kCOut, [&] {
        return fmt::format("thread {} writes C[{}][{}] outside the {}x{} tile", tid, row, ccol, BM,
                           BN);
      });
    }
  };

  for (int tid = 0; tid < nt; ++tid) {
    load_regs(tid, a, s.cache_a, s.as, WMITER, TM, tma || TM % kVec == 0, reg_m, regs_m);
    load_regs(tid, b, s.cache_b, s.bs, WNITER, TN, true, reg_n, regs_n);

    // The epilogue: rows tile_row(wm, m), columns tile_col(wn, n) + j for n in steps of 4; on
    // the fast path a float4 store, else each element only inside the matrix (row < M, col < N).
    // The columns are the same for every row: first the (register, column) pairs they make, the
    // guard's skips left out, then each row against them.
    for (int wm = 0; wm < WMITER; ++wm) {
      for (int m = 0; m < TM; ++m) row_of[wm * TM + m] = ix.tile_row(g, tid, wm, m);
    }
    long long misaligned = 0;
    int misaligned_col = 0, npairs = 0;
    for (int wn = 0; wn < WNITER; ++wn) {
      for (int n = 0; n < TN; n += kVec) {
        const int col = ix.tile_col(g, tid, wn, n);
        for (int j = 0; j < kVec && n + j < TN; ++j) col_of[wn * TN + n + j] = col + j;
        bool bad = false;
        for (int bx = 0; bx < kVec; ++bx) bad = bad || (bx * BN + col) % kVec != 0;
        if (fast_c && bad && misaligned++ == 0) misaligned_col = col;
        for (int j = 0; j < kVec; ++j) {
          const int ccol = col + j;
          if (!fast_c && ccol >= col_ext) continue;  // the guard: col < N
          pair_reg[npairs] = wn * TN + n + j;
          pair_col[npairs] = ccol;
          pair_in[npairs] = ccol >= 0 && ccol < BN && ccol < col_ext;
          ++npairs;
        }
      }
    }
    if (!spill) {
      for (int i = 0; i < regs_m; ++i) a_flag[i] = verdict(reg_m[i], row_of[i]);
      for (int i = 0; i < regs_n; ++i) b_flag[i] = verdict(reg_n[i], col_of[i]);
    }
    // Whether every pair lies inside the tile and the matrix with nothing to check: then a row
    // whose register needs no check only counts its writes.
    bool plain = true;
    for (int q = 0; q < npairs; ++q) {
      pair_flag[q] = spill || b_flag[pair_reg[q]] != 0;
      plain = plain && pair_in[q] && !pair_flag[q];
    }
    for (int ia = 0; ia < regs_m; ++ia) {
      const int row = row_of[ia];
      if (!fast_c && row >= row_ext) continue;  // the guard: row < M
      t.note_n(kMisaligned, misaligned, [&] {
        return fmt::format(
            "thread {} writes C as float4 at tile column {}, misaligned in some block column "
            "(BN = {})",
            tid, misaligned_col, BN);
      });
      if (row < 0 || row >= BM || row >= row_ext) {
        for (int q = 0; q < npairs; ++q) out_of_bounds(tid, row, pair_col[q]);
        continue;
      }
      std::uint8_t* const c_row = c_count + row * BN;
      const bool check_row = spill || a_flag[ia] != 0;
      if (plain && !check_row) {
        for (int q = 0; q < npairs; ++q) {
          std::uint8_t& n = c_row[pair_col[q]];
          n += n != 255;
        }
        continue;
      }
      for (int q = 0; q < npairs; ++q) {
        const int ccol = pair_col[q];
        if (!pair_in[q]) {
          out_of_bounds(tid, row, ccol);
          continue;
        }
        c_row[ccol] += c_row[ccol] != 255;
        if (check_row || pair_flag[q]) check_acc(tid, ia, pair_reg[q], row, ccol);
      }
    }
  }

  // Every C element of the tile inside the matrix is written exactly once.
  long long holes = 0, overlaps = 0;
  int hole_at = -1, overlap_at = -1;
  for (int row = 0; row < m_valid; ++row) {
    const std::uint8_t* const c_row = c_count + row * BN;
    if (all_once(c_row, n_valid)) continue;
    for (int col = 0; col < n_valid; ++col) {
      const int i = row * BN + col;
      const int n = c_count[i];
      if (n == 0 && holes++ == 0) hole_at = i;
      if (n > 1 && overlaps++ == 0) overlap_at = i;
    }
  }
  if (holes > 0) {
    t.add(kCHole, holes,
          fmt::format("C[{}][{}] is written by no thread", hole_at / BN, hole_at % BN));
  }
  if (overlaps > 0) {
    const int n = c_count[overlap_at];
    t.add(kCOverlap, overlaps,
          fmt::format("C[{}][{}] is written {}{} times", overlap_at / BN, overlap_at % BN, n,
                      n == 255 ? "+" : ""));
  }
  return t.report();
}

SimReport run_block(const WarpTileConfig& c, const SimCase& sc, const SimIndexing& ix) {
  return is_kernel_indexing(ix) ? run_block_as(c, sc, KernelIndexing{}) : run_block_as(c, sc, ix);
}

// How the ranges a difference array over k holds (+1 where one starts, -1 past its end) cover
// [0, K): the k in none and in more than one, the first of each, and how many hold that first
// overlap. The split-K ranges and the TMA kernel's copied slices are both checked this way.
struct KCoverage {
  long long holes = 0, overlaps = 0;
  int first_hole = -1, first_overlap = -1, overlap_n = 0;
};
KCoverage k_coverage(const std::vector<int>& diff, int K) {
  KCoverage c;
  int cover = 0;
  for (int k = 0; k < K; ++k) {
    cover += diff[static_cast<size_t>(k)];
    if (cover == 0 && c.holes++ == 0) c.first_hole = k;
    if (cover > 1 && c.overlaps++ == 0) c.first_overlap = k, c.overlap_n = cover;
  }
  return c;
}

// TMA = 1: split z's producer copies slices t = 0..ceil((kend - kbeg) / BK) - 1 of BK k each from
// k0 = kbeg + t * BK, kbeg = z * k_chunk, kend = min(K, kbeg + k_chunk), as the kernel counts
// them; a copy fills zeros only past K, never past the split's kend. Every k in [0, K) must come
// from exactly one slice of one split.
void check_tma_slices(const WarpTileConfig& c, int K, const sgt_kernel::LaunchDims& d, Tally& t) {
  const long long chunk = d.k_chunk, BK = c.BK;
  const long long splits = std::clamp<long long>(d.grid_z, 0, 1LL * K + 1);
  std::vector<int> diff(static_cast<size_t>(K) + 1, 0);
  std::string past_split;
  for (long long z = 0; z < splits; ++z) {
    const long long kbeg = z * chunk;
    const long long kend = std::min<long long>(K, kbeg + chunk);
    if (kbeg < 0 || kend <= kbeg) continue;
    const long long slices = (kend - kbeg + BK - 1) / BK;
    for (long long s = 0; s < slices; ++s) {
      const long long lo = kbeg + s * BK, hi = std::min<long long>(K, lo + BK);
      if (hi > kend && past_split.empty()) {
        past_split = fmt::format(
            "split {}'s slice {} copies k = {}..{}, past the split's end at {}: the copies fill "
            "zeros only past K = {} (k_chunk {} is not a multiple of BK = {})",
            z, s, lo, hi - 1, kend, K, chunk, BK);
      }
      ++diff[static_cast<size_t>(lo)];
      --diff[static_cast<size_t>(hi)];
    }
  }
  const KCoverage cov = k_coverage(diff, K);
  if (cov.holes > 0) {
    t.add(kTmaKHole, cov.holes,
          fmt::format("k = {} of K = {} is copied by no slice ({} splits of {})", cov.first_hole, K,
                      d.grid_z, chunk));
  }
  if (cov.overlaps > 0) {
    t.add(kTmaKOverlap, cov.overlaps,
          !past_split.empty()
              ? past_split
              : fmt::format("k = {} of K = {} is copied by {} slices ({} splits of {})",
                            cov.first_overlap, K, cov.overlap_n, d.grid_z, chunk));
  }
}

// The launch alone: block order and split-K ranges.
SimReport run_launch(const WarpTileConfig& c, int M, int N, int K, const SimIndexing& ix) {
  Tally t;
  auto degenerate_grid = [&]() -> std::optional<std::string> {
    if (auto why = field_out_of_range(c)) return why;
    if (M < 1 || N < 1 || K < 1) return fmt::format("problem {}x{}x{} is empty", M, N, K);
    const long long blocks = (1LL * M + c.BM - 1) / c.BM * ((1LL * N + c.BN - 1) / c.BN);
    if (blocks > kMaxGridBlocks) return fmt::format("{} blocks are too many to simulate", blocks);
    if (K > kMaxK) return fmt::format("K = {} is too large to simulate", K);
    return std::nullopt;
  };
  if (auto why = degenerate_grid()) {
    t.add(kDegenerate, 1, *why);
    return t.report();
  }
  const auto d = ix.launch_dims(M, N, K, c.BM, c.BN, c.BK, c.SPLIT_K);

  // Block order: the kernel's own grid, and block bid -> tile must be a bijection onto it.
  const int grid_m = (M + c.BM - 1) / c.BM;
  const int grid_n = (N + c.BN - 1) / c.BN;
  const long long tiles = 1LL * grid_m * grid_n;
  std::vector<std::uint8_t> seen(static_cast<size_t>(tiles), 0);
  const long long launched = std::clamp<long long>(d.grid_x, 0, 2 * tiles);
  if (d.grid_x > launched) {
    t.add(kRasterOut, d.grid_x - launched,
          fmt::format("the launch has {} blocks for a {}x{} grid", d.grid_x, grid_m, grid_n));
  }
  for (int bid = 0; bid < launched; ++bid) {
    const int r = ix.block_tile_row(bid, grid_m, grid_n, c.GROUP_M);
    const int col = ix.block_tile_col(bid, grid_m, grid_n, c.GROUP_M);
    if (r < 0 || r >= grid_m || col < 0 || col >= grid_n) {
      t.note(kRasterOut, [&] {
        return fmt::format("block {} takes tile ({}, {}), outside the {}x{} grid (GROUP_M = {})",
                           bid, r, col, grid_m, grid_n, c.GROUP_M);
      });
      continue;
    }
    auto& n = seen[static_cast<size_t>(r) * grid_n + col];
    if (n < 255) ++n;
  }
  long long holes = 0, overlaps = 0;
  long long hole_at = -1, overlap_at = -1;
  for (long long i = 0; i < tiles; ++i) {
    if (seen[static_cast<size_t>(i)] == 0 && holes++ == 0) hole_at = i;
    if (seen[static_cast<size_t>(i)] > 1 && overlaps++ == 0) overlap_at = i;
  }
  if (holes > 0) {
    t.add(kRasterHole, holes,
          fmt::format("tile ({}, {}) of the {}x{} grid is taken by no block (GROUP_M = {})",
                      hole_at / grid_n, hole_at % grid_n, grid_m, grid_n, c.GROUP_M));
  }
  if (overlaps > 0) {
    t.add(kRasterOverlap, overlaps,
          fmt::format("tile ({}, {}) of the {}x{} grid is taken by {} blocks (GROUP_M = {})",
                      overlap_at / grid_n, overlap_at % grid_n, grid_m, grid_n,
                      seen[static_cast<size_t>(overlap_at)], c.GROUP_M));
  }

  // Split-K: split z takes k in [z*k_chunk, min(K, (z+1)*k_chunk)); the ranges must partition
  // [0, K), none empty, each start on a whole slice (so that only the last slice of K is partial
  // and the float4 k-columns stay aligned), and the workspace must hold every partial product.
  const long long chunk = d.k_chunk;
  const long long splits = std::clamp<long long>(d.grid_z, 0, 1LL * K + 1);
  if (d.grid_z > 1 && (chunk <= 0 || chunk % c.BK != 0)) {
    t.add(kSplitMisaligned, 1,
          fmt::format("{} splits of {} k for K = {}: a split would start inside a BK = {} slice",
                      d.grid_z, chunk, K, c.BK));
  }
  if (d.grid_z > 1 && d.workspace_floats < 1LL * d.grid_z * M * N) {
    t.add(kSplitWorkspace, 1,
          fmt::format("a workspace of {} floats cannot hold {} partial products of {}x{}",
                      d.workspace_floats, d.grid_z, M, N));
  }
  std::vector<int> diff(static_cast<size_t>(K) + 1, 0);
  for (long long z = 0; z < splits; ++z) {
    const long long begin = std::clamp<long long>(z * chunk, 0, K);
    const long long end = std::clamp<long long>(z * chunk + chunk, 0, K);
    if (begin >= end) {
      t.note(kSplitEmpty, [&] {
        return fmt::format("split {} of {} (k_chunk {}) has no k of K = {}", z, d.grid_z, chunk, K);
      });
      continue;
    }
    ++diff[static_cast<size_t>(begin)];
    --diff[static_cast<size_t>(end)];
  }
  const KCoverage cov = k_coverage(diff, K);
  if (cov.holes > 0) {
    t.add(kSplitHole, cov.holes,
          fmt::format("k = {} of K = {} is in no split ({} splits of {})", cov.first_hole, K,
                      d.grid_z, chunk));
  }
  if (cov.overlaps > 0) {
    t.add(kSplitOverlap, cov.overlaps,
          fmt::format("k = {} of K = {} is in {} splits ({} splits of {})", cov.first_overlap, K,
                      cov.overlap_n, d.grid_z, chunk));
  }
  if (c.TMA == 1) check_tma_slices(c, K, d, t);
  return t.report();
}

// Merges labelled reports: the first example of each kind, and how many other runs show it.
class Merger {
 public:
  void add(const std::string& label, const SimReport& r) {
    const auto& kinds = sim_defect_kinds();
    for (const auto& d : r.defects) {
      const auto k =
          static_cast<size_t>(std::find(kinds.begin(), kinds.end(), d.kind) - kinds.begin());
      if (k >= kinds.size()) continue;
      if (runs_[k]++ == 0) {
        detail_[k] = label.empty() ? d.detail : fmt::format("[{}] {}", label, d.detail);
      }
    }
  }
  SimReport report() const {
    SimReport r;
    for (size_t k = 0; k < detail_.size(); ++k) {
      if (runs_[k] == 0) continue;
      r.defects.push_back({std::string(sim_defect_kinds()[k]),
                           runs_[k] == 1 ? detail_[k]
                                         : fmt::format("{}; also in {} other simulated cases",
                                                       detail_[k], runs_[k] - 1)});
    }
    return r;
  }

 private:
  std::array<long long, kNumKinds> runs_{};
  std::array<std::string, kNumKinds> detail_{};
};

// The blocks run_grid replays: the launch's last block, in the last row and column of the grid
// and the last split, in every layout with the instance the tuner picks for the problem
// (kernel_vec_loads: the float4 one with operands that allow float4s, else the scalar one): its
// last whole k-slice (the main loop, where the loads matter), or its partial one (the edge loop)
// if it has none.
std::vector<SimCase> launch_cases(const WarpTileConfig& c, int M, int N, int K,
                                  const SimIndexing& ix) {
  std::vector<SimCase> out;
  if (c.BM < 1 || c.BN < 1 || c.BK < 1 || M < 1 || N < 1 || K < 1) return out;
  const auto d = ix.launch_dims(M, N, K, c.BM, c.BN, c.BK, c.SPLIT_K);
  const int m_rem = static_cast<int>(M - (1LL * M + c.BM - 1) / c.BM * c.BM + c.BM);
  const int n_rem = static_cast<int>(N - (1LL * N + c.BN - 1) / c.BN * c.BN + c.BN);
  // The last split's k range, as the kernel takes it: [z * k_chunk, min(K, (z + 1) * k_chunk)).
  const long long kbeg = (d.grid_z - 1LL) * d.k_chunk;
  const long long kend = std::min<long long>(K, kbeg + d.k_chunk);
  if (d.grid_z < 1 || d.k_chunk < 1 || kbeg < 0 || kend <= kbeg) return out;
  const long long whole = (kend - kbeg) / c.BK;
  const int part = static_cast<int>((kend - kbeg) % c.BK);
  const int k_rem = whole == 0 ? part : part == 0 ? c.BK : 0;
  // A TMA config runs its one instance in every layout, every slice alike: the last one, where the
  // copies fill zeros past K if it is partial.
  if (c.TMA == 1) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        // With PACK the TMA kernel runs as its TN instance on the panels, whatever the layout.
        if (c.PACK && !(ta && !tb)) continue;
        out.push_back({ta, tb, m_rem, n_rem, part > 0 ? part : c.BK});
      }
    }
    return out;
  }
  // A PACK config runs its TN float4 instance on panels, whatever the problem's layout.
  if (c.PACK) {
    out.push_back({true, false, m_rem, n_rem, k_rem, true, true, true});
    return out;
  }
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      const bool vec = kernel_vec_loads(ta, tb, M, N, K);
      out.push_back({ta, tb, m_rem, n_rem, whole == 0 ? part : part == 0 ? c.BK : 0, vec, vec});
    }
  }
  return out;
}

std::string grid_label(int M, int N, int K) {
  return fmt::format("grid {}x{}x{}", M, N, K);
}

// The launch, then its blocks (launch_cases) other than those in `done`, which it extends.
void run_grid(const WarpTileConfig& c, int M, int N, int K, const SimIndexing& ix,
              const std::string& label, Merger& merged, std::vector<SimCase>& done) {
  const SimReport launch = run_launch(c, M, N, K, ix);
  merged.add(label, launch);
  if (launch.has("degenerate_geometry")) return;
  for (const auto& sc : launch_cases(c, M, N, K, ix)) {
    if (std::find(done.begin(), done.end(), sc) != done.end()) continue;
    done.push_back(sc);
    const SimReport r = run_block(c, sc, ix);
    merged.add(label.empty() ? describe(sc) : fmt::format("{} {}", label, describe(sc)), r);
    if (r.has("degenerate_geometry")) return;
  }
}

SimReport run_grid(const WarpTileConfig& c, int M, int N, int K, const SimIndexing& ix) {
  Merger merged;
  std::vector<SimCase> done;
  run_grid(c, M, N, K, ix, "", merged, done);
  return merged.report();
}

}  // namespace

bool SimReport::has(std::string_view kind) const {
  for (const auto& d : defects) {
    if (d.kind == kind) return true;
  }
  return false;
}

std::string SimReport::summary() const {
  std::string out;
  for (const auto& d : defects) out += fmt::format("{}: {}\n", d.kind, d.detail);
  return out;
}

const std::vector<std::string_view>& sim_defect_kinds() {
  static const std::vector<std::string_view> kinds = [] {
    std::vector<std::string_view> v;
    for (const auto& k : kKinds) v.push_back(k.name);
    return v;
  }();
  return kinds;
}

std::string describe(const SimCase& sc) {
  std::string out = fmt::format("{}{}", sc.trans_a ? 'T' : 'N', sc.trans_b ? 'T' : 'N');
  if (sc.m_rem > 0 || sc.n_rem > 0 || sc.k_rem > 0) {
    auto show = [](int v) { return v > 0 ? std::to_string(v) : std::string("-"); };
    out += fmt::format(" edge {}x{} k{}", show(sc.m_rem), show(sc.n_rem), show(sc.k_rem));
  }
  if (!sc.vec_kernel) {
    out += " scalar-kernel";
  } else if (!sc.vec_loads) {
    out += " edge-only";
  }
  if (sc.panel) out += " panel";
  return out;
}

SimReport simulate_block(const WarpTileConfig& c, const SimCase& sc) {
  return run_block(c, sc, SimIndexing{});
}

SimReport simulate_block_with(const WarpTileConfig& c, const SimCase& sc, const SimIndexing& ix) {
  return run_block(c, sc, ix);
}

SimReport simulate_grid(const WarpTileConfig& c, int M, int N, int K) {
  return run_grid(c, M, N, K, SimIndexing{});
}

SimReport simulate_grid_with(const WarpTileConfig& c, int M, int N, int K, const SimIndexing& ix) {
  return run_grid(c, M, N, K, ix);
}

std::vector<SimCase> grid_cases(const WarpTileConfig& c, int M, int N, int K) {
  return launch_cases(c, M, N, K, SimIndexing{});
}

std::vector<SimCase> standard_cases(const WarpTileConfig& c) {
  auto rem = [](int tile, int v) { return std::clamp(v, 1, std::max(1, tile)); };
  // A multiple of 4 at most v, for float4 loads along the dimension (the tile, if below 4).
  auto rem4 = [](int tile, int v) {
    const int hi = std::max(1, tile);
    return std::clamp(v - v % kVec, std::min(kVec, hi), hi);
  };
  const int BM = c.BM, BN = c.BN, BK = c.BK;
  // The float4 instance with operands that refuse float4s.
  constexpr bool kEdgeOnly = false;
  // The scalar-load instance (VEC = false), for operands that refuse float4s.
  auto scalar = [](bool ta, bool tb, int m, int n, int k) {
    return SimCase{ta, tb, m, n, k, false, false};
  };
  // PACK: the TN float4 instance on panels, the only way it runs, at odd remainders (a float4
  // running into the padding, or starting past the matrix and clamped back) and partial slices.
  auto panel = [](int m, int n, int k) { return SimCase{true, false, m, n, k, true, true, true}; };
  // TMA: one instance, every slice through the same loop, the copies filling zeros outside the
  // matrix: the four layouts whole, then odd and even remainders in M, N and K in each.
  if (c.TMA == 1) {
    // With PACK the TMA kernel runs as its TN instance on the panels, whatever the layout.
    const auto runs = [&](bool ta, bool tb) { return !c.PACK || (ta && !tb); };
    std::vector<SimCase> out;
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true})
        if (runs(ta, tb)) out.push_back({ta, tb, 0, 0, 0});
    }
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        if (!runs(ta, tb)) continue;
        out.push_back({ta, tb, 1, 1, 1});
        out.push_back({ta, tb, rem(BM, BM - 3), rem(BN, BN / 2 + 1), 0});
        out.push_back({ta, tb, rem(BM, BM / 2 + 1), rem(BN, BN - 1), rem(BK, BK - 3)});
        out.push_back({ta, tb, rem(BM, BM - 1), 0, rem(BK, BK / 2 + 1)});
        out.push_back({ta, tb, 0, rem(BN, BN - 3), rem(BK, BK - 1)});
      }
    }
    return out;
  }
  if (c.PACK) {
    return {
        panel(0, 0, 0),
        panel(1, 1, 0),
        panel(rem(BM, BM - 3), rem(BN, BN - 3), 0),
        panel(rem(BM, BM / 2 + 1), rem(BN, BN - 1), 0),
        panel(rem(BM, BM - 1), rem(BN, BN / 2 + 2), BK),
        panel(rem(BM, BM - 3), rem(BN, BN / 2 + 1), rem(BK, BK - 1)),
        panel(1, 0, rem(BK, BK - 3)),
        panel(0, rem(BN, BN - 1), 1),
    };
  }
  return {
      {false, false, 0, 0, 0},
      {false, true, 0, 0, 0},
      {true, false, 0, 0, 0},
      {true, true, 0, 0, 0},
      // Edge blocks of operands that do not allow float4s, on the float4 instance: every slice
      // through the edge loop.
      {false, false, 1, 1, 0, kEdgeOnly},
      {false, true, rem(BM, BM - 3), rem(BN, BN - 3), 0, kEdgeOnly},
      {true, false, rem(BM, BM / 2 + 1), rem(BN, BN - 1), 0, kEdgeOnly},
      {true, true, rem(BM, BM - 1), rem(BN, BN / 2 + 1), 0, kEdgeOnly},
      // ... with float4 loads: multiples of 4 where they run along M (A^T) or N (B).
      {false, false, rem(BM, BM - 1), rem4(BN, BN - 4), 0},
      {false, true, rem(BM, BM / 2 + 1), 1, 0},
      {true, false, rem4(BM, BM - 4), rem4(BN, 4), 0},
      {true, true, rem4(BM, BM / 2), rem(BN, BN - 3), 0},
      // The edge loop: a partial k-slice, through clamped (float4) and unclamped pointers.
      {false, false, 0, rem(BN, BN / 2 + 1), rem(BK, BK - 1), kEdgeOnly},
      {false, true, rem(BM, BM - 1), 0, rem(BK, BK - 3), kEdgeOnly},
      {true, false, rem4(BM, BM / 2), rem4(BN, BN - 4), 1},
      {true, true, 1, 1, rem(BK, BK / 2 + 1), kEdgeOnly},
      // ... the partial slice of a float4 problem's edge block, through clamped pointers, in the
      // other three layouts.
      {false, false, rem(BM, BM - 3), rem4(BN, BN / 2), rem(BK, BK - 3)},
      {false, true, rem(BM, BM / 2 + 1), rem(BN, BN - 1), rem(BK, BK / 2 + 1)},
      {true, true, rem4(BM, 4), rem(BN, BN - 3), rem(BK, BK - 1)},
      // The scalar instance: whole slices through the main loop with clamped single-float loads,
      // at remainders tile-3 and 1, where a pass's four elements straddle the end of the matrix
      // in M and N (the tile's last four with one inside, or its first four), both ways round and
      // ending the slice or not; then a partial slice through the same clamped pointers.
      scalar(false, false, rem(BM, BM - 3), 1, 0),
      scalar(false, false, 1, rem(BN, BN - 3), BK),
      scalar(false, false, 0, rem(BN, BN / 2 + 1), rem(BK, BK - 1)),
      scalar(false, true, 1, rem(BN, BN - 3), 0),
      scalar(false, true, rem(BM, BM - 3), 1, BK),
      scalar(false, true, rem(BM, BM / 2 + 1), 0, rem(BK, BK - 3)),
      scalar(true, false, rem(BM, BM - 3), 1, 0),
      scalar(true, false, 1, rem(BN, BN - 3), BK),
      scalar(true, false, rem(BM, BM - 1), rem(BN, BN / 2 + 1), 1),
      scalar(true, true, 1, rem(BN, BN - 3), 0),
      scalar(true, true, rem(BM, BM - 3), 1, BK),
      scalar(true, true, rem(BM, BM / 2 + 1), rem(BN, BN - 1), rem(BK, BK / 2 + 1)),
  };
}

std::vector<SimGrid> standard_grids(const WarpTileConfig& c) {
  const long long BM = std::max(1, c.BM), BN = std::max(1, c.BN), BK = std::max(1, c.BK);
  const long long G = std::max(1, c.GROUP_M), S = std::max(1, c.SPLIT_K);
  // Partial last tiles in M and N (the launch still counts them as whole blocks): odd, or a
  // multiple of 4 (for tiles that are) so that the kernel reads float4s along them.
  const long long m_odd = std::max(1LL, BM - 3), n_odd = std::max(1LL, BN / 2 + 1);
  const long long m_4 = std::max(std::min(4LL, BM), BM - 4);
  const long long n_4 = std::max(std::min(4LL, BN), BN / 2 - BN / 2 % 4);
  struct Spec {
    long long grid_m, grid_n, K, m_rem, n_rem;
  };
  const Spec specs[] = {
      // One block, one partial slice; all odd: the scalar instance.
      {1, 1, 1, m_odd, n_odd},
      // A last group of one row; splits of up to 3 slices, the last one partial; M, N, K
      // multiples of 4: the float4 instance in every layout.
      {G + 1, 3, BK * S * 2 + 4, m_4, n_4},
      // A partial last group; the last split a single k; all odd: the scalar instance.
      {2 * G + 3, 5, BK * (S - 1) + 1, m_odd, n_odd},
      // Fewer slices than SPLIT_K; M odd: the float4 instance only where A is read along K (NN,
      // NT).
      {7, 2 * G + 1, 3 * BK + 4, m_odd, n_4},
      // SPLIT_K splits of two slices, the last one a whole slice and one k; all odd, the last
      // block's remainders tile-1 and 1: the scalar instance's main loop in every layout, a float4
      // straddling the end of the matrix in M and N.
      {3, 2, BK * (2 * S - 1) + 1, std::max(1LL, BM - 1), 1},
  };
  std::vector<SimGrid> out;
  for (const auto& s : specs) {
    const long long M = (s.grid_m - 1) * BM + s.m_rem;
    const long long N = (s.grid_n - 1) * BN + s.n_rem;
    if (M > INT_MAX || N > INT_MAX || s.K > kMaxK || s.grid_m * s.grid_n > kMaxGridBlocks) {
      continue;
    }
    out.push_back({static_cast<int>(M), static_cast<int>(N), static_cast<int>(s.K)});
  }
  return out;
}

SimReport simulate_config(const WarpTileConfig& c) {
  Merger merged;
  const SimIndexing ix;
  std::vector<SimCase> done;
  for (const auto& sc : standard_cases(c)) {
    const auto r = run_block(c, sc, ix);
    merged.add(describe(sc), r);
    // A degenerate geometry is degenerate in every case: once is enough.
    if (r.has("degenerate_geometry")) return merged.report();
    done.push_back(sc);
  }
  for (const auto& gr : standard_grids(c)) {
    run_grid(c, gr.M, gr.N, gr.K, ix, grid_label(gr.M, gr.N, gr.K), merged, done);
  }
  return merged.report();
}

std::vector<SimReport> simulate_configs(const std::vector<WarpTileConfig>& configs,
                                        unsigned threads) {
  std::vector<SimReport> out(configs.size());
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(1, configs.size())));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < configs.size(); i = next++) out[i] = simulate_config(configs[i]);
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  return out;
}

std::string simulate_config_scope() {
  return "layouts NN NT TN TT with whole tiles, 27 boundary blocks over the layouts and both "
         "kernel instances (whole k-slices read unguarded, float4 or single-float loads clamped "
         "into the matrix; partial ones, and every slice of operands that refuse float4s on the "
         "float4 instance, through the guarded edge loop; remainders 1, tile-3, tile/2+1, tile-1 "
         "in M, N and K), and the block order, split-K ranges and last blocks (every layout, the "
         "instance the tuner picks) of 5 launch grids; a PACK config as it runs, its TN float4 "
         "instance on zero-padded panels; a STAGE_C config's edge blocks through the staged "
         "epilogue (each warp's slots stored once, in the buffer, read back to the accumulator's "
         "C element); a TMA config as it runs, its TMA-fed kernel in every layout, whole and at 20 "
         "boundary blocks: every stage's copies (encoded boxes, the hardware swizzle, zeros "
         "outside "
         "the matrix), the producer warpgroup's transpose, the shared-memory layout, barriers and "
         "warpgroups, then the consumers' reads and the epilogue, and the slices each split copies";
}

}  // namespace sgt
