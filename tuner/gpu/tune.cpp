// The tune pipeline. Compilation runs on a thread pool ahead of the GPU, which takes candidates in
// order as their binaries become ready.
#include "tune.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "error.hpp"
#include "kernel_source.hpp"
#include "nvrtc_compiler.hpp"
#include "edge_cases.hpp"
#include "sha256.hpp"
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
Trial measure(const TuneOptions& o, const WarpTileConfig& cfg, const Compiled& comp,
              WorkerClient& worker, TrialStore* store, double best_ms, int cut_after,
              double cublas_ms) {
  Trial t = base_trial(o, cfg);
  apply_compiled(t, comp);
  if (t.status == TrialStatus::ok) {
    auto req = make_trial_request(comp, cfg);
    req.repetitions = o.repetitions;
    req.cut_after = cut_after;
    req.cut_ratio = o.cut_ratio;
    req.tolerance = o.tolerance;
    req.best_ms = best_ms;
    const auto tm0 = Clock::now();
    apply_response(t, worker.run_trial(req, trial_timeout(cublas_ms, o.repetitions)), o.problem);
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

}  // namespace

TrialRequest make_trial_request(const Compiled& comp, const WarpTileConfig& c) {
  TrialRequest r;
  r.name = comp.config_name;
  r.cubin_path = comp.cubin_path.string();
  r.cubin_sha256 = comp.cubin_sha256;
  r.kernel = comp.lowered_name;
  r.reduce_kernel = comp.reduce_lowered_name;
  r.pack_kernel = comp.pack_lowered_name;
  r.tile = LaunchTile{c.BM, c.BN, c.BK, c.SPLIT_K};
  r.block = static_cast<unsigned>(c.NUM_THREADS);
  if (c.TMA == 1) {
    // The shared-memory layout depends on the layout only through which operands are staged.
    const auto t = sgt_kernel::make_tma_layout(derive(c), comp.layout[0] == 'T',
                                               comp.layout[1] == 'T', c.MIN_BLOCKS);
    r.tile.tma = 1;
    r.tile.pad_a = c.PAD_A;
    r.tile.pad_b = c.PAD_B;
    r.tile.smem_bytes = t.SMEM_BYTES;
    r.block = static_cast<unsigned>(t.THREADS);
  }
  return r;
}

std::vector<EdgeCheck> verify_edge_cases(const Compiled& comp, const WarpTileConfig& c,
                                         const Problem& p, WorkerClient& worker, std::uint64_t seed,
                                         double tolerance) {
  auto req = make_trial_request(comp, c);
  req.tolerance = tolerance;
  return worker.verify_cases(req, edge_cases(c, p.layout), seed, std::chrono::seconds(120));
}

TuneReport run_tune(const TuneOptions& given, WorkerClient& worker, TrialStore& store,
                    const std::function<void(const TuneProgress&)>& progress) {
  const auto t0 = Clock::now();
  TuneReport rep;

  rep.worker = worker.info();
  const int restarts_before = worker.restarts();
  const auto& fp = rep.worker.fingerprint;
  spdlog::info("GPU {}: {} (sm_{}{}, {} SMs), chosen as {}", rep.worker.device, fp.name,
               fp.cc_major, fp.cc_minor, fp.sm_count, rep.worker.why);
  // TMA = 1 configs run only where their sm_90a binary does: a space joined with `tma` tunes the
  // rest elsewhere instead of recording every TMA config as a failure.
  TuneOptions o = given;
  if (fp.cc_major != 9) {
    const auto n = std::erase_if(o.candidates, [](const WarpTileConfig& c) { return c.TMA == 1; });
    if (n > 0)
      spdlog::info("skipping {} TMA = 1 configs: their kernel needs sm_90 (this GPU is sm_{}{})", n,
                   fp.cc_major, fp.cc_minor);
  }
  store.begin(fp, o.problem);

  // Resume: what the store already holds for this GPU, problem and kernel source is kept as is.
  std::vector<size_t> pending;
  std::vector<std::optional<Trial>> trials(o.candidates.size());
  for (size_t i = 0; i < o.candidates.size(); ++i) {
    if (!o.retune) {
      if (auto done =
              store.finished(to_name(o.candidates[i]), trial_kernel_hash(o, o.candidates[i]))) {
        trials[i] = std::move(*done);
        ++rep.resumed;
        continue;
      }
    }
    pending.push_back(i);
  }
  if (rep.resumed > 0) {
    spdlog::info("resuming: {} of {} candidates already measured, {} to go", rep.resumed,
                 o.candidates.size(), pending.size());
  }

  ProblemSetup setup;
  setup.problem = o.problem;
  setup.seed = o.seed;
  setup.cublas_repetitions = o.final_repetitions;
  rep.cublas_screen = worker.set_problem(setup);
  spdlog::info("cuBLAS FP32 {}: median {:.3f} ms ({:.1f} GFLOP/s) over {} repetitions",
               o.problem.shape(), rep.cublas_screen.median_ms,
               o.problem.flops() / (rep.cublas_screen.median_ms * 1e6),
               rep.cublas_screen.repetitions);

  // Compile on a pool while the GPU measures what is ready.
  KernelCompiler compiler(o.cache_dir, CompileOptions{fp.arch(), o.nvrtc_options});
  std::vector<WarpTileConfig> to_compile;
  for (size_t i : pending) to_compile.push_back(o.candidates[i]);
  std::unordered_map<std::string, size_t> slot;
  for (size_t k = 0; k < to_compile.size(); ++k) slot[to_name(to_compile[k])] = k;
  std::vector<std::optional<Compiled>> compiled(to_compile.size());
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr compile_error;
  const auto tc0 = Clock::now();
  std::thread pool([&] {
    try {
      compiler.compile_all(
          to_compile, o.compile_threads,
          [&](const Compiled& c) {
            std::lock_guard lock(mu);
            compiled[slot.at(c.config_name)] = c;
            cv.notify_all();
          },
          o.problem.layout, kernel_vec_loads(o.problem));
    } catch (...) {
      std::lock_guard lock(mu);
      compile_error = std::current_exception();
      cv.notify_all();
    }
    std::lock_guard lock(mu);
    rep.compile_wall_s = seconds_since(tc0);
  });
  struct Joiner {
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{pool};

  double best_ms = 0;
  std::string best_name;
  for (const auto& t : trials) {
    if (t && t->status == TrialStatus::ok && !t->cut_early &&
        (best_ms == 0 || t->time.median_ms < best_ms)) {
      best_ms = t->time.median_ms;
      best_name = t->config_name;
    }
  }

  const auto tg0 = Clock::now();
  for (size_t k = 0; k < pending.size(); ++k) {
    const size_t i = pending[k];
    const auto& cfg = o.candidates[i];
    Compiled comp;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return compiled[k].has_value() || compile_error; });
      if (compile_error) std::rethrow_exception(compile_error);
      comp = *compiled[k];
    }
    ++(comp.from_cache ? rep.cache_hits : rep.compiled);

    Trial t =
        measure(o, cfg, comp, worker, &store, best_ms, o.cut_after, rep.cublas_screen.median_ms);
    if (t.status == TrialStatus::ok && !t.cut_early &&
        (best_ms == 0 || t.time.median_ms < best_ms)) {
      best_ms = t.time.median_ms;
      best_name = t.config_name;
    }
    trials[i] = std::move(t);

    if (progress) {
      TuneProgress p;
      p.done = rep.resumed + k + 1;
      p.total = o.candidates.size();
      p.elapsed_s = seconds_since(t0);
      const double per = seconds_since(tg0) / static_cast<double>(k + 1);
      p.eta_s = per * static_cast<double>(pending.size() - k - 1);
      p.best_ms = best_ms;
      p.best_name = best_name;
      progress(p);
    }
  }
  pool.join();

  for (auto& t : trials) {
    ++rep.status_counts[std::string(to_string(t->status))];
    if (t->cut_early) ++rep.cut_early;
    rep.trials.push_back(std::move(*t));
  }

  // Finalists: the fastest screened candidates, re-timed with more repetitions beside cuBLAS.
  std::vector<const Trial*> ranked;
  for (const auto& t : rep.trials) {
    if (t.status == TrialStatus::ok && !t.cut_early) ranked.push_back(&t);
  }
  std::sort(ranked.begin(), ranked.end(),
            [](const Trial* a, const Trial* b) { return a->time.median_ms < b->time.median_ms; });
  if (ranked.size() > static_cast<size_t>(o.top_k)) ranked.resize(o.top_k);
  if (!ranked.empty()) {
    rep.cublas_final = worker.time_cublas(o.final_repetitions);
    TuneOptions fo = o;
    fo.repetitions = o.final_repetitions;
    fo.strategy = o.strategy + "/final";
    std::vector<Compiled> comps;
    for (const Trial* screened : ranked) {
      comps.push_back(compiler.compile(screened->config, o.problem.layout,
                                       kernel_vec_loads(o.problem)));  // a cache hit
      // Finalists run every repetition: no cut. Recorded once their verification is known.
      Trial t = measure(fo, screened->config, comps.back(), worker, nullptr, 0, 0,
                        rep.cublas_final.median_ms);
      Finalist f{t, 0};
      if (t.status == TrialStatus::ok && t.time.median_ms > 0) {
        f.ratio_to_cublas = rep.cublas_final.median_ms / t.time.median_ms;
      }
      rep.finalists.push_back(std::move(f));
    }
    std::vector<size_t> order(rep.finalists.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return rep.finalists[a].ratio_to_cublas > rep.finalists[b].ratio_to_cublas;
    });
    // The winner must also be right off its tuned shape: verify finalists in rank order on the
    // edge-shape suite until one passes every case; a finalist that fails keeps its failed cases
    // (stored with its trial) and is marked incorrect, so it can never be served.
    for (size_t i : order) {
      Finalist& f = rep.finalists[i];
      if (f.trial.status != TrialStatus::ok) continue;
      f.trial.edge_checks =
          verify_edge_cases(comps[i], f.trial.config, o.problem, worker, o.seed, o.tolerance);
      const auto failed = std::count_if(f.trial.edge_checks.begin(), f.trial.edge_checks.end(),
                                        [](const EdgeCheck& e) { return !e.passed; });
      if (failed == 0) break;
      f.trial.status = TrialStatus::incorrect;
      f.trial.reason = fmt::format(
          "failed {} of {} edge cases, first: {} ({})", failed, f.trial.edge_checks.size(),
          describe(*std::find_if(f.trial.edge_checks.begin(), f.trial.edge_checks.end(),
                                 [](const EdgeCheck& e) { return !e.passed; })),
          "see edge_checks");
      f.ratio_to_cublas = 0;
      spdlog::warn("{}: {}", f.trial.config_name, f.trial.reason);
    }
    for (const Finalist& f : rep.finalists) store.record(f.trial);
    std::stable_sort(
        rep.finalists.begin(), rep.finalists.end(),
        [](const Finalist& a, const Finalist& b) { return a.ratio_to_cublas > b.ratio_to_cublas; });
  }
  rep.worker_restarts = worker.restarts() - restarts_before;
  rep.wall_s = seconds_since(t0);
  return rep;
}

}  // namespace sgt::gpu
