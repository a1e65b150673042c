// The split-TF32 kernel (sgemm_tf32x3.cuh) in the index simulation. The kernel's index functions
// come from tf32x3_geometry.h (through Indexing, so that tests can break one); what the block must
// do is stated here independently: the element of the stored matrix each shared-memory slot of a
// stage must hold after the copies, the element each mma fragment register must hold (the PTX
// ISA's m16n8k8 layouts: A register r of lane (g, t) holds row g + 8 (r % 2), column t + 4 (r / 2)
// of the 16 x 8 tile; B register r holds row t + 4 r, column g of the 8 x 8 tile; accumulator r
// is row g + 8 (r / 2), column 2 t + r % 2 of the 16 x 8 result), and each C element of the block
// tile stored once. Two lines of the kernel are restated rather than called, as the kernel writes
// them: a copy's source size (the floats of its width inside the matrix, 0 for a row past it) and
// the ring (STAGES - 1 slices copied ahead, wait_group STAGES - 2, slice t in stage t % STAGES).
#include "families/tf32x3/simulation.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "family.hpp"
#include "index_sim_detail.hpp"

namespace sgt::tf32x3 {

namespace {

using sgt_kernel::kMmaK;
using sgt_kernel::kMmaM;
using sgt_kernel::kMmaN;
using namespace sim_detail;

constexpr int kMaxStages = 64;
constexpr long long kMaxSmemFloats = 1LL << 22;

// What a float of the block's dynamic shared memory holds: an element of the stored matrix
// (code(row, col)), a copy's zero fill, or nothing written.
constexpr std::int64_t kStaleSlot = -1;
constexpr std::int64_t kZeroSlot = -2;
std::int64_t code(long long r, long long c) {
  return (r << 32) | c;
}
std::string what(std::int64_t v) {
  if (v == kStaleSlot) return "nothing (no copy wrote it)";
  if (v == kZeroSlot) return "a zero fill";
  return fmt::format("stored element ({}, {})", v >> 32, v & 0xffffffffLL);
}

// A remainder v of a tile, within 1..tile.
int rem(int tile, int v) {
  return std::clamp(v, 1, std::max(1, tile));
}

// One operand of the block: the stored slice the kernel copies (its template ROWS x COLS, rows
// padded to the geometry's LD) and the stored matrix around it.
struct Side {
  const char* name = "A";
  const char* smem = "As";
  int rows = 0, cols = 0, ld = 0;
  long long offset = 0, floats = 0;  // the slice's region from a stage's base
  long long row_ext = 0, col_ext = 0;
  bool k_rows = false;  // stored rows run along k (A^T, B): the slice of stage t starts at row t BK
  int tile_mn = 0;      // BM or BN
  Kind out, pad_written, hole, overlap, misplaced, global_out, slice_out, pad_read;

