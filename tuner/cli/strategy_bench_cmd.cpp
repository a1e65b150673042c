// `sgemm-tune strategy-bench`: how fast each search strategy finds the optimum of recorded truth.
// Every strategy replays every complete dataset (the replay evaluator: the recorded statuses,
// times and costs, no GPU) for several seeds; a learning strategy is trained on the *other*
// datasets only (leave one shape out). Reported: the mean fraction of the optimum reached (the
// dataset's best time / the best found so far; 1.0 is optimal) after 1, 2, 5, 10 and 25 % of the
// candidates, and the evaluations and simulated time (recorded compile + measure seconds) to reach
// 0.98 and 0.99, beside random search without replacement. With --patience, where each run stopped,
// with or without the session's last look around the best (--local-look).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "json_output.hpp"
#include "dataset.hpp"
#include "error.hpp"
#include "file_util.hpp"
#include "parallel.hpp"
#include "plot_util.hpp"
#include "recordings.hpp"
#include "replay_evaluator.hpp"
#include "strategy.hpp"
#include "tune.hpp"

namespace sgt::cli {

namespace {

namespace fs = std::filesystem;

constexpr double kCheckpoints[] = {0.01, 0.02, 0.05, 0.10, 0.25};
constexpr double kTargets[] = {0.98, 0.99};

// Remembers nothing: every replayed run starts from scratch.
class NullStore final : public TrialStore {
 public:
  void begin(const GpuFingerprint&, const Problem&) override {}
  std::optional<Trial> finished(const std::string&, const std::string&) override { return {}; }
  void record(const Trial&) override {}
};

struct Run {
  std::string strategy, problem;
  std::uint64_t seed = 0;
  size_t candidates = 0, evaluations = 0;
  std::vector<double> fraction;  // at each checkpoint
  std::vector<double> evals_to;  // per target; NaN: not reached within the run
  std::vector<double> seconds_to;
  // Where the run stopped (its last measurement): how many, the fraction reached, the simulated
  // seconds, and why (TuneReport::stopped).
  size_t stop_evals = 0;
  double stop_fraction = 0, stop_seconds = 0;
  std::string stopped;
  bool learned_nothing = false;  // a learning strategy with no history to learn from
  int look_evals = 0;            // of stop_evals, what the last look measured
  bool look_new_best = false;    // and whether it found the run's best
};

double optimum(const eval::Recording& r) {
  double best = 0;
  for (const auto& t : r.trials) {
    if (t.phase == TrialPhase::final || t.status != TrialStatus::ok || t.cut_early) continue;
    if (best == 0 || t.time.median_ms < best) best = t.time.median_ms;
  }
  return best;
}

// `label` names the runs in the report (the strategy, or it with "+look" where both are run).
Run replay_one(const eval::Recording& rec, const std::vector<WarpTileConfig>& candidates,
               const std::vector<Trial>& history, const std::string& strategy,
               const std::string& label, std::optional<bool> local_look, std::uint64_t seed,
               double max_fraction, size_t patience, unsigned threads, unsigned model_threads) {
  const double opt = optimum(rec);
  eval::ReplayEvaluator ev(rec, threads);
  NullStore store;
  tune::TuneOptions o;
  o.problem = rec.problem;
  o.candidates = candidates;
  o.strategy = strategy;
  o.seed = seed;
  o.top_k = 1;
  o.compile_threads = threads;
  o.model_threads = model_threads;
  o.max_evals =
      static_cast<size_t>(std::ceil(max_fraction * static_cast<double>(candidates.size())));
  o.patience = patience;
  o.local_look = local_look;
  const bool learns = strategy_traits(strategy).needs_history;
  if (learns) o.history = history;
  std::vector<double> best_after, seconds_after;  // per evaluation
  const auto rep = tune::run_tune(o, ev, store, [&](const tune::TuneProgress& p) {
    best_after.push_back(p.best_ms);
    seconds_after.push_back(ev.elapsed_s());
  });
  Run r{label,
        fmt::format("{} {}", rec.problem.shape(), rec.problem.layout),
        seed,
        candidates.size(),
        best_after.size(),
        {},
        {},
        {},
        best_after.size(),
        0,
        seconds_after.empty() ? 0 : seconds_after.back(),
        rep.stopped};
  auto fraction_at = [&](size_t evals) {
    if (evals == 0 || best_after.empty()) return 0.0;
    const double b = best_after[std::min(evals, best_after.size()) - 1];
    return b > 0 ? opt / b : 0.0;
  };
  for (double c : kCheckpoints) {
    r.fraction.push_back(fraction_at(
        static_cast<size_t>(std::max(1.0, std::ceil(c * static_cast<double>(candidates.size()))))));
  }
  for (double target : kTargets) {
    double evals = NAN, secs = NAN;
    for (size_t i = 0; i < best_after.size(); ++i) {
      if (best_after[i] > 0 && opt / best_after[i] >= target) {
        evals = static_cast<double>(i + 1);
        secs = seconds_after[i];
        break;
      }
    }
    r.evals_to.push_back(evals);
    r.seconds_to.push_back(secs);
  }
  r.stop_fraction = fraction_at(best_after.size());
  r.learned_nothing = learns && history.empty();
  r.look_evals = rep.look_measured;
  r.look_new_best = rep.look_new_best;
  return r;
}

struct Summary {
  std::vector<double> fraction, evals_to, seconds_to;
  std::vector<int> unreached;
  int runs = 0;
  double stop_evals = 0, stop_fraction = 0, stop_seconds = 0, min_stop_fraction = 1;
  int converged = 0;
  int learned_nothing = 0;  // runs of a learning strategy that had no history
  double look_evals = 0;    // mean measured by the last look
  int look_new_best = 0;    // runs whose last look found their best
};

std::map<std::string, Summary> summarize(const std::vector<Run>& runs) {
  std::map<std::string, Summary> out;
  for (const auto& r : runs) {
    auto& s = out[r.strategy];
    s.fraction.resize(std::size(kCheckpoints));
    s.evals_to.resize(std::size(kTargets));
    s.seconds_to.resize(std::size(kTargets));
    s.unreached.resize(std::size(kTargets));
    ++s.runs;
    s.stop_evals += static_cast<double>(r.stop_evals);
    s.stop_fraction += r.stop_fraction;
    s.stop_seconds += r.stop_seconds;
    s.min_stop_fraction = std::min(s.min_stop_fraction, r.stop_fraction);
    s.converged += r.stopped == "converged";
    s.learned_nothing += r.learned_nothing;
    s.look_evals += r.look_evals;
    s.look_new_best += r.look_new_best;
    for (size_t i = 0; i < r.fraction.size(); ++i) s.fraction[i] += r.fraction[i];
    for (size_t i = 0; i < r.evals_to.size(); ++i) {
      // Not reached: counted at what the run measured, so the mean is a lower bound.
      const bool miss = std::isnan(r.evals_to[i]);
      s.unreached[i] += miss;
      s.evals_to[i] += miss ? static_cast<double>(r.evaluations) : r.evals_to[i];
      s.seconds_to[i] += miss ? r.stop_seconds : r.seconds_to[i];
    }
  }
  for (auto& [name, s] : out) {
    for (auto& v : s.fraction) v /= s.runs;
    s.stop_evals /= s.runs;
    s.stop_fraction /= s.runs;
    s.stop_seconds /= s.runs;
    s.look_evals /= s.runs;
    for (size_t i = 0; i < s.evals_to.size(); ++i) {
      s.evals_to[i] /= s.runs;
      // Like the evaluations: a run that never got there counts with all it spent, and the mean
      // is then a lower bound (marked).
      s.seconds_to[i] /= s.runs;
    }
  }
  return out;
}

std::string csv_of(const std::vector<Run>& runs) {
  std::string csv =
      "strategy,problem,seed,candidates,evaluations,frac_1pct,frac_2pct,frac_5pct,frac_10pct,"
      "frac_25pct,evals_to_0.98,evals_to_0.99,seconds_to_0.98,seconds_to_0.99,stop_evals,"
      "stop_fraction,stop_seconds,stopped,look_evals,look_new_best\n";
  for (const auto& r : runs) {
    csv +=
        fmt::format("{},{},{},{},{}", r.strategy, r.problem, r.seed, r.candidates, r.evaluations);
    for (double f : r.fraction) csv += fmt::format(",{:.5f}", f);
    for (double e : r.evals_to) csv += std::isnan(e) ? "," : fmt::format(",{:.0f}", e);
    for (double s : r.seconds_to) csv += std::isnan(s) ? "," : fmt::format(",{:.1f}", s);
    csv += fmt::format(",{},{:.5f},{:.1f},{},{},{:d}\n", r.stop_evals, r.stop_fraction,
                       r.stop_seconds, r.stopped, r.look_evals, r.look_new_best);
  }
  return csv;
}

nlohmann::json json_of(const std::map<std::string, Summary>& sums) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, s] : sums) {
    nlohmann::json f = nlohmann::json::object();
    for (size_t i = 0; i < s.fraction.size(); ++i) {
      f[fmt::format("{:g}%", 100 * kCheckpoints[i])] = s.fraction[i];
    }
    j[name] = {{"runs", s.runs},
               {"fraction_of_optimum", f},
               {"evals_to_0.98", s.evals_to[0]},
               {"evals_to_0.99", s.evals_to[1]},
               {"unreached_0.98", s.unreached[0]},
               {"unreached_0.99", s.unreached[1]},
               {"seconds_to_0.98", s.seconds_to[0]},
               {"seconds_to_0.99", s.seconds_to[1]},
               {"runs_without_history", s.learned_nothing},
               {"at_stop",
                {{"evaluations", s.stop_evals},
                 {"fraction_of_optimum", s.stop_fraction},
                 {"min_fraction_of_optimum", s.min_stop_fraction},
                 {"seconds", s.stop_seconds},
                 {"converged_runs", s.converged}}}};
  }
  return j;
}

