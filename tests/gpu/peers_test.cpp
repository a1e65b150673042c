// GPU tests (ctest label `gpu`; each skips without a device) of what a bench times beside the
// tuned kernel: cuBLASLt's heuristic algorithms verified against cublasSgemm in every layout, odd,
// padded and offset shapes included; cuBLAS 1xTF32 verified (loosely), timed, and less accurate
// than FP32 against FP64; and the cold L2 by rotation: its count of copies, every side timed on
// them, the result verified on one. No time is compared with another: only that each side ran,
// was verified, and the counts.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "bench.hpp"
#include "gpu_support.hpp"
#include "nvrtc_compiler.hpp"
#include "precision.hpp"
#include "retime.hpp"
#include "test_support.hpp"
#include "tune.hpp"
#include "worker_client.hpp"

namespace sgt::gpu {
namespace {

using namespace sgt::eval;
using namespace sgt::tune;

using namespace std::chrono_literals;

const char* kLayouts[] = {"NN", "NT", "TN", "TT"};

class PeersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    worker_ = std::make_unique<WorkerClient>(test::cli_path(), -1);
    compiler_ = std::make_unique<KernelCompiler>(
        tmp_.path() / "cache", CompileOptions{worker_->info().fingerprint.arch(), {}});
  }
  Problem set_problem(const std::string& shape, const std::string& layout, long long pad = 0,
                      int offset = 0, float alpha = 1.0f, float beta = 0.0f) {
    ProblemSetup s;
    s.problem = parse_shape(shape);
    s.problem.layout = layout;
    s.pad = pad;
    s.offset = offset;
    s.alpha = alpha;
    s.beta = beta;
    s.seed = 4321;
    s.cublas_repetitions = 3;
    EXPECT_GT(worker_->set_problem(s).median_ms, 0);
    return s.problem;
  }
  TrialRequest request(const std::string& name, const Problem& p) {
    const auto cfg = test::config(name);
    const auto c = compiler_->compile(cfg, p.layout, kernel_vec_loads(p));
    EXPECT_EQ(c.status, TrialStatus::ok) << name << ": " << c.reason;
    auto req = make_trial_request(c, cfg);
    req.repetitions = 5;
    return req;
  }

  test::TempDir tmp_;
  std::unique_ptr<WorkerClient> worker_;
  std::unique_ptr<KernelCompiler> compiler_;
};

// The search's every algorithm that ran is right, and the kept one is the fastest of those not
// cut; timed again, flushed and rotated, it is verified again.
void expect_search_kept_a_verified_algorithm(WorkerClient& w, const std::string& what) {
  LtSearchOptions o;
  o.repetitions = 3;
  const auto s = w.cublaslt_search(o);
  EXPECT_EQ(s.requested, 32) << what;
  ASSERT_FALSE(s.algos.empty()) << what << ": the heuristic returned nothing";
  ASSERT_LE(s.algos.size(), 32u) << what;
  const LtAlgo* best = s.best_algo();
  ASSERT_NE(best, nullptr) << what << ": " << lt_search_reason(s);
  EXPECT_EQ(best->status, TrialStatus::ok) << what;
  EXPECT_FALSE(best->cut) << what;
  EXPECT_LT(best->verify_error, 1e-5) << what << " " << best->desc;
  EXPECT_GT(best->time.median_ms, 0) << what;
  EXPECT_NE(best->desc.find("id="), std::string::npos) << best->desc;
  for (const auto& a : s.algos) {
    if (a.status != TrialStatus::ok) {
      std::cout << what << ": " << a.desc << " " << to_string(a.status) << ": " << a.reason << "\n";
      continue;
    }
    EXPECT_LE(a.verify_error, 1e-4) << what << " " << a.desc;
    if (!a.cut) EXPECT_LE(best->time.median_ms, a.time.median_ms) << what << " " << a.desc;
  }
  for (const auto l2 : {L2Mode::flush, L2Mode::rotate}) {
    o.l2 = l2;
    const auto r = w.time_cublaslt(*best, o);
    EXPECT_EQ(r.status, TrialStatus::ok) << what << " " << to_string(l2) << ": " << r.reason;
    EXPECT_LT(r.verify_error, 1e-5) << what << " " << to_string(l2);
    EXPECT_GT(r.time.median_ms, 0) << what << " " << to_string(l2);
  }
  std::cout << what << ": " << s.algos.size() << " algorithms, " << s.failed() << " failed; kept "
            << best->desc << " at " << best->time.median_ms << " ms\n";
}

