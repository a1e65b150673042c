// One trial store for tunes that run at once on several threads (the shapes of a suite spread over
// GPUs, shape_spread.hpp): each tune writes through a view of its own, which keeps what it began
// and, under the store's one lock, begins it again on the store whenever another view was the last
// to begin. The store itself is only ever used by one thread at a time, as SqliteStore requires.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "trial.hpp"

namespace sgt {

class SharedStore {
 public:
  explicit SharedStore(TrialStore& store) : store_(store) {}
  SharedStore(const SharedStore&) = delete;
  SharedStore& operator=(const SharedStore&) = delete;

  // A tune's way into the store: a TrialStore to hand run_tune, one per tune running at once.
  class View final : public TrialStore {
   public:
    explicit View(SharedStore& shared);
    void begin(const GpuFingerprint& gpu, const Problem& problem) override;
    std::optional<Trial> finished(const std::string& config_name,
                                  const std::string& kernel_hash) override;
    void record(const Trial& trial) override;
    std::vector<Trial> screening_order() override;

   private:
    // With the lock held: the store begun with this view's GPU and problem.
    void activate(const char* what);
    SharedStore& shared_;
    std::uint64_t id_;
    std::optional<std::pair<GpuFingerprint, Problem>> run_;
  };

  // Runs f() with the lock held, for what the store offers besides TrialStore (a SqliteStore's
  // queries); f must not use a View of this store.
  template <class F>
  decltype(auto) locked(F&& f) {
    std::lock_guard lock(mu_);
    return f();
  }

 private:
  TrialStore& store_;
  std::mutex mu_;
  std::uint64_t views_ = 0;   // views made so far: each view's id
  std::uint64_t active_ = 0;  // the view whose begin() the store holds; 0: none
};

}  // namespace sgt
