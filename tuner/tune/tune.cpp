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
#include "instance.hpp"
#include "kernel_source.hpp"
#include "edge_cases.hpp"
#include "sha256.hpp"
#include "strategy.hpp"

namespace sgt::tune {

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

Trial base_trial(const TuneOptions& o, const WarpTileConfig& c, TrialPhase phase) {
  Trial t;
  t.config = c;
  t.config_name = to_name(c);
  t.problem = o.problem;
  t.kernel_template = std::string(kKernelTemplateName);
  t.kernel_hash = trial_kernel_hash(o, c);
  t.tuner_version = SGT_VERSION;
  t.strategy = o.strategy;
  t.phase = phase;
  t.seed = o.seed;
  return t;
}

void apply_compiled(Trial& t, const Compiled& c) {
  t.registers = c.registers;
  t.spill_bytes = c.spill_store_bytes + c.spill_load_bytes;
  t.stack_bytes = c.stack_bytes;
  t.shared_bytes = c.shared_bytes;
  t.compile_s = c.compile_seconds;
  if (!c.recorded_kernel_hash.empty()) t.kernel_hash = c.recorded_kernel_hash;
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
  // The accuracy against FP64, where the request asked for it and the candidate got that far.
  t.error_ratio = r.error_ratio >= 0 ? std::optional(r.error_ratio) : std::nullopt;
  t.stress_ratio = r.stress_ratio >= 0 ? std::optional(r.stress_ratio) : std::nullopt;
  t.stress_case = t.stress_ratio ? r.stress_case : std::string();
}

// A watchdog generous enough for a candidate 100x slower than cuBLAS, yet bounded.
std::chrono::milliseconds trial_timeout(double cublas_ms, int reps) {
  const double ms = 10000.0 + 100.0 * cublas_ms * (reps + 3);
  return std::chrono::milliseconds(static_cast<long long>(ms));
}

// Compiled -> verified and timed -> recorded: the one path every candidate takes, screened or
// final.
Trial measure(const TuneOptions& o, TrialPhase phase, const WarpTileConfig& cfg,
              const Compiled& comp, Evaluator& ev, TrialStore* store, double best_ms, int cut_after,
              double cublas_ms) {
  Trial t = base_trial(o, cfg, phase);
  if (ev.traits().replayed) t.source = TrialSource::replayed;
  apply_compiled(t, comp);
  if (t.status == TrialStatus::ok) {
    auto req = make_trial_request(comp, cfg);
    // A non-strict kernel's accuracy is measured on stress cases of the problem's shape too.
    if (req.accuracy) req.stress = accuracy_stress_cases(cfg, o.problem);
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
// hands each binary over when the session takes it. An evaluator on a recorded clock (a replay)
// builds each binary when it is taken, on the session's thread instead: its clock is charged
// in the session's order, not in the order threads happen to finish, so a replay's seconds are
// the same every run.
class BuildQueue {
 public:
  BuildQueue(Evaluator& ev, const Problem& p, unsigned threads) : ev_(ev), problem_(p) {
    if (ev.traits().recorded_clock) return;
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
    if (pool_.empty()) return build_now(key);
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
  // A recorded clock's build, on the taking thread. With several GPUs measuring at once, one
  // thread per GPU takes here while another submits from claim(): todo_ and last_ are shared
  // between them, so all of it, the build included (the evaluator sees one build at a time, as
  // on the session's thread), is done under mu_.
  Compiled build_now(size_t key) {
    std::lock_guard lock(mu_);
    const auto it =
        std::find_if(todo_.begin(), todo_.end(), [&](const auto& j) { return j.first == key; });
    if (it == todo_.end())
      throw Error(fmt::format("internal: candidate {} taken before it was submitted", key));
    const WarpTileConfig c = it->second;
    todo_.erase(it);
    Compiled out = ev_.build(c, problem_);
    last_ = Clock::now();
    return out;
  }

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

bool local_look_on(const TuneOptions& o) {
  const bool on = o.local_look.value_or(strategy_traits(o.strategy).default_patience > 0);
  return on && o.patience > 0 && o.look_best > 0;
}

TrialRequest make_trial_request(const Compiled& comp, const WarpTileConfig& c) {
  // The binary was built for this instance: its launch is read from it, never re-derived.
  const KernelInstance in = resolve(c, comp.layout, comp.vec_loads);
  const LaunchDescriptor& l = in.launch;
  TrialRequest r;
  r.name = comp.config_name;
  r.family = std::string(in.family->id());
  r.launch = std::string(to_string(l.abi));
  r.cubin_path = comp.cubin_path.string();
  r.cubin_sha256 = comp.cubin_sha256;
  r.kernel = comp.lowered_name;
  r.reduce_kernel = comp.reduce_lowered_name;
  r.pack_kernel = comp.pack_lowered_name;
  r.tile = LaunchTile{l.tile_m, l.tile_n, l.tile_k, l.split_k};
  // A kernel of a non-strict precision class has its error against FP64 measured.
  r.accuracy = in.precision != Precision::fp32;
  r.block = static_cast<unsigned>(l.block_threads);
  r.tile.smem_bytes = l.dynamic_smem_bytes;
  // The boxes of the operands' tensor maps span the padded rows (0 for the pointers ABI).
  r.tile.pad_a = l.pad_a;
  r.tile.pad_b = l.pad_b;
  r.tile.tail = l.tail ? 1 : 0;
  r.tile.group_m = l.group_m;
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

// A screening trial of the last look is stored with the phase look, as a finalist's re-timing is
// with final: the store then tells a converged search that looked from one that gained.
bool is_look(const Trial& t) {
  return t.phase == TrialPhase::look;
}

// One GPU of the session: its evaluator, its own baseline and best (its cut threshold), and its
// clock at the start of the screening.
struct Lane {
  Evaluator* ev = nullptr;
  DeviceReport rep;
  double best_ms = 0;
  double clock0 = 0;
  int restarts0 = 0;
  bool lost() const { return !rep.lost.empty(); }
  double cublas_ms() const { return rep.cublas_screen.median_ms; }
};

// One tune of one problem: resume, screen (strategy, build pool, lanes, store), finalists.
class Session {
 public:
  Session(const TuneOptions& o, const Devices& d, TrialStore& store,
          const std::function<void(const TuneProgress&)>& progress)
      : o_(o),
        builder_(d.builder ? *d.builder : *d.lanes.at(0)),
        store_(store),
        progress_(progress),
        trials_(o.candidates.size()) {
    for (Evaluator* ev : d.lanes) {
      Lane l;
      l.ev = ev;
      l.rep.info = ev->info();
      lanes_.push_back(std::move(l));
    }
  }

  TuneReport run() {
    rep_.worker = lanes_[0].ev->info();
    rep_.evaluator = lanes_[0].ev->traits().name;
    const auto& fp = rep_.worker.fingerprint;
    for (auto& l : lanes_) {
      const auto& f = l.rep.info.fingerprint;
      spdlog::info("GPU {}: {} (sm_{}{}, {} SMs), chosen as {}", l.rep.info.device, f.name,
                   f.cc_major, f.cc_minor, f.sm_count, l.rep.info.why);
      if (const auto diff = model_difference(fp, f); !diff.empty()) {
        throw Error(fmt::format(
            "GPU {} cannot share a tune with GPU {}: {}; their times would not compare (tune each "
            "model on its own, e.g. --gpu {})",
            l.rep.info.device, rep_.worker.device, diff, l.rep.info.device));
      }
      l.restarts0 = l.ev->restarts();
    }
    drop_unsupported(fp);
    trials_.assign(o_.candidates.size(), std::nullopt);
    store_.begin(fp, o_.problem);
    resume();
    const bool done =
        !o_.retune && !o_.continue_search && rep_.resumed > 0 &&
        (static_cast<size_t>(rep_.resumed) == o_.candidates.size() || converged_before_);
    if (done && reuse_finalists()) return std::move(rep_);
    // Converged before, but its finalists were never stored (killed while re-timing them): no
    // screening, only the finalists.
    if (done) converged_ = converged_before_;
    set_problem();
    screen();
    collect();
    finalize();
    for (auto& l : lanes_) {
      l.rep.restarts = l.ev->restarts() - l.restarts0;
      rep_.worker_restarts += l.rep.restarts;
      rep_.evaluator_s = std::max(rep_.evaluator_s, l.ev->elapsed_s());
      rep_.devices.push_back(l.rep);
    }
    rep_.evaluator_s = std::max(rep_.evaluator_s, builder_.elapsed_s());
    rep_.wall_s = seconds_since(t0_);
    return std::move(rep_);
  }

 private:
  // A candidate this GPU cannot hold (more threads or blocks per SM than it has, more shared memory
  // per block, a family not written for its architecture) is not measured: a space written for an
  // H200 tunes what fits elsewhere instead of recording every misfit as a failure.
  void drop_unsupported(const GpuFingerprint& fp) {
    const ArchInfo* arch = find_arch(fp.cc_major, fp.cc_minor);
    std::map<std::string, size_t> why;
    const auto n = std::erase_if(o_.candidates, [&](const WarpTileConfig& c) {
      if (!arch) {
        // Not in the table: only what is certain, the architectures each family is written for.
        const auto& family = family_of(c);
        if (!family.implemented_for(fp.cc_major * 10 + fp.cc_minor))
          return ++why[std::string(family.architecture_rule())], true;
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
      if (auto done = store_.finished(to_name(c), stored_hash(c))) {
        if (faster(*done, best_ms_))
          best_ms_ = done->time.median_ms, best_name_ = done->config_name;
        trials_[i] = std::move(*done);
        ++rep_.resumed;
      }
    }
    if (rep_.resumed > 0) {
      spdlog::info("resuming: {} of {} candidates already measured, {} to go", rep_.resumed,
                   o_.candidates.size(), o_.candidates.size() - rep_.resumed);
      if (o_.patience > 0 && !o_.retune) count_since_gain();
    }
  }

  // The kernel hash this session stores a candidate's trials under (a replay's: as recorded).
  std::string stored_hash(const WarpTileConfig& c) const {
    auto h = lanes_[0].ev->recorded_kernel_hash(to_name(c));
    return h.empty() ? trial_kernel_hash(o_, c) : h;
  }

  // Replays the stored screening of these candidates in the order it was recorded through the
  // convergence rule: a search that had already gone `patience` measurements without a gain had
  // converged, and is not searched again (unless continue_search).
  void count_since_gain() {
    std::map<std::string, std::string> current;  // candidate name -> its kernel hash
    for (const auto& c : o_.candidates) current.emplace(to_name(c), stored_hash(c));
    double ref = 0;
    size_t since = 0;
    for (const auto& t : store_.screening_order()) {
      const auto it = current.find(t.config_name);
      if (it == current.end() || it->second != t.kernel_hash) continue;
      // The last look measured these after the search had converged: they neither count towards
      // patience nor reset it (a look that found a new best has not reopened the search), but a
      // search that goes on (--continue) must beat them.
      if (is_look(t)) {
        if (faster(t, ref)) ref = t.time.median_ms;
        continue;
      }
      if (faster(t, ref * (1 - o_.min_gain))) {
        ref = t.time.median_ms;
        since = 0;
      } else {
        ++since;
      }
    }
    since_gain_ = since;
    converged_before_ = since >= o_.patience;
  }

  // A search done in an earlier run: its report from the store, measuring nothing. False when the
  // earlier run stored no finalist (it was stopped while re-timing them).
  bool reuse_finalists() {
    for (auto& t : trials_) {
      if (!t || t->phase != TrialPhase::final) continue;
      Finalist f{*t, 0};
      if (t->status == TrialStatus::ok && t->time.median_ms > 0 && t->cublas_median_ms > 0)
        f.ratio = t->cublas_median_ms / t->time.median_ms;
      rep_.finalists.push_back(std::move(f));
    }
    if (rep_.finalists.empty()) return false;
    std::stable_sort(rep_.finalists.begin(), rep_.finalists.end(),
                     [](const Finalist& a, const Finalist& b) { return a.ratio > b.ratio; });
    rep_.cublas_final.median_ms = rep_.finalists.front().trial.cublas_median_ms;
    rep_.done_before = true;
    rep_.stopped = converged_before_ ? "converged" : "exhausted";
    rep_.since_gain = static_cast<int>(since_gain_);
    collect();
    for (auto& l : lanes_) rep_.devices.push_back(l.rep);
    rep_.wall_s = seconds_since(t0_);
    spdlog::info(
        "{} {}: the search ended in an earlier run ({}{}); nothing measured. --continue searches "
        "on, --retune measures every candidate again",
        o_.problem.shape(), o_.problem.layout, rep_.stopped,
        converged_before_ ? fmt::format(": {} measurements without a {:.1f} % gain", since_gain_,
                                        100 * o_.min_gain)
                          : ": every candidate measured");
    return true;
  }

  // Every GPU sets the problem up and times its own cuBLAS: its trials are cut and compared
  // against its own baseline.
  void set_problem() {
    ProblemSetup setup;
    setup.problem = o_.problem;
    setup.seed = o_.seed;
    setup.cublas_repetitions = o_.final_repetitions;
    for (auto& l : lanes_) {
      l.rep.cublas_screen = l.ev->set_problem(setup);
      l.best_ms = best_ms_;
      spdlog::info("cuBLAS FP32 {}{}: median {:.3f} ms ({:.1f} GFLOP/s) over {} repetitions",
                   o_.problem.shape(),
                   lanes_.size() > 1 ? fmt::format(" on GPU {}", l.rep.info.device) : "",
                   l.cublas_ms(), o_.problem.flops() / (l.cublas_ms() * 1e6),
                   l.rep.cublas_screen.repetitions);
    }
    rep_.cublas_screen = lanes_[0].rep.cublas_screen;
  }

  // The session's clock for the budget: the evaluators run side by side, so the furthest along
  // (a replay's: its recorded seconds; one evaluator alone: compiling and measuring, summed).
  double clock() const {
    double c = builder_.elapsed_s() - builder0_;
    for (const auto& l : lanes_) {
      if (l.ev != &builder_) c = std::max(c, l.ev->elapsed_s() - l.clock0);
    }
    return c;
  }

  // The strategy asks ahead (enough to keep every build thread busy); the GPUs measure in the
  // order asked, each candidate as soon as its binary is ready and a GPU is idle.
  void screen() {
    strategy_ = make_strategy(o_.strategy);
    strategy_->start({o_.candidates, o_.problem, trials_, o_.seed, rep_.worker.fingerprint.sm_count,
                      o_.history, o_.model_threads});
    const unsigned threads =
        o_.compile_threads ? o_.compile_threads : std::max(1u, std::thread::hardware_concurrency());
    lookahead_ = 2 * static_cast<size_t>(threads) + lanes_.size();
    limit_ = o_.max_evals ? o_.max_evals : o_.candidates.size();
    BuildQueue builds(builder_, o_.problem, threads);
    builds_ = &builds;
    tg0_ = Clock::now();
    builder0_ = builder_.elapsed_s();
    for (auto& l : lanes_) l.clock0 = l.ev->elapsed_s();
    gain_ref_ = best_ms_;
    submitted_.assign(o_.candidates.size(), false);
    looked_.assign(o_.candidates.size(), false);
    // A resumed search goes on counting from where it stopped; --continue counts afresh.
    if (o_.continue_search) since_gain_ = 0;
    measure_claimed();
    rep_.since_gain = static_cast<int>(since_gain_);
    const bool evals_hit = o_.max_evals > 0 && asked_ >= limit_ && !strategy_->ask(1).empty();
    rep_.budget_hit = out_of_time_ || evals_hit;
    rep_.stopped = converged_     ? "converged"
                   : out_of_time_ ? "budget"
                   : evals_hit    ? "max_evals"
                                  : "exhausted";
    if (converged_) {
      spdlog::info("converged: {} measurements in a row without a {:.1f} % gain (--patience {})",
                   since_gain_, 100 * o_.min_gain, o_.patience);
    }
    // Only a search that ended on its own looks, and only when this run measured something: one a
    // limit cut short resumes later (and looks when it ends), and one found done in the store was
    // not searched now.
    const bool ended = rep_.stopped == "converged" || rep_.stopped == "exhausted";
    if (local_look_on(o_) && ended && rep_.measured > 0) look();
    builds_ = nullptr;
    rep_.compile_wall_s = builds.wall_s();
  }

  // Until claim() has nothing more: one GPU, or replays, in turn; real GPUs at once.
  void measure_claimed() {
    const bool recorded = std::all_of(lanes_.begin(), lanes_.end(),
                                      [](const Lane& l) { return l.ev->traits().recorded_clock; });
    if (recorded || lanes_.size() == 1) {
      screen_in_turn();
    } else {
      screen_at_once();
    }
  }

  // The last look: the one-knob neighbours and block-tile moves (tile_move_neighbours) of the
  // look_best fastest screened candidates that no trial covers, the fastest's first; then, once,
  // those of the new fastest if the look found one (what lies around it was never looked at). Two
  // rounds at most: each costs tens of measurements, and a look that kept going would be a second
  // search without a patience.
  void look() {
    const std::vector<std::vector<size_t>> around[] = {one_knob_neighbours(o_.candidates),
                                                       tile_move_neighbours(o_.candidates)};
    // What the strategy asked for ahead but was not measured is dropped, as at any stop.
    asked_ -= queued_.size();
    queued_.clear();
    looking_ = true;
    size_t wanted = 0;
    for (int round = 0; round < 2 && !out_of_time_; ++round) {
      auto picks = look_picks(around);
      wanted += picks.size();
      // --max-evals bounds the look too.
      picks.resize(std::min(picks.size(), limit_ - asked_));
      if (picks.empty()) break;
      for (size_t i : picks) {
        looked_[i] = true;
        submit(i);
      }
      asked_ += picks.size();
      const std::string best_before = best_name_;
      measure_claimed();
      if (best_name_ == best_before) break;
    }
    looking_ = false;
    if (wanted == 0) {
      spdlog::info("last look: every neighbour of the best {} was measured already", o_.look_best);
      return;
    }
    spdlog::info("last look: {} of {} unmeasured neighbours of the best {} measured{}{}",
                 rep_.look_measured, wanted, o_.look_best,
                 rep_.look_new_best ? fmt::format("; a new best, {}", best_name_) : "",
                 static_cast<size_t>(rep_.look_measured) < wanted
                     ? (out_of_time_ ? " (the budget ended it)" : " (--max-evals ended it)")
                     : "");
  }

  // The neighbours no trial covers and no round of this look queued, around the look_best fastest
  // uncut ok trials, the fastest's neighbours first (what a budget that ends the look keeps): for
  // each, its one-knob neighbours, then its tile moves.
  std::vector<size_t> look_picks(const std::vector<std::vector<size_t>> (&around)[2]) const {
    std::vector<size_t> best;
    for (size_t i = 0; i < trials_.size(); ++i) {
      if (trials_[i] && faster(*trials_[i], 0) && trials_[i]->time.median_ms > 0) best.push_back(i);
    }
    const size_t k = std::min(o_.look_best, best.size());
    std::partial_sort(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(k), best.end(),
                      [&](size_t a, size_t b) {
                        return trials_[a]->time.median_ms < trials_[b]->time.median_ms;
                      });
    best.resize(k);
    std::vector<size_t> picks;
    std::vector<bool> seen(trials_.size(), false);
    for (size_t b : best) {
      for (const auto& next_to : around) {
        for (size_t j : next_to[b]) {
          if (!trials_[j] && !looked_[j] && !seen[j]) seen[j] = true, picks.push_back(j);
        }
      }
    }
    return picks;
  }

  // Hands a candidate to the build pool (once: one asked ahead and dropped may be looked at) and
  // queues it for measuring.
  void submit(size_t i) {
    if (!submitted_[i]) builds_->submit(i, o_.candidates[i]);
    submitted_[i] = true;
    queued_.push_back(i);
  }

  // One thread; the GPU whose clock is least takes the next candidate (ties: the first in
  // --gpu order), as it would be the first idle one. Deterministic for replays.
  void screen_in_turn() {
    while (true) {
      Lane* next = nullptr;
      for (auto& l : lanes_) {
        if (!l.lost() &&
            (!next || l.ev->elapsed_s() - l.clock0 < next->ev->elapsed_s() - next->clock0))
          next = &l;
      }
      if (!next) throw_all_lost();
      const auto i = claim();
      if (!i) return;
      step(*next, *i);
    }
  }

  // One thread per GPU, each measuring the next candidate whenever it is idle.
  void screen_at_once() {
    std::exception_ptr error;
    std::vector<std::thread> pool;
    for (auto& l : lanes_) {
      pool.emplace_back([&, lane = &l] {
        try {
          while (!lane->lost()) {
            std::optional<size_t> i;
            {
              std::lock_guard lock(mu_);
              if (error) return;
              i = claim();
            }
            if (!i) return;
            step(*lane, *i);
          }
        } catch (...) {
          std::lock_guard lock(mu_);
          if (!error) error = std::current_exception();
          stop_ = true;
        }
      });
    }
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
    // A GPU lost after the others found nothing left to claim handed its candidate back: the GPUs
    // still there measure what was handed back, one after the other.
    if (!returned_.empty()) screen_in_turn();
  }

  [[noreturn]] void throw_all_lost() const {
    std::string why;
    for (const auto& l : lanes_)
      why += fmt::format("{}GPU {}: {}", why.empty() ? "" : "; ", l.rep.info.device, l.rep.lost);
    throw Error("every GPU of the tune was lost (" + why + ")");
  }

  // The next candidate to measure (a lost GPU's first, then those the strategy asked for), or
  // nullopt when the screening is over. The caller holds mu_ when several threads measure.
  std::optional<size_t> claim() {
    if (stop_ || (converged_ && !looking_)) return std::nullopt;
    // The budget is the evaluators' clock from this tune's start; what is compiled ahead but not
    // yet measured when it runs out is dropped.
    if (o_.budget_s > 0 && clock() >= o_.budget_s) {
      out_of_time_ = true;
      return std::nullopt;
    }
    if (!returned_.empty()) {
      const size_t i = returned_.front();
      returned_.pop_front();
      return i;
    }
    // The look queued all it measures at once; the strategy is not asked again.
    while (!looking_ && queued_.size() < lookahead_ && asked_ < limit_) {
      const auto next = strategy_->ask(std::min(lookahead_ - queued_.size(), limit_ - asked_));
      if (next.empty()) break;
      for (size_t i : next) submit(i);
      asked_ += next.size();
    }
    if (queued_.empty()) return std::nullopt;
    const size_t i = queued_.front();
    queued_.pop_front();
    return i;
  }

  // Measures candidate i on one GPU and records it. A GPU that cannot go on (its worker cannot be
  // replaced) leaves the tune and hands the candidate, built, to the next idle one; bad input
  // (a candidate a replay lacks) stops the tune.
  void step(Lane& lane, size_t i) {
    Compiled comp;
    {
      std::unique_lock lock(held_mu_);
      if (auto it = held_.find(i); it != held_.end()) {
        comp = std::move(it->second);
        held_.erase(it);
      } else {
        lock.unlock();
        comp = builds_->take(i);
      }
    }
    Trial t;
    try {
      double best;
      TrialPhase phase;
      {
        std::lock_guard lock(mu_);
        best = lane.best_ms;
        phase = looked_[i] ? TrialPhase::look : TrialPhase::screen;
      }
      t = measure(o_, phase, o_.candidates[i], comp, *lane.ev, nullptr, best, o_.cut_after,
                  lane.cublas_ms());
    } catch (const InputError&) {
      throw;
    } catch (const Error& e) {
      std::lock_guard lock(mu_);
      lane.rep.lost = e.what();
      spdlog::warn("GPU {} leaves the tune: {}; {} goes to another GPU", lane.rep.info.device,
                   e.what(), to_name(o_.candidates[i]));
      {
        std::lock_guard hl(held_mu_);
        held_.emplace(i, std::move(comp));
      }
      returned_.push_front(i);
      return;
    }
    std::lock_guard lock(mu_);
    const bool looked = looked_[i];
    store_.record(t);
    ++(comp.from_cache ? rep_.cache_hits : rep_.compiled);
    ++lane.rep.measured;
    if (faster(t, lane.best_ms)) lane.best_ms = t.time.median_ms;
    if (faster(t, best_ms_)) {
      best_ms_ = t.time.median_ms, best_name_ = t.config_name;
      rep_.look_new_best = looked;
    }
    if (looked) {
      // After the convergence: no patience is counted, and the strategy, which never asked for
      // it, is not told.
      ++rep_.look_measured;
    } else {
      if (faster(t, gain_ref_ * (1 - o_.min_gain))) {
        gain_ref_ = t.time.median_ms;
        since_gain_ = 0;
      } else {
        ++since_gain_;
      }
      strategy_->tell(i, t);
    }
    trials_[i] = std::move(t);
    ++rep_.measured;
    report();
    if (o_.patience > 0 && since_gain_ >= o_.patience) converged_ = true;
  }

  void report() {
    if (!progress_) return;
    TuneProgress p;
    const size_t todo = std::min(limit_, o_.candidates.size() - rep_.resumed);
    p.done = rep_.resumed + rep_.measured;
    p.total = rep_.resumed + todo;
    p.elapsed_s = seconds_since(t0_);
    const double per = seconds_since(tg0_) / static_cast<double>(rep_.measured);
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

  // The GPU that re-times and verifies the finalists: the first still in the tune.
  Evaluator& home() {
    for (auto& l : lanes_) {
      if (!l.lost()) {
        rep_.worker = l.rep.info;
        return *l.ev;
      }
    }
    throw_all_lost();
  }

  // Finalists: the fastest screened candidates, re-timed with more repetitions beside cuBLAS on one
  // GPU, then verified on the edge-shape suite in rank order.
  void finalize() {
    std::vector<const Trial*> ranked;
    for (const auto& t : rep_.trials) {
      if (t.status == TrialStatus::ok && !t.cut_early) ranked.push_back(&t);
    }
    std::sort(ranked.begin(), ranked.end(),
              [](const Trial* a, const Trial* b) { return a->time.median_ms < b->time.median_ms; });
    if (ranked.size() > static_cast<size_t>(o_.top_k)) ranked.resize(o_.top_k);
    if (ranked.empty()) return;
    Evaluator& ev = home();
    rep_.cublas_final = ev.baseline(o_.final_repetitions);
    TuneOptions fo = o_;
    fo.repetitions = o_.final_repetitions;
    std::vector<Compiled> comps;
    for (const Trial* screened : ranked) {
      comps.push_back(builder_.build(screened->config, o_.problem));  // a cache hit
      // Finalists run every repetition: no cut. Recorded once their verification is known.
      Trial t = measure(fo, TrialPhase::final, screened->config, comps.back(), ev, nullptr, 0, 0,
                        rep_.cublas_final.median_ms);
      Finalist f{t, 0};
      if (t.status == TrialStatus::ok && t.time.median_ms > 0) {
        f.ratio = rep_.cublas_final.median_ms / t.time.median_ms;
      }
      rep_.finalists.push_back(std::move(f));
    }
    verify_finalists(ev, comps);
    for (const Finalist& f : rep_.finalists) store_.record(f.trial);
    std::stable_sort(rep_.finalists.begin(), rep_.finalists.end(),
                     [](const Finalist& a, const Finalist& b) { return a.ratio > b.ratio; });
  }

  // The winner must also be right off its tuned shape: finalists are verified in rank order until
  // one passes every case; one that fails keeps its failed cases (stored with its trial) and is
  // marked incorrect, so it can never be served. An evaluator that cannot verify (a replay of a
  // config never verified) leaves the finalist unverified, as the report then says.
  void verify_finalists(Evaluator& ev, const std::vector<Compiled>& comps) {
    std::vector<size_t> order(rep_.finalists.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return rep_.finalists[a].ratio > rep_.finalists[b].ratio;
    });
    for (size_t i : order) {
      Finalist& f = rep_.finalists[i];
      if (f.trial.status != TrialStatus::ok) continue;
      f.trial.edge_checks =
          verify_edge_cases(comps[i], f.trial.config, o_.problem, ev, o_.seed, o_.tolerance);
      const auto failed = std::find_if(f.trial.edge_checks.begin(), f.trial.edge_checks.end(),
                                       [](const EdgeCheck& e) { return !e.passed; });
      if (failed == f.trial.edge_checks.end()) break;
      const auto n = std::count_if(f.trial.edge_checks.begin(), f.trial.edge_checks.end(),
                                   [](const EdgeCheck& e) { return !e.passed; });
      f.trial.status = TrialStatus::incorrect;
      f.trial.reason =
          fmt::format("failed {} of {} edge cases, first: {} ({})", n, f.trial.edge_checks.size(),
                      describe(*failed), "see edge_checks");
      f.ratio = 0;
      spdlog::warn("{}: {}", f.trial.config_name, f.trial.reason);
    }
  }

  TuneOptions o_;
  std::vector<Lane> lanes_;
  Evaluator& builder_;
  TrialStore& store_;
  const std::function<void(const TuneProgress&)>& progress_;
  std::vector<std::optional<Trial>> trials_;
  TuneReport rep_;
  double best_ms_ = 0;
  std::string best_name_;
  Clock::time_point t0_ = Clock::now();

  // The screening's state, shared by the GPUs (guarded by mu_ when they run at once).
  std::mutex mu_;
  std::unique_ptr<SearchStrategy> strategy_;
  BuildQueue* builds_ = nullptr;
  std::deque<size_t> queued_;    // asked and submitted for building, not yet claimed
  std::deque<size_t> returned_;  // claimed by a GPU that left the tune, built (held_)
  std::mutex held_mu_;
  std::map<size_t, Compiled> held_;
  size_t asked_ = 0, lookahead_ = 0, limit_ = 0;
  double builder0_ = 0;
  double gain_ref_ = 0;  // the best at the last gain of at least min_gain: what a trial must beat
  size_t since_gain_ = 0;
  bool out_of_time_ = false, converged_ = false, stop_ = false;
  bool looking_ = false;           // the last look is measuring: claim() serves its queue alone
  std::vector<bool> submitted_;    // per candidate: handed to the build pool
  std::vector<bool> looked_;       // per candidate: queued by the last look
  bool converged_before_ = false;  // the stored screening had already converged
  Clock::time_point tg0_{};
};

}  // namespace

TuneReport run_tune(const TuneOptions& opts, Evaluator& ev, TrialStore& store,
                    const std::function<void(const TuneProgress&)>& progress) {
  return run_tune(opts, Devices{{&ev}, &ev}, store, progress);
}

TuneReport run_tune(const TuneOptions& opts, const Devices& devices, TrialStore& store,
                    const std::function<void(const TuneProgress&)>& progress) {
  make_strategy(opts.strategy);  // an unknown name fails before anything is measured
  if (devices.lanes.empty()) throw Error("a tune needs at least one GPU");
  return Session(opts, devices, store, progress).run();
}

}  // namespace sgt::tune
