// cuBLASLt FP32 in the worker, a peer of cublasSgemm: the descriptors of the current problem,
// the algorithms its heuristic offers (each verified against cuBLAS and timed, the fastest kept:
// the `cublaslt_search` request), and one of them verified and timed again (`cublaslt`).
#include <cmath>

#include <fmt/format.h>

#include "worker_impl.hpp"

namespace sgt::gpu::worker_impl {

namespace {

// cuBLASLt's workspace when a request names none.
constexpr size_t kDefaultLtWorkspace = size_t{32} << 20;

// The largest power of two, up to 256, that divides a pointer: what cuBLASLt may assume of it.
std::uint32_t alignment_of(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t al = 256;
  while (al > 1 && a % al != 0) al /= 2;
  return al;
}

// An algorithm's configuration, for the report.
std::string describe_lt_algo(const cublasLtMatmulAlgo_t& algo) {
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto zero) {
    auto v = zero;
    size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof(v), &written) !=
        CUBLAS_STATUS_SUCCESS)
      return static_cast<long long>(-1);
    return static_cast<long long>(v);
  };
  return fmt::format(
      "id={} tile={} stages={} splitk={} reduction={} swizzle={} custom={} inner={} cluster={}",
      get(CUBLASLT_ALGO_CONFIG_ID, std::int32_t{}),
      get(CUBLASLT_ALGO_CONFIG_TILE_ID, std::uint32_t{}),
      get(CUBLASLT_ALGO_CONFIG_STAGES_ID, std::uint32_t{}),
      get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, std::int32_t{}),
      get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, std::uint32_t{}),
      get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, std::uint32_t{}),
      get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, std::uint32_t{}),
      get(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, std::uint16_t{}),
      get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, std::uint16_t{}));
}

cublasLtMatmulAlgo_t algo_from(const json& j) {
  const auto data = j.get<std::vector<std::uint64_t>>();
  cublasLtMatmulAlgo_t a{};
  if (data.size() != std::size(a.data)) throw Error("a cuBLASLt algorithm is 8 numbers");
  std::copy(data.begin(), data.end(), a.data);
  return a;
}

BenchSettings lt_settings(const json& req) {
  BenchSettings bs;
  bs.warmup = req.value("warmup", 1);
  bs.repetitions = req.at("reps").get<int>();
  bs.cut_after = req.value("cut_after", 0);
  bs.cut_ratio = req.value("cut_ratio", 1.25);
  bs.l2 = l2_of(req);
  return bs;
}

}  // namespace

LtSetup& Worker::lt(size_t workspace_bytes) {
  if (!bench_ || !inst_) throw Error("cuBLASLt before problem");
  ensure_scratch();
  if (!lt_handle_) SGT_CUBLAS_CHECK(cublasLtCreate(&lt_handle_));
  if (lt_ && lt_->workspace_bytes == workspace_bytes) return *lt_;
  lt_.reset();
  const Instance& in = *inst_;
  const std::uint64_t M = in.p.M, N = in.p.N, K = in.p.K;
  auto s = std::make_unique<LtSetup>();
  SGT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&s->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // cuBLASLt's A is our B, its B our A: as cublas_gemm passes them.
  const cublasOperation_t op_a = in.trans_b() ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = in.trans_a() ? CUBLAS_OP_T : CUBLAS_OP_N;
  SGT_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(s->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  SGT_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(s->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  // Column-major views of the row-major operands: as stored, before their op.
  SGT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s->a, CUDA_R_32F, in.trans_b() ? K : N,
                                              in.trans_b() ? N : K, in.ldb));
  SGT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s->b, CUDA_R_32F, in.trans_a() ? M : K,
                                              in.trans_a() ? K : M, in.lda));
  SGT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s->c, CUDA_R_32F, N, M, in.ldc));
  SGT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&s->pref));
  const std::uint64_t ws = workspace_bytes;
  SGT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      s->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  // cuBLASLt assumes 256-byte aligned operands unless told: an offset problem must exclude the
  // algorithms that need it. A rotation's copies are aligned as the instance is.
  const std::uint32_t al_a = alignment_of(in.B()), al_b = alignment_of(in.A()),
                      al_c = alignment_of(in.C());
  SGT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      s->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof(al_a)));
  SGT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      s->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof(al_b)));
  SGT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      s->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof(al_c)));
  SGT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      s->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c, sizeof(al_c)));
  s->workspace = std::make_unique<DeviceBuffer<char>>(workspace_bytes);
  s->workspace_bytes = workspace_bytes;
  lt_ = std::move(s);
  return *lt_;
}

void Worker::lt_matmul(const LtSetup& s, const cublasLtMatmulAlgo_t& algo, const Instance& in,
                       cudaStream_t st) {
  if (in.p.M == 0 || in.p.N == 0) return;
  SGT_CUBLAS_CHECK(cublasLtMatmul(lt_handle_, s.desc, &in.alpha, in.B(), s.a, in.A(), s.b, &in.beta,
                                  in.C(), s.c, in.C(), s.c, &algo, s.workspace->ptr,
                                  s.workspace_bytes, st));
}

