// The tune session (see tune.hpp): a strategy asks, a build pool compiles ahead, the evaluator
// measures, the store keeps every trial.
#include "tune.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "arch.hpp"
#include "error.hpp"
#include "family.hpp"
#include "kernel_source.hpp"
#include "nvrtc_compiler.hpp"
#include "edge_cases.hpp"
#include "sha256.hpp"
#include "strategy.hpp"
#include "tma_geometry.h"

namespace sgt::gpu {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// What a trial's binary was built from: the kernel sources, and any extra compile options (a
// trial measured with other options is a different kernel, never served as the default's winner).
std::string trial_kernel_hash(const TuneOptions& o, const WarpTileConfig& c) {
  if (o.nvrtc_options.empty()) return kernel_source_hash(c);
  return sha256_hex(kernel_source_hash(c) + "\n" +
                    fmt::format("{}", fmt::join(o.nvrtc_options, " ")));
}

Trial base_trial(const TuneOptions& o, const WarpTileConfig& c) {
  Trial t;
  t.config = c;
  t.config_name = to_name(c);
  t.problem = o.problem;
  t.kernel_template = std::string(kKernelTemplateName);
  t.kernel_hash = trial_kernel_hash(o, c);
  t.tuner_version = SGT_VERSION;
  t.strategy = o.strategy;
  t.seed = o.seed;
  return t;
}

void apply_compiled(Trial& t, const Compiled& c) {
  t.registers = c.registers;
  t.spill_bytes = c.spill_store_bytes + c.spill_load_bytes;
  t.stack_bytes = c.stack_bytes;
  t.shared_bytes = c.shared_bytes;
  t.compile_s = c.compile_seconds;
  if (c.status != TrialStatus::ok) {
    t.status = c.status;
    t.reason = c.reason;
  }
}

void apply_response(Trial& t, const TrialResponse& r, const Problem& p) {
  t.status = r.status;
  t.reason = r.reason;
  t.verify_error = r.verify_error;
  t.time = r.time;
  t.cut_early = r.cut;
  t.gflops = t.time.median_ms > 0 ? p.flops() / (t.time.median_ms * 1e6) : 0;
}

// A watchdog generous enough for a candidate 100x slower than cuBLAS, yet bounded.
std::chrono::milliseconds trial_timeout(double cublas_ms, int reps) {
  const double ms = 10000.0 + 100.0 * cublas_ms * (reps + 3);
  return std::chrono::milliseconds(static_cast<long long>(ms));
}

// Compiled -> verified and timed -> recorded: the one path every candidate takes, screened or
// final.
Trial measure(const TuneOptions& o, const WarpTileConfig& cfg, const Compiled& comp, Evaluator& ev,
              TrialStore* store, double best_ms, int cut_after, double cublas_ms) {
  Trial t = base_trial(o, cfg);
  if (ev.kind() == "replay") t.strategy = "replay/" + t.strategy;
  apply_compiled(t, comp);
  if (t.status == TrialStatus::ok) {
    auto req = make_trial_request(comp, cfg);
    req.repetitions = o.repetitions;
    req.cut_after = cut_after;
    req.cut_ratio = o.cut_ratio;
    req.tolerance = o.tolerance;
    req.best_ms = best_ms;
    const auto tm0 = Clock::now();
    apply_response(t, ev.run_trial(req, trial_timeout(cublas_ms, o.repetitions)), o.problem);
    t.measure_s = seconds_since(tm0);
  }
  t.cublas_median_ms = cublas_ms;
  t.timestamp = utc_timestamp();
  if (store) store->record(t);
  if (t.status != TrialStatus::ok) {
    spdlog::debug("{}: {} ({})", t.config_name, to_string(t.status), t.reason);
  }
  return t;
}

// Builds the candidates the session submits on a pool of threads, ahead of the measuring, and
// hands each binary over when the session takes it.
class BuildQueue {
 public:
  BuildQueue(Evaluator& ev, const Problem& p, unsigned threads) : ev_(ev), problem_(p) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < threads; ++i) pool_.emplace_back([this] { work(); });
  }
  ~BuildQueue() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : pool_) t.join();
  }
  BuildQueue(const BuildQueue&) = delete;
  BuildQueue& operator=(const BuildQueue&) = delete;

  void submit(size_t key, const WarpTileConfig& c) {
    std::lock_guard lock(mu_);
    if (!first_) first_ = Clock::now();
    todo_.emplace_back(key, c);
    cv_.notify_all();
  }
  // Waits for the binary of `key`; rethrows what its build threw.
  Compiled take(size_t key) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return done_.count(key) || error_; });
    if (error_) std::rethrow_exception(error_);
    Compiled c = std::move(done_.at(key));
    done_.erase(key);
    return c;
  }
  // From the first submit to the last finished build.
  double wall_s() const {
    std::lock_guard lock(mu_);
    return first_ ? std::chrono::duration<double>(last_ - *first_).count() : 0;
  }

 private:
  void work() {
    while (true) {
      std::pair<size_t, WarpTileConfig> job;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !todo_.empty(); });
        if (stop_) return;
        job = todo_.front();
        todo_.pop_front();
      }
      try {
        Compiled c = ev_.build(job.second, problem_);
        std::lock_guard lock(mu_);
        done_.emplace(job.first, std::move(c));
        last_ = Clock::now();
      } catch (...) {
        std::lock_guard lock(mu_);
        if (!error_) error_ = std::current_exception();
      }
      cv_.notify_all();
    }
  }

  Evaluator& ev_;
  Problem problem_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<size_t, WarpTileConfig>> todo_;
  std::map<size_t, Compiled> done_;
  std::exception_ptr error_;
  bool stop_ = false;
  std::optional<Clock::time_point> first_;
  Clock::time_point last_{};
  std::vector<std::thread> pool_;
};

}  // namespace