  long long r0(int t, int BK) const { return k_rows ? 1LL * t * BK : 0; }
  long long c0(int t, int BK) const { return k_rows ? 0 : 1LL * t * BK; }
  // Where op(X)(mn, k) of the slice of stage t lies in the stored matrix.
  std::pair<long long, long long> stored(int mn, long long k) const {
    return k_rows ? std::pair<long long, long long>{k, mn} : std::pair<long long, long long>{mn, k};
  }
  bool inside(long long r, long long c) const {
    return r >= 0 && c >= 0 && r < row_ext && c < col_ext;
  }
  // Whether the stored element lies past the matrix in k (the zeros the k-loop relies on).
  bool past_k(long long r, long long c, long long k_end) const { return (k_rows ? r : c) >= k_end; }
};

Side make_side(bool is_a, const WarpTileConfig& c, const Tf32x3Geometry& g, bool trans,
               long long mn_ext, long long k_end) {
  Side s;
  if (is_a) {
    // tf32x3_copy_slice<BK, BM, A_LD> for TRANS_A, else <BM, BK, A_LD>: A stored M x K (K x M).
    s.rows = trans ? c.BK : c.BM;
    s.cols = trans ? c.BM : c.BK;
    s.ld = g.A_LD;
    s.offset = 0;
    s.floats = g.A_FLOATS;
    s.row_ext = trans ? k_end : mn_ext;
    s.col_ext = trans ? mn_ext : k_end;
    s.k_rows = trans;
    s.tile_mn = c.BM;
    s.out = kAsOut, s.pad_written = kAsPadWritten, s.hole = kAsHole, s.overlap = kAsOverlap;
    s.misplaced = kAsMisplaced, s.global_out = kAMatrix, s.slice_out = kAOut;
    s.pad_read = kAsPadRead;
  } else {
    // <BN, BK, B_LD> for TRANS_B, else <BK, BN, B_LD>: B stored K x N (N x K).
    s.name = "B", s.smem = "Bs";
    s.rows = trans ? c.BN : c.BK;
    s.cols = trans ? c.BK : c.BN;
    s.ld = g.B_LD;
    s.offset = g.A_FLOATS;
    s.floats = g.B_FLOATS;
    s.row_ext = trans ? mn_ext : k_end;
    s.col_ext = trans ? k_end : mn_ext;
    s.k_rows = !trans;
    s.tile_mn = c.BN;
    s.out = kBsOut, s.pad_written = kBsPadWritten, s.hole = kBsHole, s.overlap = kBsOverlap;
    s.misplaced = kBsMisplaced, s.global_out = kBMatrix, s.slice_out = kBOut;
    s.pad_read = kBsPadRead;
  }
  return s;
}

std::optional<std::string> degenerate(const WarpTileConfig& c, const BlockCase& bc) {
  if (auto why = field_out_of_range(c)) return why;
  if (c.NUM_THREADS > kMaxThreads)
    return fmt::format("NUM_THREADS = {} is absurdly large", c.NUM_THREADS);
  if (c.NUM_THREADS % 32 != 0)
    return fmt::format(
        "NUM_THREADS = {} is not whole warps, and mma.sync needs every lane of a "
        "warp (rule thread_count)",
        c.NUM_THREADS);
  if (1LL * c.BM * c.BN > kMaxTileElems)
    return fmt::format("tile {}x{} is absurdly large", c.BM, c.BN);
  if (c.STAGES > kMaxStages) return fmt::format("STAGES = {} is absurdly many", c.STAGES);
  const long long per_stage = (1LL * c.BM + c.BN + 2 * sgt_kernel::kPadMn) * (c.BK + 8);
  if (per_stage * c.STAGES > kMaxSmemFloats)
    return fmt::format("{} stages of {}x{}x{} slices are absurdly large", c.STAGES, c.BM, c.BN,
                       c.BK);
  if (bc.m_rem < 0 || bc.m_rem > c.BM || bc.n_rem < 0 || bc.n_rem > c.BN || bc.k_rem < 0 ||
      bc.k_rem > c.BK)
    return fmt::format("remainders {}x{} k{} outside the {}x{}x{} tile", bc.m_rem, bc.n_rem,
                       bc.k_rem, c.BM, c.BN, c.BK);
  return std::nullopt;
}

class Block {
 public:
  Block(const WarpTileConfig& c, const BlockCase& bc, const Indexing& ix, Tally& t)
      : c_(c), bc_(bc), ix_(ix), t_(t) {
    g_ = ix.make_geometry(c.BM, c.BN, c.BK, c.WM, c.WN, c.STAGES, bc.trans_a, bc.trans_b);
    m_ext_ = bc.m_rem > 0 ? bc.m_rem : kOpen;
    n_ext_ = bc.n_rem > 0 ? bc.n_rem : kOpen;
    k_end_ = bc.k_rem > 0 ? 1LL * (c.STAGES - 1) * c.BK + bc.k_rem : kOpen;
    a_ = make_side(true, c, g_, bc.trans_a, m_ext_, k_end_);
    b_ = make_side(false, c, g_, bc.trans_b, n_ext_, k_end_);
    smem_floats_ = 1LL * c.STAGES * g_.STAGE_FLOATS;
  }

