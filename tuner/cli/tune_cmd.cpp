// `sgemm-tune tune`: tune a search space for one problem on one GPU, and the hidden `__worker`
// subcommand that serves the GPU side of it in a separate process. What a tune prints and writes
// of what it found is tune_report.cpp's.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "instance.hpp"
#include "json_output.hpp"
#include "plot_util.hpp"
#include "error.hpp"
#include "file_util.hpp"
#include "gpu_select.hpp"
#include "jsonl_store.hpp"
#include "dataset.hpp"
#include "nvrtc_compiler.hpp"
#include "replay_fleet.hpp"
#include "suite.hpp"
#include "worker_fleet.hpp"
#include "replay_evaluator.hpp"
#include "space.hpp"
#include "store.hpp"
#include "strategy.hpp"
#include "tune.hpp"
#include "tune_report.hpp"
#include "tune_store.hpp"
#include "progress.hpp"
#include "recordings.hpp"
#include "shape_spread.hpp"
#include "shard.hpp"
#include "shared_store.hpp"
#include "log_tag.hpp"
#include "worker.hpp"

namespace sgt::cli {

namespace {

// tune's view of the search: candidates done, the best so far.
class ProgressView {
 public:
  // bar: redrawn in place on a terminal; without (shapes tuned at once), log lines only.
  explicit ProgressView(bool bar = true) : line_(bar) {}
  void operator()(const tune::TuneProgress& p) {
    line_(p.done, p.total, p.elapsed_s, p.eta_s, "candidates", best_note(p, false),
          best_note(p, true));
  }

