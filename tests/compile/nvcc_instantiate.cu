// Explicit instantiations of the NVRTC kernel file for nvcc (tests/compile_nvcc.cmake): the seed
// config, a TM=8 config in the TN layout and the MIN_BLOCKS=2 config with the double buffer, padded
// As and Bs and grouped block order in the TT layout must all compile offline too, each also as the
// instance with single-float main-loop loads (VEC = false); a PACK config's TN float4 instance
// with the packing kernel; a STAGE_C config; and the serpentine FMA orders.
#include "sgemm_warptile.cuh"

#define SGT_INSTANTIATE(...)                            \
  template __global__ void sgemm_warptile<__VA_ARGS__>( \
      int, int, int, float, const float*, int, const float*, int, float, float*, int, int, float*)

// wt_128x64x16_w64x32_wn2_t4x4_n128_mb1, NN
SGT_INSTANTIATE(128, 64, 16, 64, 32, 2, 4, 4, 128, 1, 1, 0, 1, 0, 0, 0, 0, false, false, true);
SGT_INSTANTIATE(128, 64, 16, 64, 32, 2, 4, 4, 128, 1, 1, 0, 1, 0, 0, 0, 0, false, false, false);
// wt_128x128x16_w64x64_wn2_t8x4_n128_mb1, TN
SGT_INSTANTIATE(128, 128, 16, 64, 64, 2, 8, 4, 128, 1, 1, 0, 1, 0, 0, 0, 0, true, false, true);
SGT_INSTANTIATE(128, 128, 16, 64, 64, 2, 8, 4, 128, 1, 1, 0, 1, 0, 0, 0, 0, true, false, false);
// wt_128x256x8_w64x64_wn4_t8x4_n256_mb2_s2_p4_g8_b4, TT
SGT_INSTANTIATE(128, 256, 8, 64, 64, 4, 8, 4, 256, 2, 2, 4, 8, 0, 4, 0, 0, true, true, true);
SGT_INSTANTIATE(128, 256, 8, 64, 64, 4, 8, 4, 256, 2, 2, 4, 8, 0, 4, 0, 0, true, true, false);
// wt_64x128x16_w32x64_wn1_t4x4_n128_mb2_s2_p4_g8_x1, TN (the only instance PACK runs)
SGT_INSTANTIATE(64, 128, 16, 32, 64, 1, 4, 4, 128, 2, 2, 4, 8, 1, 0, 1, 0, true, false, true);
// wt_256x128x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o1_x1_c1, TN: C stored through shared memory
SGT_INSTANTIATE(256, 128, 8, 64, 64, 4, 8, 4, 256, 1, 2, 4, 8, 1, 0, 1, 1, true, false, true);
// wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o3 and _o2, NN: the serpentine outer products
SGT_INSTANTIATE(128, 256, 8, 64, 64, 4, 8, 4, 256, 1, 2, 4, 8, 3, 0, 0, 0, false, false, true);
SGT_INSTANTIATE(128, 256, 8, 64, 64, 4, 8, 4, 256, 1, 2, 4, 8, 2, 0, 0, 0, false, false, true);
template __global__ void sgemm_pack<0>(int, sgt_kernel::PackOperand, sgt_kernel::PackOperand);
template __global__ void sgemm_splitk_reduce<0>(int, int, int, float, const float*, float, float*,
                                                int);
