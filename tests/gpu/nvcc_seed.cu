// The seed config instantiated by nvcc from the same kernel file NVRTC compiles; the GPU tests run
// this cubin and the NVRTC one on the same inputs and require identical results.
#include "sgemm_warptile.cuh"

template __global__ void sgemm_warptile<128, 64, 16, 64, 32, 2, 4, 4, 128, 1, 1, 0, 1, 0, 0, 0, 0,
                                        false, false, true>(int, int, int, float, const float*, int,
                                                            const float*, int, float, float*, int,
                                                            int, float*);
template __global__ void sgemm_splitk_reduce<0>(int, int, int, float, const float*, float, float*,
                                                int);
