// `sgemm-tune list`: what the tuning database knows: GPUs, tuned shapes, and the winner of each
// GPU x shape x kernel template with its speed relative to cuBLAS.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "json_output.hpp"
#include "error.hpp"
#include "file_util.hpp"
#include "store.hpp"

namespace sgt::cli {

namespace {

// 13000 -> "13.0", the way NVIDIA writes driver API versions.
std::string cuda_version(int v) {
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

}  // namespace

void register_list(CLI::App& app) {
  struct Opts {
    std::string db;
    bool json = false, allow_stale = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand(
      "list", "Show the GPUs, tuned shapes and winners (with % of cuBLAS) in the tuning database");
  sub->add_flag("--json", o->json, "Machine-readable output on stdout");
  sub->add_flag("--allow-stale", o->allow_stale,
                "Let stale trials (another kernel source, driver major or NVRTC major) win");
  sub->add_option("--db", o->db,
                  "Tuning database (default: $SGT_DB, else $XDG_CACHE_HOME/sgemm-tune/tuning.db, "
                  "else ~/.cache/sgemm-tune/tuning.db). Opened read-only; a missing one is an "
                  "error (exit 1)");
  sub->footer(
      "% of cuBLAS = cuBLAS FP32 median / winner median, both timed in the same run: above 100 "
      "the tuned kernel is faster. edge = the winner's edge checks passed / run (shapes off the "
      "tile, primes, padded leading dimensions, offset pointers); '-' when it has none.");

  sub->callback([o] {
    const std::filesystem::path path =
        o->db.empty() ? db::default_db_path() : std::filesystem::path(o->db);
    auto store = db::SqliteStore::open(path, db::OpenMode::read_only);
    const auto gpus = store.gpus();
    const auto shapes = store.shapes();
    const auto winners = store.winners(o->allow_stale);

    if (o->json) {
      nlohmann::json j = {{"database", path.string()},
                          {"schema_version", db::SqliteStore::schema_version()},
                          {"gpus", gpus},
                          {"shapes", shapes},
                          {"winners", winners}};
      print_json(std::move(j));
      return;
    }

    // Every text from the database is escaped (terminal_safe): a shared file may hold anything.
    fmt::print("tuning database {}\n\nGPUs ({})\n", terminal_safe(path.string()), gpus.size());
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

    fmt::print("\nShapes ({})\n", shapes.size());
    if (!shapes.empty()) {
      fmt::print("  {:<22} {:<6} {:<5} {:>8} {:>5}\n", "shape", "layout", "dtype", "trials",
                 "gpus");
    }
    for (const auto& s : shapes) {
      fmt::print("  {:<22} {:<6} {:<5} {:>8} {:>5}\n", s.problem.shape(),
                 terminal_safe(s.problem.layout), terminal_safe(s.problem.dtype), s.trials, s.gpus);
    }

    fmt::print("\nWinners ({}{})\n", winners.size(),
               o->allow_stale ? ", stale trials allowed" : ", stale trials skipped");
    if (!winners.empty()) {
      fmt::print("  {:<24} {:<18} {:<40} {:>10} {:>9} {:>9} {:>6} {:>7}\n", "gpu", "shape",
                 "config", "median ms", "GFLOP/s", "ratio", "ok", "edge");
    }
    for (const auto& w : winners) {
      const auto& t = w.best.trial;
      const double ratio = w.ratio();  // cuBLAS time / winner time
      // Edge checks passed / run; "-" when the winner was never verified on edge shapes.
      const auto edge =
          t.edge_checks.empty()
              ? std::string("-")
              : fmt::format("{}/{}", edge_checks_passed(t.edge_checks), t.edge_checks.size());
      fmt::print("  {:<24} {:<18} {:<40} {:>10.4f} {:>9.0f} {:>9} {:>6} {:>7}{}\n",
                 terminal_safe(w.best.gpu.name),
                 terminal_safe(fmt::format("{} {}", t.problem.shape(), t.problem.layout)),
                 terminal_safe(t.config_name), t.time.median_ms, t.gflops,
                 ratio > 0 ? fmt::format("{:.3f}x", ratio) : "-", w.ok_trials, edge,
                 w.stale ? "  STALE" : "");
    }
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
  });
}

}  // namespace sgt::cli
