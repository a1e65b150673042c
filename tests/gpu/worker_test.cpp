// GPU tests (ctest label `gpu`): correctness of tuned kernels against cuBLAS, fault isolation of
// the worker process, NVRTC and nvcc instances agreeing, and an end-to-end tune with resume.
// Every test skips when no CUDA device is present.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>

#include <nvrtc.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <set>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "gpu_support.hpp"
#include "launch_plan.h"
#include "nvrtc_compiler.hpp"
#include "tune.hpp"
#include "edge_cases.hpp"
#include "sha256.hpp"
#include "test_support.hpp"
#include "worker_client.hpp"
#include "worker_evaluator.hpp"

namespace sgt::gpu {
namespace {

using namespace sgt::eval;
using namespace sgt::tune;

using namespace std::chrono_literals;

std::filesystem::path bin_dir() {
  return test::cli_path().parent_path();
}

struct CubinFile {
  std::filesystem::path path;
  std::string sha256;
  std::string kernel;
};

// Compiles a test-only kernel with NVRTC into a cubin file.
CubinFile compile_test_kernel(const std::string& source, const std::string& name,
                              const std::filesystem::path& dir, const std::string& arch) {
  nvrtcProgram prog;
  EXPECT_EQ(nvrtcCreateProgram(&prog, source.c_str(), "test.cu", 0, nullptr, nullptr),
            NVRTC_SUCCESS);
  const std::string a = "-arch=" + arch;
  const char* opts[] = {a.c_str()};
  const auto rc = nvrtcCompileProgram(prog, 1, opts);
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  std::string log(n, '\0');
  nvrtcGetProgramLog(prog, log.data());
  EXPECT_EQ(rc, NVRTC_SUCCESS) << log;
  nvrtcGetCUBINSize(prog, &n);
  std::string cubin(n, '\0');
  nvrtcGetCUBIN(prog, cubin.data());
  nvrtcDestroyProgram(&prog);
  CubinFile f{dir / (name + ".cubin"), sha256_hex(cubin), name};
  std::ofstream(f.path, std::ios::binary) << cubin;
  return f;
}

constexpr const char* kSignature =
    "(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, "
    "float beta, float* C, int ldc, int k_chunk, float* partial)";

// A plain one-thread-per-element NN GEMM over 16x16 tiles launched 1-D, as the worker launches a
// LaunchTile{16, 16, ...}: correct, or (read_c_always) reading C even when beta == 0, which the
// NaN-poisoned verification must catch, or (packed_c) writing C as if ldc == N, which the padded
// cases must catch.
std::string naive_kernel(const std::string& name, bool read_c_always, float scale = 1.0f,
                         bool packed_c = false) {
  return std::string("extern \"C\" __global__ void ") + name + kSignature + R"({
  const int grid_n = (N + 15) / 16;
  const int row = (blockIdx.x / grid_n) * 16 + threadIdx.x / 16;
  const int col = (blockIdx.x % grid_n) * 16 + threadIdx.x % 16;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(long long)row * lda + k] * B[(long long)k * ldb + col];
  acc *= )" +
         std::to_string(scale) + R"(f;
  float* c = &C[(long long)row * )" +
         (packed_c ? "N" : "ldc") + R"( + col];
  )" +
         (read_c_always ? "*c = alpha * acc + beta * *c;"
                        : "*c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;") +
         "\n}\n";
}

TrialRequest request_for(const CubinFile& f, int tile, unsigned block) {
  TrialRequest r;
  r.name = f.kernel;
  r.cubin_path = f.path.string();
  r.cubin_sha256 = f.sha256;
  r.kernel = f.kernel;
  r.tile = LaunchTile{tile, tile, 16, 1};
  r.block = block;
  r.repetitions = 3;
  return r;
}

class WorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    worker_ = std::make_unique<WorkerClient>(test::cli_path(), -1);
    compiler_ = std::make_unique<KernelCompiler>(
        tmp_.path() / "cache", CompileOptions{worker_->info().fingerprint.arch(), {}});
  }
  void set_problem(const std::string& shape, float alpha, float beta,
                   const std::string& layout = "NN", long long pad = 0, int offset = 0) {
    ProblemSetup s;
    s.problem = parse_shape(shape);
    s.problem.layout = layout;
    s.alpha = alpha;
    s.beta = beta;
    s.pad = pad;
    s.offset = offset;
    s.seed = 1234;
    s.cublas_repetitions = 3;
    const auto cublas = worker_->set_problem(s);
    EXPECT_GT(cublas.median_ms, 0);
    problem_ = s.problem;
  }
  TrialResponse run_config(const std::string& name, bool checksum = false, bool vec = true) {
    const auto cfg = from_name(name).value();
    EXPECT_TRUE(check(cfg).empty()) << name << " is not a valid config";
    const auto c = compiler_->compile(cfg, problem_.layout, vec);
    EXPECT_EQ(c.status, TrialStatus::ok) << c.reason;
    auto req = make_trial_request(c, cfg);
    req.checksum = checksum;
    return worker_->run_trial(req, 60s);
  }
  // Every edge case of the suite for `cfg`, compiled as `c` for `layout`, each expected to pass
  // (`what` names the run in a failure); how many ran.
  int expect_edge_cases_pass(const Compiled& c, const WarpTileConfig& cfg,
                             const std::string& layout, std::uint64_t seed,
                             const std::string& what) {
    Problem p;
    p.layout = layout;
    int n = 0;
    for (const auto& e : verify_edge_cases(c, cfg, p, *worker_, seed, 1e-4)) {
      EXPECT_TRUE(e.passed) << what << " " << describe(e) << " [" << e.label << "]: " << e.reason
                            << " error " << e.error;
      ++n;
    }
    return n;
  }

  test::TempDir tmp_;
  std::unique_ptr<WorkerClient> worker_;
  std::unique_ptr<KernelCompiler> compiler_;
  Problem problem_;
};

