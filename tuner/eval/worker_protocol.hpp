// The versioned request/response protocol between the tuner and its GPU worker process: one JSON
// object per line on the worker's stdin (requests) and stdout (responses). The parent owns the
// store; the worker may die at any moment and is replaced.
//
// Requests ("op"):
//   hello    {protocol, gpu (-1 = auto)}   -> {ok, protocol, fingerprint, device, why, devices}
//            a parent and a worker of different protocols refuse each other, naming both.
//   problem  {problem, alpha, beta, seed, reps, pad?, offset?}
//                                          -> {ok, cublas: TimeStats}
//            pad: extra elements per stored row of A, B and C (leading dimension = row + pad);
//            offset: elements by which A, B and C start past an aligned allocation.
//   trial    {name, family, launch, cubin, sha256, kernel, reduce_kernel, pack_kernel?, tile {BM,
//   BN,
//             BK, split_k, pad_a?, pad_b?, smem?}, block,
//             warmup, reps, cut_after, cut_ratio, best_ms, tolerance, checksum?, l2?, accuracy?,
//             stress?}
//                                          -> {status, reason, verify_error, time, cut, checksum?,
//                                              error_ratio, stress_ratio, stress_case}
//            l2: how each repetition finds the L2 (L2Mode, timing.hpp): "flush" (the default) or
//            "rotate" (the rotation's copies; the result is verified on one of them as well).
//            accuracy (default false): once the result passed its verification, its relative L2
//            error against an FP64 reference (cublasDgemm on double copies of A, B and C) over
//            cuBLAS FP32's against the same reference is error_ratio, both errors over C's M x N
//            values, cuBLAS's at least 2^-24 (FP32's unit roundoff: what no FP32 result avoids).
//            The reference and cuBLAS's error are made once per problem. stress: cases
//            (EdgeCheck, accuracy_stress_cases()) whose label names their inputs (exponents,
//            underflow, cancellation, long-K; an unknown label fails the request), each run from
//            C0 and measured likewise against its own FP64 reference; stress_ratio is the worst
//            ratio and stress_case that case's label and shape. The cases' problems are made once
//            per worker, and a binary's outcome on them is kept for the worker's life (keyed by its
//            SHA-256 and the cases). A ratio above kAccurateErrorRatioMax (precision.hpp) makes the
//            status "inaccurate", with the numbers and the case in the reason, and the candidate is
//            not timed. error_ratio and stress_ratio are -1 when not measured, 1e300 for a result
//            that holds NaN or Inf.
//   verify   {family, launch, cubin, sha256, kernel, reduce_kernel, pack_kernel?, tile, block,
//   tolerance, seed,
//             cases: [EdgeCheck]}         -> {ok, cases: [EdgeCheck with passed/error/reason]}
//            each case on its own buffers; the current problem is left as it was.
//   cublas   {reps, l2?}                   -> {ok, cublas: TimeStats}
//   rotation {}                            -> {ok, copies, set_bytes, l2_bytes}
//            makes the current problem's rotation (rotation_copies() copies of A, B and C, each
//            set_bytes as allocated) if no request has; every l2 "rotate" request does.
//   cublaslt_search {max_algos, workspace, warmup, reps, cut_after, cut_ratio, tolerance, l2?}
//                                          -> {ok, requested, best, algos: [{algo, desc,
//                                              workspace, waves, status, reason, verify_error,
//                                              time, cut}]}
//            cuBLASLt FP32 (CUBLAS_COMPUTE_32F) on the current problem: up to max_algos
//            algorithms of its heuristic, each verified against cuBLAS and timed (cut early when
//            clearly slower than the fastest so far); best: the index of the fastest that passed
//            and was not cut, -1 when none. algo: the 8 numbers of cublasLtMatmulAlgo_t.
//   cublaslt {algo, workspace, warmup, reps, tolerance, l2?}
//                                          -> {ok, status, reason, verify_error, time, cut}
//            one algorithm of a search, verified and timed again.
//   cublas_tf32 {reps, tolerance, warmup?, l2?}
//                                          -> {ok, status, reason, verify_error, time, cut,
//                                              error_ratio, stress_ratio, stress_case}
//            cuBLAS 1xTF32 on the current problem: cublasGemmEx with
//            CUBLAS_COMPUTE_32F_FAST_TF32 (TF32 tensor cores) on a handle of its own, run from C0,
//            verified against cublasSgemm with `tolerance` (kTf32Tolerance: TF32 is not FP32, so
//            the bound only catches a wrong result; on the verified copy too when l2 is
//            "rotate"), then timed as cuBLAS is (warmup default 2, no cut). error_ratio: its
//            relative L2 error against the FP64 reference (as a trial's accuracy) over cuBLAS
//            FP32's (far above kAccurateErrorRatioMax where TF32 tensor cores ran), measured on
//            the problem's own operands; stress_ratio -1. The answer is a trial response
//            (TrialResponse); a failure of the FP64 reference or the rotation fails the request.
//   bye      {}                            -> (exit)
// Kernels are launched as sgemm_warptile(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, k_chunk,
// partial) on the grid launch_dims() gives for the tile (warptile_geometry.h), followed by
// reduce_kernel(M, N, splits, alpha, partial, beta, C, ldc) when that grid has k-splits. With a
// pack_kernel (PACK configs, whose kernel is the TN float4 instance), pack_kernel(K, a, b) first
// copies the operands that need it into panels (PackOperand, warptile_geometry.h) and the tile
// kernel reads those. family is the config's kernel family id (family.hpp), for messages; launch
// is its launch ABI ("pointers" or "tensor_maps", LaunchAbi), which picks the tile step of the
// launch plan, so a family the parent registers runs in any worker of the same protocol, and an
// unknown launch is refused. A family launched with tensor maps (ws_tma: sgemm_ws_tma(M, N, K,
// alpha, map_a, map_b, beta, C, ldc, k_chunk, partial)) gets maps the worker encodes for the
// operands (tma_maps.h, from BK and the padded rows BM + pad_a, BN + pad_b) and smem bytes of
// dynamic shared memory; block is the family's block_threads() (for ws_tma NUM_THREADS plus the
// producer warpgroup). A family launched as split_maps (tf32x3_wg: sgemm_tf32x3_wgmma(M, N, K,
// alpha, a_big, a_small, b_big, b_small, beta, C, ldc)) has its pack_kernel (the split prepass,
// tf32x3_split_operand(R, K, Kp, X, ldx, k_contig, big, small)) write op(A) and op(B)^T as
// k-contiguous TF32 panels into a workspace first, and gets four maps of those panels (any
// operands); with split_k > 1 its kernel is the split entry (sgemm_tf32x3_wgmma_splitk: k_chunk
// and partial after those arguments) on launch_dims' splits, followed by reduce_kernel as above;
// with tile.tail 1 the split entry runs the launch plan's wave-aware tail (plan_split_call with
// the tile's group_m: the full waves' tiles, then the tiles left over split over K and reduced).
// A pointers or tensor_maps request with tile.tail 1 (and split_k 1) runs plan_call's tail: the
// worker asks the runtime how many blocks of the loaded kernel an SM holds, and the tiles past
// the last full wave of that many a SM are a second launch on the sub-problem, split over K.
// A worker of this protocol that predates an ABI refuses it by name.
// Every response carries "ok" (false with "error" when the request itself failed). A trial that
// poisons the CUDA context answers status "crashed" and the worker exits.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "timing.hpp"
#include "trial.hpp"