TrialRequest make_trial_request(const Compiled& comp, const WarpTileConfig& c) {
  TrialRequest r;
  r.name = comp.config_name;
  r.family = std::string(family_of(c).id());
  r.cubin_path = comp.cubin_path.string();
  r.cubin_sha256 = comp.cubin_sha256;
  r.kernel = comp.lowered_name;
  r.reduce_kernel = comp.reduce_lowered_name;
  r.pack_kernel = comp.pack_lowered_name;
  r.tile = LaunchTile{c.BM, c.BN, c.BK, c.SPLIT_K};
  r.block = static_cast<unsigned>(c.NUM_THREADS);
  if (r.family == "ws_tma") {
    // The shared-memory layout depends on the layout only through which operands are staged.
    const auto t = sgt_kernel::make_tma_layout(derive(c), comp.layout[0] == 'T',
                                               comp.layout[1] == 'T', c.MIN_BLOCKS);
    r.tile.pad_a = c.PAD_A;
    r.tile.pad_b = c.PAD_B;
    r.tile.smem_bytes = t.SMEM_BYTES;
    r.block = static_cast<unsigned>(t.THREADS);
  }
  return r;
}

namespace {

// The worker and every evaluator verify alike: the request and the suite of the problem's layout.
template <class Verifier>
std::vector<EdgeCheck> verify_on(Verifier& v, const Compiled& comp, const WarpTileConfig& c,
                                 const Problem& p, std::uint64_t seed, double tolerance) {
  auto req = make_trial_request(comp, c);
  req.tolerance = tolerance;
  return v.verify_cases(req, edge_cases(c, p.layout), seed, std::chrono::seconds(120));
}

}  // namespace

std::vector<EdgeCheck> verify_edge_cases(const Compiled& comp, const WarpTileConfig& c,
                                         const Problem& p, WorkerClient& worker, std::uint64_t seed,
                                         double tolerance) {
  return verify_on(worker, comp, c, p, seed, tolerance);
}

std::vector<EdgeCheck> verify_edge_cases(const Compiled& comp, const WarpTileConfig& c,
                                         const Problem& p, Evaluator& ev, std::uint64_t seed,
                                         double tolerance) {
  return verify_on(ev, comp, c, p, seed, tolerance);
}