  void run() {
    if (g_.STAGE_FLOATS <= 0 || smem_floats_ <= 0 || smem_floats_ > 4 * kMaxSmemFloats ||
        g_.A_FLOATS < 0 || g_.B_FLOATS < 0) {
      t_.add(kDegenerate, 1,
             fmt::format("the geometry's stage of {} floats (A {}, B {}) is no shared-memory "
                         "layout",
                         g_.STAGE_FLOATS, g_.A_FLOATS, g_.B_FLOATS));
      return;
    }
    content_.assign(static_cast<size_t>(smem_floats_), kStaleSlot);
    count_.assign(static_cast<size_t>(smem_floats_), 0);
    for (int st = 0; st < c_.STAGES; ++st) {
      copies(a_, st);
      copies(b_, st);
    }
    for (int st = 0; st < c_.STAGES; ++st) {
      coverage(a_, st);
      coverage(b_, st);
    }
    if (bc_.fragments) {
      // The first stage and the last (its slice the partial one), which every stage's offset
      // formula reaches alike.
      fragments(0);
      if (c_.STAGES > 1) fragments(c_.STAGES - 1);
    }
    if (g_.KSTEPS * kMmaK != c_.BK) {
      t_.add(kFmaSteps, 1LL * std::abs(c_.BK - g_.KSTEPS * kMmaK),
             fmt::format("the {} k-steps of 8 take k 0..{} of a BK = {} slice (rule tf32x3_bk)",
                         g_.KSTEPS, g_.KSTEPS * kMmaK - 1, c_.BK));
    }
    if (bc_.epilogue) epilogue();
  }

 private:
  // The cp.async copies of stage st's slice of one operand (tf32x3_copy_slice), every thread of
  // the launch: NUM_THREADS of the config, while the kernel's mapping takes its own NT.
  void copies(const Side& s, int st) {
    const bool vec = bc_.vec;
    const int NT = g_.NUM_THREADS;
    const int W = ix_.copy_width(vec);
    const int passes = ix_.copy_passes(s.rows, s.cols, vec, NT);
    const int step = ix_.copy_row_step(s.cols, vec, NT);
    const long long base = 1LL * st * g_.STAGE_FLOATS + s.offset;
    const long long r0 = s.r0(st, c_.BK), c0 = s.c0(st, c_.BK);
    for (int tid = 0; tid < c_.NUM_THREADS; ++tid) {
      const int row = ix_.copy_row(s.cols, vec, tid);
      const int col = ix_.copy_col(s.cols, vec, tid);
      for (int p = 0; p < passes; ++p) {
        const long long srow = row + 1LL * p * step;
        const long long R = r0 + srow, C = c0 + col;
        // The kernel's source size, as it writes it: the floats of its width inside the matrix
        // (min(W, cols - gc) where the copy starts inside), none for a row past it.
        const long long floats =
            R < s.row_ext ? (C < s.col_ext ? std::min<long long>(W, s.col_ext - C) : 0) : 0;
        for (long long j = 0; j < floats; ++j) {
          if (R < 0 || C + j < 0 || !s.inside(R, C + j)) {
            t_.note(s.global_out, [&] {
              return fmt::format("thread {} pass {} reads {}({}, {}), outside the matrix", tid, p,
                                 s.name, R, C + j);
            });
          } else if (srow < 0 || srow >= s.rows || col + j < 0 || col + j >= s.cols) {
            t_.note(s.slice_out, [&] {
              return fmt::format(
                  "thread {} pass {} reads {}({}, {}), outside the block's {}x{} "
                  "slice of stage {} (rule tf32x3_copy_mapping)",
                  tid, p, s.name, R, C + j, s.rows, s.cols, st);
            });
          }
        }
        const long long dst = base + srow * s.ld + col;
        if (vec && ((floats > 0 && C % 4 != 0) || dst % 4 != 0)) {
          t_.note(kMisaligned, [&] {
            return fmt::format(
                "thread {} pass {}: a 16-byte copy of {}({}, {}) into float {} of "
                "shared memory is not 16-byte aligned",
                tid, p, s.name, R, C, dst);
          });
        }
        for (int j = 0; j < W; ++j)
          write(s, st, tid, p, dst + j, j < floats ? code(R, C + j) : kZeroSlot);
      }
    }
  }

