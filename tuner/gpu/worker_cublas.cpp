// cuBLAS in the worker: cublasSgemm with pedantic math (plain FP32), the reference every result
// is verified against and the baseline every ratio is taken to; and cuBLAS 1xTF32 (cublasGemmEx
// with CUBLAS_COMPUTE_32F_FAST_TF32: TF32 tensor cores), a faster peer that is not FP32-accurate,
// timed as cuBLAS is and measured against FP64 beside it.
#include <cmath>

#include <fmt/format.h>

#include "worker_impl.hpp"

namespace sgt::gpu::worker_impl {

void Worker::ensure_cublas() {
  if (cublas_) return;
  SGT_CUBLAS_CHECK(cublasCreate(&cublas_));
  SGT_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  // Plain FP32: no TF32 tensor-op shortcut in the baseline.
  SGT_CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_PEDANTIC_MATH));
  build_helper_kernels();
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a row-major stored
// matrix is its own transpose in column-major terms: swap the operands, keep each one's op.
void Worker::cublas_gemm(const Instance& in, float* c) {
  const int M = static_cast<int>(in.p.M), N = static_cast<int>(in.p.N),
            K = static_cast<int>(in.p.K);
  if (M == 0 || N == 0) return;
  SGT_CUBLAS_CHECK(cublasSgemm(cublas_, in.trans_b() ? CUBLAS_OP_T : CUBLAS_OP_N,
                               in.trans_a() ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &in.alpha, in.B(),
                               static_cast<int>(in.ldb), in.A(), static_cast<int>(in.lda), &in.beta,
                               c, static_cast<int>(in.ldc)));
}

TimeStats Worker::time_cublas(int reps, L2Mode l2) {
  if (!bench_ || !inst_) throw Error("cublas before problem");
  if (l2 == L2Mode::rotate) rotation();
  BenchSettings s;
  s.repetitions = reps;
  s.warmup = 2;
  s.l2 = l2;
  return bench_
      ->run(
          [&](cudaStream_t, int copy) {
            Instance& in = operands(l2, copy);
            cublas_gemm(in, in.C());
          },
          s)
      .stats;
}

// cuBLAS 1xTF32 on a handle of its own, so that the reference's stays pedantic: TF32 tensor-core
// math allowed, and every call asks for CUBLAS_COMPUTE_32F_FAST_TF32 (each operand rounded to
// TF32's 10-bit mantissa, the products summed in FP32).
void Worker::ensure_cublas_tf32() {
  if (cublas_tf32_) return;
  ensure_cublas();  // the verification kernels
  SGT_CUBLAS_CHECK(cublasCreate(&cublas_tf32_));
  SGT_CUBLAS_CHECK(cublasSetStream(cublas_tf32_, stream_));
  SGT_CUBLAS_CHECK(cublasSetMathMode(cublas_tf32_, CUBLAS_TF32_TENSOR_OP_MATH));
}

// As cublas_gemm: the operands swapped, each keeping its op.
void Worker::cublas_tf32_gemm(const Instance& in, float* c) {
  const int M = static_cast<int>(in.p.M), N = static_cast<int>(in.p.N),
            K = static_cast<int>(in.p.K);
  if (M == 0 || N == 0) return;
  SGT_CUBLAS_CHECK(cublasGemmEx(
      cublas_tf32_, in.trans_b() ? CUBLAS_OP_T : CUBLAS_OP_N,
      in.trans_a() ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &in.alpha, in.B(), CUDA_R_32F,
      static_cast<int>(in.ldb), in.A(), CUDA_R_32F, static_cast<int>(in.lda), &in.beta, c,
      CUDA_R_32F, static_cast<int>(in.ldc), CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

// Runs cuBLAS 1xTF32 on an instance from its C0 and waits for it.
void Worker::cublas_tf32_from_c0(Instance& in) {
  if (!in.c0_mem) throw Error("verification of an instance without C0");
  SGT_CUDA_CHECK(cudaMemcpyAsync(in.c_mem, in.c0_mem, in.c_elems() * sizeof(float),
                                 cudaMemcpyDeviceToDevice, stream_));
  cublas_tf32_gemm(in, in.C());
  SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// The `cublas_tf32` request: cuBLAS 1xTF32 on the current problem, verified against cublasSgemm
// with the request's (loose) tolerance, its error against the FP64 reference over cuBLAS FP32's
// measured, then timed as cuBLAS is; the answer is a trial response (status, reason,
// verify_error, time, cut, error_ratio).
json Worker::time_cublas_tf32(const json& req) {
  if (!bench_ || !inst_) throw Error("cublas_tf32 before problem");
  const Tf32Request r = tf32_request_from_json(req);
  BenchSettings bs;
  bs.warmup = r.warmup;
  bs.repetitions = r.repetitions;
  bs.cut_after = 0;
  bs.l2 = r.l2;
  ensure_cublas_tf32();
  ensure_scratch();
  // Made before cuBLAS runs: a rotation that does not fit, or a failed FP64 reference, fails the
  // request.
  if (bs.l2 == L2Mode::rotate) rotation();
  ensure_accuracy_reference();
  TrialResponse out;
  try {
    measure_cublas_tf32(bs, r.tolerance, out);
  } catch (const Error& e) {
    classify_failure(e, out.status, out.reason);
  }
  return trial_response_json(out);
}

void Worker::measure_cublas_tf32(const BenchSettings& bs, double tolerance, TrialResponse& out) {
  Instance& in = *inst_;
  cublas_tf32_from_c0(in);
  out.verify_error = verify(in);
  // Its error against FP64 while C holds the result (timing overwrites it).
  out.error_ratio = error_ratio(error64(in, in.C(), ref64_->ptr + in.offset), cublas_error64_);
  if (bs.l2 == L2Mode::rotate && out.verify_error <= tolerance) {
    // The rotated launches take other pointers: one of their copies is checked too.
    Instance& v = rot_->copies[static_cast<size_t>(rot_->verified)];
    cublas_tf32_from_c0(v);
    out.verify_error = std::max(out.verify_error, verify(v));
    bench_->used(rot_->verified);
  }
  if (!(out.verify_error <= tolerance)) {
    out.status = TrialStatus::incorrect;
    out.reason = std::isfinite(out.verify_error)
                     ? fmt::format("relative L2 error {:.3g} exceeds tolerance {:.1g}",
                                   out.verify_error, tolerance)
                     : "result holds NaN or Inf";
    return;
  }
  const auto b = bench_->run(
      [&](cudaStream_t, int copy) {
        Instance& x = operands(bs.l2, copy);
        cublas_tf32_gemm(x, x.C());
      },
      bs);
  out.time = b.stats;
  out.cut = b.cut;
}

}  // namespace sgt::gpu::worker_impl
