// The split-TF32 kernel on wgmma (sgemm_tf32x3_wgmma.cuh) and its BF16 split (FMA_ORDER 3,
// sgemm_bf16x6_wgmma.cuh) in the index simulation. The kernels' index functions come from
// tf32x3_wg_geometry.h (through Indexing, so that tests can break one); what they must do is stated
// here independently: op(X)(r, k) is X[r ldx + k] for an operand stored k-contiguous and
// X[k ldx + r] otherwise, a panel holds row r of op(X) (its part, for the BF16 split) at r Kp
// (zeros past K), a BF16 map row m of map "big" is part 0's row m and of map "small" in plane p
// part p + 1's row m (the planes R Kp values apart), and the wgmma m64nNk8 D fragment (PTX ISA;
// m64nNk16's is the same) puts accumulator i of thread t of a warpgroup at row 16 (t / 32) +
// (t % 32) / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (t % 4) + i % 2. The kernels' guards (a
// prepass thread skips r >= R or k >= Kp and reads only k < K, r < R; the epilogue skips rows >= M
// and columns >= N, and pairs columns where both are inside) are restated as they write them, and
// so are the BF16 prepass's part addresses (part 0 at `big`, part j > 0 at `small` + (j - 1) R Kp)
// and what a split must take: the k range [z k_chunk, min(K, (z + 1) k_chunk)) of launch_dims, the
// convention of every family's split-K, and the partial products' planes of M x N floats, split z's
// at z M N.
#include "families/tf32x3_wg/simulation.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "family.hpp"
#include "index_sim_detail.hpp"

namespace sgt::tf32x3_wg {

namespace {

using namespace sim_detail;
using sgt_kernel::kB6BK;
using sgt_kernel::kB6Parts;
using sgt_kernel::kB6StageBytes;
using sgt_kernel::kB6TileBytes;
using sgt_kernel::kSplitPasses;
using sgt_kernel::kSplitRowsPerPass;
using sgt_kernel::kSplitTile;
using sgt_kernel::kWgBK;
using sgt_kernel::kWgBM;
using sgt_kernel::kWgBN;
using sgt_kernel::kWgConsumers;
using sgt_kernel::kWgStageFloats;
using sgt_kernel::kWgTileFloats;

// The prepass cases' and launches' caps: a simulation stays within a few million steps.
constexpr long long kMaxPrepassElems = 1LL << 22;
constexpr long long kMaxEpilogueElems = 1LL << 24;
constexpr int kMaxStages = 64;
constexpr int kMaxSplitK = 1 << 20;  // the k values a split replay counts

// What a slot holds: a stored element's index + 1, a zero, or nothing written.
constexpr long long kUnwritten = -1;

std::string element(long long v) {
  if (v == kUnwritten) return "nothing";
  if (v == 0) return "zero";
  return fmt::format("stored element [{}]", v - 1);
}

// The two operand splits (simulation.hpp): what differs between them, for the functions that
// check both.
struct Format {
  bool bf16;
  int parts;               // panels an operand: TF32 big and small; BF16 parts 0, 1, 2
  int value_bytes;         // a panel value: a float; a BF16 value
  int bk;                  // k a slice: a box's inner extent, 128 bytes
  int tile_bytes;          // a box: one 128-row tile of a stage
  int stage_bytes;         // a stage: A's parts, then B's
  const char* value;       // what a panel value is called
  int (*smem_bytes)(int);  // the dynamic shared memory of a ring of `stages`

  int row_unit() const { return 16 / value_bytes; }  // values a 16-byte unit: Kp's multiple
  int boxes() const { return 2 * parts; }            // the copies of a stage
  long long kp(const Indexing& ix, long long K) const { return bf16 ? ix.bf16_kp(K) : ix.kp(K); }
};
constexpr Format kTf32Format{false,
                             2,
                             4,
                             kWgBK,
                             kWgTileFloats * 4,
                             kWgStageFloats * 4,
                             "float",
                             sgt_kernel::tf32x3_wg_smem_bytes};
constexpr Format kBf16Format{true,
                             kB6Parts,
                             2,
                             kB6BK,
                             kB6TileBytes,
                             kB6StageBytes,
                             "BF16 value",
                             sgt_kernel::bf16x6_smem_bytes};
const Format& format_of(bool bf16) {
  return bf16 ? kBf16Format : kTf32Format;
}

// The split entry's slice functions of a format.
struct SliceFns {
  int (*first)(int, int);
  int (*count)(int, int, int);
  int (*k)(int, int);
};
SliceFns slice_fns(const Indexing& ix, bool bf16) {
  if (bf16) return {ix.bf16_split_first_slice, ix.bf16_split_slices, ix.bf16_slice_k};
  return {ix.split_first_slice, ix.split_slices, ix.slice_k};
}

}  // namespace

bool Indexing::is_kernels() const {
  const Indexing k;
  return load_k == k.load_k && load_r == k.load_r && store_r == k.store_r && store_k == k.store_k &&
         src == k.src && dst == k.dst && kp == k.kp && grid_x == k.grid_x && grid_y == k.grid_y &&
         workspace_floats == k.workspace_floats && panel_offset == k.panel_offset &&
         acc_row == k.acc_row && acc_col == k.acc_col && block_tile_row == k.block_tile_row &&
         block_tile_col == k.block_tile_col && split_first_slice == k.split_first_slice &&
         split_slices == k.split_slices && slice_k == k.slice_k &&
         partial_offset == k.partial_offset && bf16_kp == k.bf16_kp &&
         bf16_workspace_values == k.bf16_workspace_values &&
         bf16_panel_offset == k.bf16_panel_offset && bf16_map_plane == k.bf16_map_plane &&
         bf16_split_first_slice == k.bf16_split_first_slice &&
         bf16_split_slices == k.bf16_split_slices && bf16_slice_k == k.bf16_slice_k &&
         wave_tail == k.wave_tail;
}

std::string describe(const PrepassCase& pc) {
  return fmt::format("{}prepass R {} K {} ldx {} {}", pc.bf16 ? "BF16 " : "", pc.R, pc.K, pc.ldx,
                     pc.k_contig ? "k-contiguous" : "r-contiguous");
}

namespace {

// The prepass's panels a replay models: TF32 writes the big and the small panel at the same place
// with the same element, split (one model stands for both); the BF16 split writes its three parts
// at three places.
int prepass_panels(bool bf16) {
  return bf16 ? kB6Parts : 1;
}

// One prepass replayed: the panels as written, each value recorded as (element, part), and how
// many writes each value took, and the tile of the block at hand. Panel j of the model is the
// kernel's part j: for the BF16 split part 0 at `big`, parts 1 and 2 at `small` and small + R Kp,
// so that the model's panels, one after the other, are `big` then `small`'s two.
struct PrepassRun {
  const PrepassCase& pc;
  const Indexing& ix;
  Tally& t;
  long long kp, stored_rows, stored_cols;
  int panels;
  long long panel_values;  // one panel's: R rows of Kp
  std::vector<long long> panel;
  std::vector<std::uint8_t> writes;
  std::vector<long long> tile;
  std::vector<std::uint8_t> tile_writes;

