// What the index simulation's files share (index_sim.cpp, index_sim_loads.cpp,
// index_sim_warptile.cpp, index_sim_tma.cpp, index_sim_grid.cpp): the defect kinds and their
// tally, the simulation's caps, the kernel's own index functions for the fast path, the model of
// an operand and of its shared-memory buffer, and the entry points each file offers the others.
// Internal to the simulation: callers use index_sim.hpp.
//
// A block's replay is a template over its indexing (KernelIndexing, or a SimIndexing that swaps
// functions for tests). Templates called across files are instantiated for both in the file that
// defines them (the `extern template` declarations below), so each file keeps its inner loops.
#pragma once

#include <array>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "family.hpp"
#include "index_sim.hpp"

namespace sgt::sim_detail {

using sgt_kernel::Geometry;
using sgt_kernel::kVec;
using sgt_kernel::kWarpSize;

// Whether the config's family feeds the k-slices by tensor copies (its launch takes tensor maps:
// the TMA-fed kernel, sgemm_ws_tma.cuh), whose producer the simulation replays instead of the
// threads' loads.
inline bool tma_fed(const WarpTileConfig& c) {
  return family_of(c).launch_abi() == LaunchAbi::tensor_maps;
}

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
  kBsPadWritten,
  kBsPadRead,
  kSmemOverflow,
  kPipelineNotLanded,
  kPipelineOverwrite,
  kSplitRead,
  kSplitTileSlot,
  kSplitPanelOut,
  kSplitPanelHole,
  kSplitPanelOverlap,
  kSplitPanelMisplaced,
  kSplitPanelWorkspace,
  kWgAccMisplaced,
  kNotSimulated,
  kNumKinds
};

struct KindInfo {
  std::string_view name;
  std::string_view unit;  // what the count in the detail counts
};

