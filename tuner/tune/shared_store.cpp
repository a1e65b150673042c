// One store shared by tunes on several threads (see shared_store.hpp).
#include "shared_store.hpp"

#include "error.hpp"

namespace sgt {

SharedStore::View::View(SharedStore& shared) : shared_(shared) {
  std::lock_guard lock(shared_.mu_);
  id_ = ++shared_.views_;
}

void SharedStore::View::begin(const GpuFingerprint& gpu, const Problem& problem) {
  std::lock_guard lock(shared_.mu_);
  shared_.store_.begin(gpu, problem);
  shared_.active_ = id_;
  run_.emplace(gpu, problem);
}

void SharedStore::View::activate(const char* what) {
  if (!run_) throw Error(std::string("a shared store's ") + what + "() called before begin()");
  if (shared_.active_ == id_) return;
  shared_.store_.begin(run_->first, run_->second);
  shared_.active_ = id_;
}

std::optional<Trial> SharedStore::View::finished(const std::string& config_name,
                                                 const std::string& kernel_hash) {
  std::lock_guard lock(shared_.mu_);
  activate("finished");
  return shared_.store_.finished(config_name, kernel_hash);
}

std::vector<Trial> SharedStore::View::screening_order() {
  std::lock_guard lock(shared_.mu_);
  activate("screening_order");
  return shared_.store_.screening_order();
}

void SharedStore::View::record(const Trial& trial) {
  std::lock_guard lock(shared_.mu_);
  activate("record");
  shared_.store_.record(trial);
}

}  // namespace sgt