  void write(const Side& s, int st, int tid, int p, long long d, std::int64_t v) {
    if (d < 0 || d >= smem_floats_) {
      t_.note(kSmemOverflow, [&] {
        return fmt::format(
            "thread {} pass {} writes float {} of {}, outside the block's {} floats "
            "of dynamic shared memory",
            tid, p, d, s.smem, smem_floats_);
      });
      return;
    }
    const long long base = 1LL * st * g_.STAGE_FLOATS + s.offset;
    const long long o = d - base;
    if (o < 0 || o >= s.floats || o / s.ld >= s.rows) {
      t_.note(s.out, [&] {
        return fmt::format(
            "thread {} pass {} writes float {} of stage {}'s {}, outside its {}x{} "
            "slice (rule tf32x3_copy_mapping)",
            tid, p, o, st, s.smem, s.rows, s.ld);
      });
    } else if (o % s.ld >= s.cols) {
      t_.note(s.pad_written, [&] {
        return fmt::format(
            "thread {} pass {} writes padding column {} of row {} of stage {}'s {} "
            "(its rows hold {} floats)",
            tid, p, o % s.ld, o / s.ld, st, s.smem, s.cols);
      });
    }
    auto& n = count_[static_cast<size_t>(d)];
    if (n < 255) ++n;
    content_[static_cast<size_t>(d)] = v;
  }

  // Every element of stage st's slice written once, with the stored element it must hold.
  void coverage(const Side& s, int st) {
    const long long base = 1LL * st * g_.STAGE_FLOATS + s.offset;
    const long long r0 = s.r0(st, c_.BK), c0 = s.c0(st, c_.BK);
    long long holes = 0, overlaps = 0;
    std::string hole_at, overlap_at;
    for (int r = 0; r < s.rows; ++r) {
      for (int col = 0; col < s.cols; ++col) {
        const long long o = 1LL * r * s.ld + col;
        const long long d = base + o;
        if (o >= s.floats || d >= smem_floats_) {
          t_.note(s.out, [&] {
            return fmt::format("element ({}, {}) of stage {}'s {} lies past its {} floats", r, col,
                               st, s.smem, s.floats);
          });
          continue;
        }
        const int n = count_[static_cast<size_t>(d)];
        if (n == 0 && holes++ == 0)
          hole_at = fmt::format(
              "element ({}, {}) of stage {}'s {}x{} {} is written by no copy "
              "(rule tf32x3_copy_mapping)",
              r, col, st, s.rows, s.cols, s.smem);
        if (n > 1 && overlaps++ == 0)
          overlap_at = fmt::format("element ({}, {}) of stage {}'s {} is written by {} copies", r,
                                   col, st, s.smem, n);
        if (n == 0) continue;
        const long long R = r0 + r, C = c0 + col;
        const std::int64_t want = s.inside(R, C) ? code(R, C) : kZeroSlot;
        const std::int64_t got = content_[static_cast<size_t>(d)];
        if (got != want) {
          t_.note(want == kZeroSlot && s.past_k(R, C, k_end_) ? kKTail : s.misplaced, [&] {
            return fmt::format("element ({}, {}) of stage {}'s {} holds {}, not {}", r, col, st,
                               s.smem, what(got), what(want));
          });
        }
      }
    }
    if (holes > 0) t_.add(s.hole, holes, hole_at);
    if (overlaps > 0) t_.add(s.overlap, overlaps, overlap_at);
  }