namespace {

bool faster(const Trial& t, double best_ms) {
  return t.status == TrialStatus::ok && !t.cut_early &&
         (best_ms == 0 || t.time.median_ms < best_ms);
}

// One tune of one problem: resume, screen (strategy, build pool, evaluator, store), finalists.
class Session {
 public:
  Session(const TuneOptions& o, Evaluator& ev, TrialStore& store,
          const std::function<void(const TuneProgress&)>& progress)
      : o_(o), ev_(ev), store_(store), progress_(progress), trials_(o.candidates.size()) {}

  TuneReport run() {
    rep_.worker = ev_.info();
    rep_.evaluator = ev_.kind();
    const int restarts_before = ev_.restarts();
    const auto& fp = rep_.worker.fingerprint;
    spdlog::info("GPU {}: {} (sm_{}{}, {} SMs), chosen as {}", rep_.worker.device, fp.name,
                 fp.cc_major, fp.cc_minor, fp.sm_count, rep_.worker.why);
    drop_unsupported(fp);
    trials_.assign(o_.candidates.size(), std::nullopt);
    store_.begin(fp, o_.problem);
    resume();
    set_problem();
    screen();
    collect();
    finalize();
    rep_.worker_restarts = ev_.restarts() - restarts_before;
    rep_.evaluator_s = ev_.elapsed_s();
    rep_.wall_s = seconds_since(t0_);
    return std::move(rep_);
  }

 private:
  // A candidate this GPU cannot hold (more threads or blocks per SM than it has, more shared memory
  // per block, a TMA config off sm_90) is not measured: a space written for an H200 tunes what
  // fits elsewhere instead of recording every misfit as a failure.
  void drop_unsupported(const GpuFingerprint& fp) {
    const ArchInfo* arch = find_arch(fp.cc_major, fp.cc_minor);
    std::map<std::string, size_t> why;
    const auto n = std::erase_if(o_.candidates, [&](const WarpTileConfig& c) {
      if (!arch) {
        // Not in the table: only what is certain, that the TMA kernel is sm_90's alone.
        if (c.TMA == 1 && fp.cc_major != 9) return ++why["tma_architecture"], true;
        return false;
      }
      const auto v = check(c, hardware_limits(*arch));
      if (v.empty()) return false;
      ++why[v.front().rule];
      return true;
    });
    if (n > 0) {
      std::string rules;
      for (const auto& [rule, k] : why)
        rules += fmt::format("{}{} {}", rules.empty() ? "" : ", ", rule, k);
      spdlog::info("skipping {} candidates this GPU (sm_{}{}) cannot run: {}", n, fp.cc_major,
                   fp.cc_minor, rules);
    }
  }

  // What the store already holds for this GPU, problem and kernel source is kept as it is.
  void resume() {
    for (size_t i = 0; i < o_.candidates.size(); ++i) {
      if (o_.retune) continue;
      const auto& c = o_.candidates[i];
      if (auto done = store_.finished(to_name(c), trial_kernel_hash(o_, c))) {
        if (faster(*done, best_ms_))
          best_ms_ = done->time.median_ms, best_name_ = done->config_name;
        trials_[i] = std::move(*done);
        ++rep_.resumed;
      }
    }
    if (rep_.resumed > 0) {
      spdlog::info("resuming: {} of {} candidates already measured, {} to go", rep_.resumed,
                   o_.candidates.size(), o_.candidates.size() - rep_.resumed);
    }
  }

  void set_problem() {
    ProblemSetup setup;
    setup.problem = o_.problem;
    setup.seed = o_.seed;
    setup.cublas_repetitions = o_.final_repetitions;
    rep_.cublas_screen = ev_.set_problem(setup);
    spdlog::info("cuBLAS FP32 {}: median {:.3f} ms ({:.1f} GFLOP/s) over {} repetitions",
                 o_.problem.shape(), rep_.cublas_screen.median_ms,
                 o_.problem.flops() / (rep_.cublas_screen.median_ms * 1e6),
                 rep_.cublas_screen.repetitions);
  }

