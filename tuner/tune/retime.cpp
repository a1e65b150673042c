// Re-timing a config beside cuBLAS and cuBLASLt, and the benchmark report (summary, CSV, JSON).
#include "retime.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "file_util.hpp"
#include "precision.hpp"
#include "tune.hpp"
#include "worker_protocol.hpp"

namespace sgt::tune {

namespace {

// A CSV field as RFC 4180 wants it: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Empty when not measured, so that a reader never mistakes a missing time for a zero one.
std::string number(bool have, double v, int decimals) {
  return have ? fmt::format("{:.{}f}", v, decimals) : std::string();
}

// A watchdog generous enough for a kernel 100x slower than cuBLAS, yet bounded.
std::chrono::milliseconds trial_timeout(double cublas_ms, int reps) {
  const double ms = 10000.0 + 100.0 * cublas_ms * (reps + 3);
  return std::chrono::milliseconds(static_cast<long long>(ms));
}

void keep_best(TimeStats& best, const TimeStats& t) {
  if (best.repetitions == 0 || t.median_ms < best.median_ms) best = t;
}

}  // namespace

std::string bench_label(const Problem& p) {
  return p.shape() + " " + p.layout;
}

namespace {

RatioSummary summarize_ratio(const std::vector<BenchRow>& rows, double threshold,
                             const std::function<double(const BenchRow&)>& ratio) {
  RatioSummary s;
  double log_sum = 0;
  for (const auto& r : rows) {
    const double q = ratio(r);
    if (!(q > 0)) continue;
    log_sum += std::log(q);
    if (s.measured == 0 || q < s.min_ratio) {
      s.min_ratio = q;
      s.min_label = bench_label(r.problem);
    }
    if (s.measured == 0 || q > s.max_ratio) s.max_ratio = q;
    if (q < threshold) ++s.below;
    ++s.measured;
  }
  if (s.measured > 0) s.geomean = std::exp(log_sum / s.measured);
  return s;
}

}  // namespace

BenchSummary summarize_bench(const std::vector<BenchRow>& rows, double threshold) {
  BenchSummary s;
  s.threshold = threshold;
  s.total = static_cast<int>(rows.size());
  const auto main = summarize_ratio(rows, threshold, &BenchRow::ratio);
  s.measured = main.measured;
  s.geomean = main.geomean;
  s.min_ratio = main.min_ratio;
  s.max_ratio = main.max_ratio;
  s.min_label = main.min_label;
  s.below = main.below;
  s.lt = summarize_ratio(rows, threshold, &BenchRow::ratio_lt);
  s.cold = summarize_ratio(rows, threshold, &BenchRow::ratio_cold);
  s.lt_cold = summarize_ratio(rows, threshold, &BenchRow::ratio_lt_cold);
  s.tf32 = summarize_ratio(rows, threshold, &BenchRow::ratio_tf32);
  s.tf32_cold = summarize_ratio(rows, threshold, &BenchRow::ratio_tf32_cold);
  return s;
}

std::string bench_csv(const std::vector<BenchRow>& rows) {
  std::string csv =
      "shape,M,N,K,layout,config,tuned_ms,cublas_ms,ratio,tuned_gflops,cublas_gflops,status,gpu,"
      "date,source,space,loads,reps,tuned_spread,cublas_spread,seed,reason,device,cublaslt_ms,"
      "ratio_lt,cublaslt_spread,lt_algos,lt_failed,lt_algo,lt_reason,tuned_cold_ms,cublas_cold_ms,"
      "cublaslt_cold_ms,ratio_cold,ratio_lt_cold,rotate_copies,cublas_tf32_ms,ratio_tf32,"
      "cublas_tf32_spread,tf32_error_ratio,cublas_tf32_cold_ms,ratio_tf32_cold,tf32_reason\n";
  for (const auto& r : rows) {
    const bool t = r.tuned_ms > 0, c = r.cublas_ms > 0, m = r.measured();
    const bool lt = r.cublaslt_ms > 0;
    csv += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},", r.problem.shape(),
        r.problem.M, r.problem.N, r.problem.K, csv_field(r.problem.layout), csv_field(r.config),
        number(t, r.tuned_ms, 6), number(c, r.cublas_ms, 6), number(m, r.ratio(), 4),
        number(t, r.tuned_gflops(), 1), number(c, r.cublas_gflops(), 1), csv_field(r.status),
        csv_field(r.gpu), csv_field(r.date), csv_field(r.source), csv_field(r.space),
        csv_field(r.loads), r.repetitions > 0 ? std::to_string(r.repetitions) : std::string(),
        number(t, r.tuned_spread, 4), number(c, r.cublas_spread, 4), r.seed, csv_field(r.reason),
        r.device >= 0 ? std::to_string(r.device) : std::string());
    auto count = [](bool have, int n) { return have ? std::to_string(n) : std::string(); };
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},", number(lt, r.cublaslt_ms, 6),
                       number(r.ratio_lt() > 0, r.ratio_lt(), 4), number(lt, r.cublaslt_spread, 4),
                       count(r.lt_searched, r.lt_algos), count(r.lt_searched, r.lt_failed),
                       csv_field(r.lt_algo), csv_field(r.lt_reason),
                       number(r.tuned_cold_ms > 0, r.tuned_cold_ms, 6),
                       number(r.cublas_cold_ms > 0, r.cublas_cold_ms, 6),
                       number(r.cublaslt_cold_ms > 0, r.cublaslt_cold_ms, 6),
                       number(r.ratio_cold() > 0, r.ratio_cold(), 4),
                       number(r.ratio_lt_cold() > 0, r.ratio_lt_cold(), 4),
                       count(r.rotate_copies > 0, r.rotate_copies));
    const bool tf32 = r.cublas_tf32_ms > 0;
    csv += fmt::format(
        "{},{},{},{},{},{},{}\n", number(tf32, r.cublas_tf32_ms, 6),
        number(r.ratio_tf32() > 0, r.ratio_tf32(), 4), number(tf32, r.cublas_tf32_spread, 4),
        r.tf32_error_ratio > 0 ? fmt::format("{:.4g}", r.tf32_error_ratio) : std::string(),
        number(r.cublas_tf32_cold_ms > 0, r.cublas_tf32_cold_ms, 6),
        number(r.ratio_tf32_cold() > 0, r.ratio_tf32_cold(), 4), csv_field(r.tf32_reason));
  }
  return csv;
}

