// Recorded trials: the recordings a replay answers from (dataset files, tuning databases), and
// the history a learning strategy starts from.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "replay_fleet.hpp"
#include "store.hpp"

namespace sgt::tune {

// Each dataset file is one recording; a tuning database gives one per problem of its single GPU.
// InputError for a missing file, a bad dataset, or a database of several GPUs.
std::vector<eval::Recording> load_recordings(const std::vector<std::string>& files);

// What a learning strategy starts from: every trial of this GPU model (name, compute capability,
// SM count) in the store (when given) and in those of `files` recorded on it. Strategies skip the
// problem being tuned themselves.
class History {
 public:
  explicit History(std::vector<std::filesystem::path> files) : files_(std::move(files)) {}
  // The trials of `gpu` in the datasets and `store`, but those of `tuned`: a model never learns
  // from the problem it tunes (it would be told the answer), so they are neither returned nor
  // counted in the log line.
  std::vector<Trial> trials_for(const GpuFingerprint& gpu, const db::SqliteStore* store,
                                const Problem& tuned);

 private:
  std::vector<std::filesystem::path> files_;
  bool read_ = false;
  std::map<std::string, std::vector<Trial>> by_gpu_;  // GpuIdentity::key() -> dataset trials
  std::map<std::string, int> datasets_;
};

}  // namespace sgt::tune
