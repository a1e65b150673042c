// Host side of the TMA = 1 kernel (sgemm_ws_tma.cuh): whether a problem's operands allow tensor
// copies, and the two tensor maps its launch takes, encoded with the driver's
// cuTensorMapEncodeTiled (reached through the runtime, so no -lcuda). Shared by the tuner's worker
// and the sgemm_tuned dispatch library. Host code only: NVRTC never compiles this file.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstdint>

#include "tf32x3_wg_geometry.h"
#include "tma_geometry.h"

namespace sgt_kernel {

// What a tensor copy needs of an operand: a 16-byte aligned base and a row pitch that is a
// multiple of 16 bytes. Other operands take the config's TMA = 0 instance.
inline bool tma_operand(const float* p, long long ld) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0 && ld % kVec == 0 && ld > 0;
}

struct TmaMaps {
  CUtensorMap a, b;
};

// The driver's encoder, looked up once; nullptr when the driver has none (before CUDA 12).
inline PFN_cuTensorMapEncodeTiled_v12000 tma_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// A matrix of `rows` rows of `cols` values of `type` (4-byte floats or 2-byte BF16 values),
// `ld` values apart, read in boxes of box_inner x box_outer values with `swizzle`. With planes > 1
// a 3-D map of `planes` such matrices, plane_ld values apart, read a plane at a time (box depth 1).
inline CUresult tma_encode_typed(CUtensorMap* map, CUtensorMapDataType type, const void* p,
                                 long long rows, long long cols, long long ld, int box_inner,
                                 int box_outer, CUtensorMapSwizzle swizzle, int planes = 1,
                                 long long plane_ld = 0) {
  const auto encode = tma_encoder();
  if (!encode) return CUDA_ERROR_NOT_SUPPORTED;
  const long long bytes = type == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 ? 2 : 4;
  const cuuint32_t rank = planes > 1 ? 3 : 2;
  // A dimension of 0 (K = 0) cannot be encoded; such a launch copies nothing.
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols > 0 ? cols : 1),
                              static_cast<cuuint64_t>(rows > 0 ? rows : 1),
                              static_cast<cuuint64_t>(planes > 1 ? planes : 1)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(ld * bytes),
                                 static_cast<cuuint64_t>(plane_ld * bytes)};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(box_inner), static_cast<cuuint32_t>(box_outer),
                             1};
  const cuuint32_t elem[3] = {1, 1, 1};
  return encode(map, type, rank, const_cast<void*>(p), dims, strides, box, elem,
                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

// One operand stored as `rows` rows of `cols` floats, `ld` apart, read in boxes of box_inner x
// box_outer; staged boxes (rows of BK floats) are swizzled as tma_staged_index expects.
inline CUresult tma_encode(CUtensorMap* map, const float* p, long long rows, long long cols,
                           long long ld, int box_inner, int box_outer, bool staged, int bk) {
  const CUtensorMapSwizzle swizzle = !staged    ? CU_TENSOR_MAP_SWIZZLE_NONE
                                     : bk == 32 ? CU_TENSOR_MAP_SWIZZLE_128B
                                                : CU_TENSOR_MAP_SWIZZLE_64B;
  return tma_encode_typed(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, p, rows, cols, ld, box_inner,
                          box_outer, swizzle);
}

// Both maps of a problem for a config's geometry; the layout as in sgemm_warptile.cuh (A stored M
// x K, or K x M when trans_a; B stored K x N, or N x K when trans_b).
inline CUresult tma_encode_maps(TmaMaps& m, const Geometry& g, bool trans_a, bool trans_b,
                                long long M, long long N, long long K, const float* A,
                                long long lda, const float* B, long long ldb) {
  const bool sa = tma_staged_a(trans_a), sb = tma_staged_b(trans_b);
  CUresult r = tma_encode(&m.a, A, trans_a ? K : M, trans_a ? M : K, lda,
                          tma_box_inner(g, true, sa), tma_box_outer(g, true, sa), sa, g.BK);
  if (r != CUDA_SUCCESS) return r;
  return tma_encode(&m.b, B, trans_b ? N : K, trans_b ? K : N, ldb, tma_box_inner(g, false, sb),
                    tma_box_outer(g, false, sb), sb, g.BK);
}

// The split_maps ABI (family tf32x3_wg, sgemm_tf32x3_wgmma.cuh): the four panels the prepass
// writes into a workspace of tf32x3_wg_workspace_floats(M, N, K) floats at `work` (A big, A
// small: M rows; B big, B small: N rows; each row kp floats, tf32x3_wg_geometry.h), each read in
// boxes of kWgBK x kWgBM floats with the 128-byte swizzle the kernel's wgmma descriptors name.
// Rows of kp floats are whole 16-byte units and every panel starts on one (kp is a multiple of 4),
// so any workspace from cudaMalloc or a pool takes the copies.
// With `bf16` (the BF16 split, FMA_ORDER 3: sgemm_bf16x6_wgmma.cuh) the workspace holds
// bf16x6_workspace_values(M, N, K) BF16 values, three panels an operand: "big" maps part 0 (R
// rows), "small" parts 1 and 2 as the two planes of a 3-D map (R rows each, R kp values apart:
// bf16x6_map_plane), rows of bf16x6_kp(K) values (whole 16-byte units, every panel starting on
// one), in boxes of kB6BK x 128 values: the same 128-byte rows and swizzle.
// a_row0, b_row0: the maps cover rows a_row0 .. M - 1 of A's panels and b_row0 .. N - 1 of B's,
// as their rows 0 .. (a wave-aware tail's sub-problem, launch_plan.h: plan_split_call's tail);
// a row offset keeps a panel row's 16-byte alignment (kp is a multiple of 4 floats, 8 BF16).
struct SplitMaps {
  CUtensorMap a_big, a_small, b_big, b_small;
};

inline CUresult tma_encode_split_maps(SplitMaps& m, const float* work, long long M, long long N,
                                      long long K, bool bf16 = false, long long a_row0 = 0,
                                      long long b_row0 = 0) {
  CUtensorMap* maps[4] = {&m.a_big, &m.a_small, &m.b_big, &m.b_small};
  const long long kp = bf16 ? bf16x6_kp(K) : tf32x3_wg_kp(K);
  const long long value_bytes = bf16 ? 2 : 4;
  for (int p = 0; p < 4; ++p) {
    const long long R = p < 2 ? M : N, row0 = p < 2 ? a_row0 : b_row0;
    const void* base = reinterpret_cast<const char*>(work) +
                       wg_panel_byte_offset(p, M, N, K, bf16) + row0 * kp * value_bytes;
    const CUresult r =
        bf16 ? tma_encode_typed(maps[p], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, base, R - row0, kp, kp,
                                kB6BK, p < 2 ? kWgBM : kWgBN, CU_TENSOR_MAP_SWIZZLE_128B,
                                p % 2 == 0 ? 1 : kB6Parts - 1, R * kp)
             : tma_encode(maps[p], static_cast<const float*>(base), R - row0, kp, kp, kWgBK,
                          p < 2 ? kWgBM : kWgBN, true, kWgBK);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

}  // namespace sgt_kernel
