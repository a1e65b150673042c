// What a cost model sees of one candidate on one problem: the config's own geometry for that
// shape (tiles, warp and thread tiles, accumulators, shared memory, threads and blocks per SM,
// waves over the SMs, edge work wasted, split-K depth, layout, load path, every knob), all of it
// computable before compiling, so candidates never measured can be ranked. Shape-relative, so a
// model trained on other shapes transfers.
#pragma once

#include <string>
#include <vector>

#include "config.hpp"
#include "problem.hpp"

namespace sgt {

// Names of the features, in the order features() returns them.
const std::vector<std::string>& feature_names();

// One row of features. sm_count: the GPU's SMs (waves and occupancy depend on it).
std::vector<float> features(const WarpTileConfig& c, const Problem& p, int sm_count);

}  // namespace sgt
