// Whether this machine has a CUDA device: GPU tests skip without one, and CPU tests of what the
// tools do without a GPU skip with one. Include only in test targets that link the CUDA runtime.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace sgt::test {

inline bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

}  // namespace sgt::test

#define SKIP_WITHOUT_GPU() \
  if (!::sgt::test::have_gpu()) GTEST_SKIP() << "no CUDA device"
