// The one benchmark function: warm-up, timed repetitions with CUDA events, L2 flush before each,
// early abandonment of clearly slower candidates, median and spread. cuBLAS and every candidate
// are timed through it, so their numbers are comparable.
#pragma once

#include <functional>
#include <vector>

#include <cuda_runtime.h>

#include "trial.hpp"

namespace sgt::gpu {

struct BenchSettings {
  int warmup = 1;
  int repetitions = 5;
  // After this many timed repetitions, stop if the fastest so far is slower than
  // cut_ratio * best_ms (best_ms <= 0 disables the cut).
  int cut_after = 2;
  double cut_ratio = 1.25;
  double best_ms = 0;
};

struct BenchOutcome {
  std::vector<float> ms;  // every timed repetition
  TimeStats stats;
  bool cut = false;
};

// Holds the events and the L2 flush buffer; one per worker.
class Bench {
 public:
  // flush_bytes: size of the buffer overwritten before each repetition (0: no flush).
  Bench(cudaStream_t stream, size_t flush_bytes);
  ~Bench();
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  // `launch` enqueues the work on the stream; it must not synchronise.
  BenchOutcome run(const std::function<void(cudaStream_t)>& launch, const BenchSettings& s);

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  void* flush_ = nullptr;
  size_t flush_bytes_;
  int flush_value_ = 0;
};

TimeStats summarize(std::vector<float> ms);

}  // namespace sgt::gpu