const char* kConfigs[] = {
    "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1",   // the seed's kernel 8
    "wt_64x64x8_w32x32_wn1_t4x4_n128_mb1",     // smallest tiles
    "wt_64x256x8_w32x128_wn1_t4x4_n128_mb1",   // 128 accumulators, 227 registers
    "wt_64x256x16_w64x32_wn4_t4x4_n256_mb2",   // MIN_BLOCKS = 2, 8 warps
    "wt_128x128x16_w64x64_wn2_t8x4_n128_mb1",  // 8x4 thread tile
    // The knobs past the seed: double buffer, padded As, grouped block order, split-K.
    "wt_64x256x16_w64x32_wn4_t4x4_n256_mb1_s2_p4_g8",
    "wt_128x128x8_w64x32_wn2_t4x4_n256_mb1_s2_k4",
    "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p4_g3_k3",
    "wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o1",     // the 4096^3 winner of 2026-11-29
    "wt_64x128x16_w64x16_wn2_t4x4_n256_mb1_s2_p4_g8_o1_b4",  // padded Bs (PAD_B)
    // Operands packed into panels (PACK), alone and with split-K: every layout and alignment
    // runs the TN float4 instance.
    "wt_64x128x16_w32x64_wn1_t4x4_n128_mb2_s2_p4_g8_o1_x1",
    "wt_128x128x8_w64x64_wn2_t8x4_n128_mb1_s2_p4_g8_k3_o1_x1",
    // C through shared memory where it cannot take float4s (STAGE_C): packed, split over K, and
    // single-buffered with a buffer that just holds every warp's rows.
    "wt_256x128x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o1_x1_c1",
    "wt_128x128x16_w64x32_wn2_t8x4_n256_mb1_s2_p4_g8_k4_o1_c1",
    "wt_64x64x8_w32x32_wn1_t4x4_n128_mb1_c1",
    // The serpentine outer products (FMA_ORDER 2, 3): the 4096^3 winner of 2026-12-01, and rows
    // walked back and forth over four sub-tiles along M.
    "wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o3",
    "wt_128x128x16_w64x64_wn2_t4x4_n128_mb1_s2_p4_g8_o2",
    // Family warptile_ring (sm_80+): the float4 instances copy by cp.async into a ring of STAGES
    // buffers (k-contiguous ones for an operand stored with k contiguous: A in NN and NT, B in NT
    // and TT), the scalar ones are the double-buffered twin; alone, split over K, and packed.
    "wr_128x64x16_w64x16_wn2_t4x4_n256_mb2_s3_p4_g8_o1_b4",
    "wr_64x64x16_w32x32_wn2_t4x4_n128_mb1_s4_p4_g8_k4_o1",
    "wr_64x128x16_w32x64_wn1_t4x4_n128_mb2_s3_p4_g8_k3_o1_x1",
    // Space thirds: block sides of 96 and 48, three 16-wide sub-tiles a warp (WNITER 3), three
    // warps across a side (192 threads), split over K.
    "wt_128x96x16_w64x48_wn3_t4x4_n128_mb2_s2_p4_g8_k4_o1",
    "wt_192x48x16_w96x16_wn1_t4x4_n192_mb2_s2_p4_g8_k2_o1",
};

const char* kLayouts[] = {"NN", "NT", "TN", "TT"};

// Every config in every layout, both instances (float4 and single-float main-loop loads), over the
// edge-shape suite: odd and degenerate shapes (1, tile - 3, tile + 1, primes, K % BK != 0, K = 0,
// M = 0, N = 0, skinny), padded and unaligned leading dimensions, offset pointers, alpha/beta
// combinations with beta = 0 over NaN, deep K for split-K.
// --gpu by name: a part of the device's name, in another case, picks that device and says so; a
// name no device has is refused naming the devices there are.
TEST(WorkerGpuByName, APartOfTheNamePicksTheDeviceAndNoneIsRefused) {
  SKIP_WITHOUT_GPU();
  WorkerClient first(test::cli_path(), -1);
  const auto& info = first.info();
  std::string part = info.fingerprint.name;
  if (part.rfind("NVIDIA ", 0) == 0) part = part.substr(7);  // "H200"
  for (auto& ch : part) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const auto devices = info.devices.size();
  bool unique = true;
  for (const auto& d : info.devices)
    if (d.at("index").get<int>() != info.device && d.at("name") == info.fingerprint.name)
      unique = false;
  if (unique) {
    WorkerClient named(test::cli_path(), GpuSelector{GpuSelector::Kind::name, -1, part});
    EXPECT_EQ(named.info().device, info.device);
    EXPECT_NE(named.info().why.find("named by --gpu '" + part + "'"), std::string::npos)
        << named.info().why;
  } else {
    try {
      WorkerClient named(test::cli_path(), GpuSelector{GpuSelector::Kind::name, -1, part});
      ADD_FAILURE() << "a name " << devices << " devices share was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("names several"), std::string::npos) << e.what();
    }
  }
  try {
    WorkerClient none(test::cli_path(), GpuSelector{GpuSelector::Kind::name, -1, "no-such-gpu-x"});
    ADD_FAILURE() << "a name no device has was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("names none"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(info.fingerprint.name), std::string::npos) << e.what();
  }
}