namespace sgt::eval {

// 3: TMA tiles; 4: the family id picks the tile step; 5: the family's launch ABI does; 6: l2
// (rotated operands), rotation, cublaslt_search and cublaslt; 7: a trial's accuracy against FP64
// (accuracy, stress -> error_ratio, stress_ratio, stress_case); 8: cublas_tf32 (cuBLAS 1xTF32);
// 9: the tile's tail and group_m (a split_maps config's wave-aware tail); 10: the tail of the
// pointers and tensor_maps ABIs.
constexpr int kWorkerProtocol = 10;

// The tolerance cuBLAS 1xTF32's result is verified with against cublasSgemm's (relative L2
// error). Each operand rounded to TF32's 10-bit mantissa puts its error near 2^-11 (about 5e-4),
// far above the 1e-4 a candidate is held to; 1e-2 still refuses a result that is wrong rather
// than less precise.
inline constexpr double kTf32Tolerance = 1e-2;

// What the worker needs to know of a config to launch it.
struct LaunchTile {
  int BM = 0, BN = 0, BK = 0;
  int split_k = 1;
  // 1 when the request's family is launched with tensor maps (LaunchAbi::tensor_maps): the kernel
  // takes maps of the padded operand rows and `smem_bytes` of dynamic shared memory.
  int tma = 0, pad_a = 0, pad_b = 0;
  int smem_bytes = 0;
  // 1 when it is launched after the split prepass (LaunchAbi::split_maps): pack_kernel splits
  // the operands into panels, the kernel takes four maps of them and `smem_bytes`.
  int split_maps = 0;
  // 1 for the wave-aware tail (TAIL), which the launch plan finds in the block order of group_m
  // (GROUP_M); split_maps: the kernel is the split entry.
  int tail = 0, group_m = 1;
};

struct TrialRequest {
  std::string name;
  std::string family = "warptile";  // the config's kernel family id
  std::string launch = "pointers";  // its launch ABI (to_string(LaunchAbi))
  std::string cubin_path;
  std::string cubin_sha256;
  std::string kernel;         // lowered (mangled) name
  std::string reduce_kernel;  // lowered name of the split-K reduction in the same cubin
  std::string pack_kernel;    // PACK configs: lowered name of the packing kernel (split_maps:
                              // of the split prepass), else empty
  LaunchTile tile;
  unsigned block = 0;
  int warmup = 1;
  int repetitions = 5;
  int cut_after = 2;
  double cut_ratio = 1.25;
  double best_ms = 0;
  double tolerance = 1e-4;  // relative L2 error against cuBLAS
  bool checksum = false;    // also return the SHA-256 of the verified C (for tests)
  L2Mode l2 = L2Mode::flush;
  // Measure the error against FP64 and compare it with cuBLAS FP32's (a kernel of a non-strict
  // precision class), on the problem and on `stress` (accuracy_stress_cases(), the problem's
  // layout; none: the problem alone).
  bool accuracy = false;
  std::vector<EdgeCheck> stress;
};

struct TrialResponse {
  TrialStatus status = TrialStatus::ok;
  std::string reason;
  double verify_error = -1;
  TimeStats time;
  bool cut = false;
  std::string checksum;
  // accuracy: the error ratio against FP64 on the problem, the worst over the stress cases and
  // which case that was ("underflow 128x128x1024 NN"); -1 (and empty) when not measured.
  double error_ratio = -1;
  double stress_ratio = -1;
  std::string stress_case;
};

// The JSON of the protocol's trial request and response (the client writes the request and reads
// the response, the worker the other way round). A request carries accuracy and stress only when
// accuracy is asked for; a reader takes their absence as false and none. The launch tile is read
// with its checks (a bad tile or launch ABI throws Error); unknown l2 modes throw Error.
nlohmann::json candidate_request_json(const char* op, const TrialRequest& t);
nlohmann::json trial_request_json(const TrialRequest& t);
LaunchTile launch_tile_from_json(const nlohmann::json& req);
TrialRequest trial_request_from_json(const nlohmann::json& req);
// The response: "ok": true and every field; a non-finite error or ratio as 1e300 (JSON has none).
nlohmann::json trial_response_json(const TrialResponse& r);
TrialResponse trial_response_from_json(const nlohmann::json& j);

// The cublas_tf32 request: cuBLAS 1xTF32 timed as cuBLAS is (no cut).
struct Tf32Request {
  int warmup = 2;
  int repetitions = 20;
  double tolerance = kTf32Tolerance;  // relative L2 error against cuBLAS FP32
  L2Mode l2 = L2Mode::flush;
};

// Its JSON: the client writes it, the worker reads it. A reader takes a missing warmup as 2 and a
// missing l2 as flush; an unknown l2, fewer than 1 repetition, a negative warm-up or a tolerance
// that is not positive throw Error. The response is a trial response (trial_response_json).
nlohmann::json tf32_request_json(const Tf32Request& r);
Tf32Request tf32_request_from_json(const nlohmann::json& req);

// The current problem's rotation (L2Mode::rotate).
struct RotationInfo {
  int copies = 0;
  long long set_bytes = 0;  // one copy of A, B and C, as allocated
  long long l2_bytes = 0;
};

// cuBLASLt's search: what the heuristic is asked for, and how each algorithm is timed.
struct LtSearchOptions {
  int max_algos = 32;
  std::size_t workspace_bytes = std::size_t{32} << 20;
  int warmup = 1;
  int repetitions = 10;
  int cut_after = 3;  // cut, as a tune does, an algorithm clearly slower than the fastest so far
  double cut_ratio = 1.25;
  double tolerance = 1e-4;  // relative L2 error against cuBLAS
  L2Mode l2 = L2Mode::flush;
};

// One algorithm the heuristic returned, as the worker measured it.
struct LtAlgo {
  std::array<std::uint64_t, 8> data{};  // cublasLtMatmulAlgo_t
  std::string desc;                     // its configuration (id, tile, stages, split-K, ...)
  std::size_t workspace = 0;            // bytes it needs
  TrialStatus status = TrialStatus::ok;
  std::string reason;
  double verify_error = -1;
  TimeStats time;
  bool cut = false;
};

struct LtSearch {
  int requested = 0;
  std::vector<LtAlgo> algos;  // in the heuristic's order
  int best = -1;              // index of the fastest verified algorithm; -1: none
  std::size_t workspace_bytes = 0;

  const LtAlgo* best_algo() const {
    return best >= 0 && best < static_cast<int>(algos.size()) ? &algos[best] : nullptr;
  }
  // Algorithms that did not run or were wrong (cut ones ran and were right).
  int failed() const {
    int n = 0;
    for (const auto& a : algos) n += a.status != TrialStatus::ok;
    return n;
  }
};

}  // namespace sgt::eval