  PrepassRun(const PrepassCase& pc_, const Indexing& ix_, Tally& t_, long long kp_)
      : pc(pc_),
        ix(ix_),
        t(t_),
        kp(kp_),
        stored_rows(pc_.k_contig ? pc_.R : pc_.K),
        stored_cols(pc_.k_contig ? pc_.K : pc_.R),
        panels(prepass_panels(pc_.bf16)),
        panel_values(pc_.R * kp_),
        panel(static_cast<size_t>(panels * panel_values), kUnwritten),
        writes(panel.size(), 0),
        tile(static_cast<size_t>(kSplitTile * kSplitTile)),
        tile_writes(tile.size()) {}

  // What op(X)(r, k) is, stated independently: its stored index + 1.
  long long expected(long long r, long long k) const {
    if (k >= pc.K) return 0;
    return (pc.k_contig ? r * pc.ldx + k : k * pc.ldx + r) + 1;
  }
  // A panel value: element v (an expected() value, or kUnwritten) as part j.
  static long long tagged(long long v, int j) { return v == kUnwritten ? kUnwritten : v * 4 + j; }
  std::string value(long long tag) const {
    if (tag == kUnwritten || !pc.bf16) return element(tag == kUnwritten ? tag : tag / 4);
    return fmt::format("part {} of {}", tag % 4, element(tag / 4));
  }
  std::string panel_name(int j) const {
    return pc.bf16 ? fmt::format("part {} panel", j) : std::string("panel");
  }

  // A read of the stored operand at `idx` by a thread that wants op(X)(r, k).
  long long read(long long idx, int r, int k, int tx, int ty, long long bx, long long by) {
    const int ldx = pc.ldx;
    const long long row = ldx > 0 ? idx / ldx : -1, col = ldx > 0 ? idx % ldx : -1;
    if (idx < 0 || row >= stored_rows || col >= stored_cols) {
      t.note(kSplitRead, [&] {
        return fmt::format(
            "{}: thread ({}, {}) of block ({}, {}) reads X[{}] for op(X)({}, {}), outside the "
            "stored {} x {} matrix",
            describe(pc), tx, ty, bx, by, idx, r, k, stored_rows, stored_cols);
      });
      return kUnwritten;
    }
    return idx + 1;
  }

  // An r-contiguous operand's load phase, every thread of block (bx, by) before the barrier.
  void load_tile(long long bx, long long by, int k0, int r0) {
    const int R = pc.R, K = pc.K, ldx = pc.ldx;
    for (int ty = 0; ty < kSplitRowsPerPass; ++ty) {
      for (int tx = 0; tx < kSplitTile; ++tx) {
        for (int i = 0; i < kSplitPasses; ++i) {
          const int k = ix.load_k(k0, ty, i), r = ix.load_r(r0, tx);
          const int sr = k - k0, sc = r - r0;
          if (sr < 0 || sr >= kSplitTile || sc < 0 || sc >= kSplitTile) {
            t.note(kSplitTileSlot, [&] {
              return fmt::format(
                  "{}: thread ({}, {}) of block ({}, {}) pass {} stores op(X)({}, {}) to "
                  "tile slot [{}][{}], outside the {} x {} tile",
                  describe(pc), tx, ty, bx, by, i, r, k, sr, sc, kSplitTile, kSplitTile);
            });
            continue;
          }
          const size_t slot = static_cast<size_t>(sr * kSplitTile + sc);
          tile[slot] = k < K && r < R ? read(ix.src(r, k, ldx, false), r, k, tx, ty, bx, by) : 0;
          ++tile_writes[slot];
        }
      }
    }
    for (size_t s = 0; s < tile.size(); ++s) {
      if (tile_writes[s] > 1)
        t.note(kSplitTileSlot, [&] {
          return fmt::format("{}: block ({}, {}) writes tile slot [{}][{}] {} times", describe(pc),
                             bx, by, s / kSplitTile, s % kSplitTile,
                             static_cast<int>(tile_writes[s]));
        });
    }
  }