TEST_F(WorkerTest, EveryConfigAndLayoutPassesTheEdgeSuite) {
  set_problem("256x256x256", 1.0f, 0.0f);
  int cases = 0;
  for (const char* name : kConfigs) {
    const auto cfg = from_name(name).value();
    for (const char* layout : kLayouts) {
      for (const bool vec : {true, false}) {
        const std::string what =
            std::string(name) + " " + layout + (vec ? " float4 loads" : " scalar loads");
        const auto c = compiler_->compile(cfg, layout, vec);
        EXPECT_EQ(c.status, TrialStatus::ok) << what << ": " << c.reason;
        if (c.status != TrialStatus::ok) continue;
        const int n = expect_edge_cases_pass(c, cfg, layout, 99, what);
        EXPECT_GT(n, 0) << what;
        cases += n;
      }
    }
  }
  EXPECT_EQ(worker_->restarts(), 0);
  std::cout << "edge suite: " << cases << " cases\n";
}

// The tuned-shape path itself with a transposed layout, padded leading dimensions and offset
// pointers: verified against cuBLAS, then timed.
TEST_F(WorkerTest, TransposedPaddedOffsetProblemsMatchCublas) {
  for (const char* layout : kLayouts) {
    set_problem("640x384x520", 0.5f, 2.0f, layout, 3, 1);
    for (const char* name : {kConfigs[0], kConfigs[5], kConfigs[6], kConfigs[8]}) {
      for (const bool vec : {true, false}) {
        const auto r = run_config(name, false, vec);
        EXPECT_EQ(r.status, TrialStatus::ok)
            << name << " " << layout << " vec " << vec << ": " << r.reason;
        EXPECT_LT(r.verify_error, 1e-5) << name << " " << layout << " vec " << vec;
      }
    }
  }
}

// TMA = 1 configs (sm_90 only): the warp-specialised kernel in every layout, with its straight
// and staged (transposed) operands, BK 16 and 32, split-K, over its edge suite (the same shapes,
// rows the copies can read) and a padded, offset, non-unit alpha/beta problem; and a split-K run
// gives the same bits every time.
TEST_F(WorkerTest, TmaConfigsPassTheEdgeSuiteInEveryLayout) {
  if (worker_->info().fingerprint.cc_major != 9) GTEST_SKIP() << "TMA = 1 needs an sm_90 GPU";
  const char* configs[] = {
      "wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o3_m1",
      "wt_64x256x16_w64x32_wn4_t4x4_n256_mb1_s4_p4_g8_k8_o3_m1",
      "wt_128x256x16_w64x64_wn4_t4x4_n256_mb1_s3_p4_g8_o3_m1",
      "wt_128x128x32_w32x64_wn2_t4x4_n256_mb1_s3_p4_g8_k4_o3_m1",
      // Four consumer warps, two blocks on an SM (tma-small).
      "wt_64x64x32_w32x32_wn1_t4x4_n128_mb2_s3_p4_g8_o1_m1",
  };
  // In NT the producer transposes both operands, and the last two configs' producers spill there
  // (ptxas: 4-12 bytes): a recorded `spills`, never run. They are run in the other layouts.
  auto runs_in = [&](const char* name, const std::string& layout) {
    return layout != "NT" || std::string(name).rfind("wt_64x", 0) == 0;
  };
  int cases = 0;
  set_problem("256x256x256", 1.0f, 0.0f);
  for (const char* name : configs) {
    const auto cfg = from_name(name).value();
    ASSERT_TRUE(check(cfg).empty()) << name;
    for (const char* layout : kLayouts) {
      if (!runs_in(name, layout)) {
        EXPECT_EQ(compiler_->compile(cfg, layout, true).status, TrialStatus::spills) << name;
        continue;
      }
      const std::string what = std::string(name) + " " + layout;
      const auto c = compiler_->compile(cfg, layout, true);
      EXPECT_EQ(c.status, TrialStatus::ok) << what << ": " << c.reason;
      if (c.status != TrialStatus::ok) continue;
      cases += expect_edge_cases_pass(c, cfg, layout, 77, what);
    }
  }
  for (const char* layout : kLayouts) {
    // Rows padded by 4 (still whole float4s), pointers one float4 past alignment.
    set_problem("640x384x520", 0.5f, 2.0f, layout, 4, 4);
    for (const char* name : configs) {
      if (!runs_in(name, layout)) continue;
      const auto r = run_config(name);
      EXPECT_EQ(r.status, TrialStatus::ok) << name << " " << layout << ": " << r.reason;
      EXPECT_LT(r.verify_error, 1e-5) << name << " " << layout;
    }
  }
  set_problem("384x320x4100", 1.0f, 0.5f);
  std::set<std::string> sums;
  for (int run = 0; run < 3; ++run) {
    const auto r = run_config(configs[2], true);
    ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
    sums.insert(r.checksum);
  }
  EXPECT_EQ(sums.size(), 1u);
  EXPECT_EQ(worker_->restarts(), 0);
  std::cout << "TMA edge suite: " << cases << " cases\n";
}

