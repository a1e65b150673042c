// The benchmark function shared by cuBLAS, cuBLASLt and every candidate.
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

void Bench::set_rotation(int copies, std::function<void(cudaStream_t)> pre_roll) {
  copies_ = std::max(1, copies);
  next_copy_ = 0;
  pre_roll_ = std::move(pre_roll);
}

BenchOutcome Bench::run(const std::function<void(cudaStream_t, int)>& launch,
                        const BenchSettings& s) {
  const bool rotate = s.l2 == L2Mode::rotate;
  if (rotate && copies_ == 0) throw Error("rotating L2 timing without a rotation set");
  auto next = [&] {
    if (!rotate) return 0;
    const int c = next_copy_;
    next_copy_ = (next_copy_ + 1) % copies_;
    return c;
  };
  for (int i = 0; i < s.warmup; ++i) launch(stream_, next());
  SGT_CUDA_CHECK(cudaGetLastError());
  SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));

  BenchOutcome out;
  for (int r = 0; r < s.repetitions; ++r) {
    // Both run before the start event, so neither is timed: a flush overwrites a buffer larger
    // than L2 so each repetition starts from cold caches; a rotation's pre-roll only keeps the GPU
    // busy until the launch is enqueued.
    if (!rotate && flush_) {
      SGT_CUDA_CHECK(cudaMemsetAsync(flush_, ++flush_value_ & 0xff, flush_bytes_, stream_));
    }
    if (rotate && pre_roll_) pre_roll_(stream_);
    const int copy = next();
    SGT_CUDA_CHECK(cudaEventRecord(start_, stream_));
    launch(stream_, copy);
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
