// The benchmark function shared by cuBLAS and every candidate.
#include "bench.hpp"

#include <algorithm>

#include "check.hpp"

namespace sgt::gpu {

TimeStats summarize(std::vector<float> ms) {
  TimeStats t;
  if (ms.empty()) return t;
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  t.median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  t.spread = t.median_ms > 0 ? (t.max_ms - t.min_ms) / t.median_ms : 0;
  t.repetitions = static_cast<int>(n);
  return t;
}

Bench::Bench(cudaStream_t stream, size_t flush_bytes) : stream_(stream), flush_bytes_(flush_bytes) {
  SGT_CUDA_CHECK(cudaEventCreate(&start_));
  SGT_CUDA_CHECK(cudaEventCreate(&stop_));
  if (flush_bytes_ > 0) SGT_CUDA_CHECK(cudaMalloc(&flush_, flush_bytes_));
}

Bench::~Bench() {
  // Destructors never throw; a failing free here only leaks in a process about to exit.
  if (flush_) cudaFree(flush_);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
}

BenchOutcome Bench::run(const std::function<void(cudaStream_t)>& launch, const BenchSettings& s) {
  for (int i = 0; i < s.warmup; ++i) launch(stream_);
  SGT_CUDA_CHECK(cudaGetLastError());
  SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));

  BenchOutcome out;
  for (int r = 0; r < s.repetitions; ++r) {
    // Overwrite a buffer larger than L2 so each repetition starts from cold caches; it runs
    // before the start event, so it is not timed.
    if (flush_) {
      SGT_CUDA_CHECK(cudaMemsetAsync(flush_, ++flush_value_ & 0xff, flush_bytes_, stream_));
    }
    SGT_CUDA_CHECK(cudaEventRecord(start_, stream_));
    launch(stream_);
    SGT_CUDA_CHECK(cudaEventRecord(stop_, stream_));
    SGT_CUDA_CHECK(cudaEventSynchronize(stop_));
    SGT_CUDA_CHECK(cudaGetLastError());
    float ms = 0;
    SGT_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    out.ms.push_back(ms);
    if (s.best_ms > 0 && r + 1 == s.cut_after && r + 1 < s.repetitions) {
      const float fastest = *std::min_element(out.ms.begin(), out.ms.end());
      if (fastest > s.cut_ratio * s.best_ms) {
        out.cut = true;
        break;
      }
    }
  }
  out.stats = summarize(out.ms);
  return out;
}

}  // namespace sgt::gpu