// The split-TF32 wgmma family (tf32x3_wg; sm_90 only, precision class fp32-accurate): an unsplit
// config and split ones (SPLIT_K 2, 3 with ACC 6, 4), ACC 7 unsplit and split, one binary for
// every layout (the panels' NT), over the edge suite (its deep-K cases give every split several
// slices and a ragged last one; K < 32 runs the split entry on one split), on a padded, offset,
// non-unit alpha/beta problem in every layout, and at a shape of few tiles, where the splits are
// for (1536 x 256 x 6144: 24 tiles, 192 slices), with their error against FP64 measured
// (make_trial_request asks it of this class); a split run gives the same bits every time
// (sgemm_splitk_reduce sums in split order).
TEST_F(WorkerTest, Tf32x3WgSplitConfigsMatchCublasInEveryLayout) {
  if (worker_->info().fingerprint.cc_major != 9) GTEST_SKIP() << "tf32x3_wg needs an sm_90 GPU";
  // The last two: the BF16 split (FMA_ORDER 3), unsplit and split three ways.
  const char* configs[] = {"tw3_128x128x32_s3_g8",    "tw3_128x128x32_s3_g8_k2",
                           "tw3_128x128x32_s2_k3_o1", "tw3_128x128x32_s3_g8_k4",
                           "tw3_128x128x32_s3_g8_o2", "tw3_128x128x32_s2_k2_o2",
                           "tw3_128x128x64_s2_g8_o3", "tw3_128x128x64_s2_k3_o3"};
  int cases = 0;
  set_problem("256x256x256", 1.0f, 0.0f);
  for (const char* name : configs) {
    const auto cfg = from_name(name).value();
    ASSERT_TRUE(check(cfg).empty()) << name;
    for (const char* layout : kLayouts) {
      const std::string what = std::string(name) + " " + layout;
      const auto c = compiler_->compile(cfg, layout, true);
      ASSERT_EQ(c.status, TrialStatus::ok) << what << ": " << c.reason;
      EXPECT_EQ(c.reduce_lowered_name.empty(), false) << what;
      cases += expect_edge_cases_pass(c, cfg, layout, 55, what);
    }
  }
  // A correct result either way; whether it is as accurate as cuBLAS FP32 is the accuracy
  // check's verdict (measured on the H200: ACC 6 split three ways at K = 520, 1.15x cuBLAS's
  // error, and ACC 3 at 1536 x 256 x 6144, 1.17x, are `inaccurate`, never served).
  const auto correct = [](const TrialResponse& r, double tolerance, const std::string& what) {
    EXPECT_TRUE(r.status == TrialStatus::ok || r.status == TrialStatus::inaccurate)
        << what << ": " << r.reason;
    EXPECT_LT(r.verify_error, tolerance) << what;
    EXPECT_GE(r.error_ratio, 0.0) << what;  // measured
    EXPECT_EQ(r.status == TrialStatus::inaccurate, r.error_ratio > kAccurateErrorRatioMax)
        << what << ": error ratio " << r.error_ratio;
  };
  for (const char* layout : kLayouts) {
    set_problem("640x384x520", 0.5f, 2.0f, layout, 3, 1);
    for (const char* name : configs)
      correct(run_config(name), 1e-5, std::string(name) + " " + layout);
  }
  set_problem("1536x256x6144", 1.0f, 0.5f, "NT");
  for (const char* name : configs) {
    std::set<std::string> sums;
    for (int run = 0; run < 3; ++run) {
      const auto r = run_config(name, true);
      correct(r, 1e-4, name);  // the tune's tolerance; K = 6144
      sums.insert(r.checksum);
    }
    EXPECT_EQ(sums.size(), 1u) << name;
  }
  EXPECT_EQ(worker_->restarts(), 0);
  std::cout << "tf32x3_wg edge suite: " << cases << " cases\n";
}

// The wave-aware tail (TAIL 1): problems whose tiles leave a few past the last full wave of this
// GPU's SMs run them as a second launch split over K; the result matches cuBLAS in every layout
// with odd edges, leading dimensions and offsets, and is the same bits every run.
TEST_F(WorkerTest, Tf32x3WgTailConfigsMatchCublasInEveryLayout) {
  if (worker_->info().fingerprint.cc_major != 9) GTEST_SKIP() << "tf32x3_wg needs an sm_90 GPU";
  const int sms = worker_->info().fingerprint.sm_count;
  const char* configs[] = {"tw3_128x128x32_s3_g8_o2_v1", "tw3_128x128x32_s2_o1_v1",
                           "tw3_128x128x64_s2_g8_o3_v1"};
  // 20 x 20 block rows and columns less a few: the SMs' whole waves and a few tiles more.
  const int grid = 20, tiles = grid * grid;
  ASSERT_GT(tiles % sms, 0) << sms << " SMs take 400 tiles in whole waves";
  for (const char* layout : kLayouts) {
    const int M = grid * 128 - 37, N = grid * 128 - 5, K = 1001;
    set_problem(std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K), 0.5f, 2.0f,
                layout, 3, 1);
    for (const char* name : configs) {
      const auto cfg = from_name(name).value();
      const auto plan = sgt_kernel::plan_split_call(128, 128, 1, M, N, K, false, false, sms, true,
                                                    cfg.BK, true, cfg.GROUP_M);
      EXPECT_GT(plan.tail.blocks, 0) << name << " has no tail on " << sms << " SMs";
      const auto r = run_config(name);
      // Correct in every case; accurate is the accuracy check's verdict.
      EXPECT_TRUE(r.status == TrialStatus::ok || r.status == TrialStatus::inaccurate)
          << name << " " << layout << ": " << r.reason;
      EXPECT_LT(r.verify_error, 1e-5) << name << " " << layout;
    }
  }
  set_problem("2560x2560x2560", 1.0f, 0.5f, "TT");
  for (const char* name : configs) {
    std::set<std::string> sums;
    for (int run = 0; run < 3; ++run) {
      const auto r = run_config(name, true);
      ASSERT_TRUE(r.status == TrialStatus::ok || r.status == TrialStatus::inaccurate)
          << name << ": " << r.reason;
      EXPECT_LT(r.verify_error, 1e-4) << name;
      EXPECT_GE(r.error_ratio, 0.0) << name;
      sums.insert(r.checksum);
    }
    EXPECT_EQ(sums.size(), 1u) << name;
  }
  EXPECT_EQ(worker_->restarts(), 0);
}

