// An instantiation that breaks wmiter_divisibility (TM=TN=8 leaves WMITER at 0): nvcc must refuse
// it through the kernel's static_assert, as NVRTC does (tests/compile_nvcc.cmake checks both).
#include "sgemm_warptile.cuh"

template __global__ void sgemm_warptile<128, 64, 16, 64, 32, 2, 8, 8, 128, 1, 1, 0, 1, 0, 0, 0, 0,
                                        false, false, true>(int, int, int, float, const float*, int,
                                                            const float*, int, float, float*, int,
                                                            int, float*);
