// The edge-shape verification suite of a config.
#include "edge_cases.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "family.hpp"

namespace sgt {

long long min_lda(const Problem& p) {
  return std::max(1LL, p.layout[0] == 'T' ? p.M : p.K);
}
long long min_ldb(const Problem& p) {
  return std::max(1LL, p.layout[1] == 'T' ? p.K : p.N);
}
long long min_ldc(const Problem& p) {
  return std::max(1LL, p.N);
}

std::vector<EdgeCheck> edge_cases(const WarpTileConfig& c, const std::string& layout) {
  std::vector<EdgeCheck> out;
  const KernelFamily& family = family_of(c);
  auto add = [&](std::string label, long long M, long long N, long long K, long long pad = 0,
                 int offset = 0, float alpha = 1.0f, float beta = 0.0f) {
    EdgeCheck e;
    e.label = std::move(label);
    e.problem.M = std::max(0LL, M);
    e.problem.N = std::max(0LL, N);
    e.problem.K = std::max(0LL, K);
    e.problem.layout = layout;
    e.lda = min_lda(e.problem) + pad;
    e.ldb = min_ldb(e.problem) + pad;
    e.ldc = min_ldc(e.problem) + pad;
    e.offset = offset;
    // What the family's kernel is served (the TMA kernel: rows of whole float4s).
    family.adjust_edge_case(c, e);
    e.alpha = alpha;
    e.beta = beta;
    out.push_back(std::move(e));
  };
  const long long BM = c.BM, BN = c.BN, BK = c.BK;
  add("one", 1, 1, 1);
  add("tile-3", BM - 3, BN - 3, BK - 3);
  add("tile+1", BM + 1, BN + 1, BK + 1);
  add("tile", BM, BN, BK);
  add("primes", 127, 251, 61);
  add("primes-large", 2 * BM + 29, 3 * BN + 17, 8 * BK + 13);
  add("K%BK", 2 * BM, 2 * BN, 3 * BK + 5);
  add("K=0", BM + 5, BN + 7, 0, 0, 0, 2.0f, 0.5f);
  add("M=0", 0, BN, BK);
  add("N=0", BM, 0, BK);
  add("skinny-M", 3, 4 * BN + 1, 4 * BK);
  add("skinny-N", 4 * BM + 1, 5, 4 * BK);
  add("ld+4", 2 * BM, 2 * BN, 4 * BK, 4);  // padded, still 16-byte aligned: the float4 path
  add("ld+3", 2 * BM + 1, 2 * BN + 3, 4 * BK + 1, 3);  // unaligned rows: the scalar path
  add("offset", 2 * BM, 2 * BN, 4 * BK, 0, 1);         // pointers 4 bytes past alignment
  add("offset-ld+5", 2 * BM + 3, BN + 1, 2 * BK + 2, 5, 3);
  add("alpha-beta", BM + 9, BN + 11, 2 * BK + 7, 0, 0, 1.5f, -0.75f);
  add("beta=1", 2 * BM, 2 * BN, 2 * BK, 0, 0, -1.0f, 1.0f);
  add("alpha=0", BM + 1, BN + 2, BK + 3, 0, 0, 0.0f, 0.25f);
  // Deep enough for every split of a split-K config to own several k-slices and one to be ragged.
  add("deep-K", BM + 2, BN + 2, BK * std::max(4, 3 * c.SPLIT_K) + 7, 0, 0, 1.25f, 0.5f);
  // Edge tiles on the float4 main loop: every extent a multiple of 4 but no tile multiple, so the
  // blocks that stick out read clamped rows and columns. One with whole k-slices, one with a
  // partial last slice as well, one where most of every block lies outside the matrix, and one
  // split over k.
  add("edge-float4", 2 * BM + 4, BN + 12, 4 * BK, 0, 0, 1.0f, 0.5f);
  add("edge-float4-K%BK", BM + 8, 2 * BN + 4, 3 * BK + 4);
  add("edge-float4-small", 4, 8, 2 * BK + 4, 0, 0, -1.0f, 2.0f);
  add("edge-float4-deep-K", BM + 4, BN + 4, BK * std::max(4, 3 * c.SPLIT_K) + 4);
  return out;
}

std::vector<EdgeCheck> accuracy_stress_cases(const WarpTileConfig& c, const Problem& problem) {
  const KernelFamily& family = family_of(c);
  const auto up = [](long long v) { return (std::max(v, 64LL) + 63) / 64 * 64; };
  const long long M = up(problem.M), N = up(problem.N), K = up(problem.K);
  std::vector<EdgeCheck> out;
  for (const char* label : {"exponents", "underflow", "cancellation"}) {
    EdgeCheck e;
    e.label = label;
    e.problem.M = M;
    e.problem.N = N;
    e.problem.K = K;
    e.problem.layout = problem.layout;
    e.lda = min_lda(e.problem);
    e.ldb = min_ldb(e.problem);
    e.ldc = min_ldc(e.problem);
    family.adjust_edge_case(c, e);
    out.push_back(std::move(e));
  }
  return out;
}

std::string describe(const EdgeCheck& e) {
  std::string s = fmt::format("{} {}", e.problem.shape(), e.problem.layout);
  const Problem& p = e.problem;
  if (e.lda != min_lda(p) || e.ldb != min_ldb(p) || e.ldc != min_ldc(p))
    s += fmt::format(" ld {}/{}/{}", e.lda, e.ldb, e.ldc);
  if (e.offset != 0) s += fmt::format(" off{}", e.offset);
  if (e.alpha != 1.0f || e.beta != 0.0f) s += fmt::format(" a{:g} b{:g}", e.alpha, e.beta);
  return s;
}

}  // namespace sgt