  // Register r of a lane reads `slot` (from the block's shared memory) and must hold op(X)(mn, k)
  // of stage st's slice.
  void read(const Side& s, int st, long long slot, int mn, int k, int warp, int lane, int r) {
    const long long base = 1LL * st * g_.STAGE_FLOATS + s.offset;
    const long long o = slot - base;
    if (o < 0 || o >= s.floats || o / s.ld >= s.rows || slot >= smem_floats_) {
      t_.note(kSmemRead, [&] {
        return fmt::format(
            "warp {} lane {} register {} reads float {} of stage {}'s {}, outside "
            "the stored {}x{} slice",
            warp, lane, r, o, st, s.smem, s.rows, s.cols);
      });
      return;
    }
    if (o % s.ld >= s.cols) {
      t_.note(s.pad_read, [&] {
        return fmt::format(
            "warp {} lane {} register {} reads padding column {} of row {} of "
            "stage {}'s {}",
            warp, lane, r, o % s.ld, o / s.ld, st, s.smem);
      });
      return;
    }
    if (mn < 0 || mn >= s.tile_mn || k < 0 || k >= c_.BK) {
      t_.note(kOperand, [&] {
        return fmt::format(
            "warp {} lane {} register {}: its mma needs op({})({}, {}), outside the "
            "block's slice (rules tf32x3_warp_grid, tf32x3_warp_tile, thread_count)",
            warp, lane, r, s.name, mn, k);
      });
      return;
    }
    const auto [R, C] = s.stored(mn, 1LL * st * c_.BK + k);
    const std::int64_t want = s.inside(R, C) ? code(R, C) : kZeroSlot;
    const std::int64_t got = content_[static_cast<size_t>(slot)];
    if (got != want) {
      t_.note(want == kZeroSlot && s.past_k(R, C, k_end_) ? kKTail : kOperand, [&] {
        return fmt::format(
            "warp {} lane {} register {} of stage {} reads {} where its mma needs "
            "op({})({}, {}), i.e. {}",
            warp, lane, r, st, what(got), s.name, mn, k, what(want));
      });
    }
  }

  // The compute loop's fragment reads from stage st (the kernel's compute(buf)).
  void fragments(int st) {
    const bool ta = bc_.trans_a, tb = bc_.trans_b;
    const long long base = 1LL * st * g_.STAGE_FLOATS;
    for (int w = 0; w < c_.NUM_THREADS / 32; ++w) {
      const int wm0 = ix_.warp_m0(g_, w), wn0 = ix_.warp_n0(g_, w);
      for (int lane = 0; lane < 32; ++lane) {
        const int gl = ix_.lane_group(lane), tl = ix_.lane_thread(lane);
        const int gs = lane / 4, ts = lane % 4;  // the PTX ISA's (g, t) of the lane
        const long long a_base = base + ix_.a_slot(g_, ta, wm0 + gl, tl);
        const long long b_base = base + g_.A_FLOATS + ix_.b_slot(g_, tb, tl, wn0 + gl);
        for (int ks = 0; ks < g_.KSTEPS; ++ks) {
          for (int i = 0; i < g_.MI; ++i) {
            for (int r = 0; r < 4; ++r) {
              const long long slot =
                  a_base + ix_.a_slot(g_, ta, ix_.a_frag_m(i, r), ix_.a_frag_k(ks, r));
              read(a_, st, slot, wm0 + i * kMmaM + gs + 8 * (r % 2), ks * kMmaK + ts + 4 * (r / 2),
                   w, lane, r);
            }
          }
          for (int j = 0; j < g_.NI; ++j) {
            for (int r = 0; r < 2; ++r) {
              const long long slot =
                  b_base + ix_.b_slot(g_, tb, ix_.b_frag_k(ks, r), ix_.b_frag_n(j));
              read(b_, st, slot, wn0 + j * kMmaN + gs, ks * kMmaK + ts + 4 * r, w, lane, r);
            }
          }
        }
      }
    }
  }

