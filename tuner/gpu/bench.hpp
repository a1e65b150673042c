// The one benchmark function: warm-up, timed repetitions with CUDA events, a cold L2 before each
// (a flush, or operands rotated through copies larger than the L2), early abandonment of clearly
// slower candidates, median and spread. cuBLAS, cuBLASLt and every candidate are timed through it,
// so their numbers are comparable.
#pragma once

#include <functional>
#include <vector>

#include <cuda_runtime.h>

#include "timing.hpp"
#include "trial.hpp"

namespace sgt::gpu {

using eval::L2Mode;

struct BenchSettings {
  int warmup = 1;
  int repetitions = 5;
  // After this many timed repetitions, stop if the fastest so far is slower than
  // cut_ratio * best_ms (best_ms <= 0 disables the cut).
  int cut_after = 2;
  double cut_ratio = 1.25;
  double best_ms = 0;
  L2Mode l2 = L2Mode::flush;
};

struct BenchOutcome {
  std::vector<float> ms;  // every timed repetition
  TimeStats stats;
  bool cut = false;
};

// Holds the events and the L2 flush buffer; one per worker and problem.
class Bench {
 public:
  // flush_bytes: size of the buffer overwritten before each repetition (0: no flush).
  Bench(cudaStream_t stream, size_t flush_bytes);
  ~Bench();
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  // Enables L2Mode::rotate over `copies` operand sets. With no flush before a repetition the GPU
  // would be idle while the host enqueues it, and the start event would time the host too:
  // `pre_roll` enqueues work that touches no memory (a spin) and outlasts that.
  void set_rotation(int copies, std::function<void(cudaStream_t)> pre_roll);
  int copies() const { return copies_; }
  // A launch on `copy` outside run() (a verification) left it in the L2: the rotation goes on
  // after it, so it comes round last.
  void used(int copy) { next_copy_ = copies_ > 0 ? (copy + 1) % copies_ : 0; }

  // `launch` enqueues the work on the stream, on operand set `copy` (always 0 with a flush); it
  // must not synchronise.
  BenchOutcome run(const std::function<void(cudaStream_t, int copy)>& launch,
                   const BenchSettings& s);
  BenchOutcome run(const std::function<void(cudaStream_t)>& launch, const BenchSettings& s) {
    return run([&](cudaStream_t st, int) { launch(st); }, s);
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  void* flush_ = nullptr;
  size_t flush_bytes_;
  int flush_value_ = 0;
  int copies_ = 0;     // 0: no rotation set up
  int next_copy_ = 0;  // kept across runs, so no copy comes round early
  std::function<void(cudaStream_t)> pre_roll_;
};

TimeStats summarize(std::vector<float> ms);

}  // namespace sgt::gpu