 private:
  ProgressLine line_;
};

// A replay answers for the GPU it recorded: a --gpu naming another (or a single device index
// other than 0, the index a recording stands for) is refused rather than answered with that
// GPU's recording. 'auto', 'all' and index lists (replay devices standing for several GPUs of
// the recorded kind) are taken.
void refuse_other_gpu(const GpuSet& set, const std::vector<eval::Recording>& recordings) {
  if (set.kind != GpuSet::Kind::one) return;
  const auto& sel = set.one;
  if (sel.kind == GpuSelector::Kind::index && sel.index != 0) {
    throw InputError(fmt::format(
        "--gpu {} with --replay: a recording stands for one GPU, device 0; pass --gpu auto (or "
        "0), or a list such as 0,1,2,3 to replay it over several devices",
        sel.index));
  }
  if (sel.kind != GpuSelector::Kind::name) return;
  for (const auto& r : recordings) {
    const auto id = db::GpuIdentity::of(r.gpu);
    if (match_gpu_names({id.name}, {id.key()}, sel.name).empty()) {
      throw InputError(fmt::format(
          "--gpu '{}' does not name the GPU that '{}' was recorded on ({}); a replay answers "
          "only for the GPU it recorded: pass --gpu auto, or a recording of that GPU",
          sel.name, r.origin, id.label()));
    }
  }
}

// The longest budget taken: a year. Anything longer is a typo, and would overflow the clock.
constexpr double kMaxBudgetS = 365.0 * 24 * 3600;

// "90s", "5m", "1h", "1h30m", "300" (seconds), "0" or "none" (no limit): seconds.
double parse_duration(const std::string& text) {
  if (text == "none" || text == "0") return 0;
  double total = 0;
  size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text.substr(i), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    // Digits only: stod would also take "inf", "nan" and hex floats.
    if (used == 0 || !(v >= 0) || !std::isfinite(v) ||
        text.find_first_not_of("0123456789.", i) < i + used)
      break;
    i += used;
    double unit = 1;
    if (i < text.size()) {
      const char u = text[i];
      unit = u == 's' ? 1 : u == 'm' ? 60 : u == 'h' ? 3600 : -1;
      if (unit < 0) break;
      ++i;
    }
    total += v * unit;
    any = true;
    if (i == text.size()) return total;
  }
  if (!any || i != text.size()) {
    throw InputError(fmt::format(
        "--budget '{}' is not a duration (e.g. 90s, 5m, 1h30m; 0 or none: no limit)", text));
  }
  return total;
}

double parse_budget(const std::string& text) {
  const double s = parse_duration(text);
  if (s > kMaxBudgetS) {
    throw InputError(
        fmt::format("--budget '{}' is {:.0f} h; the range is 1s to {:.0f}h (a year), "
                    "or 0 / none for no limit",
                    text, s / 3600, kMaxBudgetS / 3600));
  }
  return s;
}

// Seconds per binary compiled and per candidate measured: the mean of the shipped recordings of
// this architecture, else a guess (basis says which).
struct CostBasis {
  double compile_per_binary = 2.0, measure_per_candidate = 0.03;
  std::string basis;
};

CostBasis cost_basis(const std::string& arch) {
  CostBasis b;
  b.basis = "assumed (no recording of " + arch + " shipped)";
  const std::string family_arch = arch == "sm_90a" ? "sm_90" : arch;
  double cs = 0, ms = 0;
  size_t nc = 0, nm = 0;
  for (const auto& f : shipped_datasets()) {
    const auto ds = db::read_dataset(f);
    if (ds.gpu.fingerprint.arch() != family_arch) continue;
    for (const auto& st : ds.trials) {
      if (st.trial.compile_s > 0) cs += st.trial.compile_s, ++nc;
      if (st.trial.measure_s > 0) ms += st.trial.measure_s, ++nm;
    }
  }
  if (nc > 0 && nm > 0) {
    b.compile_per_binary = cs / nc;
    b.measure_per_candidate = ms / nm;
    b.basis = fmt::format("the mean of {} shipped recorded trials on {}", nm, family_arch);
  }
  return b;
}

// What a tune would do, without a GPU: the candidates per family and space, the strategy, the
// budget, and the cost of compiling and measuring them (cost_basis).
nlohmann::json dry_run(const PlannedShape& plan, const std::string& arch, const CostBasis& cost,
                       const std::string& strategy, double budget_s, size_t max_evals,
                       size_t patience, unsigned jobs) {
  const int arch_number = std::atoi(arch.c_str() + 3);  // "sm_90a" -> 90
  nlohmann::json spaces = nlohmann::json::array();
  std::set<std::string> seen;
  for (const auto& part : split_space_union(plan.space_arg)) {
    const auto e = enumerate(load_space(part), plan.problem, plan.precision);
    size_t fresh = 0;
    for (const auto& c : e.survivors) fresh += seen.insert(to_name(c)).second;
    spaces.push_back({{"space", part}, {"survivors", e.survivors.size()}, {"new", fresh}});
  }
  // Candidates per family, and those dropped because the family has no kernel for the
  // architecture (every registered family listed, with 0 where the space has none).
  nlohmann::json families = nlohmann::json::object(), dropped = nlohmann::json::object();
  for (const auto* f : sgt::families())
    families[std::string(f->id())] = 0, dropped[std::string(f->id())] = 0;
  size_t candidates = 0, dropped_all = 0;
  std::set<std::string> binaries;
  for (const auto& c : plan.enumeration.survivors) {
    const auto& family = family_of(c);
    const std::string id(family.id());
    if (!family.implemented_for(arch_number)) {
      dropped[id] = dropped[id].get<size_t>() + 1;
      ++dropped_all;
      continue;
    }
    ++candidates;
    families[id] = families[id].get<size_t>() + 1;
    binaries.insert(resolve(c, plan.problem).name_expression);
  }
  const unsigned cores = jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
  const double compile_s = static_cast<double>(binaries.size()) * cost.compile_per_binary / cores;
  const double measure_s = static_cast<double>(candidates) * cost.measure_per_candidate;
  return {{"shape", plan.problem.shape()},
          {"layout", plan.problem.layout},
          {"arch", arch},
          {"space", plan.space_arg},
          {"precision", to_string(plan.precision)},
          {"spaces", spaces},
          {"candidates", candidates},
          {"families", families},
          {"dropped", dropped},
          // Kept for readers of format 1's first outputs: every family's dropped candidates.
          {"tma_dropped", dropped_all},
          {"binaries", binaries.size()},
          {"strategy", strategy},
          {"budget_s", budget_s},
          {"max_evals", max_evals},
          {"patience", patience},
          {"estimate",
           {{"compile_all_s", compile_s},
            {"measure_all_s", measure_s},
            {"cores", cores},
            {"basis", cost.basis}}}};
}

void print_dry_run(const nlohmann::json& j) {
  fmt::print("dry run: {} {} for {} (nothing compiled or measured)\n",
             j.at("shape").get<std::string>(), j.at("layout").get<std::string>(),
             j.at("arch").get<std::string>());
  fmt::print("  candidates {} of space '{}'\n", j.at("candidates").get<size_t>(),
             terminal_safe(j.at("space").get<std::string>()));
  for (const auto& s : j.at("spaces")) {
    fmt::print("    {:<12} {:>6} survivors, {:>6} not in an earlier space\n",
               terminal_safe(s.at("space").get<std::string>()), s.at("survivors").get<size_t>(),
               s.at("new").get<size_t>());
  }
  std::string families, dropped;
  for (const auto& [id, n] : j.at("families").items()) {
    families += fmt::format("{}{} {}", families.empty() ? "" : ", ", id, n.get<size_t>());
    const size_t d = j.at("dropped").at(id);
    if (d > 0) {
      const auto* f = find_family(id);
      dropped += fmt::format("; {} {} configs dropped: {}", d, id,
                             f ? f->refusal_on(j.at("arch").get<std::string>()) : "");
    }
  }
  fmt::print("  families: {}{}\n", families, dropped);
  fmt::print("  binaries: {} (split-K variants share one)\n", j.at("binaries").get<size_t>());
  const double budget = j.at("budget_s");
  const size_t max_evals = j.at("max_evals"), patience = j.at("patience");
  fmt::print("  strategy {}, budget {}, max-evals {}, patience {}\n",
             j.at("strategy").get<std::string>(), budget > 0 ? duration(budget) : "none",
             max_evals ? std::to_string(max_evals) : "none",
             patience ? std::to_string(patience) : "none");
  const auto& e = j.at("estimate");
  fmt::print("  every candidate would take about {} compiling on {} cores and {} measuring ({})\n",
             duration(e.at("compile_all_s")), e.at("cores").get<unsigned>(),
             duration(e.at("measure_all_s")), e.at("basis").get<std::string>());
}

}  // namespace