void print(const std::map<std::string, Summary>& sums, size_t patience) {
  fmt::print("{:<11} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>10} {:>10} {:>9} {:>9}\n", "strategy",
             "runs", "1%", "2%", "5%", "10%", "25%", "evals.98", "evals.99", "s to .98",
             "s to .99");
  for (const auto& [name, s] : sums) {
    auto evals = [&](size_t i) {
      return fmt::format("{}{:.0f}", s.unreached[i] ? ">" : "", s.evals_to[i]);
    };
    auto secs = [&](size_t i) {
      return fmt::format("{}{:.0f}", s.unreached[i] ? ">" : "", s.seconds_to[i]);
    };
    fmt::print(
        "{:<11} {:>5} {:>7.4f} {:>7.4f} {:>7.4f} {:>7.4f} {:>7.4f} {:>10} {:>10} {:>9} {:>9}\n",
        name, s.runs, s.fraction[0], s.fraction[1], s.fraction[2], s.fraction[3], s.fraction[4],
        evals(0), evals(1), secs(0), secs(1));
  }
  if (patience > 0) {
    fmt::print(
        "\nat the stop (--patience {}): mean evaluations, mean and worst fraction of the "
        "optimum, mean simulated seconds, runs that converged\n",
        patience);
    for (const auto& [name, s] : sums) {
      fmt::print("{:<11} {:>8.0f} {:>7.4f} {:>7.4f} {:>8.0f} s {:>4}/{}\n", name, s.stop_evals,
                 s.stop_fraction, s.min_stop_fraction, s.stop_seconds, s.converged, s.runs);
    }
    for (const auto& [name, s] : sums) {
      if (s.look_evals > 0) {
        fmt::print(
            "{}: the last look measured {:.1f} of those evaluations on average and found the "
            "run's best in {} of {} runs\n",
            name, s.look_evals, s.look_new_best, s.runs);
      }
    }
  }
  for (const auto& [name, s] : sums) {
    if (s.learned_nothing > 0) {
      fmt::print(
          "{}: {} of {} runs had no history to learn from (no other dataset of the same GPU): "
          "they searched untrained, so no comparison is made for {}; give it more datasets\n",
          name, s.learned_nothing, s.runs, name);
    }
  }
  const auto random = sums.find("random");
  for (const auto& [name, s] : sums) {
    if (random == sums.end() || name == "random" || s.evals_to[0] <= 0 || s.learned_nothing > 0)
      continue;
    fmt::print("{}: {:.1f}x fewer evaluations than random to reach 0.98{}\n", name,
               random->second.evals_to[0] / s.evals_to[0],
               random->second.unreached[0] ? " (random's count is a lower bound)" : "");
  }
}