  // The epilogue: accumulator 2h + e of tile (i, j) goes to row wm0 + g + acc_m(i, 2h), column
  // wn0 + 2t + acc_n(j, 0) + e (a pair of adjacent columns), guarded by the matrix's end.
  void epilogue() {
    const long long tile = 1LL * c_.BM * c_.BN;
    std::vector<std::uint8_t> cnt(static_cast<size_t>(tile), 0);
    for (int w = 0; w < c_.NUM_THREADS / 32; ++w) {
      const int wm0 = ix_.warp_m0(g_, w), wn0 = ix_.warp_n0(g_, w);
      for (int lane = 0; lane < 32; ++lane) {
        const int gl = ix_.lane_group(lane), tl = ix_.lane_thread(lane);
        const int gs = lane / 4, ts = lane % 4;
        for (int i = 0; i < g_.MI; ++i) {
          for (int h = 0; h < 2; ++h) {
            const long long row = 1LL * wm0 + gl + ix_.acc_m(i, 2 * h);
            for (int j = 0; j < g_.NI; ++j) {
              const long long col0 = 1LL * wn0 + 2 * tl + ix_.acc_n(j, 0);
              if (row < m_ext_ && col0 + 1 < n_ext_ && col0 % 2 != 0) {
                t_.note(kMisaligned, [&] {
                  return fmt::format(
                      "warp {} lane {}: the pair of tile ({}, {}) row {} starts at "
                      "odd column {}, so its float2 store is not 8-byte aligned",
                      w, lane, i, j, row, col0);
                });
              }
              for (int e = 0; e < 2; ++e) {
                const int r = 2 * h + e;
                const long long col = col0 + e;
                const long long want_row = 1LL * wm0 + i * kMmaM + gs + 8 * (r / 2);
                const long long want_col = 1LL * wn0 + j * kMmaN + 2 * ts + r % 2;
                if (row != want_row || col != want_col) {
                  t_.note(kOperand, [&] {
                    return fmt::format(
                        "warp {} lane {}: accumulator {} of tile ({}, {}) holds C "
                        "element ({}, {}) of the block but is stored at ({}, {})",
                        w, lane, r, i, j, want_row, want_col, row, col);
                  });
                }
                if (row >= m_ext_ || col >= n_ext_) continue;  // the kernel's guards
                if (row < 0 || col < 0) {
                  t_.note(kCMatrix, [&] {
                    return fmt::format("warp {} lane {} stores C({}, {}), outside the matrix", w,
                                       lane, row, col);
                  });
                  continue;
                }
                if (row >= c_.BM || col >= c_.BN) {
                  t_.note(kCOut, [&] {
                    return fmt::format(
                        "warp {} lane {} stores C({}, {}), outside the {}x{} block "
                        "tile (rules tf32x3_warp_grid, thread_count)",
                        w, lane, row, col, c_.BM, c_.BN);
                  });
                  continue;
                }
                auto& n = cnt[static_cast<size_t>(row * c_.BN + col)];
                if (n < 255) ++n;
              }
            }
          }
        }
      }
    }
    const long long rows = std::min<long long>(c_.BM, m_ext_);
    const long long cols = std::min<long long>(c_.BN, n_ext_);
    long long holes = 0, overlaps = 0;
    std::string hole_at, overlap_at;
    for (long long r = 0; r < rows; ++r) {
      for (long long col = 0; col < cols; ++col) {
        const int n = cnt[static_cast<size_t>(r * c_.BN + col)];
        if (n == 0 && holes++ == 0)
          hole_at = fmt::format(
              "C element ({}, {}) of the block is stored by no thread (rules "
              "tf32x3_warp_grid, tf32x3_warp_tile, thread_count)",
              r, col);
        if (n > 1 && overlaps++ == 0)
          overlap_at = fmt::format("C element ({}, {}) of the block is stored {} times", r, col, n);
      }
    }
    if (holes > 0) t_.add(kCHole, holes, hole_at);
    if (overlaps > 0) t_.add(kCOverlap, overlaps, overlap_at);
  }

