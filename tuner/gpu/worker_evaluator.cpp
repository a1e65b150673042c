// The evaluator of a real tune: NVRTC through the kernel cache, and the isolated GPU worker.
#include "worker_evaluator.hpp"

namespace sgt::gpu {

WorkerEvaluator::WorkerEvaluator(WorkerClient& worker, const std::filesystem::path& cache_dir,
                                 std::vector<std::string> nvrtc_options)
    : worker_(worker),
      compiler_(cache_dir,
                CompileOptions{worker.info().fingerprint.arch(), std::move(nvrtc_options)}) {}

Compiled WorkerEvaluator::build(const WarpTileConfig& c, const Problem& problem) {
  return compiler_.compile(c, problem.layout, kernel_vec_loads(problem));
}

double WorkerEvaluator::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace sgt::gpu