// Runs an algorithm on an instance from its C0 and compares with the reference.
double Worker::lt_verify(const LtSetup& s, const cublasLtMatmulAlgo_t& algo, Instance& in) {
  SGT_CUDA_CHECK(cudaMemcpyAsync(in.c_mem, in.c0_mem, in.c_elems() * sizeof(float),
                                 cudaMemcpyDeviceToDevice, stream_));
  lt_matmul(s, algo, in, stream_);
  SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return verify(in);
}

// Verifies an algorithm (on the instance, and on the verified copy when timing rotated), then
// times it; a failed or wrong algorithm answers its status and no time.
json Worker::lt_measure(LtSetup& s, const cublasLtMatmulAlgo_t& algo, const BenchSettings& bs,
                        double tolerance) {
  TrialStatus status = TrialStatus::ok;
  std::string reason;
  double error = -1;
  BenchOutcome b;
  try {
    error = lt_verify(s, algo, *inst_);
    if (bs.l2 == L2Mode::rotate && error <= tolerance) {
      error =
          std::max(error, lt_verify(s, algo, rot_->copies[static_cast<size_t>(rot_->verified)]));
      bench_->used(rot_->verified);
    }
    if (!(error <= tolerance)) {
      status = TrialStatus::incorrect;
      reason =
          std::isfinite(error)
              ? fmt::format("relative L2 error {:.3g} exceeds tolerance {:.1g}", error, tolerance)
              : "result holds NaN or Inf";
    } else {
      b = bench_->run(
          [&](cudaStream_t st, int copy) { lt_matmul(s, algo, operands(bs.l2, copy), st); }, bs);
    }
  } catch (const Error& e) {
    classify_failure(e, status, reason);
  }
  return {{"status", to_string(status)},
          {"reason", reason},
          {"verify_error", std::isfinite(error) ? error : 1e300},
          {"time", b.stats},
          {"cut", b.cut}};
}

// What cuBLASLt's heuristic offers for the problem (up to max_algos), each verified and timed
// as a candidate is, the slower ones cut early against the fastest so far; the fastest kept.
json Worker::cublaslt_search(const json& req) {
  LtSetup& s = lt(req.value("workspace", kDefaultLtWorkspace));
  const int requested = req.at("max_algos").get<int>();
  if (requested < 1 || requested > 1024) throw Error("max_algos must be 1 to 1024");
  const double tolerance = req.at("tolerance").get<double>();
  BenchSettings bs = lt_settings(req);
  if (bs.l2 == L2Mode::rotate) rotation();
  json algos = json::array();
  int best = -1;
  double best_ms = 0;
  const Problem& p = inst_->p;
  if (p.M > 0 && p.N > 0 && p.K > 0) {
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(requested));
    int returned = 0;
    const cublasStatus_t h = cublasLtMatmulAlgoGetHeuristic(
        lt_handle_, s.desc, s.a, s.b, s.c, s.c, s.pref, requested, results.data(), &returned);
    // NOT_SUPPORTED: no algorithm for this problem, an empty answer rather than a failure.
    if (h != CUBLAS_STATUS_NOT_SUPPORTED) SGT_CUBLAS_CHECK(h);
    for (int i = 0; i < returned && !poisoned_; ++i) {
      const auto& r = results[static_cast<size_t>(i)];
      json a;
      if (r.state != CUBLAS_STATUS_SUCCESS || r.workspaceSize > s.workspace_bytes) {
        a = {{"status", to_string(TrialStatus::resources)},
             {"reason", r.state != CUBLAS_STATUS_SUCCESS
                            ? fmt::format("heuristic state {}", cublasGetStatusString(r.state))
                            : fmt::format("needs {} bytes of workspace", r.workspaceSize)},
             {"verify_error", -1.0},
             {"time", TimeStats{}},
             {"cut", false}};
      } else {
        bs.best_ms = best_ms;
        a = lt_measure(s, r.algo, bs, tolerance);
        const auto t = a.at("time").get<TimeStats>();
        if (a.at("status") == "ok" && !a.at("cut").get<bool>() &&
            (best < 0 || t.median_ms < best_ms)) {
          best = static_cast<int>(algos.size());
          best_ms = t.median_ms;
        }
      }
      a["algo"] = std::vector<std::uint64_t>(std::begin(r.algo.data), std::end(r.algo.data));
      a["desc"] = describe_lt_algo(r.algo);
      a["workspace"] = r.workspaceSize;
      a["waves"] = r.wavesCount;
      algos.push_back(std::move(a));
    }
  }
  return {{"ok", true}, {"requested", requested}, {"algos", algos}, {"best", best}};
}

json Worker::time_cublaslt(const json& req) {
  LtSetup& s = lt(req.value("workspace", kDefaultLtWorkspace));
  const BenchSettings bs = lt_settings(req);
  if (bs.l2 == L2Mode::rotate) rotation();
  json out = lt_measure(s, algo_from(req.at("algo")), bs, req.at("tolerance").get<double>());
  out["ok"] = true;
  return out;
}

}  // namespace sgt::gpu::worker_impl