// What `strategy-bench` was asked.
struct StrategyBenchOpts {
  std::vector<std::string> datasets;
  std::string strategies = "random,model", csv = "strategy-bench.csv", plot, plot_script,
              local_look = "auto";
  int seeds = 5;
  double max_fraction = 0.25;
  size_t patience = 0;
  unsigned threads = 16;
  unsigned jobs = 0;           // runs replayed at once; 0: one per core
  unsigned model_threads = 1;  // the model's fitting threads in each run
  bool json = false, include_incomplete = false;
};

void add_strategy_bench_options(CLI::App& sub, StrategyBenchOpts& o) {
  sub.add_option("datasets", o.datasets,
                 "Dataset files (default: every dataset shipped with sgemm-tune)")
      ->check(CLI::ExistingFile);
  sub.add_option("--strategies", o.strategies, "Comma-separated strategies")->capture_default_str();
  sub.add_option("--seeds", o.seeds, "Seeds per strategy and dataset")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sub.add_option("--max-fraction", o.max_fraction,
                 "Each run measures at most this fraction of the candidates")
      ->check(CLI::Range(0.0001, 1.0))
      ->capture_default_str();
  sub.add_option("--patience", o.patience,
                 "Stop each run after this many measurements in a row without a 0.5 % gain, as "
                 "`tune --patience` does, and report where the runs stopped (0: never)")
      ->check(CLI::Range(std::size_t{0}, kMaxCount))
      ->capture_default_str();
  sub.add_option("--local-look", o.local_look,
                 "With --patience: the last look before a converged run stops (the one-knob "
                 "neighbours and block-tile moves of its best 3 it never measured), as `tune` "
                 "takes it: auto (as tune: on for the strategies that converge by default), on, "
                 "off, or both (each strategy run without it and with it, as <strategy>+look)")
      ->check(CLI::IsMember({"auto", "on", "off", "both"}))
      ->capture_default_str();
  sub.add_option("--threads", o.threads,
                 "Compile threads of the simulated clock (the recording machine's cores)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  sub.add_option("--jobs", o.jobs,
                 "Runs replayed at once (0: one per core); the figures do not depend on it")
      ->check(CLI::Range(0u, 1024u))
      ->capture_default_str();
  sub.add_option("--model-threads", o.model_threads,
                 "Threads the model fits with in each run (0: every core). XGBoost's sums, and "
                 "so the model's picks, depend on the count: the default 1 gives the same "
                 "figures on any machine, which a tune (every core) need not match run for run")
      ->check(CLI::Range(0u, 1024u))
      ->capture_default_str();
  sub.add_option("--csv", o.csv, "One row per strategy, dataset and seed")->capture_default_str();
  sub.add_option("--plot", o.plot, "Draw the mean fraction of the optimum per strategy (PNG)");
  sub.add_option("--plot-script", o.plot_script,
                 "The plot script (default: tools/plot_strategy_bench.py)");
  sub.add_flag("--include-incomplete", o.include_incomplete,
               "Also replay datasets that do not cover their whole candidate set");
  sub.add_flag("--json", o.json, "Print the summary as JSON on stdout");
}