// The FFMA families' wave-aware tail (TAIL 1, plan_call): the worker asks the runtime how many
// blocks of the loaded kernel an SM holds, and the tiles past the last full wave of them run as a
// second launch on their sub-problem, split over K. The result matches cuBLAS in every layout
// with alpha, beta, padded leading dimensions and offsets, and is the same bits every run.
TEST_F(WorkerTest, FfmaTailConfigsMatchCublasInEveryLayout) {
  const auto& fp = worker_->info().fingerprint;
  std::vector<std::string> configs = {"wt_64x128x16_w32x64_wn2_t4x4_n128_mb2_s2_p4_g8_o1_v1"};
  if (fp.cc_major >= 8) configs.push_back("wr_128x64x16_w32x64_wn2_t4x4_n128_mb1_s3_p4_g8_o1_v1");
  if (fp.cc_major == 9) {
    configs.push_back("wt_64x128x16_w64x32_wn2_t4x4_n128_mb3_s3_p4_g8_o1_x1_v1_m1");
    configs.push_back("wt_128x128x32_w64x32_wn2_t8x4_n256_mb1_s4_p4_g8_o3_v1_m1");
  }
  // 40 x 20 tiles of 64 x 128 (20 x 20 of 128 x 128) less a few rows and columns: on 132 SMs
  // with one to three blocks each, whole waves and 8 (4) tiles more.
  const int M = 2560 - 37, N = 2560 - 5, K = 1001;
  for (const auto& name : configs) {
    const auto cfg = from_name(name);
    ASSERT_TRUE(cfg.has_value()) << name;
    ASSERT_TRUE(check(*cfg).empty()) << name;
    EXPECT_EQ(cfg->TAIL, 1) << name;
    if (fp.sm_count == 132) {
      const sgt_kernel::CallTile t{cfg->BM, cfg->BN, cfg->BK, 1, false, false, true, 8};
      const auto plan = sgt_kernel::plan_call(t, M, N, K, false, false, nullptr, true, K, nullptr,
                                              true, N, 132, true, 1);
      EXPECT_GT(plan.tail.dims.grid_x, 0) << name << " has no tail on one block an SM";
    }
  }
  for (const char* layout : kLayouts) {
    set_problem(std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K), 0.5f, 2.0f,
                layout, 3, 1);
    for (const auto& name : configs) {
      const auto r = run_config(name);
      EXPECT_EQ(r.status, TrialStatus::ok) << name << " " << layout << ": " << r.reason;
      EXPECT_LT(r.verify_error, 1e-5) << name << " " << layout;
    }
  }
  set_problem("2560x2560x2560", 1.0f, 0.5f, "NN");
  for (const auto& name : configs) {
    std::set<std::string> sums;
    for (int run = 0; run < 3; ++run) {
      const auto r = run_config(name, true);
      ASSERT_EQ(r.status, TrialStatus::ok) << name << ": " << r.reason;
      EXPECT_LT(r.verify_error, 1e-5) << name;
      sums.insert(r.checksum);
    }
    EXPECT_EQ(sums.size(), 1u) << name;
  }
  EXPECT_EQ(worker_->restarts(), 0);
}

// A TMA = 1 config with PACK runs its TN instance on the panels the pack writes first: any
// layout, odd leading dimensions and offset pointers, over its edge suite (unrounded) and on the
// suite's odd shapes. The second config has four consumer warps and three blocks on an SM
// (tma-small).
TEST_F(WorkerTest, PackedTmaConfigsServeAnyOperands) {
  if (worker_->info().fingerprint.cc_major != 9) GTEST_SKIP() << "TMA = 1 needs an sm_90 GPU";
  const char* names[] = {"wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o3_x1_m1",
                         "wt_64x64x16_w32x32_wn1_t4x4_n128_mb3_s2_p4_g8_o1_x1_m1"};
  int cases = 0;
  for (const char* name : names) {
    const auto cfg = from_name(name).value();
    ASSERT_TRUE(check(cfg).empty()) << name;
    set_problem("256x256x256", 1.0f, 0.0f);
    for (const char* layout : kLayouts) {
      const auto c = compiler_->compile(cfg, layout, true);
      ASSERT_EQ(c.status, TrialStatus::ok) << name << ": " << c.reason;
      EXPECT_EQ(c.layout, "TN");
      EXPECT_FALSE(c.pack_lowered_name.empty());
      cases += expect_edge_cases_pass(c, cfg, layout, 55, std::string(name) + " " + layout);
    }
    for (const char* layout : kLayouts) {
      set_problem("1023x777x513", 0.5f, 2.0f, layout, 3, 1);
      const auto r = run_config(name);
      EXPECT_EQ(r.status, TrialStatus::ok) << name << " " << layout << ": " << r.reason;
      EXPECT_LT(r.verify_error, 1e-5) << name << " " << layout;
    }
  }
  EXPECT_EQ(worker_->restarts(), 0);
  std::cout << "packed TMA edge suite: " << cases << " cases\n";
}

// A TMA = 1 trial on operands its copies cannot read (lda not a multiple of 4) is a recorded
// failure with the reason, not a wrong result or a crash.
TEST_F(WorkerTest, TmaConfigOnUnreadableOperandsIsARecordedFailure) {
  if (worker_->info().fingerprint.cc_major != 9) GTEST_SKIP() << "TMA = 1 needs an sm_90 GPU";
  set_problem("256x256x255", 1.0f, 0.0f);  // lda = K = 255
  const auto r = run_config("wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o3_m1");
  EXPECT_NE(r.status, TrialStatus::ok);
  EXPECT_NE(r.reason.find("multiples of 4"), std::string::npos) << r.reason;
  EXPECT_EQ(worker_->restarts(), 0);
}

// Split-K sums the splits' partial products in split order, however the splits were scheduled,
// so every run gives the same bits: three split counts, four runs each, one checksum per config.
TEST_F(WorkerTest, SplitKGivesTheSameBitsEveryRun) {
  set_problem("384x320x4100", 1.0f, 0.5f);
  for (const char* name : {kConfigs[6], kConfigs[7], "wt_64x64x8_w32x32_wn1_t4x4_n128_mb1_k16"}) {
    std::set<std::string> sums;
    for (int run = 0; run < 4; ++run) {
      const auto r = run_config(name, true);
      ASSERT_EQ(r.status, TrialStatus::ok) << name << ": " << r.reason;
      EXPECT_LT(r.verify_error, 1e-5) << name;
      sums.insert(r.checksum);
    }
    EXPECT_EQ(sums.size(), 1u) << name;
  }
}

