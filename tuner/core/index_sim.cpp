// Replays the warp-tiling kernel's index arithmetic on the CPU, thread by thread, and checks it
// against an independent statement of what the block must do (load each slice once, multiply the
// right operands, write each C element once, with aligned float4 accesses).
#include "index_sim.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <functional>
#include <optional>

#include <fmt/format.h>

namespace sgt {

namespace {

using namespace sgt_kernel;

enum Kind : int {
  kDegenerate,
  kCOut,
  kCHole,
  kCOverlap,
  kAOut,
  kAsOut,
  kAsHole,
  kAsOverlap,
  kAsMisplaced,
  kBOut,
  kBsOut,
  kBsHole,
  kBsOverlap,
  kBsMisplaced,
  kSmemRead,
  kOperand,
  kMisaligned,
  kNumKinds
};

struct KindInfo {
  std::string_view name;
  std::string_view unit;  // what the count in the detail counts
};

constexpr std::array<KindInfo, kNumKinds> kKinds = {{
    {"degenerate_geometry", "problems"},
    {"c_out_of_tile", "element writes"},
    {"c_hole", "elements"},
    {"c_overlap", "elements"},
    {"a_out_of_tile", "element reads"},
    {"as_out_of_tile", "element stores"},
    {"as_hole", "elements"},
    {"as_overlap", "elements"},
    {"as_misplaced", "element stores"},
    {"b_out_of_tile", "element reads"},
    {"bs_out_of_tile", "element stores"},
    {"bs_hole", "elements"},
    {"bs_overlap", "elements"},
    {"bs_misplaced", "element stores"},
    {"smem_read_out_of_tile", "reads"},
    {"operand_mismatch", "accumulator elements"},
    {"misaligned_vector", "float4 accesses"},
}};

// Counts per kind and keeps the first example; the example is only formatted once, so a config
// with millions of bad accesses costs no more than one with a single one.
class Tally {
 public:
  template <typename F>
  void note(Kind k, F&& example) {
    if (count_[k]++ == 0) example_[k] = example();
  }
  void add(Kind k, long long n, std::string example) {
    if (n <= 0) return;
    if (count_[k] == 0) example_[k] = std::move(example);
    count_[k] += n;
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

// Why the geometry cannot be simulated, or nullopt. Checked before make_geometry runs, since its
// int products could overflow on absurd inputs.
std::optional<std::string> degenerate(const WarpTileConfig& c) {
  for (const auto& f : kConfigFields) {
    const int v = c.*f.member;
    if (v <= 0) return fmt::format("{} = {} is not positive", f.name, v);
    if (v > kMaxParam) return fmt::format("{} = {} is absurdly large", f.name, v);
  }
  const long long BM = c.BM, BN = c.BN, BK = c.BK;
  if (c.NUM_THREADS > kMaxThreads) {
    return fmt::format("NUM_THREADS = {} is absurdly large", c.NUM_THREADS);
  }
  if (BM * BN > kMaxTileElems || BK * BM > kMaxTileElems || BK * BN > kMaxTileElems) {
    return fmt::format("tile {}x{}x{} is absurdly large", BM, BN, BK);
  }
  const long long wmwn = static_cast<long long>(c.WM) * c.WN;
  // One factor at a time: TM*TN*WNITER alone could overflow long long.
  long long per_pass = kWarpSize;
  for (int v : {c.TM, c.TN, c.WNITER}) per_pass = std::min<long long>(per_pass * v, 1LL << 40);
  if (wmwn > INT_MAX || per_pass > INT_MAX) {
    return fmt::format("warp tile {}x{} with thread tile {}x{} and WNITER = {} is absurdly large",
                       c.WM, c.WN, c.TM, c.TN, c.WNITER);
  }

  const Geometry g = derive(c);
  const std::pair<std::string_view, int> must_be_positive[] = {
      {"WMITER", g.WMITER},
      {"WSUBM", g.WSUBM},
      {"WSUBN", g.WSUBN},
      {"LANES_N", g.LANES_N},
      {"WARPS_N", g.WARPS_N},
      {"ROW_STRIDE_A", g.ROW_STRIDE_A},
      {"ROW_STRIDE_B", g.ROW_STRIDE_B},
      {"BK/4 (float4 columns of A)", g.BK / kVec},
      {"BN/4 (float4 columns of B)", g.BN / kVec},
  };
  for (const auto& [name, v] : must_be_positive) {
    // Zero here is a loop stride that never advances or a divisor that safe_div hides.
    if (v <= 0) return fmt::format("derived {} = {} is not positive", name, v);
  }
  const long long nt = c.NUM_THREADS;
  const long long work = nt * (static_cast<long long>(g.FRAGMENTS) * g.BK + kVec * g.ACCUMULATORS) +
                         kVec * (BM / g.ROW_STRIDE_A + 1) * nt +
                         kVec * (BK / g.ROW_STRIDE_B + 1) * nt;
  if (work > kMaxWork) {
    return fmt::format("one block does about {} index steps, too many to simulate", work);
  }
  return std::nullopt;
}

// Provenance of a shared-memory slot after the loads of one k-step.
constexpr std::int32_t kFromOutside = -1;  // stored from a global element outside the slice
// What a register fragment holds across the k-loop.
constexpr int kUnknown = -1;  // its source is already reported (hole, overlap, read outside)
constexpr int kWrong = -2;    // it holds the wrong k, or a different row/column at different k

struct Scratch {
  std::vector<std::uint8_t> as_count, bs_count, c_count;
  std::vector<std::int32_t> as_prov, bs_prov;
  std::vector<int> row_of, col_of;
};

void load_a(const Geometry& g, int nt, Scratch& s, Tally& t) {
  const int BM = g.BM, BK = g.BK;
  s.as_count.assign(static_cast<size_t>(BM) * BK, 0);
  s.as_prov.assign(static_cast<size_t>(BM) * BK, kFromOutside);
  for (int tid = 0; tid < nt; ++tid) {
    const int aRow = a_load_row(g, tid);
    const int aCol = a_load_col(g, tid);
    for (int off = 0; a_load_continues(g, off); off += g.ROW_STRIDE_A) {
      const int row = aRow + off;
      // The pointer advances by BK per k-step, so every step's column offset must stay aligned.
      for (int step = 0; step < kVec; ++step) {
        if ((step * BK + aCol) % kVec != 0) {
          t.note(kMisaligned, [&] {
            return fmt::format(
                "thread {} reads A[{}][{}] as float4 in k-step {} (global column {})", tid, row,
                aCol, step, step * BK + aCol);
          });
          break;
        }
      }
      for (int j = 0; j < kVec; ++j) {
        const int col = aCol + j;
        const bool inside = row >= 0 && row < BM && col >= 0 && col < BK;
        if (!inside) {
          t.note(kAOut, [&] {
            return fmt::format("thread {} reads A[{}][{}] outside the {}x{} slice", tid, row, col,
                               BM, BK);
          });
        }
        const int slot = as_index(g, row, col);
        if (slot < 0 || slot >= BM * BK) {
          t.note(kAsOut, [&] {
            return fmt::format("thread {} stores A[{}][{}] to As[{}], outside As[{}]", tid, row,
                               col, slot, BM * BK);
          });
          continue;
        }
        // As holds A transposed: column-major over the slice.
        if (inside && slot != col * BM + row) {
          t.note(kAsMisplaced, [&] {
            return fmt::format("thread {} stores A[{}][{}] to As[{}], expected As[{}]", tid, row,
                               col, slot, col * BM + row);
          });
        }
        auto& n = s.as_count[slot];
        if (n < 255) ++n;
        s.as_prov[slot] = inside ? row * BK + col : kFromOutside;
      }
    }
  }
}

void load_b(const Geometry& g, int nt, Scratch& s, Tally& t) {
  const int BN = g.BN, BK = g.BK;
  s.bs_count.assign(static_cast<size_t>(BN) * BK, 0);
  s.bs_prov.assign(static_cast<size_t>(BN) * BK, kFromOutside);
  for (int tid = 0; tid < nt; ++tid) {
    const int bRow = b_load_row(g, tid);
    const int bCol = b_load_col(g, tid);
    for (int off = 0; b_load_continues(g, off); off += g.ROW_STRIDE_B) {
      const int row = bRow + off;
      const int base = bs_index(g, row, bCol);
      // The pointer starts at blockCol = blockIdx.x * BN, so every block's offset must align.
      for (int bx = 0; bx < kVec; ++bx) {
        if ((bx * BN + bCol) % kVec != 0) {
          t.note(kMisaligned, [&] {
            return fmt::format("thread {} of block column {} reads B as float4 at tile column {}",
                               tid, bx, bCol);
          });
          break;
        }
      }
      if (base % kVec != 0) {
        t.note(kMisaligned,
               [&] { return fmt::format("thread {} stores a float4 to Bs[{}]", tid, base); });
      }
      for (int j = 0; j < kVec; ++j) {
        const int col = bCol + j;
        const bool inside = row >= 0 && row < BK && col >= 0 && col < BN;
        if (!inside) {
          t.note(kBOut, [&] {
            return fmt::format("thread {} reads B[{}][{}] outside the {}x{} slice", tid, row, col,
                               BK, BN);
          });
        }
        const int slot = base + j;
        if (slot < 0 || slot >= BN * BK) {
          t.note(kBsOut, [&] {
            return fmt::format("thread {} stores B[{}][{}] to Bs[{}], outside Bs[{}]", tid, row,
                               col, slot, BN * BK);
          });
          continue;
        }
        if (inside && slot != row * BN + col) {
          t.note(kBsMisplaced, [&] {
            return fmt::format("thread {} stores B[{}][{}] to Bs[{}], expected Bs[{}]", tid, row,
                               col, slot, row * BN + col);
          });
        }
        auto& n = s.bs_count[slot];
        if (n < 255) ++n;
        s.bs_prov[slot] = inside ? row * BN + col : kFromOutside;
      }
    }
  }
}

// Every element of As, Bs and C must be written exactly once; `name` says which element a flat
// index is.
void check_coverage(const std::vector<std::uint8_t>& count, Kind hole, Kind overlap,
                    const std::function<std::string(int)>& name, Tally& t) {
  long long holes = 0, overlaps = 0;
  int first_hole = -1, first_overlap = -1;
  for (int i = 0; i < static_cast<int>(count.size()); ++i) {
    if (count[i] == 0) {
      if (holes++ == 0) first_hole = i;
    } else if (count[i] > 1) {
      if (overlaps++ == 0) first_overlap = i;
    }
  }
  if (holes > 0) t.add(hole, holes, fmt::format("{} is written by no thread", name(first_hole)));
  if (overlaps > 0) {
    t.add(overlap, overlaps,
          fmt::format("{} is written {}{} times", name(first_overlap), count[first_overlap],
                      count[first_overlap] == 255 ? "+" : ""));
  }
}

// What one register fragment holds across the k-loop, given where it reads in shared memory for
// every k: the A row (or B column) it stands for, kUnknown or kWrong. For As the provenance is
// row*BK+col and must have col == k; for Bs it is row*BN+col and must have row == k.
int fragment_source(int tid, int reg, int offset, int stride, int size, int width,
                    const std::vector<std::int32_t>& prov, const std::vector<std::uint8_t>& count,
                    int BK, bool is_a, Tally& t) {
  int source = kUnknown;
  bool unknown = false;
  for (int k = 0; k < BK; ++k) {
    const int slot = k * stride + offset;
    if (slot < 0 || slot >= size) {
      t.note(kSmemRead, [&] {
        return fmt::format("thread {} reads {}[{}] at k = {} into {}[{}], outside {}[{}]", tid,
                           is_a ? "As" : "Bs", slot, k, is_a ? "regM" : "regN", reg,
                           is_a ? "As" : "Bs", size);
      });
      unknown = true;
      continue;
    }
    if (count[slot] != 1 || prov[slot] == kFromOutside) {
      unknown = true;
      continue;
    }
    const int p = prov[slot];
    const int pk = is_a ? p % width : p / width;
    const int pos = is_a ? p / width : p % width;
    if (pk != k) return kWrong;
    if (source == kUnknown) {
      source = pos;
    } else if (source != pos) {
      return kWrong;
    }
  }
  return unknown ? kUnknown : source;
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

SimReport simulate_block(const WarpTileConfig& c) {
  Tally t;
  if (auto why = degenerate(c)) {
    t.add(kDegenerate, 1, *why);
    return t.report();
  }
  const Geometry g = derive(c);
  const int nt = c.NUM_THREADS;
  const int BM = g.BM, BN = g.BN, BK = g.BK, TM = g.TM, TN = g.TN;
  const int WMITER = g.WMITER, WNITER = g.WNITER;
  thread_local Scratch s;

  load_a(g, nt, s, t);
  load_b(g, nt, s, t);
  check_coverage(
      s.as_count, kAsHole, kAsOverlap,
      [&](int i) { return fmt::format("As[{}] (A[{}][{}])", i, i % BM, i / BM); }, t);
  check_coverage(
      s.bs_count, kBsHole, kBsOverlap,
      [&](int i) { return fmt::format("Bs[{}] (B[{}][{}])", i, i / BN, i % BN); }, t);

  const int regs_m = WMITER * TM;
  const int regs_n = WNITER * TN;
  s.c_count.assign(static_cast<size_t>(BM) * BN, 0);
  s.row_of.resize(regs_m);
  s.col_of.resize(regs_n);
  for (int tid = 0; tid < nt; ++tid) {
    // The compute loop: regM[ws*TM+i] = As[k*BM + tile_row(...)], regN likewise from Bs.
    for (int ws = 0; ws < WMITER; ++ws) {
      for (int i = 0; i < TM; ++i) {
        s.row_of[ws * TM + i] = fragment_source(tid, ws * TM + i, tile_row(g, tid, ws, i), BM,
                                                BM * BK, BK, s.as_prov, s.as_count, BK, true, t);
      }
    }
    for (int ws = 0; ws < WNITER; ++ws) {
      for (int i = 0; i < TN; ++i) {
        s.col_of[ws * TN + i] = fragment_source(tid, ws * TN + i, tile_col(g, tid, ws, i), BN,
                                                BN * BK, BN, s.bs_prov, s.bs_count, BK, false, t);
      }
    }

    // The epilogue: a float4 of C from four consecutive accumulators.
    for (int wm = 0; wm < WMITER; ++wm) {
      for (int wn = 0; wn < WNITER; ++wn) {
        for (int m = 0; m < TM; ++m) {
          for (int n = 0; n < TN; n += kVec) {
            const int row = tile_row(g, tid, wm, m);
            const int col = tile_col(g, tid, wn, n);
            for (int bx = 0; bx < kVec; ++bx) {
              if ((bx * BN + col) % kVec != 0) {
                t.note(kMisaligned, [&] {
                  return fmt::format(
                      "thread {} of block column {} writes C as float4 at tile column {}", tid, bx,
                      col);
                });
                break;
              }
            }
            const int acc0 = (wm * TM + m) * regs_n + wn * TN + n;
            for (int j = 0; j < kVec; ++j) {
              const int ccol = col + j;
              if (row < 0 || row >= BM || ccol < 0 || ccol >= BN) {
                t.note(kCOut, [&] {
                  return fmt::format("thread {} writes C[{}][{}] outside the {}x{} tile", tid, row,
                                     ccol, BM, BN);
                });
                continue;
              }
              auto& cnt = s.c_count[static_cast<size_t>(row) * BN + ccol];
              if (cnt < 255) ++cnt;

              // acc[f] accumulated regM[f / regs_n] * regN[f % regs_n]; it must be the dot
              // product of A's row `row` with B's column `ccol`.
              const int f = acc0 + j;
              if (f >= g.ACCUMULATORS) {
                t.note(kOperand, [&] {
                  return fmt::format(
                      "thread {} writes acc[{}] (beyond its {} accumulators) to "
                      "C[{}][{}]",
                      tid, f, g.ACCUMULATORS, row, ccol);
                });
                continue;
              }
              const int a_row = s.row_of[f / regs_n];
              const int b_col = s.col_of[f % regs_n];
              const bool a_bad = a_row != kUnknown && a_row != row;
              const bool b_bad = b_col != kUnknown && b_col != ccol;
              if (a_bad || b_bad) {
                t.note(kOperand, [&] {
                  auto show = [](int v) {
                    return v == kWrong ? std::string("mixed/wrong-k data") : std::to_string(v);
                  };
                  return fmt::format(
                      "thread {} writes acc[{}] to C[{}][{}] but it multiplied A "
                      "row {} by B column {}",
                      tid, f, row, ccol, show(a_row), show(b_col));
                });
              }
            }
          }
        }
      }
    }
  }
  check_coverage(
      s.c_count, kCHole, kCOverlap, [&](int i) { return fmt::format("C[{}][{}]", i / BN, i % BN); },
      t);
  return t.report();
}

}  // namespace sgt
