// The test family `naive` (a kernel family defined outside the registry): its factory.
#pragma once

#include <memory>

#include "family.hpp"

namespace sgt::test {

// The family's kernel is sgemm_naive.cuh beside this file, read from the source tree.
std::unique_ptr<KernelFamily> make_naive_family();

// A config of the family: one TM x TN patch of C per thread of a BM x BN block, every field it
// does not read at its one value.
WarpTileConfig naive_config(int BM, int BN, int TM, int TN);

}  // namespace sgt::test