TEST_F(PeersTest, CublasLtBestIsVerifiedAgainstCublasInEveryLayout) {
  for (const char* shape : {"1023x777x513", "256x256x256", "64x4096x1000"}) {
    for (const char* layout : kLayouts) {
      set_problem(shape, layout);
      expect_search_kept_a_verified_algorithm(*worker_, std::string(shape) + " " + layout);
    }
  }
  EXPECT_EQ(worker_->restarts(), 0);
}

// Padded leading dimensions and pointers one float past alignment: cuBLASLt must be told, or it
// may pick an algorithm that needs 16-byte operands; alpha and beta not 1 and 0, C read.
TEST_F(PeersTest, CublasLtServesPaddedOffsetOperandsWithAlphaAndBeta) {
  for (const char* layout : kLayouts) {
    set_problem("640x384x520", layout, 3, 1, 0.5f, 2.0f);
    expect_search_kept_a_verified_algorithm(*worker_,
                                            std::string("640x384x520 pad 3 offset 1 ") + layout);
  }
  EXPECT_EQ(worker_->restarts(), 0);
}

// cuBLAS 1xTF32 in every layout, flushed and rotated: verified against cublasSgemm with the loose
// TF32 tolerance, timed, its error against FP64 measured. On aligned operands it runs on TF32
// tensor cores, so its error is well above cuBLAS FP32's (and above what fp32-accurate allows);
// on odd, padded and offset operands cuBLAS may choose any kernel, so only that it passed.
TEST_F(PeersTest, CublasTf32IsVerifiedTimedAndLessAccurateThanFp32) {
  struct Shape {
    const char* shape;
    long long pad;
    int offset;
    float alpha, beta;
    bool aligned;
  };
  const Shape shapes[] = {{"1024x768x512", 0, 0, 1.0f, 0.0f, true},
                          {"1023x777x513", 0, 0, 1.0f, 0.0f, false},
                          {"640x384x520", 3, 1, 0.5f, 2.0f, false}};
  for (const auto& sh : shapes) {
    for (const char* layout : kLayouts) {
      set_problem(sh.shape, layout, sh.pad, sh.offset, sh.alpha, sh.beta);
      const std::string what = std::string(sh.shape) + " " + layout;
      for (const auto l2 : {L2Mode::flush, L2Mode::rotate}) {
        Tf32Request r;
        r.repetitions = 5;
        r.l2 = l2;
        const auto t = worker_->time_cublas_tf32(r);
        EXPECT_EQ(t.status, TrialStatus::ok) << what << " " << to_string(l2) << ": " << t.reason;
        EXPECT_LE(t.verify_error, kTf32Tolerance) << what;
        EXPECT_EQ(t.time.repetitions, 5) << what;
        EXPECT_GT(t.time.median_ms, 0) << what;
        EXPECT_GE(t.error_ratio, 0) << what;
        EXPECT_LT(t.error_ratio, 1e6) << what;  // finite: no NaN or Inf
        if (sh.aligned) {
          EXPECT_GT(t.verify_error, 1e-6) << what << ": not TF32?";
          EXPECT_GT(t.error_ratio, kAccurateErrorRatioMax) << what << ": not TF32?";
        }
        std::cout << what << " " << to_string(l2) << ": 1xTF32 " << t.time.median_ms
                  << " ms, error against cuBLAS " << t.verify_error << ", error ratio "
                  << t.error_ratio << "\n";
      }
    }
  }
  // A tolerance no TF32 result meets: refused as incorrect, not timed, the worker unharmed.
  set_problem("1024x768x512", "NN");
  Tf32Request strict;
  strict.repetitions = 3;
  strict.tolerance = 1e-7;
  const auto refused = worker_->time_cublas_tf32(strict);
  EXPECT_EQ(refused.status, TrialStatus::incorrect) << refused.reason;
  EXPECT_NE(refused.reason.find("exceeds tolerance"), std::string::npos) << refused.reason;
  EXPECT_EQ(refused.time.repetitions, 0);
  EXPECT_EQ(worker_->restarts(), 0);
}