namespace {

struct TuneCli {
  std::string gpu = "auto", shape = "4096x4096x4096", layout = "NN", shapes, csv, space = "auto",
              db, results, cache_dir, budget, arch, shard, precision = "fp32";
  int top = 5, reps = 5, final_reps = 20, jobs = 0;
  std::vector<std::string> nvrtc_options;
  double cut_ratio = 1.25;
  std::uint64_t seed = 0;
  bool retune = false, json = false, dry_run = false, continue_search = false,
       no_local_look = false;
  std::string strategy = "model";
  std::size_t max_evals = 0;
  std::optional<std::size_t> patience;
  std::vector<std::string> replay, history;
  // Whether --space and --precision were given (a replay otherwise takes the recording's).
  const CLI::Option* space_opt = nullptr;
  const CLI::Option* precision_opt = nullptr;
};

// `tune`'s options, part one: what to tune (problems, spaces, GPUs).
CLI::App& add_tune_problem_options(CLI::App& app, TuneCli& o) {
  CLI::App& sub = *app.add_subcommand(
      "tune",
      "Search a space for the fastest config of a problem on the GPU: candidates are compiled,\n"
      "verified and timed against cuBLAS FP32 in the same run, every trial is stored as it\n"
      "finishes (an interrupted or budgeted tune resumes where it stopped), and the fastest are\n"
      "re-timed beside cuBLAS and verified on edge shapes. By default every kernel family's\n"
      "candidates (--space auto) are searched by the model strategy until 200 measurements in\n"
      "a row bring no gain (--patience 200), for at most 5 minutes (--budget 5m);\n"
      "--strategy exhaustive measures every one.");
  add_gpu_option(sub, o.gpu,
                 "a suite of several shapes (--shapes) is spread over them whole, each shape "
                 "tuned on one GPU (its candidates, finalists and edge checks), the next shape "
                 "going to the next idle GPU; one shape's candidates are measured side by side on "
                 "all of them, its finalists re-timed on the first. With --replay, a list stands "
                 "for that many devices");
  auto* shape_opt = sub.add_option("--shape", o.shape, "Problem MxNxK (row-major C = A*B)")
                        ->capture_default_str();
  sub.add_option("--layout", o.layout,
                 "Operand layout op(A) op(B) of C = alpha*op(A)*op(B) + beta*C: NN, NT, TN or TT "
                 "(N: A is MxK / B is KxN row-major; T: A is stored KxM / B is stored NxK). With "
                 "--shapes, the layout of entries that state none")
      ->capture_default_str();
  sub.add_option("--shapes", o.shapes,
                 "Tune several problems in one run, sharing the compile cache: a JSON list of "
                 "\"MxNxK\" (or {\"shape\": ..., \"layout\": \"TN\", \"space\": FILE|NAME}, an "
                 "entry's space overriding --space for that shape), e.g. bench/shapes.json")
      ->excludes(shape_opt);
  sub.add_option("--csv", o.csv,
                 "Write one summary row per shape (winner, its time, cuBLAS's, ratio) to this CSV");
  o.space_opt =
      sub.add_option("--space", o.space,
                     "Search space: a JSON file, or a built-in name; spaces joined by '+' tune the "
                     "survivors of each, without repeats (e.g. default+tma). auto: every built-in "
                     "space, so every kernel family (TMA ones only on sm_90). With --replay and no "
                     "--space: each dataset's recorded space")
          ->capture_default_str();
  add_db_option(sub, o.db);
  sub.add_option("--results", o.results, "Also append every trial to this JSON-lines file");
  add_cache_dir_option(sub, o.cache_dir);
  return sub;
}

// Part two: how to search, what to replay, where the results go.
void add_tune_search_options(CLI::App& sub, TuneCli& o) {
  sub.add_option("--top", o.top, "Finalists re-timed beside cuBLAS")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  sub.add_option("--reps", o.reps, "Timed repetitions per candidate")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sub.add_option("--final-reps", o.final_reps, "Timed repetitions for finalists and cuBLAS")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  sub.add_option("--cut-ratio", o.cut_ratio,
                 "Abandon a candidate whose first 2 repetitions are this much slower than the "
                 "best so far")
      ->check(CLI::Range(1.0, 100.0))
      ->capture_default_str();
  sub.add_option("--seed", o.seed,
                 "Seed of the random inputs, 1 to 2^64 - 1 (default or 0: random, logged)");
  sub.add_option("--nvrtc-option", o.nvrtc_options,
                 "Extra NVRTC option, repeatable (part of the compile-cache key), e.g. "
                 "-DSGT_K_UNROLL=4 to unroll the k loop 4x instead of fully");
  sub.add_option("-j,--jobs", o.jobs,
                 "NVRTC threads (default: all cores); a suite spread over a GPU set shares them "
                 "among the GPUs")
      ->check(CLI::Range(0, 1024));
  sub.add_flag("--retune", o.retune, "Measure again even where the store has a result");
  sub.add_flag("--continue", o.continue_search,
               "Search on where an earlier run of this problem converged or measured every "
               "candidate (such a search is otherwise done: reported from the store, nothing "
               "measured); patience is counted afresh");
  sub.add_option("--strategy", o.strategy,
                 "Search strategy: exhaustive (every candidate, in the space's order), random "
                 "(every candidate, in an order drawn from --seed), anneal (simulated annealing "
                 "over configs one knob apart), or model (a cost model trained on this GPU's "
                 "other problems ranks the candidates; the best-ranked are measured in batches "
                 "and the model refitted as trials arrive)")
      ->capture_default_str();
  sub.add_option("--budget", o.budget,
                 "Wall-clock limit of each shape's search, compiling included (e.g. 90s, 5m, "
                 "1h; 0 or none: no limit); the finalists' re-timing and edge checks follow it. "
                 "Default: 5m, or none with --strategy exhaustive. In a replay, the recorded "
                 "seconds are the clock");
  sub.add_flag("--dry-run", o.dry_run,
               "Print the candidates per family and space, the strategy, the budget and the "
               "estimated compile and measure cost, and stop: no GPU, nothing stored");
  sub.add_option("--arch", o.arch,
                 "With --dry-run: the GPU architecture to plan for, e.g. sm_90 (default sm_90)");
  sub.add_option("--max-evals", o.max_evals,
                 "Measure at most this many candidates in this run (0: no limit); a later run "
                 "resumes with the rest")
      ->check(CLI::Range(std::size_t{0}, kMaxCount))
      ->capture_default_str();
  sub.add_option("--patience", o.patience,
                 "Stop searching once this many measurements in a row brought no new best at "
                 "least 0.5 % faster (0: never); the budget still applies. Default: 200 with "
                 "--strategy model or anneal, 0 with exhaustive or random")
      ->check(CLI::Range(std::size_t{0}, kMaxCount));
  sub.add_flag("--no-local-look", o.no_local_look,
               "Stop a converged search at once. By default (model, anneal) it first measures "
               "the one-knob neighbours and block-tile moves of its 3 fastest that it never "
               "measured, and once more around a new best among them");
  sub.add_option("--history", o.history,
                 "What the model strategy learns from besides this GPU's trials in the database: "
                 "dataset files (default: the datasets shipped with sgemm-tune); the tuned "
                 "problem's own recording is never used")
      ->check(CLI::ExistingFile);
  sub.add_option("--replay", o.replay,
                 "Run the whole tune without a GPU, answering every candidate from recorded "
                 "trials: a dataset file (datasets/, `sgemm-tune dataset write`) or a tuning "
                 "database with one GPU. Repeatable (one recording per shape); a candidate "
                 "the recording lacks is an error. Trials are stored with source replayed");
  add_shard_option(sub, o.shard, "The shapes of --shapes",
                   "Give each shard its own --db; `db merge` gathers them (docs/cluster.md)");
  add_precision_option(sub, o.precision,
                       "fp32-accurate tunes those families too, measuring each candidate's error "
                       "against FP64 (a candidate above the bound is recorded inaccurate)");
  sub.add_flag("--json", o.json, "Print the summary as JSON on stdout");
  o.precision_opt = sub.get_option("--precision");
}

// What the options resolve to, checked before anything starts.
struct TuneInputs {
  Precision precision = Precision::fp32;
  std::optional<Shard> shard;
  std::optional<ShardShare> share;  // this shard's part of the suite
  GpuSet gpu_set;
  std::filesystem::path cache_dir;
  std::uint64_t seed = 0;
  double budget_s = 0;
  size_t patience = 0;
  std::vector<eval::Recording> recordings;
  std::vector<PlannedShape> plan;
};

// Reads and checks the options and plans the suite (this shard's share of it). Bad input throws
// here, before the GPU or the store is touched.
TuneInputs plan_tune(const TuneCli& o) {
  const std::string layout = parse_layout(o.layout);
  Precision precision = parse_precision_option(o.precision);
  const auto shard = resolve_shard(o.shard);
  if (shard && o.shapes.empty()) throw InputError("--shard splits a suite: it needs --shapes");
  const GpuSet gpu_set = parse_gpu_set(o.gpu);
  std::vector<SuiteEntry> entries;
  if (!o.shapes.empty()) {
    entries = load_suite(o.shapes, layout);
  } else {
    entries.push_back({parse_shape(o.shape), ""});
    entries.back().problem.layout = layout;
  }
  const auto cache_dir =
      o.cache_dir.empty() ? gpu::default_cache_dir() : std::filesystem::path(o.cache_dir);
  const std::uint64_t seed = o.seed ? o.seed : std::random_device{}();
  make_strategy(o.strategy);  // an unknown strategy is bad input, before anything starts
  const double budget_s =
      o.budget.empty() ? strategy_traits(o.strategy).default_budget_s : parse_budget(o.budget);
  const size_t patience = o.patience.value_or(tune::default_patience(o.strategy));
  if (!o.arch.empty() && !o.dry_run)
    throw InputError("--arch is for --dry-run (a tune uses the GPU's own)");

  // A replay without --space tunes what each dataset recorded (its header's space), not
  // today's `auto`, which may hold candidates added after the recording.
  auto recordings = tune::load_recordings(o.replay);
  if (!recordings.empty() && o.space_opt->count() == 0) {
    for (auto& e : entries) {
      if (!e.space.empty()) continue;
      const auto& rec = eval::recording_for(recordings, e.problem);
      if (!rec.space.empty()) e.space = rec.space;
    }
  }
  // ... under the precision class it recorded, unless --precision says otherwise: a recording
  // of fp32-accurate candidates makes the replay fp32-accurate (which admits the FFMA ones too).
  if (!recordings.empty() && o.precision_opt->count() == 0) {
    for (const auto& e : entries) {
      if (eval::recording_for(recordings, e.problem).precision == Precision::fp32_accurate)
        precision = Precision::fp32_accurate;
    }
  }
  // Input first, then the GPU, then the store: bad input or no GPU writes nothing.
  auto plan = plan_suite(entries, o.space, o.shapes, precision);
  // Every shard plans the whole suite and deals it the same way, then keeps its own shapes.
  std::optional<ShardShare> share;
  if (shard) {
    share = share_of(*shard, tune_costs(plan, budget_s, o.max_evals));
    log_share(*share, "shapes", "s");
    plan = pick(plan, *share);
  }
  if (!shard && plan.size() == 1 && plan[0].enumeration.survivors.empty()) {
    throw InputError(fmt::format(
        "space '{}' has no valid config for shape {} (see `sgemm-tune space --space {} "
        "--shape {} --explain{}`)",
        plan[0].space_name, plan[0].problem.shape(), plan[0].space_arg, plan[0].problem.shape(),
        precision == Precision::fp32 ? "" : " --precision " + std::string(to_string(precision))));
  }
  return TuneInputs{precision, shard,    std::move(share),      gpu_set,        cache_dir, seed,
                    budget_s,  patience, std::move(recordings), std::move(plan)};
}

// --dry-run: what each shape would tune and what it would cost; nothing started.
void print_tune_dry_run(const TuneCli& o, const TuneInputs& in) {
  const std::string arch = o.arch.empty() ? "sm_90" : o.arch;
  if (!arch.starts_with("sm_"))
    throw InputError(fmt::format("--arch '{}': expected e.g. sm_90", arch));
  nlohmann::json all = nlohmann::json::array();
  const auto cost = cost_basis(arch);
  for (const auto& p : in.plan) {
    all.push_back(dry_run(p, arch, cost, o.strategy, in.budget_s, o.max_evals, in.patience,
                          static_cast<unsigned>(o.jobs)));
    if (!o.json) print_dry_run(all.back());
  }
  // One shape: its plan; several, or a shard's: {"runs": [...]}, as for a tune of several.
  if (o.json)
    print_json(all.size() == 1 && !in.shard ? all.front() : nlohmann::json{{"runs", all}});
}

// A tune of the planned suite: the devices (a worker per GPU, or a replay standing for them),
// the store, each shape through the suite runner (tune/suite.hpp), then the summary.
class SuiteTune {
 public:
  SuiteTune(const TuneCli& o, TuneInputs& in);
  // Tunes every shape; printed (or kept for --json) in suite order as they end.
  void run();
  // The CSV, the JSON or the table; throws when a shape failed (what it measured is stored).
  void report();