void to_json(nlohmann::json& j, const BenchRow& r) {
  j = {{"shape", r.problem.shape()},
       {"M", r.problem.M},
       {"N", r.problem.N},
       {"K", r.problem.K},
       {"layout", r.problem.layout},
       {"config", r.config},
       {"status", r.status},
       {"source", r.source},
       {"space", r.space},
       {"loads", r.loads},
       {"tuned_ms", r.tuned_ms},
       {"cublas_ms", r.cublas_ms},
       {"ratio", r.ratio()},
       {"tuned_gflops", r.tuned_gflops()},
       {"cublas_gflops", r.cublas_gflops()},
       {"tuned_spread", r.tuned_spread},
       {"cublas_spread", r.cublas_spread},
       {"reps", r.repetitions},
       {"seed", r.seed},
       {"gpu", r.gpu},
       {"date", r.date},
       {"device", r.device},
       {"cublaslt_ms", r.cublaslt_ms},
       {"ratio_lt", r.ratio_lt()},
       {"cublaslt_spread", r.cublaslt_spread},
       {"lt_algos", r.lt_algos},
       {"lt_failed", r.lt_failed},
       {"lt_algo", r.lt_algo},
       {"tuned_cold_ms", r.tuned_cold_ms},
       {"cublas_cold_ms", r.cublas_cold_ms},
       {"cublaslt_cold_ms", r.cublaslt_cold_ms},
       {"ratio_cold", r.ratio_cold()},
       {"ratio_lt_cold", r.ratio_lt_cold()},
       {"rotate_copies", r.rotate_copies},
       {"cublas_tf32_ms", r.cublas_tf32_ms},
       {"ratio_tf32", r.ratio_tf32()},
       {"cublas_tf32_spread", r.cublas_tf32_spread},
       {"tf32_error_ratio", r.tf32_error_ratio},
       {"cublas_tf32_cold_ms", r.cublas_tf32_cold_ms},
       {"ratio_tf32_cold", r.ratio_tf32_cold()}};
  if (!r.reason.empty()) j["reason"] = r.reason;
  if (!r.lt_reason.empty()) j["lt_reason"] = r.lt_reason;
  if (!r.tf32_reason.empty()) j["tf32_reason"] = r.tf32_reason;
}

