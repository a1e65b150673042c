// The test family `naive` (a kernel family defined outside the registry): its factory.
#pragma once

#include <memory>

#include "family.hpp"

namespace sgt::test {

// The family's kernel is sgemm_naive.cuh beside this file, read from the source tree.
std::unique_ptr<KernelFamily> make_naive_family();

}  // namespace sgt::test
