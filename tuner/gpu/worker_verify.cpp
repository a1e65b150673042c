// Instances and their verification: the operands of a problem or a case filled on the device
// with cuBLAS FP32's result as the reference, a result compared with it; and the accuracy a
// non-strict kernel is judged by (precision.hpp; the trial request's accuracy and stress): its
// error against an FP64 reference over cuBLAS FP32's, on the problem and on inputs that stress an
// operand split.
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "edge_cases.hpp"
#include "precision.hpp"
#include "worker_impl.hpp"

namespace sgt::gpu::worker_impl {

namespace {

// The inputs a stress case's label names; nullopt for a label that names none.
std::optional<StressInputs> stress_inputs(std::string_view label) {
  if (label == "exponents") return StressInputs::exponents;
  if (label == "underflow") return StressInputs::underflow;
  if (label == "cancellation") return StressInputs::cancellation;
  if (label == "long-K") return StressInputs::uniform;  // its depth is the stress
  return std::nullopt;
}

// Overwrites op(A) (M x K; a) or op(B) (K x N) of an instance, in `host` as the instance stores it,
// with a stress case's values. They load an operand split (a float as the sum of two or three of
// lower precision) where it is weakest:
//  exponents:    +-m 2^e, m in [1, 2) with every mantissa bit random and e in -30..30, so that
//                products of very different magnitudes meet in one sum;
//  underflow:    +-m 2^-60, so that every product lies in [2^-120, 2^-118), a few binades above
//                FP32's smallest normal 2^-126, where the low parts of a split underflow;
//  cancellation: the second half of k repeats the first, negated in A and changed there by up to
//                2^-12, so that every product has its opposite but for that change and each sum
//                nearly cancels (an error in a product is not cancelled with it).
void stress_operand(const Instance& in, bool a, StressInputs inputs, std::mt19937_64& rng,
                    std::vector<float>& host) {
  if (inputs == StressInputs::uniform) return;
  const long long rows = a ? in.p.M : in.p.K, cols = a ? in.p.K : in.p.N;
  const bool trans = a ? in.trans_a() : in.trans_b();
  const long long ld = a ? in.lda : in.ldb;
  // op(X)[r][c] as stored: X row-major, or X^T for a transposed operand.
  const auto at = [&](long long r, long long c) -> float& {
    return host[static_cast<size_t>(in.offset + (trans ? c * ld + r : r * ld + c))];
  };
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  std::uniform_int_distribution<std::uint32_t> mantissa(0, (1u << 23) - 1);
  std::bernoulli_distribution negative(0.5);
  const auto signed_mantissa = [&] {
    const float m = 1.0f + static_cast<float>(mantissa(rng)) * 0x1p-23f;
    return negative(rng) ? -m : m;
  };
  switch (inputs) {
    case StressInputs::exponents:
    case StressInputs::underflow:
      for (long long r = 0; r < rows; ++r) {
        for (long long c = 0; c < cols; ++c) {
          const int e = inputs == StressInputs::exponents ? exponent(rng) : -60;
          at(r, c) = std::ldexp(signed_mantissa(), e);
        }
      }
      break;
    case StressInputs::cancellation: {
      // k runs along A's columns and B's rows; with K odd the last k keeps its random values.
      const long long half = (a ? cols : rows) / 2;
      for (long long r = 0; r < (a ? rows : half); ++r) {
        for (long long c = 0; c < (a ? half : cols); ++c) {
          const float v = at(r, c);
          if (a) {
            at(r, c + half) = -v + 0x1p-12f * unit(rng);
          } else {
            at(r + half, c) = v;
          }
        }
      }
      break;
    }
    case StressInputs::uniform:
      break;
  }
}

// The floor of cuBLAS FP32's error in an error ratio: FP32's unit roundoff, an error that no FP32
// result avoids (and a ratio that is defined when cuBLAS happens to be exact).
constexpr double kFp32UnitRoundoff = 0x1p-24;

std::string error_text(double e) {
  return std::isfinite(e) ? fmt::format("{:.3g}", e) : "inf (the result holds NaN or Inf)";
}

// Stress problems a worker keeps at most (each is a few MB; a session of one tile family needs
// a handful).
constexpr size_t kMaxStressProblems = 64;
// The stress cases' inputs are the same in every session, so a binary's outcome is reproducible.
constexpr std::uint64_t kStressSeed = 0x5354524553530001ull;

}  // namespace

// A kernel's error against FP64 over cuBLAS FP32's; infinite when the kernel's result holds NaN
// or Inf.
double error_ratio(double kernel_error, double cublas_error) {
  if (!std::isfinite(kernel_error)) return INFINITY;
  return kernel_error / std::max(cublas_error, kFp32UnitRoundoff);
}

// Allocates and fills an instance: random operands (never zeros: timing on zeros flatters the
// hardware), C0 random when beta != 0 and NaN when beta == 0 (a kernel that reads C then cannot
// hide it), C's padding a finite sentinel, and the cuBLAS reference computed from C0. A stress
// case's operands are built as `inputs` says (StressInputs).
std::unique_ptr<Instance> Worker::make_instance(const Problem& p, long long lda, long long ldb,
                                                long long ldc, int offset, float alpha, float beta,
                                                std::uint64_t seed, StressInputs inputs) {
  ensure_cublas();
  auto in = std::make_unique<Instance>();
  in->p = p;
  in->lda = lda;
  in->ldb = ldb;
  in->ldc = ldc;
  in->offset = offset;
  in->alpha = alpha;
  in->beta = beta;
  auto alloc = [&](size_t n) {
    in->owned.push_back(std::make_unique<DeviceBuffer<float>>(n));
    return in->owned.back()->ptr;
  };
  in->a_mem = alloc(in->a_elems());
  in->b_mem = alloc(in->b_elems());
  in->c_mem = alloc(in->c_elems());
  float* c0 = alloc(in->c_elems());
  in->c0_mem = c0;
  in->ref_mem = alloc(in->c_elems());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> host(std::max({in->a_elems(), in->b_elems(), in->c_elems()}));
  auto upload = [&](float* dst, size_t n) {
    SGT_CUDA_CHECK(cudaMemcpy(dst, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  };
  for (size_t i = 0; i < in->a_elems(); ++i) host[i] = dist(rng);
  stress_operand(*in, true, inputs, rng, host);
  upload(in->a_mem, in->a_elems());
  for (size_t i = 0; i < in->b_elems(); ++i) host[i] = dist(rng);
  stress_operand(*in, false, inputs, rng, host);
  upload(in->b_mem, in->b_elems());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t i = 0; i < in->c_elems(); ++i) {
    const long long e = static_cast<long long>(i) - offset;
    const bool inside = e >= 0 && e % ldc < p.N;
    host[i] = !inside ? kPaddingSentinel : (beta != 0.0f ? dist(rng) : nan);
  }
  upload(c0, in->c_elems());
  SGT_CUDA_CHECK(
      cudaMemcpy(in->ref_mem, c0, in->c_elems() * sizeof(float), cudaMemcpyDeviceToDevice));
  cublas_gemm(*in, in->ref_mem + offset);
  SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return in;
}

// Relative L2 error of the instance's C (the whole allocation: padding included) against the
// reference; +inf when any value is NaN or Inf.
double Worker::verify(const Instance& in) {
  if (!in.ref_mem) throw Error("verification of an instance without a reference");
  SGT_CUDA_CHECK(cudaMemsetAsync(sums_->ptr, 0, 2 * sizeof(double), stream_));
  SGT_CUDA_CHECK(cudaMemsetAsync(bad_->ptr, 0, sizeof(unsigned long long), stream_));
  long long n = static_cast<long long>(in.c_elems());
  const float* c = in.c_mem;
  const float* r = in.ref_mem;
  double* sums = sums_->ptr;
  unsigned long long* bad = bad_->ptr;
  void* args[] = {&c, &r, &n, &sums, &bad};
  SGT_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(compare_), dim3(fp_.sm_count * 4),
                                  dim3(256), args, 0, stream_));
  double h[2];
  unsigned long long hb = 0;
  SGT_CUDA_CHECK(cudaMemcpyAsync(h, sums, sizeof(h), cudaMemcpyDeviceToHost, stream_));
  SGT_CUDA_CHECK(cudaMemcpyAsync(&hb, bad, sizeof(hb), cudaMemcpyDeviceToHost, stream_));
  SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (hb > 0) return INFINITY;
  return h[1] > 0 ? std::sqrt(h[0] / h[1]) : std::sqrt(h[0]);
}