void to_json(nlohmann::json& j, const RatioSummary& s) {
  j = {{"measured", s.measured},   {"geomean_ratio", s.geomean}, {"min_ratio", s.min_ratio},
       {"min_shape", s.min_label}, {"max_ratio", s.max_ratio},   {"below_threshold", s.below}};
}

void to_json(nlohmann::json& j, const BenchSummary& s) {
  j = {{"shapes", s.total},        {"measured", s.measured},    {"geomean_ratio", s.geomean},
       {"min_ratio", s.min_ratio}, {"min_shape", s.min_label},  {"max_ratio", s.max_ratio},
       {"threshold", s.threshold}, {"below_threshold", s.below}};
  j["ratio_lt"] = s.lt;
  j["ratio_cold"] = s.cold;
  j["ratio_lt_cold"] = s.lt_cold;
  j["ratio_tf32"] = s.tf32;
  j["ratio_tf32_cold"] = s.tf32_cold;
}

std::string lt_search_reason(const LtSearch& s) {
  if (s.best_algo()) return {};
  if (s.algos.empty()) return "cuBLASLt's heuristic returned no algorithm for this problem";
  std::map<std::string, int> by_status;
  std::string first;
  for (const auto& a : s.algos) {
    if (a.status == TrialStatus::ok) continue;
    ++by_status[std::string(to_string(a.status))];
    if (first.empty() && !a.reason.empty()) first = a.reason;
  }
  std::string counts;
  for (const auto& [k, v] : by_status)
    counts += fmt::format("{}{}={}", counts.empty() ? "" : " ", k, v);
  return fmt::format("none of the {} algorithms of cuBLASLt's heuristic passed ({}){}",
                     s.algos.size(), counts.empty() ? "every one cut" : counts,
                     first.empty() ? "" : "; first: " + first);
}