  const WarpTileConfig& c_;
  const BlockCase& bc_;
  const Indexing& ix_;
  Tally& t_;
  Tf32x3Geometry g_{};
  long long m_ext_ = 0, n_ext_ = 0, k_end_ = 0;
  Side a_, b_;
  long long smem_floats_ = 0;
  std::vector<std::int64_t> content_;
  std::vector<std::uint8_t> count_;
};

std::string grid_label(int M, int N, int K) {
  return fmt::format("grid {}x{}x{}", M, N, K);
}

// The block replays of a config depend on its tile fields alone, so that the configs of a space
// that differ in GROUP_M or SPLIT_K (the launch) replay their blocks once.
using BlockKey = std::tuple<int, int, int, int, int, int, int>;
struct BlockCache {
  std::mutex mutex;
  std::map<BlockKey, std::vector<std::pair<std::string, SimReport>>> reports;
};
BlockCache& block_cache() {
  static BlockCache cache;
  return cache;
}
constexpr size_t kMaxCachedBlocks = 1 << 16;

// The blocks' reports that show a defect, labelled by case; stops after a degenerate one.
std::vector<std::pair<std::string, SimReport>> run_blocks(const WarpTileConfig& c,
                                                          const Indexing& ix) {
  std::vector<std::pair<std::string, SimReport>> out;
  for (const auto& bc : block_cases(c)) {
    auto r = simulate_block(c, bc, ix);
    if (r.ok()) continue;
    const bool stop = r.has("degenerate_geometry");
    out.emplace_back(describe(bc), std::move(r));
    if (stop) break;
  }
  return out;
}

}  // namespace

bool Indexing::is_kernels() const {
  const Indexing k;
  return make_geometry == k.make_geometry && a_slot == k.a_slot && b_slot == k.b_slot &&
         warp_m0 == k.warp_m0 && warp_n0 == k.warp_n0 && lane_group == k.lane_group &&
         lane_thread == k.lane_thread && a_frag_m == k.a_frag_m && a_frag_k == k.a_frag_k &&
         b_frag_k == k.b_frag_k && b_frag_n == k.b_frag_n && acc_m == k.acc_m && acc_n == k.acc_n &&
         copy_width == k.copy_width && copy_passes == k.copy_passes &&
         copy_row_step == k.copy_row_step && copy_row == k.copy_row && copy_col == k.copy_col;
}

std::string describe(const BlockCase& bc) {
  std::string out = fmt::format("{}{}", bc.trans_a ? 'T' : 'N', bc.trans_b ? 'T' : 'N');
  if (bc.m_rem > 0 || bc.n_rem > 0 || bc.k_rem > 0) {
    auto show = [](int v) { return v > 0 ? std::to_string(v) : std::string("-"); };
    out += fmt::format(" edge {}x{} k{}", show(bc.m_rem), show(bc.n_rem), show(bc.k_rem));
  }
  out += bc.vec ? " 16-byte copies" : " 4-byte copies";
  return out;
}

SimReport simulate_block(const WarpTileConfig& c, const BlockCase& bc, const Indexing& ix) {
  Tally t;
  if (auto why = degenerate(c, bc)) {
    t.add(kDegenerate, 1, *why);
    return t.report();
  }
  Block(c, bc, ix, t).run();
  return t.report();
}

std::vector<BlockCase> block_cases(const WarpTileConfig& c) {
  const int BM = c.BM, BN = c.BN, BK = c.BK;
  std::vector<BlockCase> out;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      for (const bool vec : {true, false}) {
        const int rems[][3] = {{0, 0, 0},
                               {1, 1, 1},
                               {rem(BM, BM - 3), rem(BN, BN / 2 + 1), 0},
                               {rem(BM, BM / 2 + 1), rem(BN, BN - 1), rem(BK, BK - 3)},
                               {rem(BM, BM - 1), 0, rem(BK, BK / 2 + 1)},
                               {0, rem(BN, BN - 3), rem(BK, BK - 1)}};
        for (const auto& r : rems) {
          out.push_back({ta, tb, vec, r[0], r[1], r[2], vec, vec && !ta && !tb});
        }
      }
    }
  }
  return out;
}

