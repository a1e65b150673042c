// The launch of an M x N x K problem in the simulation: the block order over the tile grid and
// the split-K ranges (and, for ws_tma, the slices each split copies: index_sim_tma.cpp) must take
// every tile and every k exactly once; then the launch's last blocks run through the block replay
// (index_sim_warptile.cpp) on the instance the tuner picks, and the reports are merged.
#include <algorithm>

#include "index_sim_detail.hpp"

namespace sgt::sim_detail {

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

namespace {

// Why the launch cannot be simulated, or nullopt.
std::optional<std::string> degenerate_launch(const WarpTileConfig& c, int M, int N, int K) {
  if (auto why = field_out_of_range(c)) return why;
  if (M < 1 || N < 1 || K < 1) return fmt::format("problem {}x{}x{} is empty", M, N, K);
  const long long blocks = (1LL * M + c.BM - 1) / c.BM * ((1LL * N + c.BN - 1) / c.BN);
  if (blocks > kMaxGridBlocks) return fmt::format("{} blocks are too many to simulate", blocks);
  if (K > kMaxK) return fmt::format("K = {} is too large to simulate", K);
  return std::nullopt;
}

// Block order: the kernel's own grid, and block bid -> tile must be a bijection onto it.
void check_block_order(const WarpTileConfig& c, int M, int N, const sgt_kernel::LaunchDims& d,
                       const SimIndexing& ix, Tally& t) {
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
}

// Split-K: split z takes k in [z*k_chunk, min(K, (z+1)*k_chunk)); the ranges must partition
// [0, K), none empty, each start on a whole slice (so that only the last slice of K is partial
// and the float4 k-columns stay aligned), and the workspace must hold every partial product.
void check_split_k(const WarpTileConfig& c, int M, int N, int K, const sgt_kernel::LaunchDims& d,
                   Tally& t) {
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
}

}  // namespace

SimReport run_launch(const WarpTileConfig& c, int M, int N, int K, const SimIndexing& ix) {
  Tally t;
  if (auto why = degenerate_launch(c, M, N, K)) {
    t.add(kDegenerate, 1, *why);
    return t.report();
  }
  const auto d = ix.launch_dims(M, N, K, c.BM, c.BN, c.BK, c.SPLIT_K);
  check_block_order(c, M, N, d, ix, t);
  check_split_k(c, M, N, K, d, t);
  if (tma_fed(c)) check_tma_slices(c, K, d, t);
  return t.report();
}

void Merger::add(const std::string& label, const SimReport& r) {
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

SimReport Merger::report() const {
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

// The launch's last block, in the last row and column of the grid and the last split, in every
// layout with the instance the tuner picks for the problem (kernel_vec_loads: the float4 one with
// operands that allow float4s, else the scalar one): its last whole k-slice (the main loop, where
// the loads matter), or its partial one (the edge loop) if it has none.
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
  if (tma_fed(c)) {
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

void check_tail_cover(Tally& t, const std::string& label, long long grid_m, long long grid_n,
                      int group_m, long long first_blocks, long long row0, long long col0,
                      long long tail_m, long long tail_n, long long tail_blocks,
                      int (*row)(int, int, int, int), int (*col)(int, int, int, int)) {
  std::vector<int> cover(static_cast<size_t>(grid_m * grid_n), 0);
  const auto count = [&](long long r, long long c, const char* who, long long b) {
    if (r < 0 || r >= grid_m || c < 0 || c >= grid_n) {
      t.note(kRasterOut, [&] {
        return fmt::format("{}: {} block {} takes tile ({}, {}), outside the {} x {} grid", label,
                           who, b, r, c, grid_m, grid_n);
      });
      return;
    }
    ++cover[static_cast<size_t>(r * grid_n + c)];
  };
  const int gm = static_cast<int>(grid_m), gn = static_cast<int>(grid_n);
  for (long long b = 0; b < first_blocks; ++b) {
    const int bi = static_cast<int>(b);
    count(row(bi, gm, gn, group_m), col(bi, gm, gn, group_m), "the first launch's", b);
  }
  const int tm = static_cast<int>(tail_m), tn = static_cast<int>(tail_n);
  for (long long b = 0; b < tail_blocks; ++b) {
    const int bi = static_cast<int>(b);
    count(row0 + row(bi, tm, tn, group_m), col0 + col(bi, tm, tn, group_m), "the tail's", b);
  }
  for (long long i = 0; i < grid_m * grid_n; ++i) {
    const int n = cover[static_cast<size_t>(i)];
    if (n == 1) continue;
    t.note(n == 0 ? kRasterHole : kRasterOverlap, [&] {
      return fmt::format(
          "{}: tile ({}, {}) is computed by {} launch{} (the first on {} of {} "
          "tiles, the tail from block row {} and column {})",
          label, i / grid_n, i % grid_n, n, n == 1 ? "" : "es", first_blocks, grid_m * grid_n, row0,
          col0);
    });
  }
}

SimReport run_grid(const WarpTileConfig& c, int M, int N, int K, const SimIndexing& ix) {
  Merger merged;
  std::vector<SimCase> done;
  run_grid(c, M, N, K, ix, "", merged, done);
  return merged.report();
}

}  // namespace sgt::sim_detail

namespace sgt {

std::vector<TailGrid> tail_grids() {
  // 2560^3 on the H200's 132 SMs with one and three blocks each (400 tiles of 128 x 128: 4 left
  // over; 800 of 64 x 128 on 396 slots: 8), 3072^3 on two a SM, problems with partial edge tiles
  // on 16 slots whose tails span several block rows and columns for tiles from 32 x 32 to
  // 256 x 128, and a grid of whole waves.
  return {{2560, 2560, 2560, 132}, {2560, 2560, 2560, 396}, {3072, 3072, 3072, 264},
          {1373, 359, 333, 16},    {744, 1366, 1001, 16},   {374, 1366, 333, 16},
          {818, 1154, 1001, 16},   {818, 624, 333, 16},     {1024, 512, 512, 16}};
}

SimReport simulate_tail_launch(const WarpTileConfig& c, const TailGrid& g, const SimIndexing& ix) {
  using namespace sim_detail;
  Tally t;
  const std::string label = fmt::format("tail {}x{}x{} on {} slots", g.M, g.N, g.K, g.slots);
  if (c.BM < 1 || c.BN < 1 || c.BK < 1 || c.GROUP_M < 1 || g.M < 1 || g.N < 1 || g.K < 1) {
    t.add(kDegenerate, 1, fmt::format("{}: not a launch the simulation replays", label));
    return t.report();
  }
  const auto d = ix.launch_dims(g.M, g.N, g.K, c.BM, c.BN, c.BK, 1);
  const sgt_kernel::CallTail tl = ix.plan_tail(c.BM, c.BN, c.BK, c.GROUP_M, g.M, g.N, g.K, g.slots);
  if (tl.dims.grid_x == 0) return t.report();  // one launch of every tile: the standard grids'
  const long long tiles = d.grid_x, tail_tiles = tl.dims.grid_x;
  if (tl.row0 % c.BM != 0 || tl.col0 % c.BN != 0 || tl.row0 < 0 || tl.col0 < 0 ||
      tl.M != g.M - tl.row0 || tl.N != g.N - tl.col0 || tail_tiles >= tiles || tl.M < 1 ||
      tl.N < 1) {
    t.add(kRasterOut, 1,
          fmt::format("{}: a tail from C({}, {}) of {}x{} is not the grid's last whole tiles "
                      "short of every tile",
                      label, tl.row0, tl.col0, tl.M, tl.N));
    return t.report();
  }
  check_tail_cover(t, label, d.grid_m, d.grid_n, c.GROUP_M, tiles - tail_tiles, tl.row0 / c.BM,
                   tl.col0 / c.BN, tl.dims.grid_m, tl.dims.grid_n, tail_tiles, ix.block_tile_row,
                   ix.block_tile_col);
  // The tail's own launch: its sub-problem split over K, as the kernel runs it.
  Merger merged;
  merged.add(label, t.report());
  WarpTileConfig split = c;
  split.SPLIT_K = tl.dims.grid_z;
  split.TAIL = 0;
  const auto sd = ix.launch_dims(tl.M, tl.N, g.K, c.BM, c.BN, c.BK, split.SPLIT_K);
  if (sd.grid_z != tl.dims.grid_z || sd.k_chunk != tl.dims.k_chunk || sd.grid_x != tail_tiles) {
    Tally s;
    s.add(kSplitMisaligned, 1,
          fmt::format("{}: the tail's {} splits of k {} are not its sub-problem's launch", label,
                      tl.dims.grid_z, tl.dims.k_chunk));
    merged.add(label, s.report());
  }
  std::vector<SimCase> done;
  run_grid(
      split, tl.M, tl.N, g.K, ix,
      fmt::format("{}: the tail {}x{}x{} in {} splits", label, tl.M, tl.N, g.K, tl.dims.grid_z),
      merged, done);
  return merged.report();
}

}  // namespace sgt