namespace {

std::string cell(bool have, double v, int decimals) {
  return have ? fmt::format("{:.{}f}", v, decimals) : std::string("-");
}

void ratio_line(std::string& out, const std::string& what, const RatioSummary& r, int total,
                double threshold) {
  if (r.measured == 0) {
    out += fmt::format("{}: measured on no shape\n", what);
    return;
  }
  out += fmt::format(
      "geometric mean of {}: {:.3f} over {} of {} shapes; minimum {:.3f} ({}); below {:.2f}: "
      "{}\n",
      what, r.geomean, r.measured, total, r.min_ratio, r.min_label, threshold, r.below);
}

// What was timed, and how: the table's first lines.
std::string table_title(const BenchTableOptions& w) {
  const size_t gpus = w.gpus;
  std::string out = fmt::format(
      "Tuned winners against cuBLAS FP32{}{} on {} (same run{}; median of {} repetitions, best of "
      "{} interleaved rounds per side)\n",
      w.cublaslt ? " and cuBLASLt FP32 (the fastest of its heuristic's algorithms)" : "",
      w.cublas_tf32 ? " and cuBLAS 1xTF32 (TF32 tensor cores: NOT FP32-accurate)" : "",
      gpus > 1 ? fmt::format("{} x {}", gpus, w.gpu_name) : w.gpu_name,
      gpus > 1 ? ", all sides of a shape on the GPU in its last column" : "", w.reps, w.rounds);
  const std::string rotation = fmt::format(
      "a cold L2: each repetition on the next of a shape's copies of the operands (rotate_copies "
      "in the CSV), the others together at least {}x the L2",
      kRotationL2Factor);
  if (w.flush && w.rotate) {
    out += fmt::format(
        "times with the L2 flushed before each repetition; the _cold ratios with {}\n\n", rotation);
  } else if (w.flush) {
    out += fmt::format("times with the L2 flushed before each repetition\n\n");
  } else {
    out += fmt::format("times with {}\n\n", rotation);
  }
  return out;
}

// The table's head: the columns asked for (the cold ones head it when only they were timed).
std::string table_head(const BenchTableOptions& w) {
  const bool cold_times = !w.flush;
  std::string head = fmt::format("{:<20} {:<6} {:<44} {:>10} {:>10}", "shape", "layout", "winner",
                                 "tuned ms", "cuBLAS ms");
  if (w.cublaslt) head += fmt::format(" {:>11}", "cuBLASLt ms");
  if (w.cublas_tf32) head += fmt::format(" {:>9}", "TF32 ms");
  head += fmt::format(" {:>10}", cold_times ? "ratio_cold" : "ratio");
  if (w.cublaslt) head += fmt::format(" {:>13}", cold_times ? "ratio_lt_cold" : "ratio_lt");
  if (w.cublas_tf32)
    head += fmt::format(" {:>15} {:>8}", cold_times ? "ratio_tf32_cold" : "ratio_tf32", "tf32_err");
  if (w.flush && w.rotate) {
    head += fmt::format(" {:>10}", "ratio_cold");
    if (w.cublaslt) head += fmt::format(" {:>13}", "ratio_lt_cold");
    if (w.cublas_tf32) head += fmt::format(" {:>15}", "ratio_tf32_cold");
  }
  head += fmt::format(" {:>9}", "GFLOP/s");
  if (w.gpus > 1) head += fmt::format(" {:>4}", "GPU");
  return head + "\n";
}

// One row: its times and ratios, or its status and why when nothing was measured.
std::string table_line(const BenchRow& r, const BenchTableOptions& w) {
  const size_t gpus = w.gpus;
  if (!r.measured_any()) {
    return fmt::format("{:<20} {:<6} {:<44} {}{}{}\n", r.problem.shape(), r.problem.layout,
                       r.config.empty() ? "-" : r.config, r.status,
                       r.reason.empty() ? "" : ": " + r.reason,
                       gpus > 1 && r.device >= 0 ? fmt::format(" (GPU {})", r.device) : "");
  }
  const bool cold_times = !w.flush;
  const double tuned = cold_times ? r.tuned_cold_ms : r.tuned_ms;
  const double cublas = cold_times ? r.cublas_cold_ms : r.cublas_ms;
  const double lt = cold_times ? r.cublaslt_cold_ms : r.cublaslt_ms;
  const double tf32 = cold_times ? r.cublas_tf32_cold_ms : r.cublas_tf32_ms;
  const double ratio = cold_times ? r.ratio_cold() : r.ratio();
  const double ratio_lt = cold_times ? r.ratio_lt_cold() : r.ratio_lt();
  const double ratio_tf32 = cold_times ? r.ratio_tf32_cold() : r.ratio_tf32();
  std::string line =
      fmt::format("{:<20} {:<6} {:<44} {:>10} {:>10}", r.problem.shape(), r.problem.layout,
                  r.config, cell(tuned > 0, tuned, 4), cell(cublas > 0, cublas, 4));
  if (w.cublaslt) line += fmt::format(" {:>11}", cell(lt > 0, lt, 4));
  if (w.cublas_tf32) line += fmt::format(" {:>9}", cell(tf32 > 0, tf32, 4));
  line += fmt::format(" {:>10}", cell(ratio > 0, ratio, 3));
  if (w.cublaslt) line += fmt::format(" {:>13}", cell(ratio_lt > 0, ratio_lt, 3));
  if (w.cublas_tf32) {
    line += fmt::format(
        " {:>15} {:>8}", cell(ratio_tf32 > 0, ratio_tf32, 3),
        r.tf32_error_ratio > 0 ? fmt::format("{:.3g}", r.tf32_error_ratio) : std::string("-"));
  }
  if (w.flush && w.rotate) {
    line += fmt::format(" {:>10}", cell(r.ratio_cold() > 0, r.ratio_cold(), 3));
    if (w.cublaslt)
      line += fmt::format(" {:>13}", cell(r.ratio_lt_cold() > 0, r.ratio_lt_cold(), 3));
    if (w.cublas_tf32)
      line += fmt::format(" {:>15}", cell(r.ratio_tf32_cold() > 0, r.ratio_tf32_cold(), 3));
  }
  const double gflops = tuned > 0 ? r.problem.flops() / (tuned * 1e6) : 0;
  line += fmt::format(" {:>9}", cell(gflops > 0, gflops, 1));
  if (gpus > 1) line += fmt::format(" {:>4}", r.device >= 0 ? std::to_string(r.device) : "-");
  return line + "\n";
}

// Why a measured row has no time of a peer that was asked for, and what the columns mean.
std::string table_notes(const std::vector<BenchRow>& rows, const BenchTableOptions& w) {
  std::string out;
  for (const auto& r : rows) {
    if (!r.measured_any()) continue;
    if (w.cublaslt && r.lt_searched && !r.lt_reason.empty()) {
      out += fmt::format("no cuBLASLt time for {}: {}\n", bench_label(r.problem),
                         terminal_safe(r.lt_reason));
    }
    if (w.cublas_tf32 && r.tf32_timed && !r.tf32_reason.empty()) {
      out += fmt::format("no cuBLAS 1xTF32 time for {}: {}\n", bench_label(r.problem),
                         terminal_safe(r.tf32_reason));
    }
  }
  out += fmt::format(
      "\nratio = cuBLAS time / tuned time (tuned speed relative to cuBLAS; above 1: "
      "faster){}{}{}\n",
      w.cublaslt ? "; ratio_lt the same against cuBLASLt" : "",
      w.cublas_tf32 ? "; ratio_tf32 the same against cuBLAS 1xTF32" : "",
      w.rotate ? "; _cold: with a cold L2" : "");
  if (w.cublas_tf32) {
    out += fmt::format(
        "cuBLAS 1xTF32 (CUBLAS_COMPUTE_32F_FAST_TF32: operands rounded to TF32) is NOT "
        "FP32-accurate: tf32_err = its error against FP64 / cuBLAS FP32's (an fp32-accurate "
        "kernel's is at most {:g}); ratio_tf32 weighs the FP32 kernel against a less accurate "
        "GEMM\n",
        kAccurateErrorRatioMax);
  }
  return out;
}

// The summary of each ratio asked for, and the suite's figure in one line, each way it was timed.
std::string table_summary(const BenchSummary& s, const BenchTableOptions& w) {
  std::string out;
  if (s.measured == 0 && s.cold.measured == 0) {
    return fmt::format("no shape was measured ({} in the suite)\n", s.total);
  }
  if (w.flush) {
    if (s.measured == 0) {
      out += fmt::format("ratio: measured on no shape\n");
    } else {
      out += fmt::format("geometric mean of the ratio: {:.3f} over {} of {} shapes\n", s.geomean,
                         s.measured, s.total);
      out += fmt::format("minimum ratio: {:.3f} ({}); maximum {:.3f}\n", s.min_ratio, s.min_label,
                         s.max_ratio);
      out += fmt::format("shapes below {:.2f}: {} of {}\n", s.threshold, s.below, s.measured);
    }
    if (w.cublaslt) ratio_line(out, "ratio_lt (cuBLASLt)", s.lt, s.total, s.threshold);
    if (w.cublas_tf32)
      ratio_line(out, "ratio_tf32 (cuBLAS 1xTF32, not FP32-accurate)", s.tf32, s.total,
                 s.threshold);
  }
  if (w.rotate) {
    ratio_line(out, "ratio_cold (cuBLAS, cold L2)", s.cold, s.total, s.threshold);
    if (w.cublaslt)
      ratio_line(out, "ratio_lt_cold (cuBLASLt, cold L2)", s.lt_cold, s.total, s.threshold);
    if (w.cublas_tf32)
      ratio_line(out, "ratio_tf32_cold (cuBLAS 1xTF32, cold L2)", s.tf32_cold, s.total,
                 s.threshold);
  }
  auto way = [&](double cublas, const RatioSummary& lt, const RatioSummary& tf32, const char* how) {
    std::string t = fmt::format("{:.3f}x cuBLAS", cublas);
    if (w.cublaslt)
      t += lt.measured > 0 ? fmt::format(", {:.3f}x cuBLASLt", lt.geomean)
                           : std::string(", cuBLASLt not measured");
    if (w.cublas_tf32)
      t += tf32.measured > 0 ? fmt::format(", {:.3f}x cuBLAS 1xTF32", tf32.geomean)
                             : std::string(", cuBLAS 1xTF32 not measured");
    return t + " " + how;
  };
  std::vector<std::string> ways;
  if (w.flush && s.measured > 0)
    ways.push_back(way(s.geomean, s.lt, s.tf32, "with the L2 flushed"));
  if (w.rotate && s.cold.measured > 0)
    ways.push_back(way(s.cold.geomean, s.lt_cold, s.tf32_cold, "with a cold L2"));
  std::string line;
  for (const auto& x : ways) line += (line.empty() ? "" : "; ") + x;
  out += fmt::format("suite (geometric means): {}\n", line);
  return out;
}

}  // namespace

