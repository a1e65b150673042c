// `sgemm-tune list`: what the tuning database knows: GPUs, tuned shapes, and the winner of each
// GPU x shape x kernel template with its speed relative to cuBLAS.
#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "json_output.hpp"
#include "error.hpp"
#include "file_util.hpp"
#include "store.hpp"
#include "tune_store.hpp"

namespace sgt::cli {

namespace {

// 13000 -> "13.0", the way NVIDIA writes driver API versions.
std::string cuda_version(int v) {
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

struct ListCli {
  std::string db, precision = "fp32";
  bool json = false, allow_stale = false;
};

CLI::App& add_list_options(CLI::App& app, ListCli& o) {
  auto* sub = app.add_subcommand(
      "list",
      "Show the GPUs, tuned shapes and winners (with their ratio to cuBLAS) in the tuning "
      "database");
  sub->add_flag("--json", o.json, "Machine-readable output on stdout");
  sub->add_flag("--allow-stale", o.allow_stale,
                "Let stale trials (another kernel source, driver major or NVRTC major) win");
  add_precision_option(*sub, o.precision, "the winners shown are those of that class");
  sub->add_option("--db", o.db,
                  "Tuning database (default: $SGT_DB, else $XDG_CACHE_HOME/sgemm-tune/tuning.db, "
                  "else ~/.cache/sgemm-tune/tuning.db). Opened read-only; a missing one is an "
                  "error (exit 1)");
  sub->footer(
      "ratio = cuBLAS FP32 median / winner median, both timed in the same run: above 1.000x "
      "the tuned kernel is faster. edge = the winner's edge checks passed / run (shapes off the "
      "tile, primes, padded leading dimensions, offset pointers); '-' when it has none.");
  return *sub;
}

void print_gpus(const std::vector<db::GpuRecord>& gpus) {
  fmt::print("GPUs ({})\n", gpus.size());
  if (!gpus.empty()) {
    fmt::print("  {:<34} {:>7} {:>7} {:>6} {:>8}  {}\n", "gpu (--gpu key)", "driver", "runtime",
               "nvrtc", "trials", "last seen");
  }
  for (const auto& g : gpus) {
    const auto& f = g.fingerprint;
    fmt::print("  {:<34} {:>7} {:>7} {:>6} {:>8}  {}\n", terminal_safe(g.identity().key()),
               cuda_version(f.driver_version), cuda_version(f.runtime_version),
               fmt::format("{}.{}", f.nvrtc_major, f.nvrtc_minor), g.trials,
               terminal_safe(g.last_seen));
  }
}

void print_shapes(const std::vector<db::ShapeRecord>& shapes) {
  fmt::print("\nShapes ({})\n", shapes.size());
  if (!shapes.empty()) {
    fmt::print("  {:<22} {:<6} {:<5} {:>8} {:>5}\n", "shape", "layout", "dtype", "trials", "gpus");
  }
  for (const auto& s : shapes) {
    fmt::print("  {:<22} {:<6} {:<5} {:>8} {:>5}\n", s.problem.shape(),
               terminal_safe(s.problem.layout), terminal_safe(s.problem.dtype), s.trials, s.gpus);
  }
}

// Sorted by GPU, layout and shape (M, N, K as numbers), and as wide as the longest entry of each
// column: config names of the TMA family run past 50 characters.
void print_winners(const std::vector<db::Winner>& winners) {
  auto sorted = winners;
  std::stable_sort(sorted.begin(), sorted.end(), [](const db::Winner& a, const db::Winner& b) {
    const auto &pa = a.best.trial.problem, &pb = b.best.trial.problem;
    return std::tie(a.best.gpu.name, pa.layout, pa.M, pa.N, pa.K) <
           std::tie(b.best.gpu.name, pb.layout, pb.M, pb.N, pb.K);
  });
  std::vector<std::array<std::string, 8>> rows;
  rows.push_back({"gpu", "shape", "config", "median ms", "GFLOP/s", "ratio", "ok", "edge"});
  std::vector<bool> stale{false};
  for (const auto& w : sorted) {
    const auto& t = w.best.trial;
    const double ratio = w.ratio();  // cuBLAS time / winner time
    // Edge checks passed / run; "-" when the winner was never verified on edge shapes.
    const auto edge =
        t.edge_checks.empty()
            ? std::string("-")
            : fmt::format("{}/{}", edge_checks_passed(t.edge_checks), t.edge_checks.size());
    rows.push_back({terminal_safe(w.best.gpu.name),
                    terminal_safe(fmt::format("{} {}", t.problem.shape(), t.problem.layout)),
                    terminal_safe(t.config_name), fmt::format("{:.4f}", t.time.median_ms),
                    fmt::format("{:.0f}", t.gflops),
                    ratio > 0 ? fmt::format("{:.3f}x", ratio) : "-", fmt::format("{}", w.ok_trials),
                    edge});
    stale.push_back(w.stale);
  }
  std::array<size_t, 8> width{};
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  for (size_t i = 0; i < rows.size() && !sorted.empty(); ++i) {
    const auto& r = rows[i];
    // Text columns left-aligned, numbers right-aligned.
    fmt::print("  {:<{}} {:<{}} {:<{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}}{}\n", r[0], width[0],
               r[1], width[1], r[2], width[2], r[3], width[3], r[4], width[4], r[5], width[5], r[6],
               width[6], r[7], width[7], stale[i] ? "  STALE" : "");
  }
}

void run_list(const ListCli& o) {
  const std::filesystem::path path =
      o.db.empty() ? db::default_db_path() : std::filesystem::path(o.db);
  auto store = db::SqliteStore::open(path, db::OpenMode::read_only);
  const auto gpus = store.gpus();
  const auto shapes = store.shapes();
  const auto winners = store.winners(o.allow_stale, parse_precision_option(o.precision));

  if (o.json) {
    nlohmann::json j = {{"database", path.string()},
                        {"schema_version", db::SqliteStore::schema_version()},
                        {"gpus", gpus},
                        {"shapes", shapes},
                        {"precision", o.precision},
                        {"winners", winners}};
    print_json(std::move(j));
    return;
  }

  // Every text from the database is escaped (terminal_safe): a shared file may hold anything.
  fmt::print("tuning database {}\n\n", terminal_safe(path.string()));
  print_gpus(gpus);
  print_shapes(shapes);
  fmt::print("\nWinners ({}{})\n", winners.size(),
             o.allow_stale ? ", stale trials allowed" : ", stale trials skipped");
  print_winners(winners);
  std::size_t failing = 0;
  for (const auto& w : winners) {
    const auto& c = w.best.trial.edge_checks;
    if (edge_checks_passed(c) < static_cast<int>(c.size())) ++failing;
  }
  if (failing > 0) {
    fmt::print(
        "\n{} winner{} failed edge checks (`sgemm-tune query` names them); \"edge\" = "
        "passed/run\n",
        failing, failing == 1 ? "" : "s");
  }
}

}  // namespace

void register_list(CLI::App& app) {
  auto o = std::make_shared<ListCli>();
  CLI::App& sub = add_list_options(app, *o);
  sub.callback([o] { run_list(*o); });
}

}  // namespace sgt::cli
