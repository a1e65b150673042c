// What `tune` reports of the shapes it tuned: each shape's run, and the summary of a suite.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "problem.hpp"
#include "trial.hpp"
#include "tune.hpp"

namespace sgt::cli {

// One line of the multi-shape summary; an empty winner means no config served the shape.
struct ShapeSummary {
  Problem problem;
  std::string winner;
  double median_ms = 0, cublas_ms = 0, ratio = 0, gflops = 0, wall_s = 0;
  std::vector<EdgeCheck> edge_checks;  // the winner's, when the tune verified it on edge shapes
  // ok (a winner), no_winner (none passed), no_config, or error (the tune failed: reason; only
  // where shapes are spread over GPUs, where the others go on)
  std::string status = "no_config";
  std::string gpu, date;  // the GPU's name, and when the tune ended (UTC)
  int device = -1;        // the device that re-timed the finalists; -1: none (no_config)
  std::string reason;     // error: why
};

// A tuned shape's line: the first finalist is its winner when that one passed.
ShapeSummary summarize(const tune::TuneOptions& t, const tune::TuneReport& r);
// The geometric mean of the ratios measured (0 when none was).
double geomean_ratio(const std::vector<ShapeSummary>& all);
nlohmann::json summary_json(const ShapeSummary& s);
// --csv: one row per shape.
void write_summary_csv(const std::string& path, const std::vector<ShapeSummary>& all);

// One shape's run, as --json prints it (the entry of "runs" for a suite).
nlohmann::json run_json(const tune::TuneOptions& t, const std::string& space,
                        const tune::TuneReport& r);
// name_device: say which GPU (shapes spread over several, each tuned on one).
void print_run(const tune::TuneOptions& t, const tune::TuneReport& r, bool name_device = false);
// by_device: a last column with the GPU that tuned each shape (shapes spread over several).
void print_summary(const std::vector<ShapeSummary>& all, double geomean, bool by_device = false);

}  // namespace sgt::cli