std::string bench_table(const std::vector<BenchRow>& rows, const BenchSummary& s,
                        const BenchTableOptions& w) {
  std::string out = table_title(w) + table_head(w);
  for (const auto& r : rows) out += table_line(r, w);
  return out + table_notes(rows, w) + table_summary(s, w);
}

namespace {

// Each side's best round in one timing (flushed, or cold).
struct Sides {
  TimeStats tuned, cublas, cublaslt, cublas_tf32;
};

// cuBLASLt's search, once per shape: the algorithm it kept, or none and why (in `out`).
std::optional<LtAlgo> search_lt(WorkerClient& worker, const LtSearchOptions& lt, Retimed& out) {
  const auto search = worker.cublaslt_search(lt);
  out.lt_searched = true;
  out.lt_algos = static_cast<int>(search.algos.size());
  out.lt_failed = search.failed();
  if (const auto* b = search.best_algo()) {
    out.lt_algo = b->desc;
    return *b;
  }
  out.lt_reason = lt_search_reason(search);
  return std::nullopt;
}

// A peer's round (cuBLASLt's kept algorithm, cuBLAS 1xTF32): its time kept when it passed. A peer
// that fails a round has no figure in the row at all, either timing: false, and `reason` says why.
bool keep_peer(const eval::TrialResponse& r, int round, L2Mode mode, TimeStats Sides::*side,
               std::array<Sides, 2>& best, std::string& reason) {
  if (r.status == TrialStatus::ok) {
    keep_best(best[mode == L2Mode::rotate ? 1 : 0].*side, r.time);
    return true;
  }
  reason = fmt::format("round {} ({}): {} {}", round + 1, to_string(mode), to_string(r.status),
                       r.reason);
  best[0].*side = best[1].*side = TimeStats{};
  return false;
}

// The tuned config's request in a round: every repetition (no cut), verified with the tolerance.
TrialRequest tuned_request(const Compiled& compiled, const WarpTileConfig& config,
                           const RetimeOptions& o, L2Mode mode) {
  auto req = make_trial_request(compiled, config);
  req.repetitions = o.repetitions;
  req.cut_after = 0;  // every repetition: no early cut
  req.best_ms = 0;
  req.tolerance = o.tolerance;
  req.l2 = mode;
  return req;
}

}  // namespace