// The edge suite must be able to fail: a kernel that ignores ldc passes a packed shape and fails
// every padded case.
TEST_F(WorkerTest, EdgeSuiteCatchesAKernelThatIgnoresLdc) {
  set_problem("256x256x256", 1.0f, 0.0f);
  const auto arch = worker_->info().fingerprint.arch();
  const auto packed = compile_test_kernel(naive_kernel("naive_packed", false, 1.0f, true),
                                          "naive_packed", tmp_.path(), arch);
  WarpTileConfig tile = from_name(kConfigs[0]).value();
  auto req = request_for(packed, 16, 256);
  req.tolerance = 1e-4;
  const auto checks = worker_->verify_cases(req, edge_cases(tile, "NN"), 7, 60s);
  int padded_failed = 0, packed_passed = 0;
  for (const auto& e : checks) {
    const bool padded = e.ldc != std::max(1LL, e.problem.N);
    if (padded && e.problem.M > 1 && !e.passed) ++padded_failed;
    if (!padded && e.offset == 0 && e.passed) ++packed_passed;
  }
  EXPECT_GE(padded_failed, 2);
  EXPECT_GE(packed_passed, 5);
}

TEST_F(WorkerTest, ConfigsMatchCublasWithBetaZeroOverNaN) {
  set_problem("512x768x256", 1.0f, 0.0f);
  for (const char* name : kConfigs) {
    const auto r = run_config(name);
    EXPECT_EQ(r.status, TrialStatus::ok) << name << ": " << r.reason;
    EXPECT_GE(r.verify_error, 0.0) << name;
    EXPECT_LT(r.verify_error, 1e-5) << name;
    EXPECT_GT(r.time.median_ms, 0) << name;
  }
}

TEST_F(WorkerTest, ConfigsMatchCublasWithNonUnitAlphaBeta) {
  set_problem("256x512x1024", 1.5f, -0.75f);
  for (const char* name : kConfigs) {
    const auto r = run_config(name);
    EXPECT_EQ(r.status, TrialStatus::ok) << name << ": " << r.reason;
    EXPECT_LT(r.verify_error, 1e-5) << name;
  }
}

TEST_F(WorkerTest, VerificationCatchesAKernelThatReadsCWhenBetaIsZero) {
  set_problem("256x256x256", 1.0f, 0.0f);
  const auto arch = worker_->info().fingerprint.arch();
  const auto good =
      compile_test_kernel(naive_kernel("naive_ok", false), "naive_ok", tmp_.path(), arch);
  const auto bad =
      compile_test_kernel(naive_kernel("naive_reads_c", true), "naive_reads_c", tmp_.path(), arch);
  auto r = worker_->run_trial(request_for(good, 16, 256), 60s);
  EXPECT_EQ(r.status, TrialStatus::ok) << r.reason;
  EXPECT_LT(r.verify_error, 1e-5);
  r = worker_->run_trial(request_for(bad, 16, 256), 60s);
  EXPECT_EQ(r.status, TrialStatus::incorrect);
  EXPECT_NE(r.reason.find("NaN"), std::string::npos) << r.reason;
  // Finite but wrong by 0.1%: the relative L2 error must measure it, not just NaN.
  const auto off =
      compile_test_kernel(naive_kernel("naive_off", false, 1.001f), "naive_off", tmp_.path(), arch);
  r = worker_->run_trial(request_for(off, 16, 256), 60s);
  EXPECT_EQ(r.status, TrialStatus::incorrect);
  EXPECT_NEAR(r.verify_error, 1e-3, 1e-4) << r.reason;
}

// The accuracy of a kernel against FP64 (precision.hpp), asked of an FFMA kernel, which computes
// what cuBLAS FP32 does in another order: its error ratio is near 1 on the problem, measured on
// every stress case, and its binary's stress outcome is kept (the same answer again). A request
// that does not ask measures nothing.
TEST_F(WorkerTest, AnFfmaKernelsErrorAgainstFp64IsCuBlasFp32s) {
  struct Case {
    const char* config;
    const char* shape;
    const char* layout;
    float beta;
  };
  for (const Case& k : {Case{kConfigs[0], "512x384x1024", "NN", 0.0f},
                        Case{kConfigs[6], "384x512x2048", "TN", 0.5f}}) {
    SCOPED_TRACE(std::string(k.config) + " " + k.layout);
    set_problem(k.shape, 1.0f, k.beta, k.layout);
    const auto cfg = from_name(k.config).value();
    const auto c = compiler_->compile(cfg, problem_.layout, kernel_vec_loads(problem_));
    ASSERT_EQ(c.status, TrialStatus::ok) << c.reason;
    auto req = make_trial_request(c, cfg);
    EXPECT_FALSE(req.accuracy);  // a strict family: not asked by a tune
    auto r = worker_->run_trial(req, 60s);
    ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
    EXPECT_EQ(r.error_ratio, -1);
    EXPECT_EQ(r.stress_ratio, -1);

    req.accuracy = true;
    req.stress = accuracy_stress_cases(cfg, problem_);
    r = worker_->run_trial(req, 120s);
    std::cout << k.config << " " << k.shape << " " << k.layout << ": error ratio " << r.error_ratio
              << ", worst stress ratio " << r.stress_ratio << " (" << r.stress_case << "), "
              << to_string(r.status) << " " << r.reason << "\n";
    ASSERT_TRUE(r.status == TrialStatus::ok || r.status == TrialStatus::inaccurate) << r.reason;
    EXPECT_LT(r.verify_error, 1e-5);
    EXPECT_GE(r.error_ratio, 0.3);
    EXPECT_LE(r.error_ratio, 3.0);
    EXPECT_GT(r.stress_ratio, 0);
    EXPECT_TRUE(std::isfinite(r.stress_ratio));
    EXPECT_FALSE(r.stress_case.empty());
    if (r.status == TrialStatus::ok) {
      EXPECT_GT(r.time.median_ms, 0);
    } else {
      EXPECT_NE(r.reason.find("error ratio"), std::string::npos) << r.reason;
      EXPECT_EQ(r.time.median_ms, 0);  // an inaccurate candidate is not timed
    }
    const auto again = worker_->run_trial(req, 120s);
    EXPECT_EQ(again.stress_ratio, r.stress_ratio);
    EXPECT_EQ(again.stress_case, r.stress_case);
    // The norms are summed by atomics, in no fixed order: equal to rounding.
    EXPECT_NEAR(again.error_ratio, r.error_ratio, 1e-9 * r.error_ratio);
  }
}