struct Job {
  std::string strategy, label;
  std::optional<bool> look;
  int seed = 1;
};

// Runs `one` on every job, up to `parallel` at once (0: one per core); the results in the jobs'
// order. Each run is a session of its own (its evaluator, store, strategy and model), so they
// share nothing but the read-only recording, candidates and history.
template <typename F>
std::vector<Run> replay_jobs(const std::vector<Job>& jobs, unsigned parallel, F one) {
  std::vector<std::optional<Run>> out(jobs.size());
  std::mutex mu;
  parallel_for(jobs.size(), parallel, [&](size_t i) {
    Run r = one(jobs[i]);
    std::lock_guard lock(mu);
    std::fprintf(stderr, "\r%s %s seed %d   ", r.strategy.c_str(), r.problem.c_str(), jobs[i].seed);
    out[i] = std::move(r);
  });
  std::vector<Run> runs;
  for (auto& r : out) runs.push_back(std::move(*r));
  return runs;
}

// Every run: each complete dataset (or every one, with --include-incomplete), replayed with each
// strategy and seed.
std::vector<Run> replay_datasets(const StrategyBenchOpts& o, const std::vector<db::Dataset>& all,
                                 const std::vector<std::string>& strategies) {
  // Each strategy's runs: one set as --local-look says, or two (without, and with as "+look").
  auto variants = [&](const std::string& s) {
    std::vector<std::pair<std::string, std::optional<bool>>> out;
    if (o.local_look == "both") return decltype(out){{s, false}, {s + "+look", true}};
    if (o.local_look == "auto") return decltype(out){{s, std::nullopt}};
    return decltype(out){{s, o.local_look == "on"}};
  };
  std::vector<Run> runs;
  for (size_t d = 0; d < all.size(); ++d) {
    if (!all[d].header.complete && !o.include_incomplete) {
      spdlog::warn("{}: incomplete ({} of {} candidates), skipped", all[d].path.string(),
                   all[d].header.measured, all[d].header.candidates);
      continue;
    }
    eval::Recording rec{all[d].path.string(), all[d].gpu.fingerprint, all[d].header.problem, {}};
    std::vector<WarpTileConfig> candidates;
    for (const auto& st : all[d].trials) {
      rec.trials.push_back(st.trial);
      if (st.trial.phase != TrialPhase::final) candidates.push_back(st.trial.config);
    }
    std::vector<Trial> history;
    for (size_t h = 0; h < all.size(); ++h) {
      if (h == d || !(all[h].gpu.identity() == all[d].gpu.identity())) continue;
      for (const auto& st : all[h].trials) history.push_back(st.trial);
    }
    std::vector<Job> jobs;
    for (const auto& s : strategies) {
      for (const auto& [label, look] : variants(s)) {
        for (int seed = 1; seed <= o.seeds; ++seed) jobs.push_back({s, label, look, seed});
      }
    }
    auto done = replay_jobs(jobs, o.jobs, [&](const Job& j) {
      return replay_one(rec, candidates, history, j.strategy, j.label, j.look,
                        static_cast<std::uint64_t>(j.seed), o.max_fraction, o.patience, o.threads,
                        o.model_threads);
    });
    for (auto& r : done) runs.push_back(std::move(r));
  }
  return runs;
}

