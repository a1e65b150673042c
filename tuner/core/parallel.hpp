// One loop over n independent items on a few threads: what the compiler's batch, the index
// simulation of many configs and strategy-bench's replays each run.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace sgt {

// Calls f(i) for every i in [0, n) on up to `threads` threads (0: one per core), this one among
// them, each taking the next unclaimed i. The first exception f throws stops the claiming of new
// items and is rethrown once every thread has finished its current one.
template <typename F>
void parallel_for(size_t n, unsigned threads, F&& f) {
  if (n == 0) return;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, n));
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr error;
  auto work = [&] {
    for (size_t i; (i = next++) < n;) {
      try {
        f(i);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        next = n;
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace sgt