TEST_F(WorkerTest, FaultingKernelIsRecordedAsCrashedAndTheWorkerReplaced) {
  set_problem("256x256x256", 1.0f, 0.0f);
  const auto arch = worker_->info().fingerprint.arch();
  const auto fault =
      compile_test_kernel(std::string("extern \"C\" __global__ void fault") + kSignature +
                              "{ float* volatile p = (float*)0x10; *p = alpha; }",
                          "fault", tmp_.path(), arch);
  auto r = worker_->run_trial(request_for(fault, 256, 32), 60s);
  EXPECT_EQ(r.status, TrialStatus::crashed);
  EXPECT_FALSE(r.reason.empty());
  EXPECT_EQ(worker_->restarts(), 1);
  // The replacement worker has the problem again and measures a good kernel.
  r = run_config(kConfigs[0]);
  EXPECT_EQ(r.status, TrialStatus::ok) << r.reason;
}

TEST_F(WorkerTest, HangingKernelTimesOutAndTheWorkerIsReplaced) {
  set_problem("256x256x256", 1.0f, 0.0f);
  const auto arch = worker_->info().fingerprint.arch();
  const auto hang = compile_test_kernel(
      std::string("extern \"C\" __global__ void hang") + kSignature +
          "{ volatile int spin = 1; while (spin) { if (alpha == 12345.0f) spin = 0; } }",
      "hang", tmp_.path(), arch);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = worker_->run_trial(request_for(hang, 256, 32), 3s);
  EXPECT_EQ(r.status, TrialStatus::timeout) << r.reason;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 120s);
  EXPECT_EQ(worker_->restarts(), 1);
  r = run_config(kConfigs[0]);
  EXPECT_EQ(r.status, TrialStatus::ok) << r.reason;
}

TEST_F(WorkerTest, TamperedCubinIsNotLoaded) {
  set_problem("256x256x256", 1.0f, 0.0f);
  const auto cfg = from_name(kConfigs[0]).value();
  const auto c = compiler_->compile(cfg);
  auto req = make_trial_request(c, cfg);
  req.cubin_sha256[0] = req.cubin_sha256[0] == '0' ? '1' : '0';
  const auto r = worker_->run_trial(req, 60s);
  EXPECT_EQ(r.status, TrialStatus::compile_failed);
  EXPECT_NE(r.reason.find("SHA-256"), std::string::npos) << r.reason;
}

