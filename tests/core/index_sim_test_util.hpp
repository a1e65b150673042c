// What the index simulation's tests share: configs by name, the structural rules a config
// breaks, the layouts and kernel instances a block can run in, and a launch whose split-K ranges
// are not whole slices.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "index_sim.hpp"

namespace sgt::sim_test {

inline WarpTileConfig named(const std::string& name) {
  auto c = from_name(name);
  EXPECT_TRUE(c.has_value()) << name;
  return c.value_or(WarpTileConfig{});
}

inline const std::string kSeed = "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1";

// The rules of a check's violations, in its order.
inline std::vector<std::string> rule_names(const std::vector<RuleViolation>& v) {
  std::vector<std::string> out;
  for (const auto& r : v) out.push_back(r.rule);
  return out;
}

inline bool is_structural(const std::string& rule) {
  for (const auto& r : rules()) {
    if (r.name == rule) return r.structural;
  }
  ADD_FAILURE() << "check() reported a rule missing from rules(): " << rule;
  return false;
}

inline std::vector<std::string> structural_violations(const WarpTileConfig& c) {
  std::vector<std::string> out;
  for (const auto& v : check(c)) {
    if (is_structural(v.rule)) out.push_back(v.rule);
  }
  return out;
}

inline std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

// Calls f for every combination of per-field value lists (kConfigFields order).
template <typename F>
void for_each_combo(const std::vector<std::vector<int>>& values, F&& f) {
  std::vector<size_t> idx(values.size(), 0);
  for (;;) {
    WarpTileConfig c;
    for (size_t i = 0; i < values.size(); ++i) c.*kConfigFields[i].member = values[i][idx[i]];
    f(c);
    size_t i = values.size();
    while (i > 0) {
      --i;
      if (++idx[i] < values[i].size()) break;
      idx[i] = 0;
      if (i == 0) return;
    }
  }
}

inline void expect_all_clean(const std::vector<WarpTileConfig>& configs) {
  const auto reports = simulate_configs(configs);
  ASSERT_EQ(reports.size(), configs.size());
  int bad = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (!reports[i].ok() && ++bad <= 5) {
      ADD_FAILURE() << to_name(configs[i]) << ":\n" << reports[i].summary();
    }
  }
  EXPECT_EQ(bad, 0) << "survivors with defects";
}

inline SimCase layout(bool trans_a, bool trans_b) {
  SimCase sc;
  sc.trans_a = trans_a;
  sc.trans_b = trans_b;
  return sc;
}

inline const SimCase kLayouts[] = {layout(false, false), layout(false, true), layout(true, false),
                                   layout(true, true)};

// Whether the kernel could read this case's whole slices as float4s: where a float4 runs along M
// (A^T) or N (B), the matrix must go on past the tile or end on a multiple of 4 there.
inline bool vec_legal(const SimCase& sc) {
  return (!sc.trans_a || sc.m_rem % 4 == 0) && (sc.trans_b || sc.n_rem % 4 == 0);
}

// The layout's boundary block with the given remainders, on the float4 instance (vec_loads: with
// operands that allow float4s, else edge loop only) or, with vec_kernel false, the scalar one.
inline SimCase edge(const SimCase& lay, int m_rem, int n_rem, int k_rem, bool vec_loads,
                    bool vec_kernel = true) {
  SimCase sc = lay;
  sc.m_rem = m_rem;
  sc.n_rem = n_rem;
  sc.k_rem = k_rem;
  sc.vec_loads = vec_loads;
  sc.vec_kernel = vec_kernel;
  return sc;
}
// The layout's boundary block on the scalar instance (VEC = false), which the tuner picks for
// operands that refuse float4s.
inline SimCase scalar_kernel(const SimCase& lay, int m_rem, int n_rem, int k_rem) {
  return edge(lay, m_rem, n_rem, k_rem, false, false);
}

// The ways a block's main-loop loads can go: {vec_kernel, vec_loads}. The float4 instance with
// float4 loads, the float4 instance whose operands refuse them (the edge loop only), the scalar
// instance.
inline constexpr std::pair<bool, bool> kInstances[] = {{true, true}, {true, false}, {false, false}};

// Split-K ranges of ceil(K / splits), which need not be whole BK slices.
inline sgt_kernel::LaunchDims unrounded_chunk(long long M, long long N, long long K, int BM, int BN,
                                              int BK, int splits) {
  auto d = sgt_kernel::launch_dims(M, N, K, BM, BN, BK, splits);
  if (d.grid_z > 1) {
    d.k_chunk = static_cast<int>((K + splits - 1) / splits);  // not whole BK slices
    d.grid_z = static_cast<int>((K + d.k_chunk - 1) / d.k_chunk);
    d.workspace_floats = d.grid_z * M * N;
  }
  return d;
}

}  // namespace sgt::sim_test