SimReport simulate_pipeline(const WarpTileConfig& c) {
  Tally t;
  const int S = c.STAGES;
  if (S < 1 || S > kMaxStages) {
    t.add(kDegenerate, 1, fmt::format("STAGES = {} is no ring", S));
    return t.report();
  }
  const int pending = S - 2;
  if (pending < 0) {
    t.add(kPipelineNotLanded, 1,
          fmt::format("STAGES = {}: wait_group STAGES - 2 = {} waits for no copy (rule "
                      "tf32x3_stages)",
                      S, pending));
  }
  // The kernel's ring, as it writes it (sgemm_tf32x3.cuh): S - 1 slices ahead, wait_group S - 2.
  const sim_detail::RingSchedule ring{S, S - 1, pending, [](int t, int s) { return t % s; },
                                      "tf32x3_stages"};
  for (int ntiles = 1; ntiles <= 2 * S + 1; ++ntiles) replay_ring(t, ring, ntiles);
  return t.report();
}

SimReport simulate(const WarpTileConfig& c, const Indexing& ix) {
  Merger merged;
  std::vector<std::pair<std::string, SimReport>> blocks;
  if (ix.is_kernels()) {
    const BlockKey key{c.BM, c.BN, c.BK, c.WM, c.WN, c.STAGES, c.NUM_THREADS};
    auto& cache = block_cache();
    bool found = false;
    {
      std::lock_guard<std::mutex> lock(cache.mutex);
      if (const auto it = cache.reports.find(key); it != cache.reports.end()) {
        blocks = it->second;
        found = true;
      }
    }
    if (!found) {
      blocks = run_blocks(c, ix);
      std::lock_guard<std::mutex> lock(cache.mutex);
      if (cache.reports.size() >= kMaxCachedBlocks) cache.reports.clear();
      cache.reports.emplace(key, blocks);
    }
  } else {
    blocks = run_blocks(c, ix);
  }
  for (const auto& [label, r] : blocks) {
    merged.add(label, r);
    if (r.has("degenerate_geometry")) return merged.report();
  }
  merged.add("pipeline", simulate_pipeline(c));
  for (const auto& gr : standard_grids(c)) {
    merged.add(grid_label(gr.M, gr.N, gr.K), simulate_launch(c, gr.M, gr.N, gr.K));
  }
  return merged.report();
}

std::string simulation_scope() {
  return "the split-TF32 kernel in layouts NN NT TN TT with 16-byte and 4-byte copies, whole and "
         "at 5 boundary blocks each (remainders 1, tile-3, tile/2+1, tile-1 in M, N and K): every "
         "stage's cp.async copies (each slice element once, zeros outside the matrix, no padding "
         "written, within the stage and the dynamic shared memory, 16-byte copies aligned), every "
         "mma fragment read against the m16n8k8 layouts, the k-steps, and the epilogue (each C "
         "element once, pairs aligned); the ring of stages for 1 to 2 STAGES + 1 slices; the "
         "block order and split-K ranges of 5 launch grids";
}

}  // namespace sgt::tf32x3
