// `sgemm-tune bench`: for each problem of a suite, the GPU's tuned winner (tuned first when the
// database has none), re-timed beside cuBLAS FP32, cuBLASLt FP32 and (on request) cuBLAS 1xTF32 in
// the same worker phase, with the L2 flushed and cold by rotation; a table, a CSV and, on request,
// a plot of the ratio per shape.

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "progress.hpp"
#include "commands.hpp"
#include "json_output.hpp"
#include "error.hpp"
#include "file_util.hpp"
#include "nvrtc_compiler.hpp"
#include "retime.hpp"
#include "space.hpp"
#include "store.hpp"
#include "tune.hpp"
#include "tune_store.hpp"
#include "plot_util.hpp"
#include "suite.hpp"
#include "worker_fleet.hpp"
#include "log_tag.hpp"
#include "recordings.hpp"
#include "shape_spread.hpp"
#include "shard.hpp"
#include "shared_store.hpp"

namespace sgt::cli {

namespace {

namespace fs = std::filesystem;

constexpr int kMinReps = 20;
constexpr int kRounds = 2;
constexpr double kThreshold = 0.90;

constexpr int kDefaultLtAlgos = 32;

struct BenchOpts {
  std::string suite, gpu = "auto", db, space = "auto", cache_dir, csv = "bench-results.csv", plot,
                     plot_script, shard, baseline = "cublas,cublaslt", l2 = "both",
                     precision = "fp32";
  int reps = kMinReps, jobs = 0, lt_algos = kDefaultLtAlgos;
  std::uint64_t seed = 0;
  bool no_tune = false, json = false;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The names --baseline takes.
constexpr const char* kCublas = "cublas";
constexpr const char* kCublasLt = "cublaslt";
constexpr const char* kCublasTf32 = "cublas-tf32";

// What is timed beside the tuned kernel: the baselines and the L2 timings.
struct Timings {
  bool cublaslt = false;
  bool cublas_tf32 = false;
  bool flush = false, rotate = false;

  std::vector<std::string> baselines() const {
    std::vector<std::string> v = {kCublas};
    if (cublaslt) v.emplace_back(kCublasLt);
    if (cublas_tf32) v.emplace_back(kCublasTf32);
    return v;
  }
  std::vector<std::string> l2() const {
    std::vector<std::string> v;
    if (flush) v.emplace_back("flush");
    if (rotate) v.emplace_back("rotate");
    return v;
  }
};

// What --baseline expects, for its error messages.
constexpr const char* kBaselineNames =
    "cublas, cublaslt or cublas-tf32, comma-separated, cublas among them (e.g. cublas,cublaslt)";

// --baseline: cuBLAS always (every ratio's and every verification's reference), cuBLASLt and
// cuBLAS 1xTF32 on request; --l2: flush, rotate or both.
Timings parse_timings(const std::string& baseline, const std::string& l2) {
  Timings t;
  bool cublas = false;
  std::string rest = baseline;
  for (;;) {
    const auto comma = rest.find(',');
    const std::string item = lower(rest.substr(0, comma));
    if (item.empty()) {
      throw InputError(
          fmt::format("--baseline '{}': an empty name; expected {}", baseline, kBaselineNames));
    }
    bool* seen = item == kCublas       ? &cublas
                 : item == kCublasLt   ? &t.cublaslt
                 : item == kCublasTf32 ? &t.cublas_tf32
                                       : nullptr;
    if (!seen) {
      throw InputError(fmt::format("--baseline '{}': unknown baseline '{}'; expected {}", baseline,
                                   item, kBaselineNames));
    }
    if (*seen) throw InputError(fmt::format("--baseline '{}': {} is listed twice", baseline, item));
    *seen = true;
    if (comma == std::string::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (!cublas) {
    throw InputError(
        fmt::format("--baseline '{}': cublas is always timed, as the reference of every ratio and "
                    "verification; give cublas,{}",
                    baseline, lower(baseline)));
  }
  const std::string mode = lower(l2);
  if (mode == "flush" || mode == "both") t.flush = true;
  if (mode == "rotate" || mode == "both") t.rotate = true;
  if (!t.flush && !t.rotate) {
    throw InputError(fmt::format("--l2 '{}': expected flush, rotate or both", l2));
  }
  return t;
}

void check_output_path(const std::string& opt, const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) {
    throw InputError(fmt::format("{} '{}' is a directory; expected a file name", opt, path));
  }
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(dir, ec)) {
    throw InputError(
        fmt::format("{} '{}': the directory '{}' does not exist", opt, path, dir.string()));
  }
}

// One `bench` run: the suite (this shard's share of it) on the GPUs of --gpu, each shape's stored
// winner (tuned first when none is stored and --no-tune is not given) re-timed beside the
// baselines on the GPU that takes it, through the suite runner (tune/suite.hpp); a CSV rewritten
// after every shape, then the table or JSON and the plot.
class BenchRun {
 public:
  // Checks the input, then starts the GPUs, then opens the store: bad input or no GPU writes
  // nothing.
  explicit BenchRun(const BenchOpts& o);
  void run();
  // The JSON or the table, then the plot; throws when a shape failed or the plot did.
  void report();

