// The datasets shipped with the tool: the replay datasets and the history a learning strategy
// starts from by default (tune/history.hpp reads them).
#pragma once

#include <filesystem>
#include <vector>

#include "history.hpp"

namespace sgt::cli {

// The dataset files shipped with the tool (<prefix>/share/sgemm-tune/datasets, else the source
// tree's datasets/), sorted.
std::vector<std::filesystem::path> shipped_datasets();

}  // namespace sgt::cli
