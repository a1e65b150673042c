// Candidate features for the cost model (see features.hpp).
#include "features.hpp"

#include "family.hpp"

#include <algorithm>
#include <cmath>

namespace sgt {

namespace {

constexpr int kThreadsPerSm = 2048;
constexpr int kSharedPerSm = 228 * 1024;
constexpr int kRegistersPerThreadGuess = 255;  // the accumulators' registers dominate

double ceil_div(double a, double b) {
  return std::ceil(a / b);
}

struct Row {
  std::vector<std::string> names;
  std::vector<float> values;
  void add(const char* name, double v) {
    names.emplace_back(name);
    values.push_back(static_cast<float>(v));
  }
};

Row build(const WarpTileConfig& c, const Problem& p, int sm_count) {
  Row r;
  for (const auto& f : kConfigFields) r.add(f.name.data(), c.*f.member);
  const KernelFamily& family = family_of(c);
  // The family, as its place in the registry (0 the warp-tiling family, 1 the TMA-fed one: the
  // values the field TMA had when it named them; 2 tf32x3, 3 tf32x3_wg).
  const auto& all = families();
  r.add("family", static_cast<double>(std::find(all.begin(), all.end(), &family) - all.begin()));
  // The family's own statement of a thread's work: the warp-tiling geometry's (derive()) for
  // the families built on it, the mma tiles' for tf32x3.
  const auto work = family.thread_work(c);
  const bool ta = p.layout.size() == 2 && p.layout[0] == 'T';
  const bool tb = p.layout.size() == 2 && p.layout[1] == 'T';
  const double M = static_cast<double>(p.M), N = static_cast<double>(p.N),
               K = static_cast<double>(p.K);
  const int threads = family.block_threads(c);
  const double smem = static_cast<double>(family.block_shared_bytes(c, ta, tb));
  const double regs_per_block =
      static_cast<double>(threads) *
      std::min<double>(kRegistersPerThreadGuess, 32.0 + 1.5 * work.accumulators);
  const double by_threads = std::floor(kThreadsPerSm / std::max(1, threads));
  const double by_smem = smem > 0 ? std::floor(kSharedPerSm / smem) : by_threads;
  const double by_regs = std::floor(65536.0 / std::max(1.0, regs_per_block));
  const double blocks_per_sm = std::max(1.0, std::min({by_threads, by_smem, by_regs}));
  const double tiles_m = ceil_div(M, c.BM), tiles_n = ceil_div(N, c.BN);
  const double blocks = tiles_m * tiles_n * c.SPLIT_K;
  const double slots = blocks_per_sm * std::max(1, sm_count);
  const double waves = blocks / slots;
  r.add("accumulators", work.accumulators);
  r.add("fragments", work.fragments);
  r.add("wmiter", work.m_tiles);
  r.add("warps", c.NUM_THREADS / 32.0);
  r.add("threads", threads);
  r.add("smem_kb", smem / 1024.0);
  r.add("blocks_per_sm", blocks_per_sm);
  r.add("log_blocks", std::log2(std::max(1.0, blocks)));
  r.add("waves", waves);
  r.add("wave_efficiency", waves / std::max(1.0, std::ceil(waves)));
  r.add("edge_waste", tiles_m * c.BM * tiles_n * c.BN / (M * N) - 1.0);
  r.add("k_per_split", K / c.SPLIT_K);
  r.add("k_steps", ceil_div(K / c.SPLIT_K, c.BK));
  r.add("tile_intensity", c.BM * c.BN / static_cast<double>(c.BM + c.BN));
  r.add("thread_intensity", work.intensity);
  r.add("trans_a", ta);
  r.add("trans_b", tb);
  r.add("vec_loads", kernel_vec_loads(p));
  r.add("log_m", std::log2(M));
  r.add("log_n", std::log2(N));
  r.add("log_k", std::log2(K));
  r.add("log_flops", std::log2(p.flops()));
  return r;
}

}  // namespace

const std::vector<std::string>& feature_names() {
  static const auto names =
      build(*from_name("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1"), parse_shape("1024x1024x1024"), 132)
          .names;
  return names;
}

std::vector<float> features(const WarpTileConfig& c, const Problem& p, int sm_count) {
  return build(c, p, sm_count).values;
}

}  // namespace sgt