 private:
  void plan();
  void start_gpus();
  void open_store();
  void bench_shape(size_t i, size_t d);
  std::optional<db::Winner> tune_shape(size_t i, size_t d, tune::BenchRow& row);
  void retime_winner(const db::Winner& w, size_t d, tune::BenchRow& row);
  void ended(size_t i, const std::string& failed);
  nlohmann::json json(double wall_s) const;
  std::string plot_failure() const;

  const BenchOpts& o_;
  Timings timings_;
  GpuSet gpus_;  // --gpu, parsed once in plan() and started in start_gpus()
  std::optional<ShardShare> share_;
  Precision precision_ = Precision::fp32;
  std::vector<SuiteEntry> entries_;
  std::vector<PlannedShape> plan_;
  std::vector<Problem> problems_;
  fs::path cache_dir_;
  fs::path plot_script_;
  std::uint64_t seed_ = 0;
  std::unique_ptr<gpu::WorkerFleet> fleet_;
  const GpuFingerprint* fp_ = nullptr;
  std::optional<db::SqliteStore> store_;
  // One connection, one GPU's shape at a time on it.
  std::optional<SharedStore> shared_;
  db::GpuIdentity gpu_id_;
  db::QueryOptions query_;
  std::unique_ptr<gpu::KernelCompiler> compiler_;
  unsigned jobs_ = 0;
  std::vector<tune::BenchRow> rows_;
  std::vector<bool> finished_;
  std::unique_ptr<tune::History> history_;  // read once, when a shape must be tuned
  std::chrono::steady_clock::time_point t0_;
  tune::SuiteRun suite_;
};

BenchRun::BenchRun(const BenchOpts& o) : o_(o) {
  plan();
  start_gpus();
  open_store();
  rows_.resize(problems_.size());
  finished_.assign(problems_.size(), false);
  history_ = std::make_unique<tune::History>(shipped_datasets());
}

void BenchRun::plan() {
  timings_ = parse_timings(o_.baseline, o_.l2);
  gpus_ = parse_gpu_set(o_.gpu);  // checked here, started in start_gpus()
  const auto shard = resolve_shard(o_.shard);
  entries_ = load_suite(o_.suite);
  check_output_path("--csv", o_.csv);
  if (!o_.plot.empty()) {
    const auto ext = lower(fs::path(o_.plot).extension().string());
    if (ext != ".png" && ext != ".svg") {
      throw InputError(fmt::format("--plot '{}': expected a .png or .svg file name", o_.plot));
    }
    check_output_path("--plot", o_.plot);
    plot_script_ = find_plot_script(o_.plot_script, "plot_bench.py");
  }
  precision_ = parse_precision_option(o_.precision);
  if (!o_.no_tune) plan_ = plan_suite(entries_, o_.space, o_.suite, precision_);
  if (shard) {
    // A shape costs its re-timing (about one candidate's measurement), and its tune unless
    // --no-tune; whether the database already has its winner is not known alike on every shard.
    const TuneCostModel model;
    std::vector<double> costs;
    for (size_t i = 0; i < entries_.size(); ++i) {
      const double flops = entries_[i].problem.flops();
      costs.push_back(estimate_tune_s(1, flops, model) +
                      (o_.no_tune ? 0
                                  : estimate_tune_s(plan_[i].enumeration.survivors.size(), flops,
                                                    model, tune::kDefaultBudgetS)));
    }
    share_ = share_of(*shard, costs);
    log_share(*share_, "shapes", "s");
    entries_ = pick(entries_, *share_);
    if (!o_.no_tune) plan_ = pick(plan_, *share_);
  }
  for (const auto& e : entries_) problems_.push_back(e.problem);
  cache_dir_ = o_.cache_dir.empty() ? gpu::default_cache_dir() : fs::path(o_.cache_dir);
  seed_ = o_.seed ? o_.seed : std::random_device{}();
}

// A GPU set: a worker on each (one model, or it refuses), the shapes spread whole over them.
void BenchRun::start_gpus() {
  fleet_ =
      std::make_unique<gpu::WorkerFleet>(self_exe(), gpus_, cache_dir_, std::vector<std::string>{});
  fp_ = &fleet_->first().fingerprint;
  for (size_t d = 0; d < fleet_->size(); ++d) {
    const auto& info = fleet_->info(d);
    const auto& f = info.fingerprint;
    spdlog::info("GPU {}: {} (sm_{}{}, {} SMs), chosen as {}", info.device, f.name, f.cc_major,
                 f.cc_minor, f.sm_count, info.why);
  }
  if (!o_.plot.empty()) {
    std::string why;
    if (!find_python(why)) spdlog::warn("the plot will fail: {}; the CSV will be written", why);
  }
  compiler_ =
      std::make_unique<gpu::KernelCompiler>(cache_dir_, gpu::CompileOptions{fp_->arch(), {}});
  // Each GPU tunes its own shape at once: the compile threads are shared among them.
  jobs_ = threads_per_device(static_cast<unsigned>(o_.jobs), fleet_->size());
}

void BenchRun::open_store() {
  const fs::path db_path = o_.db.empty() ? db::default_db_path() : fs::path(o_.db);
  std::error_code ec;
  if (!o_.no_tune) {
    store_.emplace(db::SqliteStore::open(db_path, db::OpenMode::read_write));
  } else if (fs::exists(db_path, ec)) {
    store_.emplace(db::SqliteStore::open(db_path, db::OpenMode::read_only));
  } else {
    spdlog::warn("no tuning database at '{}': every shape is untuned", db_path.string());
  }
  if (store_) shared_.emplace(*store_);
  gpu_id_ = db::GpuIdentity::of(*fp_);
  query_.precision = precision_;
  // Served winners must come from this kernel source, driver major and NVRTC major.
  query_.reference.driver_major = fp_->driver_version / 1000;
  query_.reference.nvrtc_major = fp_->nvrtc_major;
}

// No winner stored: tunes shape i on GPU d alone (its finalists re-timed there, as the winner is
// after), as `tune --shapes` does with its defaults: model, patience, 5 minutes.
std::optional<db::Winner> BenchRun::tune_shape(size_t i, size_t d, tune::BenchRow& row) {
  const auto& problem = problems_[i];
  const auto& e = plan_[i].enumeration;
  row.space = plan_[i].space_name;
  if (e.survivors.empty()) {
    row.status = tune::kBenchNoConfig;
    row.reason = fmt::format("space '{}' has no valid config for it", plan_[i].space_name);
    return std::nullopt;
  }
  spdlog::info("[{}/{}] {}: no winner stored; tuning {} configs of space {}", i + 1,
               problems_.size(), tune::bench_label(problem), e.survivors.size(),
               plan_[i].space_name);
  tune::TuneOptions t;
  t.problem = problem;
  t.candidates = e.survivors;
  t.seed = seed_;
  t.compile_threads = jobs_;
  t.strategy = "model";
  t.budget_s = tune::kDefaultBudgetS;
  t.patience = tune::default_patience(t.strategy);
  t.history = shared_->locked([&] { return history_->trials_for(*fp_, &*store_, t.problem); });
  auto last = std::chrono::steady_clock::now();
  const auto r = tune::tune_on(t, *fleet_, d, *shared_, [&](const tune::TuneProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (p.done == p.total || now - last > std::chrono::seconds(10)) {
      spdlog::info("{}/{} candidates, {}, elapsed {}, ETA {}", p.done, p.total, best_note(p, true),
                   duration(p.elapsed_s), duration(p.eta_s));
      last = now;
    }
  });
  row.source = "tuned";
  auto w = shared_->locked([&] { return store_->winner(gpu_id_, problem, query_); });
  if (!w) {
    row.status = tune::kBenchNoWinner;
    std::string statuses;
    for (const auto& [k, v] : r.status_counts) statuses += fmt::format(" {}={}", k, v);
    row.reason = "no candidate passed:" + statuses;
  }
  return w;
}

// The winner re-timed on GPU d beside the baselines, in rounds (tune/retime.hpp).
void BenchRun::retime_winner(const db::Winner& w, size_t d, tune::BenchRow& row) {
  const auto& problem = row.problem;
  const auto& best = w.best.trial;
  row.config = best.config_name.empty() ? to_name(best.config) : best.config_name;
  const auto comp = compiler_->compile(best.config, problem.layout, kernel_vec_loads(problem));
  row.loads = best.config.PACK ? "packed" : comp.vec_loads ? "float4" : "scalar";
  if (comp.status != TrialStatus::ok) {
    row.status = std::string(to_string(comp.status));
    row.reason = comp.reason;
  } else {
    tune::RetimeOptions ro;
    ro.repetitions = o_.reps;
    ro.rounds = kRounds;
    ro.seed = seed_;
    ro.cublaslt = timings_.cublaslt;
    ro.cublas_tf32 = timings_.cublas_tf32;
    ro.flush = timings_.flush;
    ro.rotate = timings_.rotate;
    ro.lt.max_algos = o_.lt_algos;
    const auto m = tune::retime(fleet_->worker(d), comp, best.config, problem, ro);
    row.repetitions = o_.reps;
    row.cublas_ms = m.cublas.median_ms;
    row.cublas_spread = m.cublas.spread;
    row.lt_searched = m.lt_searched;
    row.lt_algos = m.lt_algos;
    row.lt_failed = m.lt_failed;
    row.lt_algo = m.lt_algo;
    row.lt_reason = m.lt_reason;
    row.cublaslt_ms = m.cublaslt.median_ms;
    row.cublaslt_spread = m.cublaslt.spread;
    row.cublas_cold_ms = m.cublas_cold.median_ms;
    row.cublaslt_cold_ms = m.cublaslt_cold.median_ms;
    row.tf32_timed = m.tf32_timed;
    row.cublas_tf32_ms = m.cublas_tf32.median_ms;
    row.cublas_tf32_spread = m.cublas_tf32.spread;
    row.cublas_tf32_cold_ms = m.cublas_tf32_cold.median_ms;
    row.tf32_error_ratio = std::max(0.0, m.tf32_error_ratio);
    row.tf32_reason = m.tf32_reason;
    row.rotate_copies = m.rotate_copies;
    if (m.status == TrialStatus::ok) {
      row.status = "ok";
      row.tuned_ms = m.tuned.median_ms;
      row.tuned_spread = m.tuned.spread;
      row.tuned_cold_ms = m.tuned_cold.median_ms;
    } else {
      row.status = std::string(to_string(m.status));
      row.reason = m.reason;
    }
  }
}

// One shape on one GPU: its winner (tuned there first when none is stored), re-timed there beside
// cuBLAS (log lines tagged with the GPU by the suite runner). A failure throws; the suite runner
// makes it the row's.
void BenchRun::bench_shape(size_t i, size_t d) {
  const auto& problem = problems_[i];
  auto& row = rows_[i];
  row = tune::BenchRow{};  // a GPU lost on this shape may have begun it
  row.problem = problem;
  row.gpu = fp_->name;
  row.seed = seed_;
  row.source = "db";
  row.device = fleet_->info(d).device;
  std::optional<db::Winner> w;
  if (store_) w = shared_->locked([&] { return store_->winner(gpu_id_, problem, query_); });
  if (!w && o_.no_tune) {
    row.status = tune::kBenchUntuned;
    row.reason = "no winner in the database";
    if (store_) {
      const auto stale =
          shared_->locked([&] { return store_->stale_trials(gpu_id_, problem, query_); });
      if (stale.total > 0) {
        row.reason +=
            fmt::format(" ({} stale trials: other kernel source, driver or NVRTC)", stale.total);
      }
    }
  } else if (!w) {
    w = tune_shape(i, d, row);
  }
  if (w) retime_winner(*w, d, row);
}

// Shape i ended: its row logged, and the whole CSV written again.
void BenchRun::ended(size_t i, const std::string& failed) {
  auto& row = rows_[i];
  if (!failed.empty()) {
    row.status = tune::kBenchError;
    row.reason = failed;
  }
  row.date = utc_timestamp();
  if (row.measured_any()) {
    std::string what;
    if (row.measured()) {
      what = fmt::format("{:.4f} ms, cuBLAS {:.4f} ms, ratio {:.3f}", row.tuned_ms, row.cublas_ms,
                         row.ratio());
      if (row.ratio_lt() > 0)
        what +=
            fmt::format(", cuBLASLt {:.4f} ms, ratio_lt {:.3f}", row.cublaslt_ms, row.ratio_lt());
      if (row.ratio_tf32() > 0)
        what += fmt::format(", cuBLAS 1xTF32 {:.4f} ms (error ratio {:.3g}), ratio_tf32 {:.3f}",
                            row.cublas_tf32_ms, row.tf32_error_ratio, row.ratio_tf32());
    }
    if (row.ratio_cold() > 0) {
      what += fmt::format("{}cold L2: {:.4f} ms, cuBLAS {:.4f} ms, ratio_cold {:.3f}",
                          what.empty() ? "" : "; ", row.tuned_cold_ms, row.cublas_cold_ms,
                          row.ratio_cold());
      if (row.ratio_lt_cold() > 0)
        what += fmt::format(", ratio_lt_cold {:.3f}", row.ratio_lt_cold());
      if (row.ratio_tf32_cold() > 0)
        what += fmt::format(", ratio_tf32_cold {:.3f}", row.ratio_tf32_cold());
    }
    spdlog::info("[{}/{}] {}: {} {}", i + 1, problems_.size(), tune::bench_label(row.problem),
                 row.config, what);
    if (row.lt_searched && !row.lt_reason.empty()) {
      spdlog::warn("[{}/{}] {}: no cuBLASLt time: {}", i + 1, problems_.size(),
                   tune::bench_label(row.problem), row.lt_reason);
    }
    if (row.tf32_timed && !row.tf32_reason.empty()) {
      spdlog::warn("[{}/{}] {}: no cuBLAS 1xTF32 time: {}", i + 1, problems_.size(),
                   tune::bench_label(row.problem), row.tf32_reason);
    }
  } else {
    spdlog::warn("[{}/{}] {}: {}{}", i + 1, problems_.size(), tune::bench_label(row.problem),
                 row.status, row.reason.empty() ? "" : ": " + row.reason);
  }
  finished_[i] = true;
  // The whole CSV again after every shape (those finished so far, in suite order), through a
  // rename: a reader (or a crash) never sees half a file, and nothing finished is lost.
  std::vector<tune::BenchRow> done;
  for (size_t k = 0; k < rows_.size(); ++k) {
    if (finished_[k]) done.push_back(rows_[k]);
  }
  write_file_atomically(o_.csv, tune::bench_csv(done));
}

void BenchRun::run() {
  spdlog::info("bench {}: {} shapes, {} repetitions per side and round, input seed {}", o_.suite,
               problems_.size(), o_.reps, seed_);
  spdlog::info("baselines {}; L2 {}", fmt::join(timings_.baselines(), ", "),
               timings_.flush && timings_.rotate ? "flushed, and cold by rotation"
               : timings_.flush                  ? "flushed"
                                                 : "cold by rotation");
  const size_t gpus = fleet_->size();
  if (gpus > 1) {
    spdlog::info(
        "the shapes are spread over {} GPUs, each tuned (when needed) and re-timed beside "
        "cuBLAS on the GPU that takes it; {} compile thread{} each",
        gpus, jobs_, jobs_ == 1 ? "" : "s");
  }
  t0_ = std::chrono::steady_clock::now();
  tune::SuiteHooks hooks;
  hooks.what = "bench";
  hooks.run = [&](size_t i, std::optional<size_t> d) { bench_shape(i, d.value_or(0)); };
  hooks.ended = [&](size_t i, const std::string& failed, int) { ended(i, failed); };
  // Spread even on one GPU: a failed shape is its row's, and the next shape is measured.
  suite_ = tune::run_suite(problems_.size(), *fleet_, true, hooks);
  const auto not_run = suite_.not_run();
  if (not_run.empty()) return;
  // Every GPU was lost: the shapes none could take are error rows, so the CSV has every shape.
  for (const size_t i : not_run) {
    rows_[i] = tune::BenchRow{};
    rows_[i].problem = problems_[i];
    rows_[i].gpu = fp_->name;
    rows_[i].seed = seed_;
    rows_[i].status = tune::kBenchError;
    rows_[i].reason = "not measured: every GPU was lost";
    rows_[i].date = utc_timestamp();
  }
  write_file_atomically(o_.csv, tune::bench_csv(rows_));
}

nlohmann::json BenchRun::json(double wall_s) const {
  const auto summary = tune::summarize_bench(rows_, kThreshold);
  nlohmann::json j = {{"gpu", *fp_},
                      {"device", fleet_->first().device},
                      {"devices", tune::suite_devices_json(suite_, *fleet_)},
                      {"suite", o_.suite},
                      {"reps", o_.reps},
                      {"rounds", kRounds},
                      {"seed", seed_},
                      {"csv", o_.csv},
                      {"wall_s", wall_s},
                      {"rows", rows_},
                      {"summary", summary}};
  j["baselines"] = timings_.baselines();
  j["precision"] = o_.precision;
  j["l2"] = timings_.l2();
  if (timings_.cublaslt) {
    const eval::LtSearchOptions lt;
    j["cublaslt"] = {{"max_algos", o_.lt_algos},
                     {"workspace_bytes", lt.workspace_bytes},
                     {"compute", "CUBLAS_COMPUTE_32F"}};
  }
  if (timings_.cublas_tf32) {
    j["cublas_tf32"] = {{"compute", "CUBLAS_COMPUTE_32F_FAST_TF32"},
                        {"fp32_accurate", false},
                        {"tolerance", eval::kTf32Tolerance}};
  }
  if (!o_.plot.empty()) j["plot"] = o_.plot;
  if (share_) j["shard"] = share_json(*share_);
  return j;
}

// --plot: draws the CSV; why it could not, or "".
std::string BenchRun::plot_failure() const {
  if (o_.plot.empty()) return {};
  std::string why;
  const auto py = find_python(why);
  if (!py) return fmt::format("cannot draw the plot: {}; the CSV '{}' is written", why, o_.csv);
  const int rc = run_program({*py, plot_script_.string(), o_.csv, o_.plot}, false);
  if (rc != 0) {
    return fmt::format("the plot script '{}' failed (exit code {}); the CSV '{}' is written",
                       plot_script_.string(), rc, o_.csv);
  }
  spdlog::info("plot: {}", o_.plot);
  return {};
}

void BenchRun::report() {
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  if (o_.json) {
    print_json(json(wall_s));
  } else {
    tune::BenchTableOptions table;
    table.gpu_name = fp_->name;
    table.reps = o_.reps;
    table.rounds = kRounds;
    table.gpus = fleet_->size();
    table.cublaslt = timings_.cublaslt;
    table.cublas_tf32 = timings_.cublas_tf32;
    table.flush = timings_.flush;
    table.rotate = timings_.rotate;
    fmt::print("{}", tune::bench_table(rows_, tune::summarize_bench(rows_, kThreshold), table));
    for (size_t d = 0; d < fleet_->size(); ++d) {
      if (!suite_.report->lost[d].empty()) {
        fmt::print("GPU {} was lost after {} shapes: {}\n", fleet_->info(d).device,
                   suite_.report->taken[d], terminal_safe(suite_.report->lost[d]));
      }
    }
    fmt::print("CSV: {} ({} rows); wall {}\n", o_.csv, rows_.size(), duration(wall_s));
  }
  std::fflush(stdout);

  const auto errors =
      std::count_if(rows_.begin(), rows_.end(), [](const auto& r) { return r.status == "error"; });
  std::string failure = plot_failure();
  if (errors > 0) {
    const auto msg = fmt::format("{} of {} shapes failed with an error (see the CSV's reason)",
                                 errors, rows_.size());
    failure = failure.empty() ? msg : msg + "; " + failure;
  }
  if (!failure.empty()) throw Error(failure);
}

void run_bench(const BenchOpts& o) {
  BenchRun bench(o);
  bench.run();
  bench.report();
}

// The suite, the GPUs, the database and what tuning a shape without a winner takes.
void add_bench_input_options(CLI::App& sub, BenchOpts& o) {
  sub.add_option("--suite", o.suite,
                 "JSON list of problems: \"MxNxK\" or {\"shape\": \"MxNxK\", \"layout\": "
                 "\"NN\"|\"NT\"|\"TN\"|\"TT\", \"space\": FILE|NAME} (e.g. bench/shapes.json); "
                 "an entry's space overrides --space for that shape")
      ->required();
  add_gpu_option(sub, o.gpu,
                 "the shapes are spread over them whole, the next shape going to the next idle "
                 "GPU, which tunes it (when the database has no winner) and re-times it beside "
                 "cuBLAS, so every ratio is a same-GPU comparison; the device column says which. "
                 "-j is shared among them");
  add_db_option(sub, o.db);
  sub.add_option(
         "--space", o.space,
         "Search space for the shapes that must be tuned first and name none of their own: "
         "a JSON file or a built-in name, several joined by '+' (default+tma), or auto (every "
         "built-in space); such shapes are tuned as `tune` does by default: the model strategy, "
         "until 200 measurements bring no gain, at most 5 minutes each")
      ->capture_default_str();
  add_precision_option(sub, o.precision,
                       "the winners benchmarked (and tuned first) are of that class");
  add_cache_dir_option(sub, o.cache_dir);
  sub.add_option("-j,--jobs", o.jobs,
                 "NVRTC threads when tuning (default: all cores), shared among the GPUs of a set")
      ->check(CLI::Range(0, 1024));
  sub.add_option("--seed", o.seed,
                 "Seed of the random inputs, 1 to 2^64 - 1 (default or 0: random, logged)");
}

// How each side is timed, and what is written.
void add_bench_measure_options(CLI::App& sub, BenchOpts& o) {
  sub.add_option(
         "--reps", o.reps,
         fmt::format(
             "Timed repetitions per side (tuned, cuBLAS, cuBLASLt, cuBLAS 1xTF32), round and L2 "
             "timing; each side is the median of its round, best of {} "
             "interleaved rounds (at least {})",
             kRounds, kMinReps))
      ->check(CLI::Range(kMinReps, 100000))
      ->capture_default_str();
  sub.add_option(
         "--baseline", o.baseline,
         "What the tuned kernel is timed against, comma-separated: cublas (cublasSgemm, pedantic "
         "FP32: the reference every result is verified against and the ratio column; always "
         "timed) and cublaslt (cuBLASLt FP32, CUBLAS_COMPUTE_32F, no TF32: up to --lt-algos "
         "algorithms of its heuristic for the problem and layout, with a 32 MiB workspace, each "
         "verified against cublasSgemm and timed, the fastest kept and re-timed in every round: "
         "the ratio_lt column), and cublas-tf32 (opt-in: cuBLAS 1xTF32, cublasGemmEx with "
         "CUBLAS_COMPUTE_32F_FAST_TF32 on TF32 tensor cores, timed as cuBLAS is: the ratio_tf32 "
         "column. It is NOT FP32-accurate: its result is verified against cublasSgemm with a "
         "tolerance of 1e-2 only, and tf32_error_ratio gives its error against an FP64 reference "
         "over cuBLAS FP32's). `--baseline cublas` skips the cuBLASLt search")
      ->capture_default_str();
  sub.add_option("--lt-algos", o.lt_algos,
                 "How many algorithms cuBLASLt's heuristic is asked for (it may return fewer)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  sub.add_option(
         "--l2", o.l2,
         "How each timed repetition, of every side alike, meets the L2: flush (a buffer twice the "
         "L2 is overwritten before each repetition; the ms and ratio columns), rotate (a cold L2 "
         "without a flush: each repetition on the next of enough copies of A, B and C, random "
         "inputs each, that the others hold at least twice the L2, as PyTorch TunableOp's "
         "rotating buffer does; the _cold columns; the result is verified on one copy too), or "
         "both (each round times each side both ways)")
      ->capture_default_str();
  sub.add_flag("--no-tune", o.no_tune,
               "Tune nothing: a shape without a winner in the database is reported 'untuned' and "
               "skipped");
  sub.add_option("--csv", o.csv,
                 "CSV (default: in the current directory) written as shapes finish, one row per "
                 "shape (shape,M,N,K,layout,config,"
                 "tuned_ms,cublas_ms,ratio,tuned_gflops,cublas_gflops,status,gpu,date,..., "
                 "cublaslt_ms,ratio_lt,...,ratio_cold,ratio_lt_cold,rotate_copies,"
                 "cublas_tf32_ms,ratio_tf32,...,tf32_error_ratio,...,tf32_reason)")
      ->capture_default_str();
  sub.add_option("--plot", o.plot,
                 "Also draw the ratio per shape from the CSV into this .png or .svg (runs "
                 "tools/plot_bench.py with a python3 that has matplotlib; $SGT_PYTHON picks one)");
  sub.add_option("--plot-script", o.plot_script,
                 "The plot script (default: share/sgemm-tune/plot_bench.py beside the installed "
                 "binary, else tools/plot_bench.py of the source tree)");
  add_shard_option(sub, o.shard, "The shapes of --suite",
                   "Give each shard its own --csv, and its own --db when shapes are tuned; `db "
                   "merge` gathers the databases (docs/cluster.md)");
  sub.add_flag("--json", o.json, "Print the rows and the summary as one JSON document");
}

}  // namespace

void register_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOpts>();
  auto* sub = app.add_subcommand(
      "bench",
      "Benchmark the tuned kernels against cuBLAS FP32 and cuBLASLt FP32 (and, on request, cuBLAS\n"
      "1xTF32) over a suite of problems: for each, the GPU's winner from the database (tuned\n"
      "first, as `tune --shapes` does, when there is none), re-timed beside each in the same\n"
      "worker phase on the same random inputs, with the L2 flushed and with a cold L2 (rotated\n"
      "operands). Prints a table and the geometric mean and minimum of each ratio, writes a CSV\n"
      "and, with --plot, a chart.");
  add_bench_input_options(*sub, *o);
  add_bench_measure_options(*sub, *o);
  sub->footer(
      "ratio = cuBLAS median / tuned median (above 1: the tuned kernel is faster); ratio_lt the\n"
      "same with cuBLASLt's time; ratio_cold and ratio_lt_cold the same two timed with a cold L2\n"
      "(--l2 rotate or both); ratio_tf32 and ratio_tf32_cold the same against cuBLAS 1xTF32\n"
      "(--baseline cublas,cublas-tf32; not FP32-accurate: tf32_error_ratio is its error against\n"
      "FP64 over cuBLAS FP32's). The summary gives the geometric mean and the minimum of each\n"
      "ratio over the measured shapes and how many are below 0.90. A shape where no cuBLASLt\n"
      "algorithm passed has no ratio_lt and says why (lt_reason; tf32_reason likewise).\n"
      "Row statuses: ok, untuned (--no-tune, nothing stored), no_config (the space has no valid\n"
      "config), no_winner (no candidate passed), error, or the re-timed winner's trial status\n"
      "(incorrect, crashed, timeout, ...).\n"
      "Exit codes: 0 done (whatever the rows' statuses); 1 no GPU, database trouble, a shape\n"
      "failed with an error, or the plot failed (the CSV is written); 2 bad input.");
  sub->callback([o] { run_bench(*o); });
}

}  // namespace sgt::cli
