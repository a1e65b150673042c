// A naive SGEMM, the kernel of the test family `naive`: each thread computes one TM x TN patch of
// C straight from global memory. Row-major operands; TRANS_A, TRANS_B read A^T, B^T. It takes the
// warp-tiling kernel's arguments (LaunchAbi::pointers) and its one-dimensional grid of
// ceil(M/BM) * ceil(N/BN) tiles, row of tiles after row, so the worker and the launch plan run it
// as they run that kernel; with no split-K, k_chunk is K and the workspace is unused.
#pragma once

// The operand as the kernel computes with it: as loaded, or (SGT_NAIVE_TF32, the test family
// naive_tf32) rounded to TF32's 10 mantissa bits, far less accurate than FP32.
__device__ __forceinline__ float sgt_naive_operand(float x) {
#ifdef SGT_NAIVE_TF32
  return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
#else
  return x;
#endif
}

template <int BM, int BN, int TM, int TN, int NUM_THREADS, int MIN_BLOCKS, bool TRANS_A,
          bool TRANS_B>
__global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
    sgemm_naive(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                int ldb, float beta, float* C, int ldc, int k_chunk, float* partial) {
  static_assert((BM / TM) * (BN / TN) == NUM_THREADS, "one TM x TN patch per thread");
  (void)k_chunk, (void)partial;
  const int tiles_n = (N + BN - 1) / BN;
  const int row0 = (blockIdx.x / tiles_n) * BM + (threadIdx.x / (BN / TN)) * TM;
  const int col0 = (blockIdx.x % tiles_n) * BN + (threadIdx.x % (BN / TN)) * TN;
  float acc[TM][TN] = {};
  for (int k = 0; k < K; ++k) {
    for (int i = 0; i < TM; ++i) {
      const long long m = row0 + i;
      const float a =
          m < M ? sgt_naive_operand(TRANS_A ? A[k * 1LL * lda + m] : A[m * lda + k]) : 0.0f;
      for (int j = 0; j < TN; ++j) {
        const long long n = col0 + j;
        const float b =
            n < N ? sgt_naive_operand(TRANS_B ? B[n * ldb + k] : B[k * 1LL * ldb + n]) : 0.0f;
        acc[i][j] += a * b;
      }
    }
  }
  for (int i = 0; i < TM; ++i) {
    for (int j = 0; j < TN; ++j) {
      const long long m = row0 + i, n = col0 + j;
      if (m < M && n < N) {
        float& c = C[m * ldc + n];
        c = alpha * acc[i][j] + (beta == 0.0f ? 0.0f : beta * c);
      }
    }
  }
}