TEST_F(WorkerTest, NvrtcAndNvccInstancesGiveIdenticalResults) {
  const auto nvcc_cubin = bin_dir() / "seed_nvcc.cubin";
  if (!std::filesystem::exists(nvcc_cubin)) GTEST_SKIP() << "no nvcc cubin at " << nvcc_cubin;
  set_problem("512x512x512", 1.0f, 0.0f);
  const auto cfg = from_name(kConfigs[0]).value();
  const auto c = compiler_->compile(cfg);
  ASSERT_EQ(c.status, TrialStatus::ok);
  auto req = make_trial_request(c, cfg);
  req.checksum = true;
  const auto nvrtc = worker_->run_trial(req, 60s);
  ASSERT_EQ(nvrtc.status, TrialStatus::ok) << nvrtc.reason;

  std::ifstream in(nvcc_cubin, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  req.cubin_path = nvcc_cubin.string();
  req.cubin_sha256 = sha256_hex(bytes);
  const auto nvcc = worker_->run_trial(req, 60s);
  ASSERT_EQ(nvcc.status, TrialStatus::ok) << nvcc.reason;
  EXPECT_FALSE(nvrtc.checksum.empty());
  EXPECT_EQ(nvrtc.checksum, nvcc.checksum);
}

TEST(TuneEndToEnd, QuickSpaceTunesThenResumesFromTheStoreAndCompileCache) {
  SKIP_WITHOUT_GPU();
  test::TempDir tmp;
  const std::string common =
      "tune --space quick --shape 1024x1024x512 --top 2 --reps 3 "
      "--final-reps 5 --json --db '" +
      (tmp.path() / "t.db").string() + "' --cache-dir '" + (tmp.path() / "cache").string() + "'";
  auto first = test::run_cli(common, false);
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const auto j1 = nlohmann::json::parse(first.out);
  const int candidates = j1.at("candidates");
  EXPECT_GT(candidates, 10);
  EXPECT_EQ(j1.at("resumed").get<int>(), 0);
  EXPECT_EQ(j1.at("compiled").get<int>() + j1.at("compile_cache_hits").get<int>(), candidates);
  ASSERT_FALSE(j1.at("finalists").empty());
  EXPECT_GT(j1.at("finalists")[0].at("ratio").get<double>(), 0.1);

  // The second run measures nothing again and compiles nothing.
  auto second = test::run_cli(common, false);
  ASSERT_EQ(second.exit_code, 0) << second.out;
  const auto j2 = nlohmann::json::parse(second.out);
  EXPECT_EQ(j2.at("resumed").get<int>(), candidates);
  EXPECT_EQ(j2.at("compiled").get<int>(), 0);

  // --retune measures again, but every binary comes from the compile cache.
  auto third = test::run_cli(common + " --retune", false);
  ASSERT_EQ(third.exit_code, 0) << third.out;
  const auto j3 = nlohmann::json::parse(third.out);
  EXPECT_EQ(j3.at("resumed").get<int>(), 0);
  EXPECT_EQ(j3.at("compiled").get<int>(), 0);
  EXPECT_EQ(j3.at("compile_cache_hits").get<int>(), candidates);
}

// Several GPUs in one tune, on whatever this machine has: two worker processes share device 0
// when there is one GPU (the mechanism is the same: one worker, baseline and cut per lane). The
// second lane's third candidate is swapped for the faulting kernel: that lane's worker is
// replaced, the other goes on, and every candidate is stored exactly once.
class MemoryStore final : public TrialStore {
 public:
  void begin(const GpuFingerprint&, const Problem&) override {}
  std::optional<Trial> finished(const std::string&, const std::string&) override {
    return std::nullopt;
  }
  void record(const Trial& t) override { trials.push_back(t); }
  std::vector<Trial> trials;
};

class FaultOnce final : public Evaluator {
 public:
  FaultOnce(Evaluator& inner, TrialRequest fault) : inner_(inner), fault_(std::move(fault)) {}
  const WorkerInfo& info() const override { return inner_.info(); }
  Compiled build(const WarpTileConfig& c, const Problem& p) override { return inner_.build(c, p); }
  TimeStats set_problem(const ProblemSetup& s) override { return inner_.set_problem(s); }
  TimeStats baseline(int r) override { return inner_.baseline(r); }
  TrialResponse run_trial(const TrialRequest& req, std::chrono::milliseconds t) override {
    if (++calls_ == 3) {
      faulted = req.name;
      return inner_.run_trial(fault_, t);
    }
    return inner_.run_trial(req, t);
  }
  std::vector<EdgeCheck> verify_cases(const TrialRequest& req, const std::vector<EdgeCheck>& c,
                                      std::uint64_t seed, std::chrono::milliseconds t) override {
    return inner_.verify_cases(req, c, seed, t);
  }
  int restarts() const override { return inner_.restarts(); }
  double elapsed_s() const override { return inner_.elapsed_s(); }
  EvaluatorTraits traits() const override { return inner_.traits(); }
  std::string faulted;

 private:
  Evaluator& inner_;
  TrialRequest fault_;
  int calls_ = 0;
};

TEST(SeveralGpus, AFaultOnOneLaneReplacesOnlyItsWorkerAndNothingIsMeasuredTwice) {
  SKIP_WITHOUT_GPU();
  test::TempDir tmp;
  WorkerClient w0(test::cli_path(), 0);
  const int second = w0.info().devices.size() > 1 ? 1 : 0;
  WorkerClient w1(test::cli_path(), second);
  WorkerEvaluator e0(w0, tmp.path() / "cache"), e1(w1, tmp.path() / "cache");
  const auto fault =
      compile_test_kernel(std::string("extern \"C\" __global__ void fault") + kSignature +
                              "{ float* volatile p = (float*)0x10; *p = alpha; }",
                          "fault", tmp.path(), w0.info().fingerprint.arch());
  auto freq = request_for(fault, 256, 32);
  FaultOnce lane1(e1, freq);
  TuneOptions o;
  o.problem = parse_shape("512x512x512");
  for (const char* name : kConfigs) o.candidates.push_back(from_name(name).value());
  o.top_k = 2;
  o.seed = 3;
  o.compile_threads = 2;
  MemoryStore store;
  const auto r = run_tune(o, Devices{{&e0, &lane1}, &e0}, store);
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].restarts, 0);
  EXPECT_EQ(r.devices[1].restarts, 1);
  EXPECT_TRUE(r.devices[1].lost.empty()) << r.devices[1].lost;
  EXPECT_EQ(r.devices[0].measured + r.devices[1].measured, static_cast<int>(o.candidates.size()));
  std::set<std::string> seen;
  for (const auto& t : store.trials) {
    if (t.phase == TrialPhase::final) continue;
    EXPECT_TRUE(seen.insert(t.config_name).second) << t.config_name << " measured twice";
    if (t.config_name == lane1.faulted) {
      EXPECT_EQ(t.status, TrialStatus::crashed) << t.reason;
    } else {
      EXPECT_EQ(t.status, TrialStatus::ok) << t.config_name << ": " << t.reason;
    }
  }
  EXPECT_EQ(seen.size(), o.candidates.size());
  ASSERT_FALSE(r.finalists.empty());
  EXPECT_EQ(r.worker.device, 0);
  EXPECT_GT(r.finalists.front().ratio, 0);
}

// `tune --gpu all`: a worker per device of this host, each measuring.
TEST(SeveralGpus, TuneOnAllDevicesMeasuresEachCandidateOnce) {
  SKIP_WITHOUT_GPU();
  test::TempDir tmp;
  const auto r = test::run_cli(
      "tune --gpu all --shape 512x512x512 --space quick --strategy "
      "exhaustive --top 2 --seed 4 --json --db " +
          test::sh_quote(tmp.path() / "t.db") + " --cache-dir " +
          test::sh_quote(tmp.path() / "cache"),
      false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  WorkerClient any(test::cli_path(), -1);
  EXPECT_EQ(j.at("devices").size(), any.info().devices.size());
  int sum = 0;
  for (const auto& d : j.at("devices")) sum += d.at("measured").get<int>();
  EXPECT_EQ(sum, j.at("measured").get<int>());
  EXPECT_EQ(j.at("measured"), j.at("candidates"));
}

}  // namespace
}  // namespace sgt::gpu