// ---- Accuracy against FP64 (precision.hpp; the trial request's accuracy and stress) ----

void Worker::widen(const float* x, double* y, size_t count) {
  long long n = static_cast<long long>(count);
  void* args[] = {&x, &y, &n};
  SGT_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(widen_), dim3(fp_.sm_count * 4),
                                  dim3(256), args, 0, stream_));
}

// The FP64 reference of an instance: cublasDgemm on double copies of its A, B and C0 with its
// alpha and beta (beta = 0 reads no C, as cublasSgemm's reference does not), laid out as C.
std::unique_ptr<DeviceBuffer<double>> Worker::reference64(const Instance& in) {
  ensure_cublas();
  auto c64 = std::make_unique<DeviceBuffer<double>>(in.c_elems());
  widen(in.c0_mem, c64->ptr, in.c_elems());
  if (in.p.M > 0 && in.p.N > 0) {
    DeviceBuffer<double> a64(in.a_elems()), b64(in.b_elems());
    widen(in.a_mem, a64.ptr, in.a_elems());
    widen(in.b_mem, b64.ptr, in.b_elems());
    const double alpha = in.alpha, beta = in.beta;
    // As cublas_gemm: the operands swapped, each keeping its op.
    SGT_CUBLAS_CHECK(cublasDgemm(
        cublas_, in.trans_b() ? CUBLAS_OP_T : CUBLAS_OP_N, in.trans_a() ? CUBLAS_OP_T : CUBLAS_OP_N,
        static_cast<int>(in.p.N), static_cast<int>(in.p.M), static_cast<int>(in.p.K), &alpha,
        b64.ptr + in.offset, static_cast<int>(in.ldb), a64.ptr + in.offset,
        static_cast<int>(in.lda), &beta, c64->ptr + in.offset, static_cast<int>(in.ldc)));
    SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before the copies are freed
  }
  SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return c64;
}

