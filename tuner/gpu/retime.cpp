// Re-timing a config beside cuBLAS, and the benchmark report (summary, CSV, JSON).
#include "retime.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tune.hpp"

namespace sgt::gpu {

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

BenchSummary summarize_bench(const std::vector<BenchRow>& rows, double threshold) {
  BenchSummary s;
  s.threshold = threshold;
  s.total = static_cast<int>(rows.size());
  double log_sum = 0;
  for (const auto& r : rows) {
    if (!r.measured()) continue;
    const double q = r.ratio();
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

std::string bench_csv(const std::vector<BenchRow>& rows) {
  std::string csv =
      "shape,M,N,K,layout,config,tuned_ms,cublas_ms,ratio,tuned_gflops,cublas_gflops,status,gpu,"
      "date,source,space,loads,reps,tuned_spread,cublas_spread,seed,reason,device\n";
  for (const auto& r : rows) {
    const bool t = r.tuned_ms > 0, c = r.cublas_ms > 0, m = r.measured();
    csv += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.problem.shape(),
        r.problem.M, r.problem.N, r.problem.K, csv_field(r.problem.layout), csv_field(r.config),
        number(t, r.tuned_ms, 6), number(c, r.cublas_ms, 6), number(m, r.ratio(), 4),
        number(t, r.tuned_gflops(), 1), number(c, r.cublas_gflops(), 1), csv_field(r.status),
        csv_field(r.gpu), csv_field(r.date), csv_field(r.source), csv_field(r.space),
        csv_field(r.loads), r.repetitions > 0 ? std::to_string(r.repetitions) : std::string(),
        number(t, r.tuned_spread, 4), number(c, r.cublas_spread, 4), r.seed, csv_field(r.reason),
        r.device >= 0 ? std::to_string(r.device) : std::string());
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
       {"device", r.device}};
  if (!r.reason.empty()) j["reason"] = r.reason;
}

void to_json(nlohmann::json& j, const BenchSummary& s) {
  j = {{"shapes", s.total},        {"measured", s.measured},    {"geomean_ratio", s.geomean},
       {"min_ratio", s.min_ratio}, {"min_shape", s.min_label},  {"max_ratio", s.max_ratio},
       {"threshold", s.threshold}, {"below_threshold", s.below}};
}

Retimed retime(WorkerClient& worker, const Compiled& compiled, const WarpTileConfig& config,
               const Problem& problem, const RetimeOptions& o) {
  Retimed out;
  ProblemSetup setup;
  setup.problem = problem;
  setup.seed = o.seed;
  setup.cublas_repetitions = o.repetitions;
  // Round 1's cuBLAS side is the timing that comes with setting the problem up.
  TimeStats cublas = worker.set_problem(setup);
  for (int round = 0; round < std::max(1, o.rounds); ++round) {
    if (round > 0) cublas = worker.time_cublas(o.repetitions);
    keep_best(out.cublas, cublas);

    auto req = make_trial_request(compiled, config);
    req.repetitions = o.repetitions;
    req.cut_after = 0;  // every repetition: no early cut
    req.best_ms = 0;
    req.tolerance = o.tolerance;
    const auto resp = worker.run_trial(req, trial_timeout(cublas.median_ms, o.repetitions));
    out.verify_error = std::max(out.verify_error, resp.verify_error);
    if (resp.status != TrialStatus::ok) {
      out.status = resp.status;
      out.reason = resp.reason.empty() ? fmt::format("round {}", round + 1)
                                       : fmt::format("round {}: {}", round + 1, resp.reason);
      return out;
    }
    keep_best(out.tuned, resp.time);
  }
  return out;
}

}  // namespace sgt::gpu