  // The store phase of block (bx, by): the panel's elements, through the tile when r-contiguous.
  void store_tile(long long bx, long long by, int k0, int r0) {
    const int R = pc.R, K = pc.K, ldx = pc.ldx;
    for (int ty = 0; ty < kSplitRowsPerPass; ++ty) {
      for (int tx = 0; tx < kSplitTile; ++tx) {
        for (int i = 0; i < kSplitPasses; ++i) {
          const int r = ix.store_r(r0, ty, i), k = ix.store_k(k0, tx);
          if (r >= R || k >= kp) continue;  // the kernel's guard
          long long v = 0;
          if (pc.k_contig) {
            v = k < K ? read(ix.src(r, k, ldx, true), r, k, tx, ty, bx, by) : 0;
          } else {
            const int sr = k - k0, sc = r - r0;
            if (sr < 0 || sr >= kSplitTile || sc < 0 || sc >= kSplitTile) {
              t.note(kSplitTileSlot, [&] {
                return fmt::format(
                    "{}: thread ({}, {}) of block ({}, {}) pass {} reads tile slot [{}][{}] for "
                    "op(X)({}, {}), outside the tile",
                    describe(pc), tx, ty, bx, by, i, sr, sc, r, k);
              });
              continue;
            }
            v = tile[static_cast<size_t>(sr * kSplitTile + sc)];
            if (v == kUnwritten)
              t.note(kSplitTileSlot, [&] {
                return fmt::format(
                    "{}: thread ({}, {}) of block ({}, {}) pass {} reads tile slot [{}][{}], "
                    "which no load wrote",
                    describe(pc), tx, ty, bx, by, i, sr, sc);
              });
          }
          const long long d = ix.dst(r, k, static_cast<int>(kp));
          if (r < 0 || k < 0 || d < 0 || d >= panel_values) {
            t.note(kSplitPanelOut, [&] {
              return fmt::format(
                  "{}: thread ({}, {}) of block ({}, {}) pass {} writes panel {} {} for "
                  "op(X)({}, {}), outside the {} x {} panel",
                  describe(pc), tx, ty, bx, by, i, format_of(pc.bf16).value, d, r, k, R, kp);
            });
            continue;
          }
          // Each part at d of its panel (the BF16 kernel's (j == 0 ? b0 : b1 + (j - 1) R Kp)[d]).
          for (int j = 0; j < panels; ++j) {
            const size_t at = static_cast<size_t>(j * panel_values + d);
            panel[at] = tagged(v, j);
            if (writes[at] < 255) ++writes[at];
          }
        }
      }
    }
  }