// Relative L2 error of an M x N result (`c`: its first value, rows ldc apart) against an FP64
// reference laid out alike; +inf when a value is NaN or Inf.
double Worker::error64(const Instance& in, const float* c, const double* ref) {
  if (in.p.M == 0 || in.p.N == 0) return 0;
  ensure_scratch();
  SGT_CUDA_CHECK(cudaMemsetAsync(sums_->ptr, 0, 2 * sizeof(double), stream_));
  SGT_CUDA_CHECK(cudaMemsetAsync(bad_->ptr, 0, sizeof(unsigned long long), stream_));
  long long rows = in.p.M, cols = in.p.N, ld = in.ldc;
  double* sums = sums_->ptr;
  unsigned long long* bad = bad_->ptr;
  void* args[] = {&c, &ref, &rows, &cols, &ld, &sums, &bad};
  SGT_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(compare64_), dim3(fp_.sm_count * 4),
                                  dim3(256), args, 0, stream_));
  double h[2];
  unsigned long long hb = 0;
  SGT_CUDA_CHECK(cudaMemcpyAsync(h, sums, sizeof(h), cudaMemcpyDeviceToHost, stream_));
  SGT_CUDA_CHECK(cudaMemcpyAsync(&hb, bad, sizeof(hb), cudaMemcpyDeviceToHost, stream_));
  SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (hb > 0) return INFINITY;
  if (!std::isfinite(h[0]) || !std::isfinite(h[1]))
    throw Error(
        fmt::format("the FP64 reference of {} {} holds NaN or Inf", in.p.shape(), in.p.layout));
  return h[1] > 0 ? std::sqrt(h[0] / h[1]) : std::sqrt(h[0]);
}

// The current problem's FP64 reference and cuBLAS FP32's error against it: once per problem.
void Worker::ensure_accuracy_reference() {
  if (ref64_) return;
  auto ref = reference64(*inst_);
  cublas_error64_ = error64(*inst_, inst_->ref_mem + inst_->offset, ref->ptr + inst_->offset);
  ref64_ = std::move(ref);
}