 private:
  struct ShapeRun {
    tune::TuneOptions t;
    std::optional<tune::TuneReport> report;  // empty: not tuned (no config, or an error)
    ShapeSummary summary;
  };
  tune::TuneOptions options_for(size_t pi) const;
  void tune_shape(size_t pi, std::optional<size_t> device);
  void emit(size_t pi);
  void error_summary(size_t pi, const std::string& why, int device);
  void print_devices(const nlohmann::json& devices) const;

  const TuneCli& o_;
  TuneInputs& in_;
  const std::vector<PlannedShape>& plan_;
  std::unique_ptr<eval::Fleet> fleet_;
  std::unique_ptr<TrialStore> db_;
  std::unique_ptr<JsonLinesStore> results_;
  std::unique_ptr<TeeStore> store_;
  // The tunes running at once share the store under one lock (SqliteStore is one connection).
  std::unique_ptr<SharedStore> shared_;
  const db::SqliteStore* sqlite_ = nullptr;
  std::unique_ptr<tune::History> history_;
  bool spread_ = false;
  unsigned jobs_ = 0;
  std::vector<ShapeRun> shape_runs_;
  std::vector<ShapeSummary> summaries_;
  nlohmann::json runs_ = nlohmann::json::array();
  std::vector<bool> ended_;
  size_t next_emit_ = 0;
  tune::SuiteRun suite_;
};

SuiteTune::SuiteTune(const TuneCli& o, TuneInputs& in) : o_(o), in_(in), plan_(in.plan) {
  auto& recordings = in.recordings;
  for (const auto& p : plan_) {
    if (!recordings.empty()) eval::recording_for(recordings, p.problem);
  }
  if (!recordings.empty()) refuse_other_gpu(in.gpu_set, recordings);
  if (recordings.empty()) {
    fleet_ =
        std::make_unique<gpu::WorkerFleet>(self_exe(), in.gpu_set, in.cache_dir, o.nvrtc_options);
  } else {
    fleet_ = std::make_unique<eval::ReplayFleet>(std::move(recordings), in.gpu_set);
  }
  db_ = open_tune_store(o.db);
  std::vector<TrialStore*> stores{db_.get()};
  if (!o.results.empty()) {
    results_ = std::make_unique<JsonLinesStore>(o.results);
    stores.push_back(results_.get());
  }
  store_ = std::make_unique<TeeStore>(stores);
  shared_ = std::make_unique<SharedStore>(*store_);
  sqlite_ = dynamic_cast<const db::SqliteStore*>(db_.get());
  history_ = std::make_unique<tune::History>(
      o.history.empty() ? shipped_datasets()
                        : std::vector<std::filesystem::path>(o.history.begin(), o.history.end()));
  // Several shapes on several GPUs: each shape whole on one GPU (its candidates, finalists and
  // edge checks), the next shape going to the next idle one, so no GPU waits on one shape's
  // compiling. One shape, or one GPU: the shapes one after another, each shape's candidates
  // measured over every GPU.
  const size_t devices = fleet_->size();
  spread_ = devices > 1 && plan_.size() > 1;
  jobs_ = spread_ ? threads_per_device(static_cast<unsigned>(o.jobs), devices)
                  : static_cast<unsigned>(o.jobs);
  shape_runs_.resize(plan_.size());
  ended_.assign(plan_.size(), false);
}

tune::TuneOptions SuiteTune::options_for(size_t pi) const {
  tune::TuneOptions t;
  t.problem = plan_[pi].problem;
  t.candidates = plan_[pi].enumeration.survivors;
  t.top_k = o_.top;
  t.repetitions = o_.reps;
  t.final_repetitions = o_.final_reps;
  t.cut_ratio = o_.cut_ratio;
  t.seed = in_.seed;
  t.compile_threads = jobs_;
  t.retune = o_.retune;
  t.continue_search = o_.continue_search;
  t.nvrtc_options = o_.nvrtc_options;
  t.strategy = o_.strategy;
  t.max_evals = o_.max_evals;
  t.budget_s = in_.budget_s;
  t.patience = in_.patience;
  if (o_.no_local_look) t.local_look = false;
  return t;
}

// Tunes shape pi: on every GPU, or (device) on that one of the spread alone.
void SuiteTune::tune_shape(size_t pi, std::optional<size_t> device) {
  auto& out = shape_runs_[pi];
  out = ShapeRun{};  // a GPU lost on this shape may have begun it
  const auto& planned = plan_[pi];
  out.summary.problem = planned.problem;
  if (planned.enumeration.survivors.empty()) {
    // Several shapes: report the one no config serves and tune the others.
    spdlog::warn(
        "space '{}' has no valid config for shape {} (see `sgemm-tune space --space "
        "{} --shape {} --explain`)",
        planned.space_name, planned.problem.shape(), planned.space_arg, planned.problem.shape());
    return;
  }
  tune::TuneOptions& t = out.t;
  t = options_for(pi);
  if (strategy_traits(o_.strategy).needs_history) {
    const auto& fp = fleet_->gpu_of(t.problem);
    t.history = shared_->locked([&] { return history_->trials_for(fp, sqlite_, t.problem); });
  }
  spdlog::info("space {}: {} of {} configs valid for {}; input seed {}", planned.space_name,
               t.candidates.size(), planned.enumeration.total, t.problem.shape(), t.seed);
  ProgressView view(!spread_);  // tunes at once log their progress, no bar
  out.report =
      tune::tune_on(t, *fleet_, device, *shared_, [&](const tune::TuneProgress& p) { view(p); });
  out.summary = summarize(t, *out.report);
  t.history = {};  // what it learnt from is not needed any more
}

void SuiteTune::emit(size_t pi) {
  auto& run = shape_runs_[pi];
  summaries_.push_back(run.summary);
  if (run.report) {
    if (o_.json) {
      runs_.push_back(run_json(run.t, plan_[pi].space_name, *run.report));
      runs_.back()["precision"] = to_string(plan_[pi].precision);
    } else {
      print_run(run.t, *run.report, spread_);
    }
  }
  run = ShapeRun{{}, std::nullopt, run.summary};  // trials and candidates are not needed
}

void SuiteTune::error_summary(size_t pi, const std::string& why, int device) {
  ShapeSummary& sum = shape_runs_[pi].summary;
  sum = ShapeSummary{};
  sum.problem = plan_[pi].problem;
  sum.status = "error";
  sum.reason = why;
  sum.device = device;
  sum.date = utc_timestamp();
  shape_runs_[pi].report.reset();
}

void SuiteTune::run() {
  if (spread_) {
    spdlog::info("{} shapes spread over {} GPUs ({}), each tuned on one; {} compile thread{} each",
                 plan_.size(), fleet_->size(), in_.gpu_set.text(), jobs_, jobs_ == 1 ? "" : "s");
  }
  tune::SuiteHooks hooks;
  hooks.run = [&](size_t pi, std::optional<size_t> d) { tune_shape(pi, d); };
  hooks.ended = [&](size_t pi, const std::string& failed, int device) {
    if (!failed.empty()) {
      spdlog::error("{} {}: {}", plan_[pi].problem.shape(), plan_[pi].problem.layout, failed);
      error_summary(pi, failed, device);
    }
    ended_[pi] = true;
    while (next_emit_ < plan_.size() && ended_[next_emit_]) emit(next_emit_++);
  };
  hooks.recorded_s = [&](size_t pi) {
    const auto& r = shape_runs_[pi].report;
    return r ? r->evaluator_s : 0.0;
  };
  suite_ = tune::run_suite(plan_.size(), *fleet_, spread_, hooks);
  // Every GPU was lost: the shapes none tuned are errors, so the summary has every shape.
  for (const size_t pi : suite_.not_run()) {
    error_summary(pi, "not tuned: every GPU was lost", -1);
    ended_[pi] = true;
  }
  while (next_emit_ < plan_.size()) emit(next_emit_++);
}

// Which GPU tuned how many shapes, and why one left (shapes spread over GPUs).
void SuiteTune::print_devices(const nlohmann::json& devices) const {
  std::string parts;
  for (const auto& d : devices) {
    parts += fmt::format("{}GPU {} {}", parts.empty() ? "" : ", ", d.at("device").get<int>(),
                         d.at("shapes").get<size_t>());
    const auto lost = d.at("lost").get<std::string>();
    if (!lost.empty()) parts += " (lost: " + terminal_safe(lost) + ")";
  }
  fmt::print("shapes tuned per GPU: {}\n", parts);
}

void SuiteTune::report() {
  if (!o_.csv.empty()) write_summary_csv(o_.csv, summaries_);
  const double geomean = geomean_ratio(summaries_);
  const nlohmann::json devices = tune::suite_devices_json(suite_, *fleet_);
  const auto failed = std::count_if(summaries_.begin(), summaries_.end(),
                                    [](const ShapeSummary& s) { return s.status == "error"; });
  if (o_.json) {
    if (!in_.share && plan_.size() == 1 && runs_.size() == 1) {
      print_json(runs_.front());
    } else {
      nlohmann::json j = {{"runs", runs_}, {"summary", nlohmann::json::array()}};
      if (in_.share) j["shard"] = share_json(*in_.share);
      for (const auto& s : summaries_) j["summary"].push_back(summary_json(s));
      j["geomean_ratio"] = geomean;
      if (suite_.report) j["devices"] = devices;
      print_json(std::move(j));
    }
  } else if (plan_.size() > 1 || in_.share) {
    print_summary(summaries_, geomean, spread_);
    if (suite_.report) print_devices(devices);
  }
  if (failed > 0) {
    std::fflush(stdout);
    throw Error(
        fmt::format("{} of {} shapes failed (see the summary's reasons); what they "
                    "measured is stored, and a run again resumes them",
                    failed, summaries_.size()));
  }
}

}  // namespace

void register_tune(CLI::App& app) {
  auto o = std::make_shared<TuneCli>();
  CLI::App& sub = add_tune_problem_options(app, *o);
  add_tune_search_options(sub, *o);
  sub.callback([o] {
    auto in = plan_tune(*o);
    if (o->dry_run) return print_tune_dry_run(*o, in);
    SuiteTune suite(*o, in);
    suite.run();
    suite.report();
  });
}

void register_worker(CLI::App& app) {
  auto* worker = app.add_subcommand("__worker", "internal: the GPU worker process");
  worker->group("");  // hidden from --help
  worker->callback([] {
    const int rc = gpu::run_worker();
    if (rc != 0) std::exit(rc);
  });
}

}  // namespace sgt::cli
