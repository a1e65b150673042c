// Explicit instantiations of the NVRTC kernel file for nvcc (tests/compile_nvcc.cmake): the seed
// config, a TM=8 config and the 128-accumulator MIN_BLOCKS=2 config must all compile offline too.
#include "sgemm_warptile.cuh"

#define SGT_INSTANTIATE(...)                                                               \
  template __global__ void sgemm_warptile<__VA_ARGS__>(int, int, int, float, const float*, \
                                                       const float*, float, float*)

SGT_INSTANTIATE(128, 64, 16, 64, 32, 2, 4, 4, 128, 1);   // wt_128x64x16_w64x32_wn2_t4x4_n128_mb1
SGT_INSTANTIATE(128, 128, 16, 64, 64, 2, 8, 4, 128, 1);  // wt_128x128x16_w64x64_wn2_t8x4_n128_mb1
SGT_INSTANTIATE(128, 256, 16, 64, 64, 4, 8, 4, 256, 2);  // wt_128x256x16_w64x64_wn4_t8x4_n256_mb2
