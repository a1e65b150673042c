// A candidate in the worker: its binary checked and loaded, launched through the launch plan that
// sgemm_tuned runs too (launch_plan.h), verified from C0 against cuBLAS, its accuracy judged when
// asked for, and timed (the `trial` request); or verified on a list of edge cases, each on its own
// small instance (the `verify` request).
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "launch_plan.h"
#include "sha256.hpp"
#include "split_maps_launch.hpp"
#include "warptile_geometry.h"
#include "worker_impl.hpp"

namespace sgt::gpu::worker_impl {

namespace {

// Never load a binary that is not the one the compiler produced: nullopt-like empty string
// when the file is missing or its hash differs.
std::string read_checked(const std::string& path, const std::string& sha) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string cubin = ss.str();
  if (!in || cubin.empty() || sha256_hex(cubin) != sha) return {};
  return cubin;
}

// A kernel's dynamic shared memory (a TMA kernel's, a split-TF32 kernel's stages) may be above
// the 48 KB a launch gets without asking.
void allow_dynamic_smem(const Loaded& l, const LaunchTile& tile) {
  if (tile.smem_bytes > 0)
    SGT_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(l.kernel),
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        tile.smem_bytes));
}

// A pointers or tensor_maps tail config's wave (plan_call's resident): the blocks of its loaded
// tile kernel an SM holds at once, from its registers, shared memory and block size.
void set_resident(Loaded& l, const LaunchTile& tile, unsigned block) {
  if (!tile.tail || tile.split_maps) return;
  SGT_CUDA_CHECK(sgt_kernel::resident_blocks(reinterpret_cast<const void*>(l.kernel),
                                             static_cast<int>(block),
                                             static_cast<size_t>(tile.smem_bytes), &l.resident));
}

}  // namespace

