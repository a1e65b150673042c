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

// The test family `naive_tf32`: the same kernel with its operands rounded to TF32 (10 mantissa
// bits) as it loads them, of the precision class fp32-accurate (precision.hpp), so that its error
// against FP64 is measured, and is far above cuBLAS FP32's. Its names lead with "nt_".
std::unique_ptr<KernelFamily> make_naive_tf32_family();
WarpTileConfig naive_tf32_config(int BM, int BN, int TM, int TN);

}  // namespace sgt::test
