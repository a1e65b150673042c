// What `tune` reports: each shape's run (a table or JSON) and, for a suite, the summary (a
// table, JSON or CSV). tune_cmd.cpp runs the tunes; this file only says what they found.
#include "tune_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "file_util.hpp"
#include "precision.hpp"
#include "progress.hpp"

namespace sgt::cli {

namespace {

// A CSV field: quoted when it holds a comma, a quote or a line break (a GPU name could).
std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char ch : v) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

// A table's ratio cell: "1.147x" (cuBLAS time / ours), "-" when cuBLAS or the config was not timed.
std::string ratio_cell(double ratio) {
  return ratio > 0 ? fmt::format("{:.3f}x", ratio) : "-";
}

// "23/23" (passed/run), "-" when the winner has no edge checks.
std::string edge_tally(const std::vector<EdgeCheck>& checks) {
  if (checks.empty()) return "-";
  return fmt::format("{}/{}", edge_checks_passed(checks), checks.size());
}

// Each GPU's part of the screening: its own cuBLAS, what it measured, whether it stayed.
nlohmann::json devices_json(const tune::TuneReport& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : r.devices) {
    out.push_back({{"device", d.info.device},
                   {"name", d.info.fingerprint.name},
                   {"uuid", d.info.fingerprint.uuid},
                   {"cublas_screen", d.cublas_screen},
                   {"measured", d.measured},
                   {"worker_restarts", d.restarts},
                   {"lost", d.lost}});
  }
  return out;
}

// Why the search stopped where it did (or had already), and what it looked at last.
void print_stop(const tune::TuneOptions& t, const tune::TuneReport& r) {
  if (r.done_before) {
    fmt::print(
        "already done: the search of this problem ended in an earlier run ({}); nothing was "
        "measured, the finalists are that run's (--continue searches on, --retune measures "
        "again)\n",
        r.stopped == "converged"
            ? fmt::format("converged, {} measurements without a 0.5 % gain", r.since_gain)
            : "every candidate measured");
  } else if (r.stopped == "max_evals") {
    fmt::print("stopped at --max-evals {}: candidates are left; run again to go on\n", t.max_evals);
  } else if (r.stopped == "budget") {
    fmt::print("stopped at the budget ({}): candidates are left; run again to go on\n",
               duration(t.budget_s));
  } else if (r.stopped == "converged") {
    fmt::print(
        "converged: the last {} measurements brought no gain of 0.5 % (--patience {}); {} "
        "candidates not measured\n",
        r.since_gain, t.patience, t.candidates.size() - r.measured - r.resumed);
  }
  if (!r.done_before && r.stopped == "converged" && tune::local_look_on(t)) {
    fmt::print("last look: {} neighbours of the best {} measured, {}\n", r.look_measured,
               t.look_best, r.look_new_best ? "a new best among them" : "no new best");
  }
  if (!kernel_vec_loads(t.problem)) {
    fmt::print(
        "kernel instance: single-float loads (this shape's rows are not 16-byte aligned, or an "
        "extent along which a float4 runs is not a multiple of 4), but for PACK configs, which "
        "read packed panels with float4s)\n");
  }
}

// The finalists re-timed beside cuBLAS, fastest first, and how the winner fared on edge shapes.
void print_finalists(const tune::TuneOptions& t, const tune::TuneReport& r) {
  fmt::print("cuBLAS FP32 (same run, {} reps): {:.3f} ms, {:.1f} GFLOP/s\n\n",
             r.cublas_final.repetitions, r.cublas_final.median_ms,
             t.problem.flops() / (r.cublas_final.median_ms * 1e6));
  // A finalist of a non-strict family carries its error against FP64 over cuBLAS FP32's: the
  // reason it was admitted (precision.hpp).
  const bool accuracy = std::any_of(r.finalists.begin(), r.finalists.end(),
                                    [](const auto& f) { return f.trial.error_ratio.has_value(); });
  fmt::print("{:<4} {:<40} {:>9} {:>9} {:>9} {:>6} {:>7}{}\n", "rank", "config", "ms", "GFLOP/s",
             "ratio", "regs", "spread", accuracy ? "  error ratio (problem, stress)" : "");
  int rank = 0;
  for (const auto& f : r.finalists) {
    const auto& tr = f.trial;
    std::string err;
    if (tr.error_ratio)
      err = fmt::format("  {:.3f}, {}", *tr.error_ratio,
                        tr.stress_ratio ? fmt::format("{:.3f}", *tr.stress_ratio) : "-");
    fmt::print("{:<4} {:<40} {:>9.3f} {:>9.1f} {:>9} {:>6} {:>6.1f}%{}\n", ++rank, tr.config_name,
               tr.time.median_ms, tr.gflops, ratio_cell(f.ratio), tr.registers,
               100.0 * tr.time.spread, err);
  }
  fmt::print("ratio = cuBLAS time / config time (above 1: faster than cuBLAS)\n");
  if (accuracy)
    fmt::print(
        "error ratio = its relative L2 error against FP64 / cuBLAS FP32's, on the problem and "
        "its worst stress case (fp32-accurate admits at most {}; FFMA finalists are not "
        "measured)\n",
        kAccurateErrorRatioMax);
  if (!r.finalists.empty() && !r.finalists.front().trial.edge_checks.empty()) {
    fmt::print("winner {}\n", edge_check_summary(r.finalists.front().trial.edge_checks));
  }
}

}  // namespace