  // The strategy asks ahead (enough to keep every build thread busy); the evaluator measures in
  // the order asked, each candidate as soon as its binary is ready.
  void screen() {
    auto strategy = make_strategy(o_.strategy);
    strategy->start({o_.candidates, o_.problem, trials_, o_.seed, rep_.worker.fingerprint.sm_count,
                     o_.history});
    const unsigned threads =
        o_.compile_threads ? o_.compile_threads : std::max(1u, std::thread::hardware_concurrency());
    const size_t lookahead = 2 * static_cast<size_t>(threads);
    const size_t limit = o_.max_evals ? o_.max_evals : o_.candidates.size();
    BuildQueue builds(ev_, o_.problem, threads);
    std::deque<size_t> queued;
    size_t asked = 0;
    const auto tg0 = Clock::now();
    const double ev0 = ev_.elapsed_s();
    bool out_of_time = false, converged = false;
    // The best at the last gain of at least min_gain: what a new trial must beat to count.
    double gain_ref = best_ms_;
    size_t since_gain = 0;
    while (true) {
      // The budget is the evaluator's clock (a replay's: the recorded seconds), from this tune's
      // start; what is compiled ahead but not yet measured when it runs out is dropped.
      if (o_.budget_s > 0 && ev_.elapsed_s() - ev0 >= o_.budget_s) {
        out_of_time = true;
        break;
      }
      while (queued.size() < lookahead && asked < limit) {
        const auto next = strategy->ask(std::min(lookahead - queued.size(), limit - asked));
        if (next.empty()) break;
        for (size_t i : next) builds.submit(i, o_.candidates[i]), queued.push_back(i);
        asked += next.size();
      }
      if (queued.empty()) break;
      const size_t i = queued.front();
      queued.pop_front();
      const Compiled comp = builds.take(i);
      ++(comp.from_cache ? rep_.cache_hits : rep_.compiled);
      Trial t = measure(o_, o_.candidates[i], comp, ev_, &store_, best_ms_, o_.cut_after,
                        rep_.cublas_screen.median_ms);
      if (faster(t, best_ms_)) best_ms_ = t.time.median_ms, best_name_ = t.config_name;
      if (faster(t, gain_ref * (1 - o_.min_gain))) {
        gain_ref = t.time.median_ms;
        since_gain = 0;
      } else {
        ++since_gain;
      }
      strategy->tell(i, t);
      trials_[i] = std::move(t);
      ++rep_.measured;
      report(tg0, limit);
      if (o_.patience > 0 && since_gain >= o_.patience) {
        converged = true;
        break;
      }
    }
    rep_.since_gain = static_cast<int>(since_gain);
    const bool evals_hit = o_.max_evals > 0 && asked >= limit && !strategy->ask(1).empty();
    rep_.budget_hit = out_of_time || evals_hit;
    rep_.stopped = converged     ? "converged"
                   : out_of_time ? "budget"
                   : evals_hit   ? "max_evals"
                                 : "exhausted";
    if (converged) {
      spdlog::info("converged: {} measurements in a row without a {:.1f} % gain (--patience {})",
                   since_gain, 100 * o_.min_gain, o_.patience);
    }
    rep_.compile_wall_s = builds.wall_s();
  }

  void report(Clock::time_point tg0, size_t limit) {
    if (!progress_) return;
    TuneProgress p;
    const size_t todo = std::min(limit, o_.candidates.size() - rep_.resumed);
    p.done = rep_.resumed + rep_.measured;
    p.total = rep_.resumed + todo;
    p.elapsed_s = seconds_since(t0_);
    const double per = seconds_since(tg0) / static_cast<double>(rep_.measured);
    p.eta_s = per * static_cast<double>(todo - std::min<size_t>(todo, rep_.measured));
    p.best_ms = best_ms_;
    p.best_name = best_name_;
    progress_(p);
  }

  // Every candidate with a trial (resumed or measured now) joins the report.
  void collect() {
    for (auto& t : trials_) {
      if (!t) continue;
      ++rep_.status_counts[std::string(to_string(t->status))];
      if (t->cut_early) ++rep_.cut_early;
      rep_.trials.push_back(std::move(*t));
    }
  }