void run_strategy_bench(const StrategyBenchOpts& o) {
  std::vector<std::string> strategies;
  for (size_t a = 0; a <= o.strategies.size();) {
    const size_t b = std::min(o.strategies.find(',', a), o.strategies.size());
    strategies.push_back(o.strategies.substr(a, b - a));
    make_strategy(strategies.back());  // InputError for an unknown one
    a = b + 1;
  }
  std::vector<fs::path> files(o.datasets.begin(), o.datasets.end());
  if (files.empty()) files = shipped_datasets();
  if (files.empty()) throw InputError("no datasets given, and none shipped were found");
  fs::path plot_script;
  if (!o.plot.empty()) plot_script = find_plot_script(o.plot_script, "plot_strategy_bench.py");
  // Every dataset, as recorded; the model's history for one is all the others.
  std::vector<db::Dataset> all;
  for (const auto& f : files) all.push_back(db::read_dataset(f));
  const auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::warn);
  const auto runs = replay_datasets(o, all, strategies);
  std::fputc('\n', stderr);
  spdlog::set_level(level);
  if (runs.empty()) throw InputError("no complete dataset to replay (--include-incomplete?)");
  write_file_atomically(o.csv, csv_of(runs));
  const auto sums = summarize(runs);
  if (o.json) {
    // Wrapped, so that format_version is not taken for a strategy's name.
    print_json({{"strategies", json_of(sums)}});
  } else {
    print(sums, o.patience);
    fmt::print("per run: {}\n", o.csv);
  }
  if (!o.plot.empty()) {
    std::string why;
    const auto py = find_python(why);
    if (!py) throw Error("cannot draw the plot: " + why + "; the CSV was written");
    if (run_program({*py, plot_script.string(), o.csv, o.plot}, false) != 0) {
      throw Error(
          fmt::format("the plot script {} failed; the CSV was written", plot_script.string()));
    }
  }
}

}  // namespace

void register_strategy_bench(CLI::App& app) {
  auto o = std::make_shared<StrategyBenchOpts>();
  auto* sub = app.add_subcommand(
      "strategy-bench",
      "Replay recorded datasets with each search strategy over several seeds (leave one shape\n"
      "out for the model: it never learns from the shape it replays) and report the fraction of\n"
      "the optimum reached after 1, 2, 5, 10 and 25 % of the candidates, and the evaluations and\n"
      "simulated time (recorded compile + measure seconds) to reach 0.98 and 0.99. No GPU.");
  add_strategy_bench_options(*sub, *o);
  sub->callback([o] { run_strategy_bench(*o); });
}

}  // namespace sgt::cli