Retimed retime(WorkerClient& worker, const Compiled& compiled, const WarpTileConfig& config,
               const Problem& problem, const RetimeOptions& o) {
  Retimed out;
  ProblemSetup setup;
  setup.problem = problem;
  setup.seed = o.seed;
  // With no flushed timing asked for, the one that comes with the set-up is not used.
  setup.cublas_repetitions = o.flush ? o.repetitions : 1;
  // Round 1's flushed cuBLAS side is the timing that comes with setting the problem up.
  const TimeStats first_cublas = worker.set_problem(setup);
  std::vector<L2Mode> modes;
  if (o.flush) modes.push_back(L2Mode::flush);
  if (o.rotate) modes.push_back(L2Mode::rotate);
  if (modes.empty()) modes.push_back(L2Mode::flush);
  if (o.rotate) out.rotate_copies = worker.rotation().copies;

  LtSearchOptions lt = o.lt;
  lt.tolerance = o.tolerance;
  lt.l2 = modes.front();
  std::optional<LtAlgo> lt_best;
  if (o.cublaslt) lt_best = search_lt(worker, lt, out);
  lt.repetitions = o.repetitions;
  lt.warmup = 2;  // as cuBLAS
  Tf32Request tf32;
  tf32.repetitions = o.repetitions;
  tf32.tolerance = o.tf32_tolerance;
  bool tf32_on = out.tf32_timed = o.cublas_tf32;

  // Each side's best round, per timing: [0] flushed, [1] cold.
  std::array<Sides, 2> best{};
  auto finish = [&] {
    out.tuned = best[0].tuned;
    out.cublas = best[0].cublas;
    out.cublaslt = best[0].cublaslt;
    out.cublas_tf32 = best[0].cublas_tf32;
    out.tuned_cold = best[1].tuned;
    out.cublas_cold = best[1].cublas;
    out.cublaslt_cold = best[1].cublaslt;
    out.cublas_tf32_cold = best[1].cublas_tf32;
    return out;
  };
  for (int round = 0; round < std::max(1, o.rounds); ++round) {
    for (const L2Mode mode : modes) {
      Sides& b = best[mode == L2Mode::rotate ? 1 : 0];
      const TimeStats cublas = round == 0 && mode == L2Mode::flush
                                   ? first_cublas
                                   : worker.time_cublas(o.repetitions, mode);
      keep_best(b.cublas, cublas);
      if (lt_best) {
        lt.l2 = mode;
        const auto r = worker.time_cublaslt(*lt_best, lt);
        if (!keep_peer(r, round, mode, &Sides::cublaslt, best, out.lt_reason)) lt_best.reset();
      }
      if (tf32_on) {
        tf32.l2 = mode;
        const auto r = worker.time_cublas_tf32(tf32);
        if (r.error_ratio >= 0)
          out.tf32_error_ratio = std::max(out.tf32_error_ratio, r.error_ratio);
        tf32_on = keep_peer(r, round, mode, &Sides::cublas_tf32, best, out.tf32_reason);
      }
      const auto resp = worker.run_trial(tuned_request(compiled, config, o, mode),
                                         trial_timeout(cublas.median_ms, o.repetitions));
      out.verify_error = std::max(out.verify_error, resp.verify_error);
      if (resp.status != TrialStatus::ok) {
        out.status = resp.status;
        const std::string where = modes.size() > 1
                                      ? fmt::format("round {} ({})", round + 1, to_string(mode))
                                      : fmt::format("round {}", round + 1);
        out.reason = resp.reason.empty() ? where : where + ": " + resp.reason;
        return finish();
      }
      keep_best(b.tuned, resp.time);
    }
  }
  return finish();
}

}  // namespace sgt::tune
