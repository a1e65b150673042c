// Recorded trials for the CLI: the recordings a replay answers from, the datasets shipped with
// the tool, and the history a learning strategy starts from.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "replay_evaluator.hpp"
#include "store.hpp"

namespace sgt::cli {

// Each dataset file is one recording; a tuning database gives one per problem of its single GPU.
// InputError for a missing file, a bad dataset, or a database of several GPUs.
std::vector<gpu::Recording> load_recordings(const std::vector<std::string>& files);
// The recording of `p` among `all`; InputError listing the recorded problems otherwise.
const gpu::Recording& recording_for(const std::vector<gpu::Recording>& all, const Problem& p);

// The dataset files shipped with the tool (<prefix>/share/sgemm-tune/datasets, else the source
// tree's datasets/), sorted.
std::vector<std::filesystem::path> shipped_datasets();

// Every trial of this GPU model (name, compute capability, SM count) in the store (when given)
// and in those of `datasets` recorded on it. Strategies skip the problem being tuned themselves.
std::vector<Trial> history_for(const GpuFingerprint& gpu,
                               const std::vector<std::filesystem::path>& datasets,
                               const db::SqliteStore* store);

}  // namespace sgt::cli