  // Every element of every panel written once, with its own part of its own element.
  void check_panel() {
    const int R = pc.R;
    for (int j = 0; j < panels; ++j) {
      for (long long r = 0; r < R; ++r) {
        for (long long k = 0; k < kp; ++k) {
          const size_t at = static_cast<size_t>(j * panel_values + r * kp + k);
          if (writes[at] == 0) {
            t.note(kSplitPanelHole, [&] {
              return fmt::format("{}: {} row {} column {} (op(X)({}, {})) is never written",
                                 describe(pc), panel_name(j), r, k, r, k);
            });
          } else if (writes[at] > 1) {
            t.note(kSplitPanelOverlap, [&] {
              return fmt::format("{}: {} row {} column {} is written {} times", describe(pc),
                                 panel_name(j), r, k, static_cast<int>(writes[at]));
            });
          } else if (panel[at] != tagged(expected(r, k), j)) {
            t.note(kSplitPanelMisplaced, [&] {
              return fmt::format("{}: {} row {} column {} holds {}, not op(X)({}, {}) = {}",
                                 describe(pc), panel_name(j), r, k, value(panel[at]), r, k,
                                 value(tagged(expected(r, k), j)));
            });
          }
        }
      }
    }
  }
};

}  // namespace

SimReport simulate_prepass(const PrepassCase& pc, const Indexing& ix) {
  Tally t;
  const int R = pc.R, K = pc.K, ldx = pc.ldx;
  const long long kp = format_of(pc.bf16).kp(ix, K);
  const long long stored_rows = pc.k_contig ? R : K, stored_cols = pc.k_contig ? K : R;
  if (R < 1 || K < 1 || ldx < stored_cols || kp < 1 || kp > INT_MAX ||
      1LL * prepass_panels(pc.bf16) * R * kp > kMaxPrepassElems ||
      stored_rows * ldx > kMaxPrepassElems) {
    t.add(kDegenerate, 1,
          fmt::format("{}: not a prepass the simulation replays (Kp {})", describe(pc), kp));
    return t.report();
  }
  const long long gx = ix.grid_x(K), gy = ix.grid_y(R);
  if (gx < 1 || gy < 1 || gx * gy * kSplitTile * kSplitTile > 4 * kMaxPrepassElems) {
    t.add(kDegenerate, 1, fmt::format("{}: a grid of {} x {} blocks", describe(pc), gx, gy));
    return t.report();
  }
  PrepassRun run(pc, ix, t, kp);
  for (long long by = 0; by < gy; ++by) {
    for (long long bx = 0; bx < gx; ++bx) {
      const int k0 = static_cast<int>(bx * kSplitTile), r0 = static_cast<int>(by * kSplitTile);
      std::fill(run.tile.begin(), run.tile.end(), kUnwritten);
      std::fill(run.tile_writes.begin(), run.tile_writes.end(), 0);
      if (!pc.k_contig) run.load_tile(bx, by, k0, r0);
      run.store_tile(bx, by, k0, r0);
    }
  }
  run.check_panel();
  return t.report();
}

std::vector<PrepassCase> prepass_cases(bool bf16) {
  // K around the row rounding: to 4 floats, or to 8 BF16 values.
  const std::vector<int> ks =
      bf16 ? std::vector<int>{1, 4, 7, 8, 9, 32, 33, 70} : std::vector<int>{1, 3, 4, 5, 32, 33, 70};
  std::vector<PrepassCase> out;
  for (const int R : {1, 5, 32, 33, 100}) {
    for (const int K : ks) {
      for (const bool k_contig : {true, false}) {
        const int min_ld = k_contig ? K : R;
        for (const int ldx : {min_ld, min_ld + 3}) out.push_back({R, K, ldx, k_contig, bf16});
      }
    }
  }
  return out;
}

namespace {

// The BF16 split's panels as the kernel reads them: each operand's part 2 right after its part 1
// (the prepass writes it at small + R Kp; the small map holds both, as planes R Kp values apart),
// and for each part j and block row bm0 the box copied from plane bf16_map_plane(j) of map
// j == 0 ? big : small, rows bm0.., holding part j's rows bm0 + i (those below R) inside the map.
// off[b][j]: the panels' offsets.
void check_bf16_maps(Tally& t, const std::string& label, const Indexing& ix, long long kp,
                     const long long (&off)[2][kB6Parts], int M, int N) {
  if (1LL * M + N > kMaxPrepassElems) {
    t.add(kDegenerate, 1, fmt::format("{}: {} rows of maps are too many to replay", label, M + N));
    return;
  }
  for (int b = 0; b < 2; ++b) {
    const char* const op = b == 0 ? "A" : "B";
    const int R = b == 0 ? M : N;
    const int tile = b == 0 ? kWgBM : kWgBN;
    for (int j = 2; j < kB6Parts; ++j) {
      if (off[b][j] != off[b][j - 1] + 1LL * R * kp)
        t.note(kSplitPanelWorkspace, [&] {
          return fmt::format(
              "{}: {} part {}'s panel starts at value {}, not right after part {}'s at {} (the "
              "prepass writes it at small + R Kp = {}, the small map's next plane)",
              label, op, j, off[b][j], j - 1, off[b][j - 1], off[b][j - 1] + 1LL * R * kp);
        });
    }
    for (int j = 0; j < kB6Parts; ++j) {
      // The map (tma_encode_split_maps): "big" over part 0's R rows, "small" over parts 1 and 2
      // as two planes of R rows, R Kp values apart.
      const long long base = j == 0 ? off[b][0] : off[b][1];
      const int planes = j == 0 ? 1 : kB6Parts - 1;
      const char* const map = j == 0 ? "big" : "small";
      const long long plane = ix.bf16_map_plane(j);
      for (int bm0 = 0; bm0 < R; bm0 += tile) {
        for (int i = 0; i < tile && bm0 + i < R; ++i) {
          const long long r = bm0 + i;
          if (plane < 0 || plane >= planes) {
            t.note_n(kTmaCopyMisplaced, std::max(1LL, kp), [&] {
              return fmt::format(
                  "{}: {}'s block row {} copies row {} of its part {} from plane {} of map {}, "
                  "outside its {} plane{} (the copy fills zeros)",
                  label, op, bm0, r, j, plane, map, planes, planes == 1 ? "" : "s");
            });
          } else if (base + (plane * R + r) * kp != off[b][j] + r * kp) {
            t.note_n(kTmaCopyMisplaced, std::max(1LL, kp), [&] {
              return fmt::format(
                  "{}: {}'s block row {} copies row {} of its part {} from plane {} of map {}, "
                  "value {} of the workspace; the row is at value {}",
                  label, op, bm0, r, j, plane, map, base + (plane * R + r) * kp,
                  off[b][j] + r * kp);
            });
          }
        }
      }
    }
  }
}

}  // namespace

SimReport simulate_workspace(int M, int N, int K, const Indexing& ix, bool bf16) {
  Tally t;
  const Format& f = format_of(bf16);
  const std::string label = fmt::format("{}workspace {}x{}x{}", bf16 ? "BF16 " : "", M, N, K);
  const long long kp = f.kp(ix, K);
  const int unit = f.row_unit();
  if (kp < K || kp > K + unit - 1 || kp % unit != 0) {
    t.add(kSplitPanelWorkspace, 1,
          fmt::format("{}: Kp = {} is not K rounded up to a multiple of {} (a tensor map's row "
                      "pitch is whole 16-byte units)",
                      label, kp, unit));
    return t.report();
  }
  const long long total = bf16 ? ix.bf16_workspace_values(M, N, K) : ix.workspace_floats(M, N, K);
  // The panels: A's parts (M rows), then B's (N rows).
  static const char* const tf32_names[4] = {"A big", "A small", "B big", "B small"};
  long long off[2][kB6Parts] = {};
  std::vector<std::string> names;
  std::vector<long long> offs, rows;
  for (int b = 0; b < 2; ++b) {
    for (int j = 0; j < f.parts; ++j) {
      off[b][j] = bf16 ? ix.bf16_panel_offset(b == 1, j, M, N, K)
                       : ix.panel_offset(b * f.parts + j, M, N, K);
      names.push_back(bf16 ? fmt::format("{} part {}", b == 0 ? "A" : "B", j)
                           : std::string(tf32_names[b * f.parts + j]));
      offs.push_back(off[b][j]);
      rows.push_back(b == 0 ? M : N);
    }
  }
  for (size_t p = 0; p < offs.size(); ++p) {
    const long long o = offs[p], end = o + rows[p] * kp;
    if (o < 0 || end > total)
      t.note(kSplitPanelWorkspace, [&] {
        return fmt::format("{}: panel {} spans {}s {}..{}, outside the workspace of {}", label,
                           names[p], f.value, o, end, total);
      });
    if (o % unit != 0)
      t.note(kSplitPanelWorkspace, [&] {
        return fmt::format("{}: panel {} starts at {} {}, not a 16-byte unit", label, names[p],
                           f.value, o);
      });
    for (size_t q = 0; q < p; ++q) {
      const long long qo = offs[q], qe = qo + rows[q] * kp;
      if (o < qe && qo < end && end > o && qe > qo)
        t.note(kSplitPanelWorkspace, [&] {
          return fmt::format("{}: panels {} and {} overlap", label, names[q], names[p]);
        });
    }
  }
  if (bf16) check_bf16_maps(t, label, ix, kp, off, M, N);
  return t.report();
}

namespace {

// Every element of the M x N matrix C written once (writes: per element, row-major).
void check_c_writes(Tally& t, const std::string& label, const std::vector<std::uint8_t>& writes,
                    int M, int N) {
  for (long long r = 0; r < M; ++r) {
    for (long long col = 0; col < N; ++col) {
      const int w = writes[static_cast<size_t>(r * N + col)];
      if (w == 0)
        t.note(kCHole,
               [&] { return fmt::format("{}: C({}, {}) is never written", label, r, col); });
      else if (w > 1)
        t.note(kCOverlap,
               [&] { return fmt::format("{}: C({}, {}) is written {} times", label, r, col, w); });
    }
  }
}

}  // namespace

namespace {

// Every consumer thread of every block of a launch of `blocks` blocks over an M x N output, as the
// kernel's epilogue walks its accumulators: each stored element checked against the wgmma D
// fragment's placement and the block tile, then handed to store(bid, tid, row, col, pair, e) if it
// lies inside the M x N matrix (pair: stored as a float2 with its neighbour, e its half).
template <class Store>
void replay_epilogue(const WarpTileConfig& c, int M, int N, long long blocks, bool pairs,
                     const Indexing& ix, Tally& t, const std::string& label, Store&& store) {
  const int grid_m = (M + kWgBM - 1) / kWgBM, grid_n = (N + kWgBN - 1) / kWgBN;
  for (long long bid = 0; bid < blocks; ++bid) {
    const int bm0 = ix.block_tile_row(static_cast<int>(bid), grid_m, grid_n, c.GROUP_M) * kWgBM;
    const int bn0 = ix.block_tile_col(static_cast<int>(bid), grid_m, grid_n, c.GROUP_M) * kWgBN;
    for (int tid = 0; tid < kWgConsumers; ++tid) {
      const int warp = (tid % 128) / 32, lane = tid % 32, wg = tid / 128;
      for (int h = 0; h < 2; ++h) {
        const int row = bm0 + ix.acc_row(tid, 2 * h);
        if (row >= M) continue;  // the kernel's guard
        for (int j = 0; j < 16; ++j) {
          const int col = bn0 + ix.acc_col(tid, 4 * j);
          const bool pair = pairs && col + 1 < N;
          for (int e = 0; e < 2; ++e) {
            const int acc = 4 * j + 2 * h + e;
            const int cc = col + e;  // p[e]
            if (!pair && cc >= N) continue;
            // Where wgmma puts accumulator `acc` (the PTX ISA's D fragment of m64nNk8).
            const int want_r = bm0 + wg * 64 + warp * 16 + lane / 4 + 8 * ((acc / 2) % 2);
            const int want_c = bn0 + 8 * (acc / 4) + 2 * (lane % 4) + acc % 2;
            if (row != want_r || cc != want_c)
              t.note(kWgAccMisplaced, [&] {
                return fmt::format(
                    "{}: block {} thread {} stores accumulator {} at C({}, {}); its wgmma "
                    "computes C({}, {})",
                    label, bid, tid, acc, row, cc, want_r, want_c);
              });
            if (row < bm0 || row >= bm0 + kWgBM || cc < bn0 || cc >= bn0 + kWgBN)
              t.note(kCOut, [&] {
                return fmt::format(
                    "{}: block {} thread {} writes C({}, {}), outside its tile at "
                    "({}, {})",
                    label, bid, tid, row, cc, bm0, bn0);
              });
            if (row < 0 || row >= M || cc < 0 || cc >= N) {
              t.note(kCMatrix, [&] {
                return fmt::format(
                    "{}: block {} thread {} writes C({}, {}), outside the {} x {} "
                    "matrix",
                    label, bid, tid, row, cc, M, N);
              });
              continue;
            }
            store(bid, tid, row, cc, pair, e);
          }
        }
      }
    }
  }
}

}  // namespace

SimReport simulate_epilogue(const WarpTileConfig& c, int M, int N, bool pairs, const Indexing& ix) {
  Tally t;
  const std::string label = fmt::format("epilogue {}x{}{}", M, N, pairs ? "" : " single floats");
  if (c.BM < 1 || c.BN < 1 || c.GROUP_M < 1 || M < 1 || N < 1 || 1LL * M * N > kMaxEpilogueElems) {
    t.add(kDegenerate, 1, fmt::format("{}: not a launch the simulation replays", label));
    return t.report();
  }
  // The launch plan's grid (plan_split_call: the config's tile), the kernel's block order.
  const auto d = sgt_kernel::launch_dims(M, N, 1, c.BM, c.BN, 1, 1);
  if (d.grid_x * kWgConsumers * 64 > 4 * kMaxEpilogueElems) {
    t.add(kDegenerate, 1, fmt::format("{}: {} blocks", label, d.grid_x));
    return t.report();
  }
  const long long ldc = N + (pairs ? N % 2 : (N % 2 == 0 ? 1 : 0));  // even for pairs, else odd
  std::vector<std::uint8_t> writes(static_cast<size_t>(M) * N, 0);
  replay_epilogue(c, M, N, d.grid_x, pairs, ix, t, label,
                  [&](long long bid, int tid, int row, int cc, bool pair, int e) {
                    if (pair && e == 0 && (row * ldc + cc) % 2 != 0)
                      t.note(kMisaligned, [&] {
                        return fmt::format(
                            "{}: block {} thread {} stores a float2 at C({}, {}), not "
                            "8-byte aligned (ldc {})",
                            label, bid, tid, row, cc, ldc);
                      });
                    auto& w = writes[static_cast<size_t>(row) * N + cc];
                    if (w < 255) ++w;
                  });
  check_c_writes(t, label, writes, M, N);
  return t.report();
}

SimReport simulate_split(const WarpTileConfig& c, int M, int N, int K, const Indexing& ix) {
  Tally t;
  const bool bf16 = bf16_split(c);
  const int BK = format_of(bf16).bk;
  const SliceFns fns = slice_fns(ix, bf16);
  const std::string label =
      fmt::format("{}split-K {}x{}x{} SPLIT_K {}", bf16 ? "BF16 " : "", M, N, K, c.SPLIT_K);
  if (c.BM < 1 || c.BN < 1 || c.GROUP_M < 1 || c.SPLIT_K < 1 || M < 1 || N < 1 || K < 0 ||
      K > kMaxSplitK) {
    t.add(kDegenerate, 1, fmt::format("{}: not a launch the simulation replays", label));
    return t.report();
  }
  // The launch plan's splits (plan_split_call: launch_dims with the kernel's slice).
  const auto d = sgt_kernel::launch_dims(M, N, K, c.BM, c.BN, BK, c.SPLIT_K);
  // A tail config's first launch is the split entry too, on one split of k_chunk K.
  const bool split_entry = c.SPLIT_K > 1 || c.TAIL != 0;
  const long long splits = d.grid_z, chunk = d.k_chunk;
  if (splits < 1 || splits > std::max(1, c.SPLIT_K) ||
      splits * M * N * 1LL > kMaxEpilogueElems * 4 ||
      d.grid_x * splits * kWgConsumers * 64 > 16 * kMaxEpilogueElems) {
    t.add(kDegenerate, 1, fmt::format("{}: {} splits of {} blocks", label, splits, d.grid_x));
    return t.report();
  }
  // The slices each split's producer copies, as the entry counts them.
  std::vector<int> diff(static_cast<size_t>(K) + 1, 0);
  for (long long z = 0; z < splits; ++z) {
    const int zi = static_cast<int>(z);
    const long long kbeg = z * chunk, kend = std::min<long long>(K, kbeg + chunk);
    const int first = split_entry ? fns.first(zi, static_cast<int>(chunk)) : 0;
    const int nk = split_entry ? fns.count(K, zi, static_cast<int>(chunk)) : (K + BK - 1) / BK;
    if (nk <= 0 && K > 0) {
      t.note(kSplitEmpty, [&] {
        return fmt::format("{}: split {} of {} (k_chunk {}) copies no slice", label, z, splits,
                           chunk);
      });
      continue;
    }
    for (int kb = 0; kb < nk; ++kb) {
      const long long lo = fns.k(first, kb), hi = std::min<long long>(K, lo + BK);
      if (lo % BK != 0 || lo < 0) {
        t.note(kSplitMisaligned, [&] {
          return fmt::format("{}: split {}'s slice {} copies from k = {}, not a whole {}-{} slice",
                             label, z, kb, lo, BK, format_of(bf16).value);
        });
        continue;
      }
      if (lo >= K) {
        // A copy wholly past K reads only zeros: no k of the product, but a slice no split owns.
        t.note(kTmaKOverlap, [&] {
          return fmt::format("{}: split {}'s slice {} copies k = {}..{}, past K", label, z, kb, lo,
                             lo + BK - 1);
        });
        continue;
      }
      if (lo < kbeg || hi > kend) {
        t.note(kTmaKOverlap, [&] {
          return fmt::format(
              "{}: split {}'s slice {} copies k = {}..{}, outside the split's k = {}..{} (the "
              "copies fill zeros only past K)",
              label, z, kb, lo, hi - 1, kbeg, kend - 1);
        });
      }
      ++diff[static_cast<size_t>(lo)];
      --diff[static_cast<size_t>(hi)];
    }
  }
  const KCoverage cov = k_coverage(diff, K);
  if (cov.holes > 0)
    t.add(kTmaKHole, cov.holes,
          fmt::format("{}: k = {} is copied by no slice ({} splits of {})", label, cov.first_hole,
                      splits, chunk));
  if (cov.overlaps > 0)
    t.add(kTmaKOverlap, cov.overlaps,
          fmt::format("{}: k = {} is copied by {} slices ({} splits of {})", label,
                      cov.first_overlap, cov.overlap_n, splits, chunk));
  if (splits == 1) return t.report();  // C itself: simulate_epilogue's
  // The partial products: split z's plane in the workspace the launch plan allocates.
  const long long total = splits * M * N;
  if (d.workspace_floats < total)
    t.add(kSplitWorkspace, 1,
          fmt::format("{}: a workspace of {} floats for {} partial products of {} x {}", label,
                      d.workspace_floats, splits, M, N));
  std::vector<std::uint8_t> writes(static_cast<size_t>(total), 0);
  for (long long z = 0; z < splits; ++z) {
    const long long off = ix.partial_offset(static_cast<int>(z), M, N);
    // The kernel's pairs: out = partial + off 8-byte aligned (the workspace is), ld N even.
    const bool pairs = off % 2 == 0 && N % 2 == 0;
    const std::string zl = fmt::format("{} split {}", label, z);
    replay_epilogue(
        c, M, N, d.grid_x, pairs, ix, t, zl,
        [&](long long bid, int tid, int row, int cc, bool pair, int e) {
          const long long at = off + static_cast<long long>(row) * N + cc;
          if (at < 0 || at >= total) {
            t.note(kSplitWorkspace, [&] {
              return fmt::format(
                  "{}: block {} thread {} writes C({}, {})'s partial at float {}, outside the "
                  "workspace of {}",
                  zl, bid, tid, row, cc, at, total);
            });
            return;
          }
          if (pair && e == 0 && at % 2 != 0)
            t.note(kMisaligned, [&] {
              return fmt::format(
                  "{}: block {} thread {} stores a float2 at workspace float {}, not 8-byte "
                  "aligned",
                  zl, bid, tid, at);
            });
          auto& w = writes[static_cast<size_t>(at)];
          if (w < 255) ++w;
        });
  }
  for (long long at = 0; at < total; ++at) {
    const int w = writes[static_cast<size_t>(at)];
    if (w == 1) continue;
    const long long z = at / (1LL * M * N), r = at % (1LL * M * N) / N, col = at % N;
    if (w == 0)
      t.note(kCHole, [&] {
        return fmt::format("{}: workspace float {} (split {}'s C({}, {})) is never written", label,
                           at, z, r, col);
      });
    else
      t.note(kCOverlap, [&] {
        return fmt::format("{}: workspace float {} (split {}'s C({}, {})) is written {} times",
                           label, at, z, r, col, w);
      });
  }
  return t.report();
}

SimReport simulate_tail(const WarpTileConfig& c, int M, int N, int K, int sm_count,
                        const Indexing& ix) {
  Tally t;
  const int BK = format_of(bf16_split(c)).bk;
  const std::string label = fmt::format("tail {}x{}x{} on {} SMs", M, N, K, sm_count);
  if (c.BM < 1 || c.BN < 1 || c.GROUP_M < 1 || M < 1 || N < 1 || K < 1 || sm_count < 1) {
    t.add(kDegenerate, 1, fmt::format("{}: not a launch the simulation replays", label));
    return t.report();
  }
  const auto d = sgt_kernel::launch_dims(M, N, K, c.BM, c.BN, BK, 1);
  const long long tiles = d.grid_x;
  if (tiles > kMaxEpilogueElems / 64) {
    t.add(kDegenerate, 1, fmt::format("{}: {} tiles are too many to replay", label, tiles));
    return t.report();
  }
  const auto w = ix.wave_tail(d.grid_m, d.grid_n, c.GROUP_M, sm_count, (K + BK - 1) / BK);
  if (w.splits == 0) return t.report();  // one launch of every tile: simulate_launch's
  // The tail: the last block rows and columns of the grid, as its sub-problem's grid.
  const long long row0 = 1LL * w.tile_row0 * c.BM, col0 = 1LL * w.tile_col0 * c.BN;
  const long long tail_tiles = 1LL * w.rows * w.cols;
  const bool inside = w.tile_row0 >= 0 && w.tile_col0 >= 0 && w.rows >= 1 && w.cols >= 1 &&
                      w.tile_row0 + w.rows == d.grid_m && w.tile_col0 + w.cols == d.grid_n &&
                      tail_tiles < tiles;
  if (!inside) {
    t.add(kRasterOut, 1,
          fmt::format("{}: a tail of block rows {}.. ({}) and columns {}.. ({}) is not the last "
                      "rows and columns of the {} x {} grid, or every tile",
                      label, w.tile_row0, w.rows, w.tile_col0, w.cols, d.grid_m, d.grid_n));
    return t.report();
  }
  const int Mt = static_cast<int>(M - row0), Nt = static_cast<int>(N - col0);
  const auto td = sgt_kernel::launch_dims(Mt, Nt, K, c.BM, c.BN, BK, w.splits);
  // Every tile of C from one launch: the first launch's blocks 0 .. tiles - rows cols - 1 in the
  // whole grid's block order, the tail's in its own grid's, from its first row and column.
  if (td.grid_x != tail_tiles)
    t.add(kRasterOut, 1,
          fmt::format("{}: the tail's sub-problem {}x{} has {} tiles, not its {} x {}", label, Mt,
                      Nt, td.grid_x, w.rows, w.cols));
  check_tail_cover(t, label, d.grid_m, d.grid_n, c.GROUP_M, tiles - tail_tiles, w.tile_row0,
                   w.tile_col0, td.grid_m, td.grid_n, td.grid_x, ix.block_tile_row,
                   ix.block_tile_col);
  // The tail's splits and partial products: the split entry on its sub-problem.
  Merger merged;
  merged.add(label, t.report());
  WarpTileConfig split = c;
  split.SPLIT_K = w.splits;
  split.TAIL = 0;
  merged.add(fmt::format("{}: the tail {}x{}x{} in {} splits", label, Mt, Nt, K, w.splits),
             simulate_split(split, Mt, Nt, K, ix));
  return merged.report();
}

std::vector<TailGrid> tail_grids() {
  // The H200's and H100 PCIe's SMs on problems whose last wave is nearly empty (2560^3: 400
  // tiles, 4 left over on 132; 3072^3; 1536 x 1536 x 6144, 12 left over), edges with partial
  // tiles on few SMs, and one whose tiles fill whole waves (no tail).
  return {{2560, 2560, 2560, 132}, {3072, 3072, 3072, 132}, {1536, 1536, 6144, 132},
          {2560, 2560, 2560, 114}, {1000, 999, 1001, 7},    {130, 300, 640, 5},
          {1100, 700, 333, 9},     {1024, 512, 512, 16}};
}

std::vector<SimGrid> split_grids(const WarpTileConfig& c) {
  const int S = std::max(1, c.SPLIT_K), BK = format_of(bf16_split(c)).bk;
  // Two by three tiles, the last ones partial (130 = 128 + 2, 300 = 2 x 128 + 44).
  const int M = 130, N = 300;
  std::vector<int> ks = {1, 31, 40, 100, BK * S + 7, BK * 3 * S + 13, 6144};
  if (S > 2) ks.push_back(BK * (S - 1) - 5);  // fewer slices than SPLIT_K, K % BK != 0
  std::vector<SimGrid> out;
  for (const int K : ks) out.push_back({M, N, K});
  return out;
}

SimReport simulate_tile(const WarpTileConfig& c) {
  Tally t;
  if (c.STAGES < 1 || c.STAGES > kMaxStages) {
    t.add(kDegenerate, 1, fmt::format("STAGES = {}: not a ring the simulation replays", c.STAGES));
    return t.report();
  }
  const Format& f = format_of(bf16_split(c));
  // The boxes the maps are encoded with (tma_encode_split_maps): BK values (128 bytes, the
  // 128-byte swizzle's span: 32 floats, or 64 BF16 values) by 128 rows.
  const int box_inner = f.bk, box_outer = kWgBM;
  const long long box_bytes = 1LL * box_inner * box_outer * f.value_bytes;
  if (box_inner * f.value_bytes > 128 || box_outer > 256 || box_inner > 256)
    t.add(kTmaRefused, 1,
          fmt::format("a box of {} x {} {}s: with the 128-byte swizzle the inner extent is at "
                      "most 128 bytes, each at most 256",
                      box_inner, box_outer, f.value));
  if (box_bytes != f.tile_bytes)
    t.add(kTmaCopyHole, 1,
          fmt::format("a box of {} x {} {}s ({} bytes) does not fill the {}-byte tile", box_inner,
                      box_outer, f.value, box_bytes, f.tile_bytes));
  // The full barrier expects a stage's bytes: A's and B's boxes, one a part.
  if (f.stage_bytes != f.boxes() * box_bytes)
    t.add(kTmaBarrier, 1,
          fmt::format("the full barrier expects {} bytes, the {} copies bring {}", f.stage_bytes,
                      f.boxes(), f.boxes() * box_bytes));
  // Each tile of each stage 1024-byte aligned (the swizzle's period, which the descriptors
  // assume) from the aligned base, the ring within the dynamic request less the alignment slack.
  for (int s = 0; s < c.STAGES; ++s) {
    for (int p = 0; p < f.boxes(); ++p) {
      const long long off = 1LL * s * f.stage_bytes + 1LL * p * f.tile_bytes;
      if (off % 1024 != 0)
        t.note(kTmaSmemMisaligned, [&] {
          return fmt::format("stage {} tile {} starts at byte {}, not 1024-byte aligned", s, p,
                             off);
        });
    }
  }
  const long long ring = 1LL * c.STAGES * f.stage_bytes;
  if (ring > f.smem_bytes(c.STAGES) - 1024)
    t.add(kTmaSmemOverflow, 1,
          fmt::format("a ring of {} bytes past the {} the dynamic request leaves after aligning",
                      ring, f.smem_bytes(c.STAGES) - 1024));
  // The k-slices: slice kb copies k in [kb BK, kb BK + BK) for kb < ceil(K / BK).
  const int BK = f.bk;
  for (const int K : {1, 3, 4, 31, 32, 33, 63, 64, 65, 100, 4096}) {
    const int nk = (K + BK - 1) / BK;
    std::vector<int> seen(static_cast<size_t>(K), 0);
    for (int kb = 0; kb < nk; ++kb)
      for (int k = kb * BK; k < kb * BK + box_inner; ++k)
        if (k < K) ++seen[static_cast<size_t>(k)];
    for (int k = 0; k < K; ++k) {
      if (seen[static_cast<size_t>(k)] == 0)
        t.note(kTmaKHole, [&] { return fmt::format("K {}: no slice copies k = {}", K, k); });
      else if (seen[static_cast<size_t>(k)] > 1)
        t.note(kTmaKOverlap, [&] { return fmt::format("K {}: k = {} copied twice", K, k); });
    }
  }
  return t.report();
}

namespace {

// The prepass has no template parameters: its cases are one report for every config of a format.
const std::vector<std::pair<std::string, SimReport>>& kernel_prepass_reports(bool bf16) {
  static const auto run = [](bool b) {
    std::vector<std::pair<std::string, SimReport>> out;
    for (const auto& pc : prepass_cases(b)) {
      auto r = simulate_prepass(pc);
      if (!r.ok()) out.emplace_back(describe(pc), std::move(r));
    }
    return out;
  };
  if (bf16) {
    static const auto bf16_reports = run(true);
    return bf16_reports;
  }
  static const auto tf32_reports = run(false);
  return tf32_reports;
}

}  // namespace

SimReport simulate(const WarpTileConfig& c, const Indexing& ix) {
  Merger merged;
  const bool bf16 = bf16_split(c);
  if (ix.is_kernels()) {
    for (const auto& [label, r] : kernel_prepass_reports(bf16)) merged.add(label, r);
  } else {
    for (const auto& pc : prepass_cases(bf16)) merged.add(describe(pc), simulate_prepass(pc, ix));
  }
  merged.add("tile", simulate_tile(c));
  const auto grids = standard_grids(c);
  for (const auto& g : grids) {
    const std::string label = fmt::format("grid {}x{}x{}", g.M, g.N, g.K);
    merged.add(label, simulate_workspace(g.M, g.N, g.K, ix, bf16));
    merged.add(label, simulate_launch(c, g.M, g.N, g.K));
    merged.add(label, simulate_epilogue(c, g.M, g.N, true, ix));
    merged.add(label, simulate_split(c, g.M, g.N, g.K, ix));
  }
  for (const auto& g : split_grids(c)) {
    const std::string label = fmt::format("split grid {}x{}x{}", g.M, g.N, g.K);
    merged.add(label, simulate_launch(c, g.M, g.N, g.K));
    merged.add(label, simulate_split(c, g.M, g.N, g.K, ix));
  }
  if (c.TAIL != 0) {
    for (const auto& g : tail_grids())
      merged.add(fmt::format("tail grid {}x{}x{} on {} SMs", g.M, g.N, g.K, g.sm_count),
                 simulate_tail(c, g.M, g.N, g.K, g.sm_count, ix));
  }
  if (!grids.empty()) {
    const auto& g = grids.back();
    merged.add(fmt::format("grid {}x{}x{}", g.M, g.N, g.K),
               simulate_epilogue(c, g.M, g.N, false, ix));
  }
  return merged.report();
}

std::string simulation_scope() {
  return "the split-TF32 wgmma kernel and its BF16 split (FMA_ORDER 3): its prepass in both "
         "storages at 5 row and 7 k extents (8 for the BF16 split, around its 8-value rows; "
         "leading dimensions tight and padded): every read inside the operand, every element of "
         "each panel (TF32: big and small; BF16: parts 0, 1, 2) written once with its part of "
         "op(X)(r, k), zeros past K; the panel workspace (Kp, 4 or 6 panels inside it, disjoint, "
         "16-byte aligned; for the BF16 split part 2 right after part 1 and each block's boxes "
         "copied from its part's plane and rows of the maps); the ring's boxes (4 of 32 floats or "
         "6 of 64 BF16 values by 128 rows), alignment and barrier bytes, the k-slices; on 5 launch "
         "grids the block order and the epilogue (each accumulator at its wgmma C element, each C "
         "element once, float2 pairs aligned); and on those and 7 or 8 more K the K splits (each "
         "k copied by one slice of one split, within the split's range, and with SPLIT_K > 1 each "
         "split's partial product once in its plane of the workspace); with TAIL 1, on 8 problems "
         "and SM "
         "counts the wave-aware tail (every tile from one of the two launches, the tail the last "
         "block rows and columns, its splits and partial products as the split entry's)";
}

}  // namespace sgt::tf32x3_wg