void Worker::load(Loaded& l, const std::string& cubin, const std::string& kernel,
                  const std::string& reduce, const std::string& pack) {
  l.poisoned = &poisoned_;
  SGT_CUDA_CHECK(
      cudaLibraryLoadData(&l.lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  SGT_CUDA_CHECK(cudaLibraryGetKernel(&l.kernel, l.lib, kernel.c_str()));
  if (!reduce.empty()) SGT_CUDA_CHECK(cudaLibraryGetKernel(&l.reduce, l.lib, reduce.c_str()));
  if (!pack.empty()) SGT_CUDA_CHECK(cudaLibraryGetKernel(&l.pack, l.lib, pack.c_str()));
}

// TMA configs: the tensor maps of an instance's operands, encoded once per instance and tile.
// Operands a tensor copy cannot read are a failed launch, never a silent fallback: the tuner
// only gives a TMA config problems and edge cases its kernel takes.
// trans_a, trans_b: the kernel instance's layout (TN on PACK's panels). M x N: the launch's
// problem (a tail's sub-problem, whose maps are kept apart from the first launch's).
const sgt_kernel::TmaMaps& Worker::tma_maps(const LaunchTile& tile, Instance& in, bool trans_a,
                                            bool trans_b, const float* A, int lda, const float* B,
                                            int ldb, bool tail, long long M, long long N) {
  if (!sgt_kernel::tma_operand(A, lda) || !sgt_kernel::tma_operand(B, ldb))
    throw Error(fmt::format(
        "TMA = 1 needs 16-byte aligned operands with leading dimensions that are multiples of "
        "4 (lda {}, ldb {}, offset {} floats)",
        lda, ldb, in.offset));
  const auto key = std::make_tuple(A, B, lda, ldb, M, N, in.p.K, tile.BM, tile.BN, tile.BK,
                                   tile.pad_a, tile.pad_b, trans_a, trans_b);
  const int slot = tail ? 1 : 0;
  if (!in.maps[slot] || in.maps_key[slot] != key) {
    const auto g = sgt_kernel::make_geometry(tile.BM, tile.BN, tile.BK, 1, 1, 1, 1, 1, 1, 1,
                                             tile.pad_a, tile.pad_b);  // the boxes need no more
    auto maps = std::make_unique<sgt_kernel::TmaMaps>();
    const CUresult r =
        sgt_kernel::tma_encode_maps(*maps, g, trans_a, trans_b, M, N, in.p.K, A, lda, B, ldb);
    if (r != CUDA_SUCCESS)
      throw Error(fmt::format("cuTensorMapEncodeTiled failed ({})", static_cast<int>(r)));
    in.maps[slot] = std::move(maps);
    in.maps_key[slot] = key;
  }
  return *in.maps[slot];
}

// Launches the candidate on an instance (from whatever C holds): the launch plan that
// sgemm_tuned runs too (launch_plan.h), with the pack, reduction and tile kernels of its cubin.
void Worker::launch(const Loaded& l, const LaunchTile& tile, unsigned block, Instance& in,
                    cudaStream_t st) {
  const auto aligned = [](const float* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  int M = static_cast<int>(in.p.M), N = static_cast<int>(in.p.N), K = static_cast<int>(in.p.K);
  const int lda = static_cast<int>(in.lda), ldb = static_cast<int>(in.ldb),
            ldc = static_cast<int>(in.ldc);
  const float* A = in.A();
  const float* B = in.B();
  float* C = in.C();
  if (tile.split_maps) {  // the split prepass and four panel maps (split_maps_launch.hpp)
    return run_split_maps(
        {reinterpret_cast<const void*>(l.kernel), reinterpret_cast<const void*>(l.pack),
         reinterpret_cast<const void*>(l.reduce), block, static_cast<size_t>(tile.smem_bytes),
         tile.BM, tile.BN, tile.split_k, tile.BK, tile.tail != 0, tile.group_m},
        M, N, K, in.alpha, A, lda, in.trans_a(), B, ldb, in.trans_b(), in.beta, C, ldc,
        fp_.sm_count, fp_.cc_major >= 9, call_pool(), st);
  }
  const auto plan =
      sgt_kernel::plan_call({tile.BM, tile.BN, tile.BK, tile.split_k, l.pack != nullptr,
                             tile.tma != 0, tile.tail != 0, tile.group_m},
                            M, N, K, in.trans_a(), in.trans_b(), A, aligned(A), lda, B, aligned(B),
                            ldb, fp_.sm_count, fp_.cc_major >= 9, l.resident);
  if (plan.too_large) throw Error("grid too large for this problem");
  if ((plan.reduce_blocks > 0 || plan.tail.reduce_blocks > 0) && !l.reduce)
    throw Error("split-K launch without a reduction kernel");
  const void* kernel = reinterpret_cast<const void*>(l.kernel);
  std::string refused;  // why the tile step launched nothing (run_call still frees)
  const auto tile_step = [&](const float* a, int la, const float* b, int lb, float* work,
                             bool tail) {
    if (!tile.tma)
      return sgt_kernel::launch_warptile(kernel, plan, block, M, N, K, in.alpha, a, la, b, lb,
                                         in.beta, C, ldc, work, st,
                                         static_cast<size_t>(tile.smem_bytes), tail);
    // With K = 0 the kernel copies nothing: zero maps, and the operands need nothing.
    static const sgt_kernel::TmaMaps kNoCopies{};
    const sgt_kernel::TmaMaps* maps = &kNoCopies;
    if (K > 0) {
      try {
        maps = &tma_maps(tile, in, plan.trans_a, plan.trans_b, a, la, b, lb, tail,
                         tail ? plan.tail.M : M, tail ? plan.tail.N : N);
      } catch (const Error& e) {
        refused = e.what();
        return cudaErrorInvalidValue;
      }
    }
    return sgt_kernel::launch_ws_tma(kernel, plan, block, static_cast<size_t>(tile.smem_bytes),
                                     maps->a, maps->b, M, N, K, in.alpha, in.beta, C, ldc, work, st,
                                     tail);
  };
  const cudaError_t e = sgt_kernel::run_call(
      plan, reinterpret_cast<const void*>(l.pack), reinterpret_cast<const void*>(l.reduce), M, N, K,
      in.alpha, A, lda, B, ldb, in.beta, C, ldc, call_pool(), st, tile_step);
  if (!refused.empty()) throw Error(refused);
  SGT_CUDA_CHECK(e);
}

// Runs the candidate once from C0 and waits for it.
void Worker::run_from_c0(const Loaded& l, const LaunchTile& tile, unsigned block, Instance& in) {
  if (!in.c0_mem) throw Error("verification of an instance without C0");
  SGT_CUDA_CHECK(cudaMemcpyAsync(in.c_mem, in.c0_mem, in.c_elems() * sizeof(float),
                                 cudaMemcpyDeviceToDevice, stream_));
  launch(l, tile, block, in, stream_);
  SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// Runs one verification from C0; the relative error.
double Worker::run_and_verify(const Loaded& l, const LaunchTile& tile, unsigned block,
                              Instance& in) {
  run_from_c0(l, tile, block, in);
  return verify(in);
}

json Worker::trial(const json& req) {
  if (!bench_ || !inst_) throw Error("trial before problem");
  ensure_scratch();
  const TrialRequest t = trial_request_from_json(req);
  // Made before the candidate runs: a rotation that does not fit fails the request, never the
  // candidate.
  if (t.l2 == L2Mode::rotate) rotation();
  // So are the references its accuracy is measured against (once per problem, and per stress
  // case): a failure there is the worker's, not the candidate's.
  std::string stress_key;
  if (t.accuracy) {
    ensure_accuracy_reference();
    stress_key = prepare_stress(t);
  }
  TrialResponse out;
  const std::string cubin = read_checked(t.cubin_path, t.cubin_sha256);
  if (cubin.empty()) {
    out.status = TrialStatus::compile_failed;
    out.reason = "cached binary missing or its SHA-256 does not match; not loaded";
    return trial_response_json(out);
  }
  {
    Loaded l;
    try {
      load(l, cubin, t.kernel, t.reduce_kernel, t.pack_kernel);
      allow_dynamic_smem(l, t.tile);
      set_resident(l, t.tile, t.block);
      measure_candidate(l, t, stress_key, out);
    } catch (const Error& e) {
      classify_failure(e, out.status, out.reason);
    }
  }
  return trial_response_json(out);
}

// A loaded candidate verified (on the instance, and on the verified copy when timing rotated),
// its accuracy judged when asked for, then timed; a wrong or inaccurate one is not timed.
void Worker::measure_candidate(const Loaded& l, const TrialRequest& t,
                               const std::string& stress_key, TrialResponse& out) {
  // Verify before timing, from C0 (NaN when beta = 0: then the kernel must not read C).
  out.verify_error = run_and_verify(l, t.tile, t.block, *inst_);
  // Its error against FP64 while C holds the result (timing overwrites it).
  double error = -1;
  if (t.accuracy && out.verify_error <= t.tolerance)
    error = error64(*inst_, inst_->C(), ref64_->ptr + inst_->offset);
  if (t.checksum) {
    std::string host(inst_->c_elems() * sizeof(float), '\0');
    SGT_CUDA_CHECK(cudaMemcpy(host.data(), inst_->c_mem, host.size(), cudaMemcpyDeviceToHost));
    out.checksum = sha256_hex(host);
  }
  if (t.l2 == L2Mode::rotate && out.verify_error <= t.tolerance) {
    // The rotated launches take other pointers: one of their copies is checked too.
    Instance& v = rot_->copies[static_cast<size_t>(rot_->verified)];
    out.verify_error = std::max(out.verify_error, run_and_verify(l, t.tile, t.block, v));
    bench_->used(rot_->verified);
  }
  if (!(out.verify_error <= t.tolerance)) {
    out.status = TrialStatus::incorrect;
    out.reason = std::isfinite(out.verify_error)
                     ? fmt::format("relative L2 error {:.3g} exceeds tolerance {:.1g}",
                                   out.verify_error, t.tolerance)
                     : "result holds NaN or Inf";
  } else {
    // Right against cuBLAS; as accurate as cuBLAS against FP64? An inaccurate candidate
    // is not timed.
    if (t.accuracy) judge_accuracy(l, t, stress_key, error, out);
    if (out.status == TrialStatus::ok) {
      BenchSettings s;
      s.warmup = t.warmup;
      s.repetitions = t.repetitions;
      s.cut_after = t.cut_after;
      s.cut_ratio = t.cut_ratio;
      s.best_ms = t.best_ms;
      s.l2 = t.l2;
      const auto b = bench_->run(
          [&](cudaStream_t st, int copy) { launch(l, t.tile, t.block, operands(t.l2, copy), st); },
          s);
      out.time = b.stats;
      out.cut = b.cut;
    }
  }
}

// Verifies one candidate on a list of cases, each on its own small instance.
json Worker::verify_cases(const json& req) {
  if (!stream_) throw Error("verify before hello");
  ensure_scratch();
  const std::string cubin = read_checked(req.at("cubin"), req.at("sha256"));
  if (cubin.empty()) {
    return {{"ok", false},
            {"error", "cached binary missing or its SHA-256 does not match; not loaded"}};
  }
  const LaunchTile tile = launch_tile_from_json(req);
  const unsigned block = req.at("block");
  const double tol = req.at("tolerance");
  const auto seed = req.at("seed").get<std::uint64_t>();
  auto cases = req.at("cases").get<std::vector<EdgeCheck>>();
  Loaded l;
  load(l, cubin, req.at("kernel"), req.value("reduce_kernel", ""), req.value("pack_kernel", ""));
  allow_dynamic_smem(l, tile);
  set_resident(l, tile, block);
  for (size_t i = 0; i < cases.size(); ++i) {
    auto& c = cases[i];
    try {
      auto in = make_instance(c.problem, c.lda, c.ldb, c.ldc, c.offset, c.alpha, c.beta, seed + i);
      c.error = run_and_verify(l, tile, block, *in);
      c.passed = c.error <= tol;
      c.reason =
          c.passed ? ""
          : std::isfinite(c.error)
              ? fmt::format("relative L2 error {:.3g} exceeds tolerance {:.1g}", c.error, tol)
              : "result holds NaN or Inf, or wrote outside C";
      if (!std::isfinite(c.error)) c.error = 1e300;
    } catch (const Error& e) {
      TrialStatus st;
      classify_failure(e, st, c.reason);
      c.passed = false;
      if (poisoned_) break;
    }
  }
  return {{"ok", true}, {"cases", cases}};
}

// The pool of the launch plan's workspace and panels, as sgemm_tuned keeps one per device.
cudaMemPool_t Worker::call_pool() {
  if (!pool_) SGT_CUDA_CHECK(sgt_kernel::make_call_pool(dev_, &pool_));
  return pool_;
}

}  // namespace sgt::gpu::worker_impl
