// The seed config instantiated by nvcc from the same kernel file NVRTC compiles; the GPU tests run
// this cubin and the NVRTC one on the same inputs and require identical results.
#include "sgemm_warptile.cuh"

template __global__ void sgemm_warptile<128, 64, 16, 64, 32, 2, 4, 4, 128, 1>(
    int, int, int, float, const float*, const float*, float, float*);