TEST_F(PeersTest, RotationHasTheCopiesTheRuleGivesAndEverySideRunsOnThem) {
  const auto& fp = worker_->info().fingerprint;
  for (const char* layout : {"NN", "TN"}) {
    const auto p = set_problem("512x512x512", layout);
    const auto r = worker_->rotation();
    // 512 x 512 floats each for A, B and C: whole 256-byte blocks already.
    EXPECT_EQ(r.set_bytes, 3LL * 512 * 512 * 4) << layout;
    EXPECT_EQ(r.l2_bytes, fp.l2_bytes);
    EXPECT_EQ(r.copies, rotation_copies(r.l2_bytes, r.set_bytes));
    EXPECT_GE(static_cast<long long>(r.copies - 1) * r.set_bytes,
              kRotationL2Factor * static_cast<long long>(fp.l2_bytes));
    EXPECT_EQ(worker_->rotation().copies, r.copies);  // made once per problem

    const auto cublas_flush = worker_->time_cublas(10, L2Mode::flush);
    const auto cublas_cold = worker_->time_cublas(10, L2Mode::rotate);
    EXPECT_EQ(cublas_cold.repetitions, 10);
    EXPECT_GT(cublas_cold.median_ms, 0);

    auto req = request(test::kSeed, p);
    req.repetitions = 10;
    const auto flushed = worker_->run_trial(req, 60s);
    req.l2 = L2Mode::rotate;
    const auto cold = worker_->run_trial(req, 60s);
    for (const auto* t : {&flushed, &cold}) {
      EXPECT_EQ(t->status, TrialStatus::ok) << layout << ": " << t->reason;
      EXPECT_LT(t->verify_error, 1e-5) << layout;
      EXPECT_EQ(t->time.repetitions, 10) << layout;
      EXPECT_GT(t->time.median_ms, 0) << layout;
    }
    std::cout << "512^3 " << layout << ": " << r.copies << " copies of " << r.set_bytes
              << " bytes; cuBLAS " << cublas_flush.median_ms << " ms flushed, "
              << cublas_cold.median_ms << " ms rotated; tuned " << flushed.time.median_ms
              << " ms flushed, " << cold.time.median_ms << " ms rotated\n";
  }
  // A larger problem: fewer copies, still at least two.
  set_problem("4096x4096x4096", "NN");
  const auto big = worker_->rotation();
  EXPECT_EQ(big.copies, rotation_copies(big.l2_bytes, big.set_bytes));
  EXPECT_GE(big.copies, 2);
  EXPECT_GT(worker_->time_cublas(3, L2Mode::rotate).median_ms, 0);
  EXPECT_EQ(worker_->restarts(), 0);
}

