// Serve mode of libsgemm_tune_preload, on the CPU: the plan and its reader, the rules that send a
// call to cuBLAS, the translation of every call into the launch the serve library gets, the
// summary's counts, and `sgemm-tune capture` / `serve`. A stand-in serve library
// (fake_serve.cpp) takes the place of the one that launches kernels, so that the path from an
// intercepted call to a launch runs without a GPU; the real serve library is loaded too, and on a
// machine without a driver must send every call to cuBLAS.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve_plan.hpp"
#include "sha256.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using namespace sgt::preload;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Whether `part` is `whole` with some lines left out, in the same order.
bool is_subsequence(const std::vector<std::string>& part, const std::vector<std::string>& whole) {
  size_t at = 0;
  for (const auto& line : whole) {
    if (at < part.size() && part[at] == line) ++at;
  }
  return at == part.size();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

constexpr const char* kDevice = "Test GPU@sm_90/132";
const std::string kHash(64, 'a');

PlanKernel kernel(const std::string& config, bool tma, const std::string& cubin) {
  PlanKernel k;
  k.config_name = config;
  k.family = tma ? "ws_tma" : "warptile";
  k.tensor_maps = tma;
  k.arch = tma ? "sm_90a" : "sm_90";
  k.instance = "NN";
  k.cubin = cubin;
  k.sha256 = kHash;
  k.kernel = "_Z6kernel";
  k.reduce = "_Z6reduce";
  k.BM = 128, k.BN = 64, k.BK = 16, k.block = tma ? 384 : 128, k.smem = tma ? 100000 : 0;
  return k;
}

PlanProblem problem(long long M, long long N, long long K, const std::string& layout, int kernel,
                    const std::string& config) {
  PlanProblem p;
  p.M = M, p.N = N, p.K = K, p.layout = layout;
  p.align = tuned_align(M, N, K, layout);
  p.kernel = kernel;
  p.config_name = config;
  if (kernel < 0) p.refused = "compilation: spills";
  p.median_ms = 0.01;
  p.ratio = 1.2;
  return p;
}

// The plan of the tests: capture_app's `mixed` problems partly tuned, a pointer kernel (0) and a
// TMA kernel (1), on the device kDevice.
ServePlan test_plan(const std::string& dir = "/nonexistent") {
  ServePlan plan;
  plan.writer = "test";
  plan.source = "test";
  plan.kernels = {kernel("wt_a", false, dir + "/a.cubin"), kernel("tma_b", true, dir + "/b.cubin")};
  PlanGpu g;
  g.name = "Test GPU";
  g.cc_major = 9, g.cc_minor = 0, g.sm_count = 132;
  g.problems = {problem(32, 64, 16, "NN", 0, "wt_a"),    problem(50, 100, 30, "NT", 0, "wt_a"),
                problem(256, 128, 64, "NN", -1, "wt_a"), problem(40, 48, 24, "NN", 1, "tma_b"),
                problem(10, 20, 30, "NT", 1, "tma_b"),   problem(80, 72, 88, "NN", 0, "wt_a"),
                problem(6, 5, 7, "TN", 0, "wt_a")};
  plan.gpus = {g};
  return plan;
}

// ---------------------------------------------------------------------------------------------
// Pure parts.

// The wrapper over libcrypto gives the standard digests, in lower-case hex.
TEST(ServeSha256, KnownDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Why ServePlan::parse refuses the plan `j` once `edit` has changed it; "accepted" if it does not.
std::string parse_error(json j, const std::function<void(json&)>& edit) {
  edit(j);
  try {
    (void)ServePlan::parse(j.dump());
  } catch (const std::runtime_error& e) {
    return std::string(e.what());
  }
  return std::string("accepted");
}

// A kernel with the wave-aware tail (TAIL 1) makes the plan format 2: its tile carries the tail
// and GROUP_M, read back as written; a plan without one is still written as format 1, which the
// release before reads. A tail in a format-1 plan, or with SPLIT_K, is refused.
TEST(ServePlan, ATailKernelIsWrittenAsFormatTwoAndReadBack) {
  ServePlan plan = test_plan();
  EXPECT_EQ(json::parse(plan.render())["format_version"], 1);
  EXPECT_FALSE(json::parse(plan.render())["kernels"][0]["tile"].contains("tail"));
  plan.kernels[0].tail = true;
  plan.kernels[0].group_m = 8;
  const json j = json::parse(plan.render());
  EXPECT_EQ(j["format_version"], 2);
  EXPECT_EQ(j["kernels"][0]["tile"]["tail"], 1);
  EXPECT_EQ(j["kernels"][0]["tile"]["group_m"], 8);
  const ServePlan back = ServePlan::parse(plan.render());
  EXPECT_TRUE(back.kernels[0].tail);
  EXPECT_EQ(back.kernels[0].group_m, 8);
  EXPECT_FALSE(back.kernels[1].tail);
  EXPECT_EQ(back.render(), plan.render());
  const auto refusal = [&](const std::function<void(json&)>& edit) { return parse_error(j, edit); };
  EXPECT_NE(refusal([](json& e) { e["format_version"] = 1; }).find("format_version 1"),
            std::string::npos);
  EXPECT_NE(refusal([](json& e) { e["kernels"][0]["tile"]["split_k"] = 4; }).find("split_k 4"),
            std::string::npos);
  EXPECT_NE(refusal([](json& e) { e["kernels"][0]["tile"]["tail"] = 2; }).find("'tail'"),
            std::string::npos);
}

TEST(ServePlan, RoundTripsAndRefusesWhatIsWrong) {
  const ServePlan plan = test_plan();
  const ServePlan back = ServePlan::parse(plan.render());
  EXPECT_EQ(back.render(), plan.render());
  ASSERT_EQ(back.gpus.size(), 1u);
  EXPECT_EQ(back.gpus[0].problems.size(), 7u);
  EXPECT_EQ(back.gpus[0].problems[2].refused, "compilation: spills");
  EXPECT_TRUE(back.kernels[1].tensor_maps);

  auto refused = [&](const std::function<void(json&)>& edit) {
    return parse_error(json::parse(plan.render()), edit);
  };
  EXPECT_NE(refused([](json& j) { j["format"] = "sgemm-tune-table"; }).find("not a serve plan"),
            std::string::npos);
  EXPECT_NE(refused([](json& j) { j["format_version"] = 3; }).find("format_version 3"),
            std::string::npos);
  EXPECT_NE(refused([](json& j) { j["kernels"][0]["sha256"] = "abc"; }).find("sha256"),
            std::string::npos);
  EXPECT_NE(refused([](json& j) { j["kernels"][0]["cubin"] = "rel/a.cubin"; }).find("absolute"),
            std::string::npos);
  EXPECT_NE(refused([](json& j) { j["kernels"][0]["tile"]["BM"] = 0; }).find("'BM' = 0"),
            std::string::npos);
  EXPECT_NE(refused([](json& j) { j["kernels"][0]["launch"] = "magic"; }).find("launch"),
            std::string::npos);
  EXPECT_NE(refused([](json& j) { j["gpus"][0]["problems"][0]["kernel"] = 2; }).find("'kernel'"),
            std::string::npos);
  EXPECT_NE(refused([](json& j) {
              j["gpus"][0]["problems"][0]["config_name"] = "x";
            }).find("but kernel 0 is wt_a"),
            std::string::npos);
  EXPECT_NE(refused([](json& j) {
              j["gpus"][0]["problems"][1] = j["gpus"][0]["problems"][0];
            }).find("listed twice"),
            std::string::npos);
  EXPECT_NE(refused([](json& j) { j["gpus"][0]["problems"][0]["layout"] = "NX"; }).find("layout"),
            std::string::npos);
  EXPECT_NE(refused([](json& j) { j["gpus"][0].erase("sm_count"); }).find("sm_count"),
            std::string::npos);
  EXPECT_NE(refused([](json& j) {
              j["kernels"][0]["tile"]["split_k"] = 2, j["kernels"][0]["reduce"] = "";
            }).find("without a reduction"),
            std::string::npos);
  try {
    (void)ServePlan::parse("{");
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not JSON"), std::string::npos);
  }
}

TEST(ServePlan, DeviceKeysParse) {
  const auto d = parse_device(kDevice);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "Test GPU");
  EXPECT_EQ(d->cc_major, 9);
  EXPECT_EQ(d->cc_minor, 0);
  EXPECT_EQ(d->sm_count, 132);
  EXPECT_EQ(parse_device("NVIDIA A100-SXM4-80GB@sm_80/108")->name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(parse_device("GPU@sm_120/170")->cc_major, 12);
  for (const char* bad : {"Test GPU", "@sm_90/132", "X@sm_9/1", "X@sm_90", "X@sm_9a/132", "X@90/1"})
    EXPECT_FALSE(parse_device(bad)) << bad;
}

CallFacts sgemm_facts(char ta, char tb, long long m, long long n, long long k, long long lda,
                      long long ldb, long long ldc) {
  CallFacts f;
  f.entry = "cublasSgemm_v2";
  f.call.transa = ta, f.call.transb = tb;
  f.call.m = m, f.call.n = n, f.call.k = k;
  f.call.lda = lda, f.call.ldb = ldb, f.call.ldc = ldc;
  f.math_mode = "default";
  f.pointer_mode = "host";
  f.alpha = ScalarClass::One;
  f.beta = ScalarClass::Zero;
  return f;
}

TEST(ServeRules, EachRuleSendsTheCallToCublas) {
  const auto base = sgemm_facts('N', 'N', 64, 32, 16, 64, 16, 64);
  EXPECT_FALSE(precheck(base));
  auto with = [&](const std::function<void(CallFacts&)>& edit) {
    CallFacts f = base;
    edit(f);
    return precheck(f);
  };
  EXPECT_EQ(with([](CallFacts& f) { f.math_mode = "tf32"; }), FallThrough::Tf32);
  EXPECT_EQ(with([](CallFacts& f) { f.math_mode = "tensor_op"; }), FallThrough::Reduced);
  EXPECT_EQ(with([](CallFacts& f) { f.math_mode = "bf16x9"; }), FallThrough::Emulated);
  EXPECT_EQ(with([](CallFacts& f) { f.compute = "32F_FAST_TF32"; }), FallThrough::Tf32);
  EXPECT_EQ(with([](CallFacts& f) { f.compute = "32F_FAST_16BF"; }), FallThrough::Reduced);
  EXPECT_EQ(with([](CallFacts& f) { f.compute = "64F"; }), FallThrough::NotFp32);
  EXPECT_EQ(with([](CallFacts& f) { f.a_type = "f16"; }), FallThrough::NotFp32);
  EXPECT_EQ(with([](CallFacts& f) { f.compute = "32F_PEDANTIC"; }), std::nullopt);
  EXPECT_EQ(with([](CallFacts& f) { f.math_mode = "pedantic"; }), std::nullopt);
  EXPECT_EQ(with([](CallFacts& f) { f.batch = 3, f.batch_kind = "strided"; }),
            FallThrough::Batched);
  EXPECT_EQ(with([](CallFacts& f) { f.batch_kind = "pointer_array"; }), FallThrough::Batched);
  EXPECT_EQ(with([](CallFacts& f) { f.batch_kind = "strided"; }), std::nullopt);  // batch of 1
  EXPECT_EQ(with([](CallFacts& f) {
              f.pointer_mode = "device", f.alpha = f.beta = ScalarClass::Unknown;
            }),
            FallThrough::DevicePointers);
  EXPECT_EQ(with([](CallFacts& f) { f.alpha = ScalarClass::Zero; }), FallThrough::AlphaZero);
  EXPECT_EQ(with([](CallFacts& f) { f.alpha = ScalarClass::Unknown; }), FallThrough::Invalid);
  EXPECT_EQ(with([](CallFacts& f) { f.beta = ScalarClass::Other; }), std::nullopt);
  // cuBLASLt.
  auto lt = [&](const std::function<void(CallFacts&)>& edit) {
    return with([&](CallFacts& f) {
      f.entry = "cublasLtMatmul", f.lt = true, f.math_mode = "", f.compute = "32F";
      f.epilogue = "default";
      edit(f);
    });
  };
  EXPECT_EQ(lt([](CallFacts&) {}), std::nullopt);
  EXPECT_EQ(lt([](CallFacts& f) { f.epilogue = "bias"; }), FallThrough::Epilogue);
  EXPECT_EQ(
      lt([](CallFacts& f) { f.alpha = ScalarClass::Vector, f.pointer_mode = "device_vector"; }),
      FallThrough::AlphaVector);
  EXPECT_EQ(lt([](CallFacts& f) { f.c_matches_d = false; }), FallThrough::CNotD);
  EXPECT_EQ(lt([](CallFacts& f) { f.in_place = false, f.beta = ScalarClass::One; }),
            FallThrough::CNotD);
  EXPECT_EQ(lt([](CallFacts& f) { f.in_place = false; }), std::nullopt);  // beta = 0: D only
  // What the capture could not describe.
  EXPECT_EQ(precheck(base, NotRecorded::UnsupportedOp), FallThrough::UnsupportedOp);
  EXPECT_EQ(precheck(base, NotRecorded::LtDescriptor), FallThrough::LtDescriptor);
  EXPECT_EQ(precheck(base, NotRecorded::LtOrder), FallThrough::LtOrder);
  EXPECT_EQ(precheck(base, NotRecorded::Empty), FallThrough::Empty);
  EXPECT_EQ(precheck(base, NotRecorded::Internal), FallThrough::Internal);
}

TEST(ServeRules, ThePlanDecidesByDeviceProblemAndAlignment) {
  const ServePlan plan = test_plan();
  const DeviceIdentity dev = *parse_device(kDevice);
  const std::uintptr_t A = 0x1000, B = 0x2000, C = 0x3000;
  // cublasSgemm(N, N, m 64, n 32, k 16): 32x64x16 NN, tuned with kernel 0.
  auto f = sgemm_facts('N', 'N', 64, 32, 16, 64, 16, 64);
  auto d = decide(plan, &dev, f, std::nullopt, A, B, C);
  ASSERT_FALSE(d.why) << describe(*d.why);
  EXPECT_EQ(d.kernel_index, 0);
  EXPECT_EQ(d.kernel->config_name, "wt_a");
  EXPECT_EQ(d.problem->M, 32);
  EXPECT_TRUE(d.gemm.swapped);
  // No device, another device, another SM count: cuBLAS.
  EXPECT_EQ(decide(plan, nullptr, f, std::nullopt, A, B, C).why, FallThrough::NoDevice);
  for (const char* other : {"Other GPU@sm_90/132", "Test GPU@sm_90/114", "Test GPU@sm_80/132"}) {
    const auto od = *parse_device(other);
    EXPECT_EQ(decide(plan, &od, f, std::nullopt, A, B, C).why, FallThrough::GpuNotInPlan) << other;
  }
  // The operand that is sgemm-tune's A is the call's B: a B whose rows are not 16-byte aligned
  // breaks A's class; an A so placed breaks B's.
  d = decide(plan, &dev, f, std::nullopt, A, B + 4, C);
  EXPECT_EQ(d.why, FallThrough::Alignment);
  EXPECT_EQ(call_align(d.gemm, B + 4, A, C).text(), "A4 B16 C16");
  EXPECT_EQ(decide(plan, &dev, f, std::nullopt, A + 8, B, C).why, FallThrough::Alignment);
  EXPECT_EQ(decide(plan, &dev, f, std::nullopt, A, B, C + 4).why, FallThrough::Alignment);
  // A padded leading dimension keeps the class when it keeps rows 16-byte aligned.
  EXPECT_FALSE(
      decide(plan, &dev, sgemm_facts('N', 'N', 64, 32, 16, 128, 20, 68), std::nullopt, A, B, C)
          .why);
  EXPECT_EQ(
      decide(plan, &dev, sgemm_facts('N', 'N', 64, 32, 16, 64, 18, 64), std::nullopt, A, B, C).why,
      FallThrough::Alignment);
  // Other sizes or layouts: not tuned; a winner without a kernel; invalid and empty calls.
  EXPECT_EQ(
      decide(plan, &dev, sgemm_facts('T', 'N', 64, 32, 16, 16, 16, 64), std::nullopt, A, B, C).why,
      FallThrough::NotTuned);
  EXPECT_EQ(
      decide(plan, &dev, sgemm_facts('N', 'N', 128, 256, 64, 128, 64, 128), std::nullopt, A, B, C)
          .why,
      FallThrough::KernelUnavailable);
  EXPECT_EQ(
      decide(plan, &dev, sgemm_facts('N', 'N', 64, 32, 16, 63, 16, 64), std::nullopt, A, B, C).why,
      FallThrough::Invalid);  // lda < m: cuBLAS reports it
  EXPECT_EQ(
      decide(plan, &dev, sgemm_facts('N', 'N', -1, 32, 16, 64, 16, 64), std::nullopt, A, B, C).why,
      FallThrough::Invalid);
  EXPECT_EQ(
      decide(plan, &dev, sgemm_facts('N', 'N', 64, 32, 16, 64, 16, 64), NotRecorded::Empty, A, B, C)
          .why,
      FallThrough::Empty);
  EXPECT_EQ(decide(plan, &dev, sgemm_facts('N', 'N', 64, 32, 16, 1LL << 31, 16, 64), std::nullopt,
                   A, B, C)
                .why,
            FallThrough::TooLarge);
  // A TMA winner reads A and B by tensor copies: only 16-byte rows (10x20x30 NT has K = 30).
  CallFacts r = sgemm_facts('N', 'T', 10, 20, 30, 30, 30, 20);
  r.lt = true, r.entry = "cublasLtMatmul", r.epilogue = "default", r.compute = "32F";
  r.call.order_a = r.call.order_b = r.call.order_c = Order::Row;
  d = decide(plan, &dev, r, std::nullopt, A, B, C);
  EXPECT_EQ(d.why, FallThrough::Alignment);
  ASSERT_TRUE(d.problem);
  EXPECT_EQ(d.problem->config_name, "tma_b");
  EXPECT_FALSE(d.gemm.swapped);
}

// A winner cuBLAS beat when it was tuned is not served unless the plan's min_ratio lets it; the
// bound is written with the plan and read back.
TEST(ServeRules, AWinnerSlowerThanCublasIsNotServed) {
  ServePlan plan = test_plan();
  const DeviceIdentity dev = *parse_device(kDevice);
  const std::uintptr_t A = 0x1000, B = 0x2000, C = 0x3000;
  const auto f = sgemm_facts('N', 'N', 64, 32, 16, 64, 16, 64);  // 32x64x16 NN, ratio 1.2
  EXPECT_FALSE(decide(plan, &dev, f, std::nullopt, A, B, C).why);
  plan.gpus[0].problems[0].ratio = 0.97;
  EXPECT_EQ(decide(plan, &dev, f, std::nullopt, A, B, C).why, FallThrough::Slower);
  EXPECT_STREQ(describe(FallThrough::Slower), "slower than cuBLAS when tuned");
  plan.min_ratio = 0.95;
  EXPECT_FALSE(decide(plan, &dev, f, std::nullopt, A, B, C).why);
  plan.min_ratio = 0;
  EXPECT_FALSE(decide(plan, &dev, f, std::nullopt, A, B, C).why);
  plan.min_ratio = 0.99;
  const ServePlan back = ServePlan::parse(plan.render());
  EXPECT_EQ(back.min_ratio, 0.99);
  EXPECT_EQ(decide(back, &dev, f, std::nullopt, A, B, C).why, FallThrough::Slower);
  auto j = json::parse(plan.render());
  j["min_ratio"] = -1;
  EXPECT_THROW(ServePlan::parse(j.dump()), std::runtime_error);
}

// Every op combination and order: decide() finds the tuned problem to_row_major names, with the
// operands swapped exactly when C is column-major.
TEST(ServeRules, EveryOpCombinationFindsItsProblem) {
  const DeviceIdentity dev = *parse_device(kDevice);
  for (const char ta : {'N', 'T'}) {
    for (const char tb : {'N', 'T'}) {
      for (const Order oc : {Order::Col, Order::Row}) {
        for (const Order oab : {Order::Col, Order::Row}) {
          CallFacts f = sgemm_facts(ta, tb, 24, 40, 8, 0, 0, 0);
          f.call.order_a = f.call.order_b = oab;
          f.call.order_c = oc;
          // Each operand as stored (before op): its rows in column-major order, its columns in
          // row-major order are the leading dimension.
          const long long rows_a = ta == 'N' ? 24 : 8, cols_a = ta == 'N' ? 8 : 24;
          const long long rows_b = tb == 'N' ? 8 : 40, cols_b = tb == 'N' ? 40 : 8;
          f.call.lda = oab == Order::Col ? rows_a : cols_a;
          f.call.ldb = oab == Order::Col ? rows_b : cols_b;
          f.call.ldc = oc == Order::Col ? 24 : 40;
          if (oc == Order::Row || oab == Order::Row) {
            f.lt = true, f.entry = "cublasLtMatmul", f.epilogue = "default", f.compute = "32F";
          }
          const RowMajorGemm g = to_row_major(f.call);
          ServePlan plan = test_plan();
          plan.gpus[0].problems = {problem(g.M, g.N, g.K, g.layout(), 0, "wt_a")};
          const auto d = decide(plan, &dev, f, std::nullopt, 0x1000, 0x2000, 0x3000);
          const std::string what = std::string{ta, tb} + (oc == Order::Col ? " C col" : " C row") +
                                   (oab == Order::Col ? " AB col" : " AB row");
          EXPECT_FALSE(d.why) << what << ": " << describe(*d.why);
          EXPECT_EQ(d.gemm.swapped, oc == Order::Col) << what;
          EXPECT_EQ(d.gemm.M * d.gemm.N, 24 * 40) << what;
        }
      }
    }
  }
}

TEST(ServeStats, TheSummaryCountsEachReason) {
  const ServePlan plan = test_plan();
  ServeStats s;
  s.served(&plan.gpus[0].problems[0]);
  s.served(&plan.gpus[0].problems[0]);
  s.served(&plan.gpus[0].problems[1]);
  s.fell_through(FallThrough::Tf32);
  s.fell_through(FallThrough::Batched);
  s.fell_through(FallThrough::Batched);
  EXPECT_EQ(s.summary(6, false),
            "sgemm-tune preload: serve: 6 GEMM calls, 3 served by tuned kernels (2 problems), 3 "
            "passed to cuBLAS: 2 batched, 1 TF32 allowed");
  EXPECT_EQ(s.summary(6, true).substr(0, 61),
            "sgemm-tune preload: serve (dry run): 6 GEMM calls, 3 would be");
  s.verified(true, 1e-7);
  s.verified(false, 0.5);
  s.failed_late();
  EXPECT_NE(s.summary(6, false).find("; 1 failed after launching (reported to the caller); "
                                     "verified 2 against cuBLAS: 1 mismatched (largest relative "
                                     "error 0.5)"),
            std::string::npos)
      << s.summary(6, false);
  for (int i = 0; i < static_cast<int>(FallThrough::kCount); ++i) {
    EXPECT_NE(std::string(key(static_cast<FallThrough>(i))), "");
    EXPECT_NE(std::string(describe(static_cast<FallThrough>(i))), "");
  }
}

// ---------------------------------------------------------------------------------------------
// In a process: capture_app against the stand-in cuBLAS, the preload in serve mode.

struct AppRun {
  int exit_code = -1;
  std::string out, err, log, served;  // statuses; the library's lines; cuBLAS's log; launches
};

AppRun run_app(const test::TempDir& dir, const std::string& tag, const std::string& args,
               const std::map<std::string, std::string>& env, bool preload = true) {
  const auto log = dir.path() / (tag + ".log");
  const auto served = dir.path() / (tag + ".served");
  const auto err = dir.path() / (tag + ".err");
  std::string cmd = "env -u LD_PRELOAD";
  for (const char* v : {"SGT_PRELOAD", "SGT_CAPTURE", "SGT_CAPTURE_INTERVAL", "SGT_CAPTURE_TIMING",
                        "SGT_CAPTURE_MAX_PROBLEMS", "SGT_PRELOAD_LOG", "SGT_SERVE", "SGT_SERVE_LIB",
                        "SGT_SERVE_DRY_RUN", "SGT_SERVE_DEVICE", "SGT_SERVE_VERIFY",
                        "SGT_FAKE_SERVE_DEVICE", "SGT_FAKE_SERVE_STATUS", "SGT_PRELOAD_LIB"}) {
    cmd += std::string(" -u ") + v;
  }
  cmd += " SGT_FAKE_CUBLAS_LOG=" + test::sh_quote(log);
  cmd += " SGT_FAKE_SERVE_LOG=" + test::sh_quote(served);
  if (preload) cmd += " LD_PRELOAD=" + test::sh_quote(SGT_PRELOAD_LIB);
  for (const auto& [k, v] : env) cmd += " " + k + "=" + test::sh_quote(v);
  cmd += " " + test::sh_quote(SGT_PRELOAD_APP) + " " + args + " 2>" + test::sh_quote(err);
  const auto r = test::run_shell(cmd, false);
  return {r.exit_code, r.out, slurp(err), slurp(log), slurp(served)};
}

// The plan file of the tests, its kernels' binaries named in `dir`.
fs::path write_plan(const test::TempDir& dir) {
  const auto p = dir.path() / "plan.json";
  std::ofstream(p) << test_plan(dir.path().string()).render();
  return p;
}

std::map<std::string, std::string> fake_serving(const fs::path& plan) {
  return {{"SGT_SERVE", plan.string()},
          {"SGT_SERVE_LIB", SGT_FAKE_SERVE_LIB},
          {"SGT_FAKE_SERVE_DEVICE", kDevice}};
}

// The 26 calls of `mixed`: 6 served, the others to cuBLAS for these reasons.
constexpr const char* kMixedCounts =
    "26 GEMM calls, 6 served by tuned kernels (4 problems), 20 passed to cuBLAS: 4 not tuned, 3 "
    "TF32 allowed, 3 alignment unlike the tuned one, 2 batched, 1 not FP32, 1 cuBLASLt epilogue, "
    "1 alpha and beta in device memory, 1 alpha = 0, 1 D is not C, 1 empty (m, n or k is 0), 1 "
    "invalid arguments, 1 winner without a kernel";

TEST(PreloadServe, ServedCallsReachTheServeLibraryTranslated) {
  test::TempDir dir;
  const auto plain = run_app(dir, "plain", "mixed", {}, false);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto run = run_app(dir, "serve", "mixed", fake_serving(write_plan(dir)));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Every status as cuBLAS's would have been (the stand-in answers success to valid calls).
  EXPECT_EQ(run.out, plain.out);
  EXPECT_EQ(run.err, std::string("sgemm-tune preload: serve: ") + kMixedCounts + "\n");
  // The served calls never reached cuBLAS: its log is the plain one without them.
  const auto plain_calls = lines(plain.log), served_calls = lines(run.log);
  EXPECT_EQ(plain_calls.size() - served_calls.size(), 6u);
  EXPECT_TRUE(is_subsequence(served_calls, plain_calls)) << run.log;
  // What the serve library got: row-major problems, the call's B as A (C column-major), each
  // operand with its leading dimension, alpha and beta's values, the handle's stream.
  const std::string a = (dir.path() / "a.cubin").string(), b = (dir.path() / "b.cubin").string();
  const std::vector<std::string> expected = {
      "launch kernel=0 cubin=" + a +
          " 32x64x16 ta=0 tb=0 alpha=1 beta=0 A=0x2000 lda=16 B=0x1000 ldb=64 C=0x3000 ldc=64 "
          "stream=0x0",
      "launch kernel=0 cubin=" + a +
          " 32x64x16 ta=0 tb=0 alpha=1 beta=0 A=0x2000 lda=16 B=0x1000 ldb=64 C=0x3000 ldc=64 "
          "stream=0x0",
      "launch kernel=0 cubin=" + a +
          " 32x64x16 ta=0 tb=0 alpha=1 beta=0 A=0x2000 lda=16 B=0x1000 ldb=64 C=0x3000 ldc=64 "
          "stream=0x0",
      // cublasSgemm_v2_64(N, T, 5, 6, 7): 6x5x7 TN, A = the call's B (stored 6 x 7, used ^T).
      "launch kernel=0 cubin=" + a +
          " 6x5x7 ta=1 tb=0 alpha=1 beta=0 A=0x2000 lda=6 B=0x1000 ldb=5 C=0x3000 ldc=5 "
          "stream=0x0",
      // A strided batch of one: one GEMM.
      "launch kernel=0 cubin=" + a +
          " 80x72x88 ta=0 tb=0 alpha=1 beta=0 A=0x2000 lda=88 B=0x1000 ldb=72 C=0x3000 ldc=72 "
          "stream=0x0",
      // cuBLASLt column-major NN, the TMA kernel.
      "launch kernel=1 cubin=" + b +
          " 40x48x24 ta=0 tb=0 alpha=1 beta=0 A=0x2000 lda=24 B=0x1000 ldb=48 C=0x3000 ldc=48 "
          "stream=0x0",
  };
  EXPECT_EQ(lines(run.served), expected);
}

TEST(PreloadServe, StreamAlignmentAndLtOutputs) {
  test::TempDir dir;
  const auto plain = run_app(dir, "plain", "serve", {}, false);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto run = run_app(dir, "serve", "serve", fake_serving(write_plan(dir)));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  EXPECT_EQ(run.err,
            "sgemm-tune preload: serve: 4 GEMM calls, 2 served by tuned kernels (2 problems), 2 "
            "passed to cuBLAS: 1 D is not C, 1 alignment unlike the tuned one\n");
  const auto served = lines(run.served);
  ASSERT_EQ(served.size(), 2u) << run.served;
  // The handle's stream, alpha 3 and beta 0.5 as given.
  EXPECT_NE(served[0].find("32x64x16 ta=0 tb=0 alpha=3 beta=0.5 A=0x2000 lda=16 B=0x1000 ldb=64 "
                           "C=0x3000 ldc=64 stream=0x5150"),
            std::string::npos)
      << served[0];
  // cuBLASLt with D apart from C and beta 0: D is the output, C never read.
  EXPECT_NE(served[1].find("40x48x24 ta=0 tb=0 alpha=1 beta=0 A=0x2000 lda=24 B=0x1000 ldb=48 "
                           "C=0x4000 ldc=48"),
            std::string::npos)
      << served[1];
}

TEST(PreloadServe, DryRunDecidesButCublasRunsEveryCall) {
  test::TempDir dir;
  const auto plain = run_app(dir, "plain", "mixed", {}, false);
  const auto plan = write_plan(dir);
  const auto run = run_app(dir, "dry", "mixed",
                           {{"SGT_SERVE", plan.string()},
                            {"SGT_SERVE_DRY_RUN", "1"},
                            {"SGT_SERVE_DEVICE", kDevice},
                            {"SGT_PRELOAD_LOG", "debug"}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  EXPECT_EQ(run.log, plain.log);  // cuBLAS ran every call, as given
  EXPECT_EQ(run.served, "");
  EXPECT_NE(run.err.find(std::string("serve (dry run): ") +
                         std::string(kMixedCounts).replace(17, 6, "would be served")),
            std::string::npos)
      << run.err;
  // The seam: which config each problem would run, and why the others would not.
  for (const char* line :
       {"would serve cublasSgemm_v2 32x64x16 NN with wt_a (dry run: cuBLAS runs it)",
        "would serve cublasLtMatmul 40x48x24 NN with tma_b",
        "would serve cublasGemmStridedBatchedEx 80x72x88 NN with wt_a",
        "would serve cublasSgemm_v2_64 6x5x7 TN with wt_a",
        "to cuBLAS: cublasSgemm_v2 50x100x30 NT: alignment unlike the tuned one",
        "to cuBLAS: cublasLtMatmul 10x20x30 NT: alignment unlike the tuned one",
        "to cuBLAS: cublasGemmEx 256x128x64 NN: winner without a kernel",
        "to cuBLAS: cublasSgemm_v2 32x64x16 NN: TF32 allowed",
        "to cuBLAS: cublasSgemmBatched 32x32x32 NN: batched"}) {
    EXPECT_NE(run.err.find(line), std::string::npos) << line << "\n" << run.err;
  }
  // Each decision said once, however many calls made it.
  EXPECT_EQ(run.err.find("32x64x16 NN with wt_a"), run.err.rfind("32x64x16 NN with wt_a"));
}

TEST(PreloadServe, EveryFailureFallsThroughToCublas) {
  test::TempDir dir;
  const auto plain = run_app(dir, "plain", "mixed", {}, false);
  const auto plan = write_plan(dir);
  struct Case {
    std::string tag;
    std::map<std::string, std::string> env;
    std::string said;  // a line of the library's, or "" for none
    std::string counts;
  };
  auto serving = fake_serving(plan);
  auto no_device = serving;
  no_device.erase("SGT_FAKE_SERVE_DEVICE");
  auto other_gpu = serving;
  other_gpu["SGT_FAKE_SERVE_DEVICE"] = "Other GPU@sm_90/132";
  auto load_failed = serving;
  load_failed["SGT_FAKE_SERVE_STATUS"] = "load_failed";
  auto refused = serving;
  refused["SGT_FAKE_SERVE_STATUS"] = "launch_failed";
  auto capturing = serving;
  capturing["SGT_FAKE_SERVE_STATUS"] = "capturing";
  auto missing_lib = serving;
  missing_lib["SGT_SERVE_LIB"] = (dir.path() / "missing.so").string();
  auto bad_plan = serving;
  std::ofstream(dir.path() / "table.json") << R"({"format": "sgemm-tune-table"})";
  bad_plan["SGT_SERVE"] = (dir.path() / "table.json").string();
  // The real serve library, in a process without a GPU driver: no current device.
  auto real = serving;
  real.erase("SGT_SERVE_LIB");
  const std::vector<Case> cases = {
      {"no-device", no_device, "", "14 no current device"},
      {"other-gpu", other_gpu, "", "14 no winners for this GPU"},
      {"load-failed", load_failed, "not loaded (its calls go to cuBLAS): the stand-in says",
       "6 kernel load failed"},
      {"refused", refused, "refused (cuBLAS runs it): the stand-in says", "6 launch failed"},
      {"capturing", capturing, "", "6 stream capturing a graph"},
      {"missing-lib", missing_lib, "cannot load the serve library", "26 serve plan or library"},
      {"bad-plan", bad_plan, "not a serve plan", "26 serve plan or library"},
      {"real-no-driver", real, "", "14 no current device"},
  };
  for (const auto& c : cases) {
    const auto run = run_app(dir, c.tag, "mixed", c.env);
    EXPECT_EQ(run.exit_code, 0) << c.tag << ": " << run.err;
    EXPECT_EQ(run.out, plain.out) << c.tag;
    EXPECT_EQ(run.log, plain.log) << c.tag;  // every call reached cuBLAS as given
    EXPECT_NE(run.err.find(" 0 served by tuned kernels"), std::string::npos) << c.tag << run.err;
    EXPECT_NE(run.err.find(c.counts), std::string::npos) << c.tag << ": " << run.err;
    if (!c.said.empty()) EXPECT_NE(run.err.find(c.said), std::string::npos) << c.tag << run.err;
  }
}

TEST(PreloadServe, AFailureAfterLaunchIsReportedNotRetried) {
  test::TempDir dir;
  auto env = fake_serving(write_plan(dir));
  env["SGT_FAKE_SERVE_STATUS"] = "late";
  const auto run = run_app(dir, "late", "serve", env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The first call (served) returns CUBLAS_STATUS_EXECUTION_FAILED (13): C may be half written,
  // and cuBLAS must not compute beta * C on it again.
  EXPECT_EQ(lines(run.out)[0], "sgemm 13");
  EXPECT_EQ(run.log.find("cublasSgemm_v2 h1 0 0 64 32 16 alpha=0x1.8p+1"), std::string::npos)
      << run.log;
  EXPECT_NE(run.err.find("2 failed after launching (reported to the caller)"), std::string::npos)
      << run.err;
}

TEST(PreloadServe, VerifyRunsCublasIntoTheCopy) {
  test::TempDir dir;
  auto env = fake_serving(write_plan(dir));
  env["SGT_SERVE_VERIFY"] = "1";
  const auto run = run_app(dir, "verify", "serve", env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The reference is the same call with its output redirected: C for the classic entry, D (and C
  // when in place) for cuBLASLt.
  EXPECT_NE(run.log.find("cublasSgemm_v2 h1 0 0 64 32 16 alpha=0x1.8p+1 0x1000 64 0x2000 16 "
                         "beta=0x1p-1 0xc0000 64"),
            std::string::npos)
      << run.log;
  // cuBLASLt writing D apart from C (beta 0): D redirected, C as given.
  EXPECT_NE(run.log.find("beta=0x0p+0 0x3000 [t0 o0 48x40 ld48 b1 m0 s0] 0xc0000"),
            std::string::npos)
      << run.log;
  EXPECT_NE(run.err.find("verified 2 against cuBLAS: 0 mismatched"), std::string::npos) << run.err;
}

TEST(PreloadServe, ThreadsAreServedAndCountedExactly) {
  test::TempDir dir;
  ServePlan plan = test_plan(dir.path().string());
  // The threads' problems: 16 x m x 16 NN for m = 16 .. 80, 144 .. 208.
  plan.gpus[0].problems.clear();
  for (int t = 0; t < 8; ++t) {
    for (int i = 0; i < 2; ++i) {
      const int m = 16 * (1 + (t / 2) + i * 8);
      if (t % 2 == 0) plan.gpus[0].problems.push_back(problem(16, m, 16, "NN", 0, "wt_a"));
    }
  }
  const auto path = dir.path() / "plan.json";
  std::ofstream(path) << plan.render();
  const auto run = run_app(dir, "threads", "threads 8 200", fake_serving(path));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err,
            "sgemm-tune preload: serve: 1600 GEMM calls, 1600 served by tuned kernels (8 "
            "problems), 0 passed to cuBLAS\n");
  EXPECT_EQ(lines(run.served).size(), 1600u);
  EXPECT_EQ(run.log.find("cublasSgemm_v2"), std::string::npos);
}

TEST(PreloadServe, TheKillSwitchWins) {
  test::TempDir dir;
  const auto plain = run_app(dir, "plain", "mixed", {}, false);
  auto env = fake_serving(write_plan(dir));
  env["SGT_PRELOAD"] = "off";
  const auto run = run_app(dir, "off", "mixed", env);
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, plain.out);
  EXPECT_EQ(run.log, plain.log);
  EXPECT_EQ(run.served, "");
  EXPECT_EQ(run.err, "");
}

TEST(PreloadServe, ServingAndCapturingTogether) {
  test::TempDir dir;
  auto env = fake_serving(write_plan(dir));
  const auto cap = dir.path() / "cap.json";
  env["SGT_CAPTURE"] = cap.string();
  const auto run = run_app(dir, "both", "mixed", env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("sgemm-tune preload: serve: 26 GEMM calls"), std::string::npos);
  EXPECT_NE(run.err.find("24 recorded as 21 problems"), std::string::npos) << run.err;
  EXPECT_TRUE(fs::exists(cap));
}

// ---------------------------------------------------------------------------------------------
// The commands.

std::string cli() {
  return test::sh_quote(test::cli_path());
}

TEST(PreloadCli, CaptureRunsTheApplicationRecordingAndPassesItsStatus) {
  test::TempDir dir;
  const auto cap = dir.path() / "cap.json";
  auto r =
      test::run_shell("cd " + test::sh_quote(dir.path()) + " && env -u SGT_PRELOAD_LIB " +
                      "SGT_FAKE_CUBLAS_LOG=" + test::sh_quote(dir.path() / "log") + " " + cli() +
                      " capture --out cap.json -- " + test::sh_quote(SGT_PRELOAD_APP) + " mixed");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("26 GEMM calls, 24 recorded as 21 problems in '" + cap.string()),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("next: sgemm-tune tune --shapes cap.json"), std::string::npos) << r.out;
  EXPECT_EQ(json::parse(slurp(cap))["problems"].size(), 21u);
  // The environment the application gets, and its exit status as ours.
  r = test::run_shell(cli() + " capture --timing --interval 0 --preload-lib " +
                          test::sh_quote(SGT_PRELOAD_LIB) + " --out " +
                          test::sh_quote(dir.path() / "x.json") +
                          " -- sh -c 'echo \"[$LD_PRELOAD][$SGT_CAPTURE][$SGT_CAPTURE_TIMING]"
                          "[$SGT_CAPTURE_INTERVAL]\"; exit 7'",
                      false);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.out, "[" + std::string(SGT_PRELOAD_LIB) + "][" + (dir.path() / "x.json").string() +
                       "][1][0]\n");
  r = test::run_shell(cli() + " capture -- sh -c 'kill -TERM $$'");
  EXPECT_EQ(r.exit_code, 128 + 15) << r.out;
}

TEST(PreloadCli, ClearErrorsBeforeTheApplicationRuns) {
  test::TempDir dir;
  auto r = test::run_shell(cli() + " capture -- " + test::sh_quote(dir.path() / "no-such-app"));
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.out.find("cannot run '" + (dir.path() / "no-such-app").string() +
                       "': No such file or directory"),
            std::string::npos)
      << r.out;
  std::ofstream(dir.path() / "plain.txt") << "not a program";
  r = test::run_shell(cli() + " capture -- " + test::sh_quote(dir.path() / "plain.txt"));
  EXPECT_EQ(r.exit_code, 126) << r.out;
  r = test::run_shell(cli() + " capture --preload-lib " + test::sh_quote(dir.path() / "no.so") +
                      " -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("is not a file"), std::string::npos) << r.out;
  r = test::run_shell("SGT_PRELOAD_LIB=" + test::sh_quote(dir.path() / "no.so") + " " + cli() +
                      " capture -- true");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("SGT_PRELOAD_LIB="), std::string::npos) << r.out;
  r = test::run_shell(cli() + " capture");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  // serve: one source, an application, a plan that reads.
  r = test::run_shell(cli() + " serve -- true");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  const auto marker = dir.path() / "ran";
  r = test::run_shell(cli() + " serve --plan " + test::sh_quote(dir.path() / "plain.txt") +
                      " -- touch " + test::sh_quote(marker));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("not JSON"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(marker));
  std::ofstream(dir.path() / "old.json")
      << R"({"format": "sgemm-tune-table", "format_version": 6, "gpus": []})";
  r = test::run_shell(cli() + " serve --table " + test::sh_quote(dir.path() / "old.json") +
                      " -- touch " + test::sh_quote(marker));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("format 6"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(marker));
  r = test::run_shell(cli() + " serve --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--table"), std::string::npos);
  EXPECT_NE(r.out.find("Exit status"), std::string::npos);
}

TEST(PreloadCli, ServeSetsUpTheEnvironmentAndPassesTheStatus) {
  test::TempDir dir;
  const auto plan = write_plan(dir);
  auto r = test::run_shell(cli() + " serve --plan " + test::sh_quote(plan) +
                               " --dry-run --verify --preload-log debug --serve-lib " +
                               test::sh_quote(SGT_FAKE_SERVE_LIB) +
                               " -- sh -c 'echo \"[$SGT_SERVE][$SGT_SERVE_LIB][$SGT_SERVE_DRY_RUN]"
                               "[$SGT_SERVE_VERIFY][$SGT_PRELOAD_LOG]\"; exit 3'",
                           false);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "[" + plan.string() + "][" + SGT_FAKE_SERVE_LIB + "][1][1][debug]\n");
  // The real libraries, the stand-in cuBLAS, a dry run on the assumed device.
  r = test::run_shell("SGT_SERVE_DEVICE='" + std::string(kDevice) +
                      "' SGT_FAKE_CUBLAS_LOG=" + test::sh_quote(dir.path() / "log") + " " + cli() +
                      " serve --dry-run --plan " + test::sh_quote(plan) + " -- " +
                      test::sh_quote(SGT_PRELOAD_APP) + " mixed");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("26 GEMM calls, 6 would be served by tuned kernels (4 problems)"),
            std::string::npos)
      << r.out;
}