inline constexpr std::array<KindInfo, kNumKinds> kKinds = {{
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
    {"bs_pad_written", "element stores"},
    {"bs_pad_read", "reads"},
    {"smem_overflow", "float writes"},
    {"pipeline_not_landed", "slices"},
    {"pipeline_overwrite", "slices"},
    {"split_read_out_of_matrix", "element reads"},
    {"split_tile_slot", "slots"},
    {"split_panel_out_of_bounds", "element writes"},
    {"split_panel_hole", "elements"},
    {"split_panel_overlap", "elements"},
    {"split_panel_misplaced", "elements"},
    {"split_workspace", "panels"},
    {"wg_acc_misplaced", "accumulator elements"},
    {"not_simulated", "configs"},
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
// ws_tma: the ring is replayed stage by stage in a model of the whole dynamic shared memory.
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
  static int kc_index(int bk, int stride, int mn, int k) {
    return sgt_kernel::kc_index(bk, stride, mn, k);
  }
  static int kc_group_index(int bk, int stride, int row0, int i, int k) {
    return sgt_kernel::kc_group_index(bk, stride, row0, i, k);
  }
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

// Where the matrix ends in a dimension, in the block's local coordinates: kOpen where it goes on
// past the tile.
constexpr int kOpen = INT_MAX;
inline int extent(int rem) {
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
  // A k-contiguous buffer (family warptile_ring, an operand stored with k contiguous): rows of BK
  // k, one an m (n), laid out by kc_index; else k-major rows, one a k.
  bool kc = false;
  int kc_stride = 0;  // the rows the compute loop reads at once are this far apart: TM, or TN
  int ld = 0;         // row length of As / Bs: BM + PAD_A, or BN + PAD_B (k-contiguous: BK)
  int row_len = 0;    // the slots of a row that hold elements, the rest pad: tile_mn (or BK)
  int size = 0;       // floats of one As / Bs buffer
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
    if (kc) return ix.kc_index(BK, kc_stride, pos, k);
    return is_a ? ix.as_index(g, k, pos) : ix.bs_index(g, k, pos);
  }
  bool is_pad(int slot) const { return !kc && ld != row_len && slot % ld >= row_len; }
  // Whether `slot` is where the element at (k, mn) belongs, stated directly: k-major, slot k * ld
  // + mn; k-contiguous, at k's place in a 16-byte chunk (where the rows and their pads lie is
  // the kernel's choice: the copies must put each element where the compute loop reads it, which
  // the fragments check, and no two in one slot, which the coverage check does).
  bool holds(int slot, int k, int mn) const {
    if (!kc) return slot == k * ld + mn;
    return slot >= 0 && slot % kVec == k % kVec;
  }
};

struct SmemState {
  std::vector<std::uint8_t> count;  // stores per slot (saturating at 255)
  std::vector<std::int32_t> content;
};

// Whether each of the n counts is exactly 1 (a loop the compiler vectorizes: no early exit).
inline bool all_once(const std::uint8_t* count, int n) {
  unsigned bad = 0;
  for (int i = 0; i < n; ++i) bad |= count[i] ^ 1u;
  return bad == 0;
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

// --- index_sim_loads.cpp: an operand's slice, its loads into As / Bs, and its fragments ---------

// kc: the operand goes into a k-contiguous buffer (family warptile_ring's ring on an operand stored
// with k contiguous).
template <typename Ix>
Operand make_operand(const Geometry& g, const Ix& ix, const SimCase& sc, bool is_a,
                     bool kc = false);
extern template Operand make_operand(const Geometry&, const KernelIndexing&, const SimCase&, bool,
                                     bool);
extern template Operand make_operand(const Geometry&, const SimIndexing&, const SimCase&, bool,
                                     bool);

// The threads' loads of one k-slice of `op` into `s`, with what each slot received.
template <typename Ix>
void load(const Geometry& g, const Ix& ix, const Operand& op, int nt, SmemState& s, Tally& t);
extern template void load(const Geometry&, const KernelIndexing&, const Operand&, int, SmemState&,
                          Tally&);
extern template void load(const Geometry&, const SimIndexing&, const Operand&, int, SmemState&,
                          Tally&);

// Every non-pad slot of As / Bs must be stored exactly once per k-slice (zeros included).
void check_smem_coverage(const Operand& op, const SmemState& s, Tally& t);

// What the register the compute loop fills from tile position `pos` (+ j) holds.
template <typename Ix>
Fragment fragment(const Geometry& g, const Ix& ix, const Operand& op, const SmemState& s, int pos,
                  int j);
extern template Fragment fragment(const Geometry&, const KernelIndexing&, const Operand&,
                                  const SmemState&, int, int);
extern template Fragment fragment(const Geometry&, const SimIndexing&, const Operand&,
                                  const SmemState&, int, int);

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

// --- index_sim_tma.cpp: the ws_tma producer and the slices each split copies ------------------

// The producer warpgroup's copies and transposes for every stage of the ring, into a model of the
// block's dynamic shared memory; leaves the first stage's As and Bs in `as`, `bs` for the
// consumers.
template <typename Ix>
void run_tma_producer(const Geometry& g, const Ix& ix, const WarpTileConfig& c, const SimCase& sc,
                      const Operand& a, const Operand& b, SmemState& as, SmemState& bs, Tally& t);
extern template void run_tma_producer(const Geometry&, const KernelIndexing&, const WarpTileConfig&,
                                      const SimCase&, const Operand&, const Operand&, SmemState&,
                                      SmemState&, Tally&);
extern template void run_tma_producer(const Geometry&, const SimIndexing&, const WarpTileConfig&,
                                      const SimCase&, const Operand&, const Operand&, SmemState&,
                                      SmemState&, Tally&);

// The k slices each split's copies bring must take every k in [0, K) exactly once.
void check_tma_slices(const WarpTileConfig& c, int K, const sgt_kernel::LaunchDims& d, Tally& t);

// --- index_sim_warptile.cpp: one block ----------------------------------------------------------

// A config field below its minimum or absurdly large, or nullopt.
std::optional<std::string> field_out_of_range(const WarpTileConfig& c);

// One block for one k-slice plus the epilogue (simulate_block_with).
SimReport run_block(const WarpTileConfig& c, const SimCase& sc, const SimIndexing& ix);

// --- index_sim.cpp: a ring of cp.async buffers --------------------------------------------------

// The schedule of a ring of `stages` shared-memory buffers that cp.async fills, one commit group a
// k-slice: slices 0 .. lead - 1 issued before the loop, one group each (empty past the last
// slice); then for each slice t, wait_group `wait` and a barrier, slice t + lead issued into
// buffer(t + lead) and a group committed, slice t computed from buffer(t). The warp-tiling
// template's STAGES 3-4 (ring_lead, ring_wait, ring_buffer in warptile_geometry.h) and the
// split-TF32 kernel's ring (sgemm_tf32x3.cuh) both run it.
struct RingSchedule {
  int stages = 0;
  int lead = 0;
  int wait = 0;
  int (*buffer)(int t, int stages) = nullptr;
  std::string_view rule;  // the rule that guards the ring, named in each defect
};
// Replays the schedule over `ntiles` slices: every copy into a buffer whose slice was computed
// (else pipeline_overwrite), every compute from the buffer that holds its slice, after its group
// landed (else pipeline_not_landed), every buffer inside the ring (else smem_overflow).
void replay_ring(Tally& t, const RingSchedule& r, int ntiles);

// --- index_sim_grid.cpp: the launch -------------------------------------------------------------

// How the ranges a difference array over k holds (+1 where one starts, -1 past its end) cover
// [0, K): the k in none and in more than one, the first of each, and how many hold that first
// overlap. The split-K ranges and the TMA kernel's copied slices are both checked this way.
struct KCoverage {
  long long holes = 0, overlaps = 0;
  int first_hole = -1, first_overlap = -1, overlap_n = 0;
};
KCoverage k_coverage(const std::vector<int>& diff, int K);

// Merges labelled reports: the first example of each kind, and how many other runs show it.
class Merger {
 public:
  void add(const std::string& label, const SimReport& r);
  SimReport report() const;

 private:
  std::array<long long, kNumKinds> runs_{};
  std::array<std::string, kNumKinds> detail_{};
};

// A call of two launches (a wave-aware tail): every tile of the grid_m x grid_n grid from exactly
// one of them, the first launch's blocks 0 .. first_blocks - 1 in the whole grid's block order
// and the tail's tail_blocks in the order of its own tail_m x tail_n grid, from block row row0 and
// block column col0 (raster_out_of_grid, raster_hole, raster_overlap; each example starts with
// `label`).
// row, col: the kernel's block_tile_row and block_tile_col.
void check_tail_cover(Tally& t, const std::string& label, long long grid_m, long long grid_n,
                      int group_m, long long first_blocks, long long row0, long long col0,
                      long long tail_m, long long tail_n, long long tail_blocks,
                      int (*row)(int, int, int, int), int (*col)(int, int, int, int));

// The launch alone: block order and split-K ranges (and, for ws_tma, the slices each split
// copies); simulate_launch.
SimReport run_launch(const WarpTileConfig& c, int M, int N, int K, const SimIndexing& ix);

// The blocks run_grid replays for an M x N x K launch (grid_cases).
std::vector<SimCase> launch_cases(const WarpTileConfig& c, int M, int N, int K,
                                  const SimIndexing& ix);

// The launch, then its blocks (launch_cases) other than those in `done`, which it extends.
void run_grid(const WarpTileConfig& c, int M, int N, int K, const SimIndexing& ix,
              const std::string& label, Merger& merged, std::vector<SimCase>& done);
SimReport run_grid(const WarpTileConfig& c, int M, int N, int K, const SimIndexing& ix);

}  // namespace sgt::sim_detail