StressProblem& Worker::stress_problem(const EdgeCheck& c) {
  const std::string key = json(c).dump();
  if (const auto it = stress_problems_.find(key); it != stress_problems_.end()) return *it->second;
  const auto inputs = stress_inputs(c.label);
  if (!inputs)
    throw Error(fmt::format(
        "unknown stress case '{}' (exponents, underflow, cancellation or long-K)", c.label));
  if (!is_layout(c.problem.layout) || c.problem.M < 1 || c.problem.N < 1 || c.problem.K < 1)
    throw Error(fmt::format("bad stress case {}", describe(c)));
  auto sp = std::make_unique<StressProblem>();
  sp->inst = make_instance(c.problem, c.lda, c.ldb, c.ldc, c.offset, c.alpha, c.beta, kStressSeed,
                           *inputs);
  sp->ref64 = reference64(*sp->inst);
  const Instance& in = *sp->inst;
  sp->cublas_error = error64(in, in.ref_mem + in.offset, sp->ref64->ptr + in.offset);
  return *stress_problems_.emplace(key, std::move(sp)).first->second;
}

std::string Worker::prepare_stress(const TrialRequest& t) {
  if (t.stress.empty()) return {};
  std::string stress_key = t.cubin_sha256 + json(t.stress).dump();
  if (!stress_done_.count(stress_key)) {
    if (stress_problems_.size() + t.stress.size() > kMaxStressProblems) stress_problems_.clear();
    for (const auto& c : t.stress) stress_problem(c);
  }
  return stress_key;
}

// The candidate on every stress case, each from its C0; kept per binary and cases.
StressOutcome Worker::stress_outcome(const Loaded& l, const TrialRequest& t,
                                     const std::string& key) {
  if (const auto it = stress_done_.find(key); it != stress_done_.end()) return it->second;
  StressOutcome worst;
  for (const auto& c : t.stress) {
    StressProblem& sp = stress_problem(c);
    Instance& in = *sp.inst;
    run_from_c0(l, t.tile, t.block, in);
    const double e = error64(in, in.C(), sp.ref64->ptr + in.offset);
    const double r = error_ratio(e, sp.cublas_error);
    if (worst.ratio < 0 || !(r <= worst.ratio)) {
      worst.ratio = r;
      worst.error = e;
      worst.cublas_error = sp.cublas_error;
      worst.label = fmt::format("{} {}", c.label, describe(c));
    }
  }
  stress_done_.emplace(key, worst);
  return worst;
}

// The accuracy of a verified candidate (its error against FP64 on the problem is `error`): the
// ratios in the response, and status inaccurate with the numbers when one exceeds the bound.
void Worker::judge_accuracy(const Loaded& l, const TrialRequest& t, const std::string& stress_key,
                            double error, TrialResponse& out) {
  out.error_ratio = error_ratio(error, cublas_error64_);
  std::string why;
  if (!(out.error_ratio <= kAccurateErrorRatioMax)) {
    why = fmt::format(
        "error ratio {:.3g} on the problem exceeds {:g}: relative L2 error {} against an FP64 "
        "reference, cuBLAS FP32's {:.3g}",
        out.error_ratio, kAccurateErrorRatioMax, error_text(error), cublas_error64_);
  }
  if (!t.stress.empty()) {
    const StressOutcome s = stress_outcome(l, t, stress_key);
    out.stress_ratio = s.ratio;
    out.stress_case = s.label;
    if (!(s.ratio <= kAccurateErrorRatioMax)) {
      why += fmt::format(
          "{}error ratio {:.3g} on stress case {} exceeds {:g}: relative L2 error {} against "
          "FP64, cuBLAS FP32's {:.3g}",
          why.empty() ? "" : "; ", s.ratio, s.label, kAccurateErrorRatioMax, error_text(s.error),
          s.cublas_error);
    }
  }
  if (!why.empty()) {
    out.status = TrialStatus::inaccurate;
    out.reason = why;
  }
}

}  // namespace sgt::gpu::worker_impl