// A table whose kernel sources are not today's: every winner stays in the plan without a kernel,
// the reason said (nothing compiled).
TEST(PreloadCli, ServePreparesAPlanFromATable) {
  test::TempDir dir;
  const json table = {{"format", "sgemm-tune-table"},
                      {"format_version", 8},
                      {"kernel_hashes", {{"warptile", std::string(64, '0')}}},
                      {"gpus",
                       {{{"name", "Test GPU"},
                         {"cc_major", 9},
                         {"cc_minor", 0},
                         {"sm_count", 132},
                         {"shapes",
                          {{{"M", 32},
                            {"N", 64},
                            {"K", 16},
                            {"layout", "NN"},
                            {"dtype", "f32"},
                            {"config_name", test::kSeed},
                            {"config", test::config(test::kSeed)},
                            {"median_ms", 0.01},
                            {"ratio", 1.1}}}}}}}};
  std::ofstream(dir.path() / "table.json") << table.dump();
  const auto plan = dir.path() / "plan.json";
  auto r = test::run_shell(cli() + " serve --table " + test::sh_quote(dir.path() / "table.json") +
                           " --cache-dir " + test::sh_quote(dir.path() / "cache") +
                           " --prepare-only --write-plan " + test::sh_quote(plan));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("source changed since the table was exported"), std::string::npos) << r.out;
  const ServePlan p = ServePlan::parse(slurp(plan));
  ASSERT_EQ(p.gpus.size(), 1u);
  ASSERT_EQ(p.gpus[0].problems.size(), 1u);
  EXPECT_EQ(p.gpus[0].problems[0].kernel, -1);
  EXPECT_EQ(p.gpus[0].problems[0].align, tuned_align(32, 64, 16, "NN"));
  EXPECT_TRUE(p.kernels.empty());
  r = test::run_shell(cli() + " serve --table " + test::sh_quote(dir.path() / "table.json") +
                      " --gpu 'Another GPU' --prepare-only --write-plan " + test::sh_quote(plan));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("none of the GPUs asked for"), std::string::npos) << r.out;
  // A winner slower than cuBLAS when tuned: in the plan, without a kernel, and said why.
  json slower = table;
  slower["gpus"][0]["shapes"][0]["ratio"] = 0.9;
  std::ofstream(dir.path() / "slower.json") << slower.dump();
  r = test::run_shell(cli() + " serve --table " + test::sh_quote(dir.path() / "slower.json") +
                      " --cache-dir " + test::sh_quote(dir.path() / "cache") +
                      " --prepare-only --write-plan " + test::sh_quote(plan));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const ServePlan s = ServePlan::parse(slurp(plan));
  EXPECT_EQ(s.min_ratio, 1.0);
  ASSERT_EQ(s.gpus.at(0).problems.size(), 1u);
  EXPECT_EQ(s.gpus[0].problems[0].kernel, -1);
  EXPECT_NE(s.gpus[0].problems[0].refused.find("slower than cuBLAS when tuned (ratio 0.900"),
            std::string::npos)
      << s.gpus[0].problems[0].refused;
  r = test::run_shell(cli() + " serve --table " + test::sh_quote(dir.path() / "slower.json") +
                      " --min-ratio -1 --prepare-only --write-plan " + test::sh_quote(plan));
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

}  // namespace
}  // namespace sgt