ShapeSummary summarize(const tune::TuneOptions& t, const tune::TuneReport& r) {
  ShapeSummary s;
  s.problem = t.problem;
  s.cublas_ms = r.cublas_final.median_ms;
  s.wall_s = r.wall_s;
  s.status = "no_winner";
  s.gpu = r.worker.fingerprint.name;
  s.device = r.worker.device;
  s.date = utc_timestamp();
  if (!r.finalists.empty() && r.finalists.front().trial.status == TrialStatus::ok) {
    const auto& f = r.finalists.front();
    s.status = "ok";
    s.winner = f.trial.config_name;
    s.median_ms = f.trial.time.median_ms;
    s.ratio = f.ratio;
    s.gflops = f.trial.gflops;
    s.edge_checks = f.trial.edge_checks;
  }
  return s;
}

double geomean_ratio(const std::vector<ShapeSummary>& all) {
  double log_sum = 0;
  int n = 0;
  for (const auto& s : all) {
    if (s.ratio > 0) log_sum += std::log(s.ratio), ++n;
  }
  return n ? std::exp(log_sum / n) : 0;
}

nlohmann::json summary_json(const ShapeSummary& s) {
  nlohmann::json j = {
      {"shape", s.problem.shape()},   {"layout", s.problem.layout},
      {"winner", s.winner},           {"median_ms", s.median_ms},
      {"cublas_ms", s.cublas_ms},     {"ratio", s.ratio},
      {"status", s.status},           {"gflops", s.gflops},
      {"wall_s", s.wall_s},           {"edge_check_summary", edge_check_tally_json(s.edge_checks)},
      {"edge_checks", s.edge_checks}, {"device", s.device}};
  if (!s.reason.empty()) j["reason"] = s.reason;
  return j;
}

void write_summary_csv(const std::string& path, const std::vector<ShapeSummary>& all) {
  std::string csv =
      "shape,M,N,K,layout,winner,median_ms,cublas_ms,ratio,gflops,wall_s,"
      "edge_checks_passed,edge_checks_total,status,gpu,date,device\n";
  // `ratio` (cuBLAS time / tuned time) follows the two times as in bench's CSV, empty when not
  // measured; tools/plot_bench.py draws this CSV as it draws bench's. `device` (last, as in
  // bench's CSV) is the GPU that re-timed the winner, empty when none did.
  for (const auto& s : all) {
    const std::string ratio = s.ratio > 0 ? fmt::format("{:.6f}", s.ratio) : "";
    csv += fmt::format("{},{},{},{},{},{},{:.6f},{:.6f},{},{:.1f},{:.1f},{},{},{},{},{},{}\n",
                       s.problem.shape(), s.problem.M, s.problem.N, s.problem.K, s.problem.layout,
                       s.winner, s.median_ms, s.cublas_ms, ratio, s.gflops, s.wall_s,
                       edge_checks_passed(s.edge_checks), s.edge_checks.size(), s.status,
                       csv_field(s.gpu), s.date, s.device >= 0 ? std::to_string(s.device) : "");
  }
  write_file_atomically(path, csv);
}