// A config whose launch the rotation must not break: TMA (tensor maps encoded per copy) on sm_90,
// and PACK (panels packed from each copy).
TEST_F(PeersTest, TmaAndPackedConfigsRunRotated) {
  std::vector<std::string> configs = {"wt_64x128x16_w32x64_wn1_t4x4_n128_mb2_s2_p4_g8_o1_x1"};
  if (worker_->info().fingerprint.cc_major == 9)
    configs.push_back("wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o3_m1");
  for (const char* layout : {"NN", "TT"}) {
    const auto p = set_problem("1024x768x512", layout);
    for (const auto& name : configs) {
      auto req = request(name, p);
      req.l2 = L2Mode::rotate;
      const auto t = worker_->run_trial(req, 60s);
      EXPECT_EQ(t.status, TrialStatus::ok) << name << " " << layout << ": " << t.reason;
      EXPECT_LT(t.verify_error, 1e-5) << name << " " << layout;
      EXPECT_GT(t.time.median_ms, 0) << name << " " << layout;
    }
  }
  EXPECT_EQ(worker_->restarts(), 0);
}

// What `bench` does for one shape: every side, both ways, in interleaved rounds.
TEST_F(PeersTest, RetimeGivesEverySideFlushedAndCold) {
  Problem p = parse_shape("1023x777x513");
  p.layout = "NT";
  const auto cfg = test::config(test::kSeed);
  const auto comp = compiler_->compile(cfg, p.layout, kernel_vec_loads(p));
  ASSERT_EQ(comp.status, TrialStatus::ok) << comp.reason;
  RetimeOptions o;
  o.seed = 11;
  o.cublaslt = true;
  o.cublas_tf32 = true;
  o.flush = o.rotate = true;
  const auto m = retime(*worker_, comp, cfg, p, o);
  ASSERT_EQ(m.status, TrialStatus::ok) << m.reason;
  EXPECT_LT(m.verify_error, 1e-5);
  for (const auto* t : {&m.tuned, &m.cublas, &m.cublaslt, &m.cublas_tf32, &m.tuned_cold,
                        &m.cublas_cold, &m.cublaslt_cold, &m.cublas_tf32_cold}) {
    EXPECT_GT(t->median_ms, 0);
    EXPECT_EQ(t->repetitions, o.repetitions);
  }
  EXPECT_TRUE(m.tf32_timed);
  EXPECT_GE(m.tf32_error_ratio, 0);
  EXPECT_TRUE(m.tf32_reason.empty()) << m.tf32_reason;
  EXPECT_TRUE(m.lt_searched);
  EXPECT_GT(m.lt_algos, 0);
  EXPECT_FALSE(m.lt_algo.empty());
  EXPECT_TRUE(m.lt_reason.empty()) << m.lt_reason;
  EXPECT_EQ(m.rotate_copies, worker_->rotation().copies);
  EXPECT_GE(m.rotate_copies, 2);

  // cuBLAS alone, flushed alone: nothing else is timed.
  o.cublaslt = o.rotate = o.cublas_tf32 = false;
  const auto plain = retime(*worker_, comp, cfg, p, o);
  ASSERT_EQ(plain.status, TrialStatus::ok) << plain.reason;
  EXPECT_GT(plain.tuned.median_ms, 0);
  EXPECT_GT(plain.cublas.median_ms, 0);
  EXPECT_FALSE(plain.lt_searched);
  EXPECT_EQ(plain.cublaslt.median_ms, 0);
  EXPECT_FALSE(plain.tf32_timed);
  EXPECT_EQ(plain.cublas_tf32.median_ms, 0);
  EXPECT_EQ(plain.tf32_error_ratio, -1);
  EXPECT_EQ(plain.tuned_cold.median_ms, 0);
  EXPECT_EQ(plain.rotate_copies, 0);

  // Rotated alone: the cold sides only, cuBLASLt searched in that timing.
  o.cublaslt = o.rotate = true;
  o.flush = false;
  const auto cold = retime(*worker_, comp, cfg, p, o);
  ASSERT_EQ(cold.status, TrialStatus::ok) << cold.reason;
  EXPECT_EQ(cold.tuned.median_ms, 0);
  EXPECT_GT(cold.tuned_cold.median_ms, 0);
  EXPECT_GT(cold.cublaslt_cold.median_ms, 0);
  EXPECT_EQ(worker_->restarts(), 0);
}

}  // namespace
}  // namespace sgt::gpu