  // Finalists: the fastest screened candidates, re-timed with more repetitions beside cuBLAS, then
  // verified on the edge-shape suite in rank order.
  void finalize() {
    std::vector<const Trial*> ranked;
    for (const auto& t : rep_.trials) {
      if (t.status == TrialStatus::ok && !t.cut_early) ranked.push_back(&t);
    }
    std::sort(ranked.begin(), ranked.end(),
              [](const Trial* a, const Trial* b) { return a->time.median_ms < b->time.median_ms; });
    if (ranked.size() > static_cast<size_t>(o_.top_k)) ranked.resize(o_.top_k);
    if (ranked.empty()) return;
    rep_.cublas_final = ev_.baseline(o_.final_repetitions);
    TuneOptions fo = o_;
    fo.repetitions = o_.final_repetitions;
    fo.strategy = o_.strategy + "/final";
    std::vector<Compiled> comps;
    for (const Trial* screened : ranked) {
      comps.push_back(ev_.build(screened->config, o_.problem));  // a cache hit
      // Finalists run every repetition: no cut. Recorded once their verification is known.
      Trial t = measure(fo, screened->config, comps.back(), ev_, nullptr, 0, 0,
                        rep_.cublas_final.median_ms);
      Finalist f{t, 0};
      if (t.status == TrialStatus::ok && t.time.median_ms > 0) {
        f.ratio_to_cublas = rep_.cublas_final.median_ms / t.time.median_ms;
      }
      rep_.finalists.push_back(std::move(f));
    }
    verify_finalists(comps);
    for (const Finalist& f : rep_.finalists) store_.record(f.trial);
    std::stable_sort(
        rep_.finalists.begin(), rep_.finalists.end(),
        [](const Finalist& a, const Finalist& b) { return a.ratio_to_cublas > b.ratio_to_cublas; });
  }

  // The winner must also be right off its tuned shape: finalists are verified in rank order until
  // one passes every case; one that fails keeps its failed cases (stored with its trial) and is
  // marked incorrect, so it can never be served. An evaluator that cannot verify (a replay of a
  // config never verified) leaves the finalist unverified, as the report then says.
  void verify_finalists(const std::vector<Compiled>& comps) {
    std::vector<size_t> order(rep_.finalists.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return rep_.finalists[a].ratio_to_cublas > rep_.finalists[b].ratio_to_cublas;
    });
    for (size_t i : order) {
      Finalist& f = rep_.finalists[i];
      if (f.trial.status != TrialStatus::ok) continue;
      f.trial.edge_checks =
          verify_edge_cases(comps[i], f.trial.config, o_.problem, ev_, o_.seed, o_.tolerance);
      const auto failed = std::find_if(f.trial.edge_checks.begin(), f.trial.edge_checks.end(),
                                       [](const EdgeCheck& e) { return !e.passed; });
      if (failed == f.trial.edge_checks.end()) break;
      const auto n = std::count_if(f.trial.edge_checks.begin(), f.trial.edge_checks.end(),
                                   [](const EdgeCheck& e) { return !e.passed; });
      f.trial.status = TrialStatus::incorrect;
      f.trial.reason =
          fmt::format("failed {} of {} edge cases, first: {} ({})", n, f.trial.edge_checks.size(),
                      describe(*failed), "see edge_checks");
      f.ratio_to_cublas = 0;
      spdlog::warn("{}: {}", f.trial.config_name, f.trial.reason);
    }
  }

  TuneOptions o_;
  Evaluator& ev_;
  TrialStore& store_;
  const std::function<void(const TuneProgress&)>& progress_;
  std::vector<std::optional<Trial>> trials_;
  TuneReport rep_;
  double best_ms_ = 0;
  std::string best_name_;
  Clock::time_point t0_ = Clock::now();
};

}  // namespace

TuneReport run_tune(const TuneOptions& opts, Evaluator& ev, TrialStore& store,
                    const std::function<void(const TuneProgress&)>& progress) {
  make_strategy(opts.strategy);  // an unknown name fails before anything is measured
  return Session(opts, ev, store, progress).run();
}

}  // namespace sgt::gpu