nlohmann::json run_json(const tune::TuneOptions& t, const std::string& space,
                        const tune::TuneReport& r) {
  nlohmann::json j = {{"gpu", r.worker.fingerprint},
                      {"device", r.worker.device},
                      {"shape", t.problem.shape()},
                      {"layout", t.problem.layout},
                      {"space", space},
                      {"loads", kernel_vec_loads(t.problem) ? "float4" : "scalar"},
                      {"candidates", t.candidates.size()},
                      {"strategy", t.strategy},
                      {"measured", r.measured},
                      {"budget_hit", r.budget_hit},
                      {"stopped", r.stopped},
                      {"done_before", r.done_before},
                      {"patience", t.patience},
                      {"evaluator", r.evaluator},
                      {"evaluator_s", r.evaluator_s},
                      {"statuses", r.status_counts},
                      {"resumed", r.resumed},
                      {"cut_early", r.cut_early},
                      {"compiled", r.compiled},
                      {"compile_cache_hits", r.cache_hits},
                      {"compile_wall_s", r.compile_wall_s},
                      {"worker_restarts", r.worker_restarts},
                      {"wall_s", r.wall_s},
                      {"seed", t.seed},
                      {"cublas_screen", r.cublas_screen},
                      {"cublas_final", r.cublas_final}};
  // The last look before a converged search stopped: what it measured, and whether it won.
  j["local_look"] = {{"measured", r.look_measured}, {"new_best", r.look_new_best}};
  j["devices"] = devices_json(r);
  auto& fj = j["finalists"] = nlohmann::json::array();
  for (const auto& f : r.finalists) {
    fj.push_back({{"trial", f.trial}, {"ratio", f.ratio}});
  }
  // The winner's verification on edge shapes (its list is also in finalists[0].trial).
  j["winner_edge_checks"] = r.finalists.empty()
                                ? edge_check_tally_json({})
                                : edge_check_tally_json(r.finalists.front().trial.edge_checks);
  return j;
}

void print_run(const tune::TuneOptions& t, const tune::TuneReport& r, bool name_device) {
  std::string statuses;
  for (const auto& [k, v] : r.status_counts) statuses += fmt::format(" {}={}", k, v);
  fmt::print(
      "\nTuned {} {} on {}{} in {} ({} candidates, strategy {}: {} measured,{}; {} resumed, {} cut "
      "early, {} compiled, {} compile-cache hits, {} worker restarts)\n",
      t.problem.shape(), t.problem.layout, r.worker.fingerprint.name,
      name_device ? fmt::format(" (GPU {})", r.worker.device) : "", duration(r.wall_s),
      t.candidates.size(), t.strategy, r.measured, statuses, r.resumed, r.cut_early, r.compiled,
      r.cache_hits, r.worker_restarts);
  if (r.evaluator == "replay") {
    fmt::print("{}: {} of recorded compile and measure time\n", r.worker.why,
               duration(r.evaluator_s));
  }
  if (r.devices.size() > 1) {
    std::string parts;
    for (const auto& d : r.devices) {
      parts += fmt::format("{}GPU {} {}{}", parts.empty() ? "" : ", ", d.info.device, d.measured,
                           d.lost.empty() ? "" : " (lost: " + terminal_safe(d.lost) + ")");
    }
    fmt::print("measured on {} GPUs: {}; finalists re-timed on GPU {}\n", r.devices.size(), parts,
               r.worker.device);
  }
  print_stop(t, r);
  if (r.finalists.empty()) {
    fmt::print(
        "no finalist: no candidate finished ok and uncut{}\n",
        r.evaluator == "replay" && r.cut_early > 0
            ? " (in a replay, a trial the recording cut stays cut: its time is only a lower bound, "
              "so it cannot win; widen --space or --max-evals towards what the recording ranked)"
            : "");
    return;
  }
  print_finalists(t, r);
}

void print_summary(const std::vector<ShapeSummary>& all, double geomean, bool by_device) {
  auto gpu_cell = [&](int device) {
    return by_device ? fmt::format(" {:>4}", device >= 0 ? std::to_string(device) : "-") : "";
  };
  fmt::print("\n{:<21} {:<40} {:>10} {:>10} {:>9} {:>7}{}\n", "shape", "winner", "ms", "cuBLAS ms",
             "ratio", "edge", by_device ? fmt::format(" {:>4}", "GPU") : "");
  for (const auto& s : all) {
    const auto shape = fmt::format("{} {}", s.problem.shape(), s.problem.layout);
    if (s.status == "error") {
      fmt::print("{:<21} error: {}\n", shape, terminal_safe(s.reason));
      continue;
    }
    if (s.winner.empty()) {
      fmt::print("{:<21} {:<40}\n", shape, "(no valid config in the space)");
      continue;
    }
    fmt::print("{:<21} {:<40} {:>10.4f} {:>10.4f} {:>9} {:>7}{}\n", shape, s.winner, s.median_ms,
               s.cublas_ms, ratio_cell(s.ratio), edge_tally(s.edge_checks), gpu_cell(s.device));
  }
  // The edge column is passed/run; name what failed, shape by shape.
  for (const auto& s : all) {
    if (edge_checks_passed(s.edge_checks) < static_cast<int>(s.edge_checks.size())) {
      fmt::print("{} {}: {} {}\n", s.problem.shape(), s.problem.layout, s.winner,
                 edge_check_summary(s.edge_checks));
    }
  }
  fmt::print("geometric mean of the ratio (cuBLAS time / tuned time): {:.3f}\n", geomean);
}

}  // namespace sgt::cli
