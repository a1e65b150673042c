// Builders for the DB tests: a plausible GPU fingerprint, distinct configs and fully populated
// trials, plus file helpers.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "config.hpp"
#include "kernel_source.hpp"
#include "problem.hpp"
#include "sqlite.hpp"
#include "store.hpp"
#include "trial.hpp"

namespace sgt::test {

inline GpuFingerprint h200(int driver = 13000, int nvrtc_major = 12) {
  GpuFingerprint g;
  g.name = "NVIDIA H200";
  g.uuid = "GPU-0d7a4b1e-5c7e-4e3a-9d59-3f5a1a1b2c3d";
  g.cc_major = 9;
  g.cc_minor = 0;
  g.sm_count = 132;
  g.memory_bytes = 150'000'000'000LL;
  g.l2_bytes = 60 * 1024 * 1024;
  g.smem_optin_bytes = 227 * 1024;
  g.sm_clock_khz = 1'980'000;
  g.mem_clock_khz = 3'201'000;
  g.driver_version = driver;
  g.runtime_version = 12080;
  g.nvrtc_major = nvrtc_major;
  g.nvrtc_minor = 8;
  return g;
}

inline GpuFingerprint a100() {
  GpuFingerprint g = h200();
  g.name = "NVIDIA A100-SXM4-80GB";
  g.uuid = "GPU-a100";
  g.cc_major = 8;
  g.sm_count = 108;
  return g;
}

inline Problem shape(long long M, long long N, long long K, std::string layout = "NN") {
  Problem p;
  p.M = M;
  p.N = N;
  p.K = K;
  p.layout = std::move(layout);
  return p;
}

// Distinct configs for distinct i (the names differ through MIN_BLOCKS and BK).
inline WarpTileConfig config_n(int i) {
  WarpTileConfig c = *from_name(db::kDefaultConfigName);
  c.MIN_BLOCKS = 1 + i % 1000;
  c.BK = 8 * (1 + i / 1000);
  return c;
}

// A trial with every field set to something other than its default.
inline Trial make_trial(const Problem& p, int i, double median_ms,
                        TrialStatus status = TrialStatus::ok) {
  Trial t;
  t.config = config_n(i);
  t.config_name = to_name(t.config);
  t.problem = p;
  t.status = status;
  t.reason = status == TrialStatus::ok ? "" : "ptxas: too many resources requested";
  t.time.median_ms = median_ms;
  t.time.min_ms = median_ms * 0.97;
  t.time.max_ms = median_ms * 1.05;
  t.time.spread = 0.08;
  t.time.repetitions = 25;
  t.cut_early = (i % 2) == 1;
  t.gflops = median_ms > 0 ? p.flops() / (median_ms * 1e6) : 0;
  t.verify_error = 1.5e-7;
  t.registers = 128;
  t.spill_bytes = 4;
  t.stack_bytes = 16;
  t.shared_bytes = 12288;
  t.cublas_median_ms = 1.25;
  t.kernel_template = std::string(kKernelTemplateName);
  t.kernel_hash = kernel_source_hash();
  t.tuner_version = "0.1.0-test";
  t.strategy = "random";
  t.seed = 0xfeedface12345678ULL + static_cast<std::uint64_t>(i);  // above INT64_MAX on purpose
  t.timestamp = "2025-06-01T12:00:00Z";
  return t;
}

// A winner's edge-check suite of `n` cases in the trial's layout, the first `failed` of them
// failing; every field differs between cases.
inline std::vector<EdgeCheck> edge_checks(const Problem& p, int n, int failed = 0) {
  std::vector<EdgeCheck> out;
  for (int i = 0; i < n; ++i) {
    EdgeCheck e;
    e.label = "case-" + std::to_string(i);
    e.problem.M = 1 + 7 * i;
    e.problem.N = 3 + 5 * i;
    e.problem.K = i == n - 1 ? 0 : 2 + 3 * i;  // the last one: K = 0
    e.problem.layout = p.layout;
    e.lda = e.problem.K + i + 1;
    e.ldb = e.problem.N + 2 * i + 1;
    e.ldc = e.problem.N + 3 * i + 1;
    e.offset = i % 4;
    e.alpha = 1.0f + 0.5f * static_cast<float>(i);
    e.beta = i % 2 ? -0.75f : 0.0f;
    e.passed = i >= failed;
    e.error = e.passed ? 1e-7 * (i + 1) : 0.25 + i;
    e.reason = e.passed ? "" : "mismatch at C[0][" + std::to_string(i) + "]";
    out.push_back(std::move(e));
  }
  return out;
}

inline nlohmann::json as_json(const Trial& t) {
  return nlohmann::json(t);
}

inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

inline std::string q(const std::filesystem::path& p) {
  return "'" + p.string() + "'";
}

// A raw connection for what the store must never do itself: lock, damage, or rewrite the header.
inline long long count_rows(const std::filesystem::path& db, const char* sql) {
  db::Connection c(db, SQLITE_OPEN_READONLY, 1000);
  db::Stmt s(c, sql);
  s.step();
  return s.int64(0);
}

}  // namespace sgt::test
