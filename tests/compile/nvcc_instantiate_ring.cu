// Explicit instantiations of family warptile_ring's kernel file for nvcc
// (tests/compile_nvcc.cmake): the ring's kernel
// (wr_128x64x16_w64x16_wn2_t4x4_n256_mb2_s3_p4_g8_o1_b4 in every layout, and a PACK config with
// STAGES 4) compiles offline too, beside the template it includes, as the dispatch library builds
// it.
#include "sgemm_warptile_ring.cuh"

#define SGT_INSTANTIATE_RING(...)                            \
  template __global__ void sgemm_warptile_ring<__VA_ARGS__>( \
      int, int, int, float, const float*, int, const float*, int, float, float*, int, int, float*)

// TN (both k-major), NN (A k-contiguous), NT (both), TT (B).
SGT_INSTANTIATE_RING(128, 64, 16, 64, 16, 2, 4, 4, 256, 2, 3, 4, 8, 1, 4, 0, 0, 1, 0);
SGT_INSTANTIATE_RING(128, 64, 16, 64, 16, 2, 4, 4, 256, 2, 3, 4, 8, 1, 4, 0, 0, 0, 0);
SGT_INSTANTIATE_RING(128, 64, 16, 64, 16, 2, 4, 4, 256, 2, 3, 4, 8, 1, 4, 0, 0, 0, 1);
SGT_INSTANTIATE_RING(128, 64, 16, 64, 16, 2, 4, 4, 256, 2, 3, 4, 8, 1, 4, 0, 0, 1, 1);
// wr_128x32x16_w64x16_wn2_t4x4_n128_mb1_s4_p4_g8_o1_x1 (PACK: the TN instance)
SGT_INSTANTIATE_RING(128, 32, 16, 64, 16, 2, 4, 4, 128, 1, 4, 4, 8, 1, 0, 1, 0, 1, 0);
