// The dispatcher's choice and its explanation (sgemm_tuned/src/select.hpp), on the fixture table
// the build exported: exact, nearest, passed-over and default winners, layouts, and the calls that
// go to cuBLAS, do nothing, or are invalid. The kernel serves any shape, leading dimension and
// alignment, so only the device, the grid limit and missing kernel images send a call to cuBLAS.
// TMA = 1 winners serve the calls whose A and B their tensor copies can read, and pass the others
// on to the next winner.
#include <gtest/gtest.h>

#include "fixture_db.hpp"
#include "problem.hpp"
#include "select.hpp"
#include "sgemm_tuned_table.hpp"
#include "store.hpp"
#include "tma_cases.hpp"

namespace sgemm_tuned::detail {
namespace {

const DeviceIdentity kH200{"NVIDIA H200", 9, 0, 132};
const DeviceIdentity kA100{"NVIDIA A100-SXM4-80GB", 8, 0, 108};
const DeviceIdentity kOdd{sgt::test::kOddGpuName, 8, 6, 84};

Call packed(int M, int N, int K) {
  return {M, N, K, K, N, N, 0x10000, 0x20000, 0x30000};
}

std::string all_usable(int) {
  return {};
}

std::string config_name(const Choice& c) {
  return c.config >= 0 ? table::kConfigNames[c.config] : "";
}

bool contains(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

// Whether table config i is of the TMA-fed family (the table names each config's family).
bool tma_family(int i) {
  return std::string(table::kConfigFamilies[i]) == "ws_tma";
}

int config_index(const std::string& name) {
  for (int i = 0; i < table::kConfigCount; ++i) {
    if (name == table::kConfigNames[i]) return i;
  }
  return -1;
}

Call tma_call(const sgt::test::TmaCase& t) {
  Call c{t.M, t.N, t.K, t.lda, t.ldb, t.ldc, 0x10000, 0x20000, 0x30000};
  c.A += 4u * static_cast<unsigned>(t.a_offset);
  c.trans_a = t.trans_a;
  c.trans_b = t.trans_b;
  return c;
}

TEST(ExportDispatchSelect, TheFixtureTableIsTheOneTheseTestsAssume) {
  ASSERT_EQ(table::kGpuCount, 3);
  ASSERT_EQ(table::kConfigCount, 5);
  EXPECT_EQ(table::kConfigNames[0], sgt::test::kConfigA);
  EXPECT_EQ(table::kConfigNames[1], sgt::test::kConfigTmaSplit);
  EXPECT_EQ(table::kConfigNames[2], sgt::test::kConfigTma);
  EXPECT_EQ(table::kConfigNames[3], sgt::test::kConfigB);
  EXPECT_TRUE(tma_family(1));
  EXPECT_EQ(table::kConfigs[1].SPLIT_K, 4);
  EXPECT_TRUE(tma_family(2));
  EXPECT_FALSE(tma_family(3));
  EXPECT_STREQ(table::kConfigFamilies[3], "warptile");
  EXPECT_EQ(table::kConfigNames[4], sgt::test::kConfigTmaPack);
  EXPECT_TRUE(tma_family(4));
  EXPECT_EQ(table::kConfigs[4].PACK, 1);
  EXPECT_STREQ(table::kGpus[0].name, sgt::test::kOddGpuName.c_str());
  EXPECT_STREQ(table::kDatabase, SGT_EXPORT_FIXTURE_DB);
}

TEST(ExportDispatchSelect, ExactTunedShapeRunsItsWinner) {
  const auto call = packed(2048, 2048, 1024);
  const auto c = choose(kH200, call, all_usable);
  EXPECT_EQ(c.path, Path::kernel);
  EXPECT_EQ(c.source, Source::exact);
  EXPECT_EQ(config_name(c), sgt::test::kConfigB);
  EXPECT_TRUE(c.why.empty()) << c.why;
  const auto text = describe(kH200, call, c);
  EXPECT_TRUE(contains(text,
                       "sgemm NN 2048x2048x1024 (lda 1024, ldb 2048, ldc 2048) on NVIDIA H200 "
                       "(sm_90, 132 SMs): tuned kernel " +
                           sgt::test::kConfigB +
                           ", the winner of exactly this tuned shape (median 0.3000 ms, "
                           "110.0% of cuBLAS when tuned)"))
      << text;
  EXPECT_TRUE(contains(text, "exported by sgemm-tune " SGT_VERSION)) << text;
  EXPECT_TRUE(contains(text, "on 2025-01-01T12:00:00Z")) << text;
}

TEST(ExportDispatchSelect, UntunedShapeRunsTheNearestWinner) {
  const auto call = packed(4096, 4096, 2048);
  const auto c = choose(kH200, call, all_usable);
  EXPECT_EQ(c.path, Path::kernel);
  EXPECT_EQ(c.source, Source::nearest);
  EXPECT_EQ(table::kShapes[c.shape].K, 4096);
  EXPECT_DOUBLE_EQ(c.distance, 1.0);
  EXPECT_EQ(config_name(c), sgt::test::kConfigB);
  EXPECT_TRUE(contains(describe(kH200, call, c),
                       "the winner of the nearest tuned shape 4096x4096x4096 (log2 distance 1.000"))
      << describe(kH200, call, c);
}

TEST(ExportDispatchSelect, NearestShapeRunsEvenWhenItsTileDoesNotDivideTheCall) {
  // 2048x2048x1024 is nearest; its winner's BN = 128 does not divide N = 2112 (64 * 33), and the
  // kernel's edge tiles serve it anyway.
  const auto call = packed(2048, 2112, 1024);
  const auto c = choose(kH200, call, all_usable);
  EXPECT_EQ(c.path, Path::kernel);
  EXPECT_EQ(c.source, Source::nearest);
  EXPECT_EQ(table::kShapes[c.shape].M, 2048);
  EXPECT_EQ(table::kShapes[c.shape].N, 2048);
  EXPECT_EQ(config_name(c), sgt::test::kConfigB);
  EXPECT_TRUE(c.why.empty()) << c.why;
}

TEST(ExportDispatchSelect, AShapeNoTileDividesRunsATunedKernel) {
  const auto call = packed(1000, 1000, 1000);
  const auto c = choose(kH200, call, all_usable);
  EXPECT_EQ(c.path, Path::kernel);
  EXPECT_EQ(c.source, Source::nearest);
  EXPECT_EQ(table::kShapes[c.shape].M, 1024);  // 1024^3, the nearest
  EXPECT_EQ(config_name(c), sgt::test::kConfigA);
  const auto prime = choose(kH200, packed(127, 131, 137), all_usable);
  EXPECT_EQ(prime.path, Path::kernel);
}

// The loads are float4 for both operands or for neither, and an extent along which a float4 runs
// (N for B, M for A^T) must be a multiple of 4 as well as the leading dimension.
TEST(ExportDispatchSelect, AccessTextFollowsTheKernelsLoadRule) {
  auto call = packed(1000, 1000, 1000);
  EXPECT_EQ(access_text(call), "A float4, B float4, C float4 in whole tiles");
  call = packed(1000, 1002, 1000);
  call.ldb = 1004;  // B's rows aligned, but its last float4 of a row runs past N
  EXPECT_EQ(access_text(call),
            "A scalar (with the other operand), B scalar (N not a multiple of 4, along which B's "
            "float4s run), C scalar (leading dimension not a multiple of 4) in whole tiles");
  call = packed(1002, 1000, 1000);
  call.trans_a = true;
  call.lda = 1004;
  EXPECT_EQ(access_text(call),
            "A scalar (M not a multiple of 4, along which A^T's float4s run), B scalar (with the "
            "other operand), C float4 in whole tiles");
  call.trans_a = false;  // A's float4s now run along K: M no longer matters
  call.lda = 1000;
  EXPECT_EQ(access_text(call), "A float4, B float4, C float4 in whole tiles");
  call.B += 4;  // one float off 16 bytes
  EXPECT_EQ(access_text(call),
            "A scalar (with the other operand), B scalar (pointer not 16-byte aligned), C float4 "
            "in whole tiles");
}

// A tuned shape's winner is launched as the instance the tuner timed and verified it as: the
// dispatcher's rule must be the tuner's, shape for shape.
TEST(ExportDispatchSelect, TheInstanceIsTheOneTheTunerPickedForTheTunedShape) {
  int scalar = 0;
  for (const long long m : {1000, 1001, 1002, 1023, 1024}) {
    for (const long long n : {777, 1000, 4097}) {
      for (const long long k : {513, 1000, 1022}) {
        for (const char* layout : {"NN", "NT", "TN", "TT"}) {
          sgt::Problem p;
          p.M = m, p.N = n, p.K = k, p.layout = layout;
          const table::Shape s{m, n, k, layout, 0, 1.0, 100.0};
          EXPECT_EQ(tuned_vec_loads(s), sgt::kernel_vec_loads(p)) << p.shape() << " " << layout;
          scalar += !tuned_vec_loads(s);
        }
      }
    }
  }
  EXPECT_GT(scalar, 0);
  EXPECT_LT(scalar, 5 * 3 * 3 * 4);
  // The fixture's shapes are all multiples of 4: their winners run the float4 instance.
  const auto c = choose(kH200, packed(2048, 2048, 1024), all_usable);
  ASSERT_EQ(c.path, Path::kernel);
  EXPECT_TRUE(c.vec);
  auto call = packed(1000, 1000, 1000);
  EXPECT_EQ(access_text(call, false),
            "A and B single floats (the instance tuned for operands without float4s), C float4 in "
            "whole tiles");
}

TEST(ExportDispatchSelect, PaddedRowsRunTheTunedKernel) {
  auto call = packed(2048, 2048, 1024);
  call.lda = 1028;
  auto c = choose(kH200, call, all_usable);
  EXPECT_EQ(c.path, Path::kernel);
  EXPECT_EQ(c.source, Source::exact);
  EXPECT_TRUE(contains(describe(kH200, call, c), "A float4")) << describe(kH200, call, c);
  call = packed(2048, 2048, 1024);
  call.ldc = 4097;  // rows no longer 16-byte aligned: C is accessed element by element
  c = choose(kH200, call, all_usable);
  EXPECT_EQ(c.path, Path::kernel);
  EXPECT_TRUE(
      contains(describe(kH200, call, c), "C scalar (leading dimension not a multiple of 4)"))
      << describe(kH200, call, c);
}

TEST(ExportDispatchSelect, MisalignedPointersRunTheTunedKernel) {
  auto call = packed(2048, 2048, 1024);
  call.B += 4;  // one float in: 4-byte aligned, not 16
  const auto c = choose(kH200, call, all_usable);
  EXPECT_EQ(c.path, Path::kernel);
  EXPECT_EQ(c.source, Source::exact);
  EXPECT_TRUE(contains(describe(kH200, call, c), "B scalar (pointer not 16-byte aligned)"))
      << describe(kH200, call, c);
}

TEST(ExportDispatchSelect, EachLayoutIsMatchedAgainstItsOwnShapes) {
  // The fixture tunes 2048x2048x1024 in NN only: a TN call of it is not that shape's exact match,
  // but the nearest of the TN shapes (1024^3 and 300x200x100).
  Call tn = packed(2048, 2048, 1024);
  tn.trans_a = true;
  tn.lda = 2048;  // A stored K x M
  const auto c = choose(kH200, tn, all_usable);
  EXPECT_EQ(c.path, Path::kernel);
  EXPECT_EQ(c.source, Source::nearest);
  EXPECT_EQ(table::kShapes[c.shape].M, 1024);
  EXPECT_STREQ(table::kShapes[c.shape].layout, "TN");
  EXPECT_EQ(config_name(c), sgt::test::kConfigA);
  EXPECT_TRUE(contains(describe(kH200, tn, c), "sgemm TN 2048x2048x1024 (lda 2048"))
      << describe(kH200, tn, c);
  // A layout with no tuned shape of a GPU takes its NN default.
  const auto odd = choose(kOdd, tn, all_usable);
  EXPECT_EQ(odd.path, Path::kernel);
  EXPECT_EQ(odd.source, Source::gpu_default);
  EXPECT_EQ(config_name(odd), sgt::test::kConfigA);
  tn.lda = 1024;  // K, too short for a transposed A
  const auto bad = choose(kH200, tn, all_usable);
  EXPECT_EQ(bad.path, Path::invalid);
  EXPECT_TRUE(contains(bad.why, "row-major TN leading dimensions need lda >= M")) << bad.why;
}

TEST(ExportDispatchSelect, DeviceNotInTheTableGoesToCublas) {
  // Same name and architecture, another SM count (a partition, another SKU): not the tuned GPU.
  const DeviceIdentity half{"NVIDIA H200", 9, 0, 66};
  const auto call = packed(2048, 2048, 1024);
  const auto c = choose(half, call, all_usable);
  EXPECT_EQ(c.path, Path::cublas);
  EXPECT_EQ(c.gpu, -1);
  EXPECT_TRUE(contains(c.why,
                       "NVIDIA H200 (sm_90, 66 SMs) is not in the embedded table, which "
                       "holds "))
      << c.why;
  EXPECT_TRUE(contains(c.why, "'NVIDIA H200' (sm_90, 132 SMs)")) << c.why;
}

TEST(ExportDispatchSelect, GpuWithNothingTunedRunsTheBuiltInDefault) {
  const auto call = packed(1024, 1024, 1024);
  const auto c = choose(kA100, call, all_usable);
  EXPECT_EQ(c.path, Path::kernel);
  EXPECT_EQ(c.source, Source::gpu_default);
  EXPECT_EQ(c.shape, -1);
  EXPECT_EQ(config_name(c), sgt::test::kConfigA);
  EXPECT_TRUE(contains(describe(kA100, call, c),
                       "this GPU's default config (built-in: nothing is tuned for this GPU)"));
}

TEST(ExportDispatchSelect, OddGpuNameMatchesByteForByte) {
  const auto exact = choose(kOdd, packed(512, 512, 512), all_usable);
  EXPECT_EQ(exact.source, Source::exact);
  EXPECT_TRUE(contains(describe(kOdd, packed(512, 512, 512), exact), "cuBLAS not timed"));
  const auto near = choose(kOdd, packed(1024, 1024, 1024), all_usable);
  EXPECT_EQ(near.source, Source::nearest);
  EXPECT_DOUBLE_EQ(near.distance, std::sqrt(3.0));
  auto other = kOdd;
  other.name.pop_back();
  EXPECT_EQ(choose(other, packed(512, 512, 512), all_usable).path, Path::cublas);
}

TEST(ExportDispatchSelect, ConfigWithoutAKernelImageIsPassedOver) {
  const int b = config_index(sgt::test::kConfigB);
  const auto no_b = [b](int config) {
    return config == b ? std::string("this build holds no kernel image of it for sm_90")
                       : std::string();
  };
  const auto c = choose(kH200, packed(2048, 2048, 1024), no_b);
  EXPECT_EQ(c.path, Path::kernel);
  EXPECT_EQ(c.source, Source::nearest);
  EXPECT_EQ(config_name(c), sgt::test::kConfigA);
  EXPECT_TRUE(contains(c.why, "the exact tuned shape (winner " + sgt::test::kConfigB +
                                  ": this build holds no kernel image of it for sm_90)"))
      << c.why;

  const auto none = [](int) { return std::string("no image"); };
  const auto all_out = choose(kH200, packed(2048, 2048, 1024), none);
  EXPECT_EQ(all_out.path, Path::cublas);
  EXPECT_TRUE(contains(all_out.why, "no image")) << all_out.why;
}

TEST(ExportDispatchSelect, GridLimitGoesToCublas) {
  // The built-in default's 128x64 tile over 2^30 x 2^30 is 2^47 blocks.
  const auto c = choose(kA100, packed(1 << 30, 1 << 30, 16), all_usable);
  EXPECT_EQ(c.path, Path::cublas);
  EXPECT_TRUE(contains(c.why, "blocks exceed the grid limit of 2^31-1")) << c.why;
}

TEST(ExportDispatchSelect, EmptyProductsDoNothingKZeroScalesCAndBadArgumentsAreInvalid) {
  EXPECT_EQ(choose(kH200, packed(0, 2048, 1024), all_usable).path, Path::noop);
  auto empty_n = packed(2048, 0, 1024);
  empty_n.ldb = empty_n.ldc = 1;  // at least 1, even for N = 0
  EXPECT_EQ(choose(kH200, empty_n, all_usable).path, Path::noop);
  auto empty_k = packed(2048, 2048, 0);
  empty_k.lda = 1;  // BLAS: a leading dimension is at least 1
  const auto k0 = choose(kH200, empty_k, all_usable);
  EXPECT_EQ(k0.path, Path::kernel);
  EXPECT_TRUE(contains(describe(kH200, empty_k, k0), "K = 0, so C = beta * C"))
      << describe(kH200, empty_k, k0);
  EXPECT_EQ(choose(kH200, packed(2048, 2048, 0), all_usable).path, Path::invalid);
  EXPECT_EQ(choose(kH200, packed(-1, 2048, 1024), all_usable).path, Path::invalid);
  auto call = packed(2048, 2048, 1024);
  call.ldb = 2047;
  const auto c = choose(kH200, call, all_usable);
  EXPECT_EQ(c.path, Path::invalid);
  EXPECT_TRUE(contains(describe(kH200, call, c), "invalid arguments, nothing runs")) << c.why;
}

// A non-strict winner (split TF32) serves only the shape its accuracy was measured at: not a
// deeper or shallower K, not another M or N, never as a GPU's default; a strict one serves any.
TEST(ExportDispatchSelect, ANonStrictWinnerServesOnlyItsMeasuredShape) {
  const table::Shape tuned{4096, 4096, 4096, "NN", 0, 1.0, 250.0};
  EXPECT_EQ(off_measured_shape(true, &tuned, packed(4096, 4096, 4096)), "");
  for (const auto& call : {packed(4096, 4096, 8192), packed(4096, 4096, 128),
                           packed(3072, 4096, 4096), packed(4096, 2048, 4096)}) {
    const auto why = off_measured_shape(true, &tuned, call);
    EXPECT_TRUE(contains(why, "measured at 4096x4096x4096 only"))
        << call.M << "x" << call.N << "x" << call.K << ": " << why;
    EXPECT_EQ(off_measured_shape(false, &tuned, call), "");
  }
  EXPECT_TRUE(contains(off_measured_shape(true, nullptr, packed(64, 64, 64)), "no shape"));
  EXPECT_EQ(off_measured_shape(false, nullptr, packed(64, 64, 64)), "");
}

TEST(ExportDispatchSelect, DistanceIsTheTunersShapeDistance) {
  for (const auto& [M, N, K] :
       {std::tuple{1000, 3000, 77}, std::tuple{4096, 4096, 2048}, std::tuple{1, 65536, 7}}) {
    for (int i = 0; i < table::kShapeCount; ++i) {
      const auto& s = table::kShapes[i];
      EXPECT_DOUBLE_EQ(shape_distance(M, N, K, s),
                       sgt::db::shape_distance(sgt::test::fixture_shape(M, N, K),
                                               sgt::test::fixture_shape(s.M, s.N, s.K)));
    }
  }
}

// Every call tma_cases.hpp meant for them reaches the TMA = 1 winners (the GPU test runs the same
// calls against cuBLAS), and says how it reads A and B.
TEST(ExportDispatchSelect, TmaWinnersServeTheCallsMeantForThem) {
  int split = 0;
  for (const auto& t : sgt::test::tma_cases()) {
    const auto call = tma_call(t);
    const auto c = choose(kH200, call, all_usable);
    ASSERT_EQ(c.path, Path::kernel) << t.what << ": " << c.why;
    EXPECT_TRUE(tma_family(c.config)) << t.what << ": " << describe(kH200, call, c);
    if (t.split) {
      EXPECT_EQ(config_name(c), sgt::test::kConfigTmaSplit) << t.what;
      split += sgt_kernel::launch_dims(t.M, t.N, t.K, 64, 128, 32, 4).grid_z > 1;
    } else if (t.K > 0) {
      EXPECT_EQ(config_name(c), sgt::test::kConfigTma) << t.what;
    }
    const auto text = describe(kH200, call, c);
    EXPECT_TRUE(contains(text,
                         "; accesses: A and B by TMA tensor copies (zero-filled past the "
                         "matrix), C "))
        << text;
    EXPECT_FALSE(contains(text, "A float4")) << text;
  }
  EXPECT_EQ(split, 6);  // three shapes, NN and TT, each over more than one split
}

// The packed TMA winner serves its tuned NT shape with any operands: odd or padded rows, a
// misaligned pointer, C rows that refuse float4s. The pack makes panels the copies can read.
TEST(ExportDispatchSelect, PackedTmaWinnerServesItsShapeWithAnyOperands) {
  int n = 0;
  for (const auto& t : sgt::test::tma_pack_cases()) {
    const auto call = tma_call(t);
    const auto c = choose(kH200, call, all_usable);
    ASSERT_EQ(c.path, Path::kernel) << t.what << ": " << c.why;
    EXPECT_EQ(config_name(c), sgt::test::kConfigTmaPack) << t.what << ": " << c.why;
    const auto text = describe(kH200, call, c);
    EXPECT_TRUE(contains(text,
                         "; accesses: operands packed into k-major panels, then A and B by TMA "
                         "tensor copies"))
        << text;
    ++n;
  }
  EXPECT_EQ(n, 5);
}

TEST(ExportDispatchSelect, TmaWinnerIsPassedOverForOperandsItsCopiesCannotRead) {
  for (const auto& t : sgt::test::tma_fallback_cases()) {
    const auto call = tma_call(t);
    const auto c = choose(kH200, call, all_usable);
    ASSERT_EQ(c.path, Path::kernel) << t.what << ": " << c.why;
    // A winner that takes any operands: the thread-loaded kernel, or the TMA kernel on panels.
    EXPECT_TRUE(!tma_family(c.config) || table::kConfigs[c.config].PACK == 1) << t.what;
    EXPECT_EQ(c.source, Source::nearest) << t.what;
    const std::string why =
        t.a_offset ? "pointer not 16-byte aligned" : "leading dimension not a multiple of 4";
    EXPECT_TRUE(contains(c.why, "the exact tuned shape (winner " + sgt::test::kConfigTma +
                                    ": its TMA tensor copies cannot read " + t.refused + " (" +
                                    why + "))"))
        << t.what << ": " << c.why;
  }
  // C is not read by a copy: any ldc and alignment of C keep the TMA winner.
  auto call = packed(300, 200, 100);
  call.ldc = 203;
  call.C += 4;
  EXPECT_EQ(config_name(choose(kH200, call, all_usable)), sgt::test::kConfigTma);
  // With K = 0 nothing is copied, so the operands need nothing.
  call = packed(300, 200, 0);
  call.lda = 1;
  call.A += 4;
  const auto k0 = choose(kH200, call, all_usable);
  EXPECT_TRUE(tma_family(k0.config)) << describe(kH200, call, k0);
}

TEST(ExportDispatchSelect, TmaConfigsThisBuildCannotRunArePassedOver) {
  const auto no_tma = [](int config) {
    return tma_family(config)
               ? std::string("it is a TMA-fed kernel, which has a body only in an sm_90a image")
               : std::string();
  };
  for (const auto& t : sgt::test::tma_cases()) {
    const auto call = tma_call(t);
    const auto c = choose(kH200, call, no_tma);
    ASSERT_EQ(c.path, Path::kernel) << t.what << ": " << c.why;
    EXPECT_FALSE(tma_family(c.config)) << t.what;
    EXPECT_TRUE(contains(c.why, "only in an sm_90a image")) << t.what << ": " << c.why;
  }
}

// The TMA operand rule: tma_refusal is sgt_kernel::tma_operand's (the export compile test runs
// both over the same operands with nvcc).
// A TMA-fed config is passed over for a call in a layout whose staging boxes its stages cannot
// hold (the tuner's shape_tma_shared_memory: a default or nearest shape of another layout must not
// send it there), and with PACK it reads the panels: any operands, every layout (the TN instance).
TEST(ExportDispatchSelect, TmaMisfitFollowsTheLayoutsSharedMemoryAndPackReadsAnyOperands) {
  // The 4096^3 winner of bench/NOTES.md: 199 KB in NN, 247 KB with NT's two staging boxes.
  table::Config big{};
  big.BM = 64, big.BN = 256, big.BK = 32, big.WM = 32, big.WN = 64, big.WNITER = 2, big.TM = 8,
  big.TN = 4, big.NUM_THREADS = 256, big.MIN_BLOCKS = 1, big.STAGES = 3, big.PAD_A = 4,
  big.GROUP_M = 8, big.SPLIT_K = 1, big.FMA_ORDER = 3;
  // Launched as the TMA family (formats 6 and 7 derived it so from their field TMA).
  const auto misfit = [](const table::Config& c, const Call& call) {
    return detail::misfit(c, derive_launch_facts(c, true), call);
  };
  EXPECT_LE(tma_block_bytes(big, false, false), kTmaSharedLimit);
  EXPECT_GT(tma_block_bytes(big, false, true), kTmaSharedLimit);
  Call nn = packed(4096, 4096, 4096);
  EXPECT_EQ(misfit(big, nn), "");
  Call nt = nn;
  nt.trans_b = true;
  nt.ldb = 4096;
  EXPECT_TRUE(contains(misfit(big, nt), "shared memory in this layout")) << misfit(big, nt);
  // Odd rows refuse the copies, unless the operands are packed first.
  Call odd = packed(4095, 4097, 1023);
  EXPECT_TRUE(contains(misfit(big, odd), "cannot read A")) << misfit(big, odd);
  auto pack = big;
  pack.PACK = 1;
  EXPECT_EQ(misfit(pack, odd), "");
  odd.A += 4;  // a 4-byte aligned pointer too
  EXPECT_EQ(misfit(pack, odd), "");
  // With PACK the kernel is the TN instance in every layout: NT fits now.
  EXPECT_TRUE(tma_runs_trans_a(pack, nt));
  EXPECT_FALSE(tma_runs_trans_b(pack, nt));
  EXPECT_EQ(misfit(pack, nt), "");
}

TEST(ExportDispatchSelect, TmaRefusalNamesWhatTheCopiesNeed) {
  EXPECT_EQ(tma_refusal(0x10000, 4), nullptr);
  EXPECT_EQ(tma_refusal(0x10010, 1024), nullptr);
  EXPECT_STREQ(tma_refusal(0x10004, 1024), "pointer not 16-byte aligned");
  EXPECT_STREQ(tma_refusal(0x10000, 1022), "leading dimension not a multiple of 4");
  EXPECT_STREQ(tma_refusal(0x10000, 0), "leading dimension not a multiple of 4");
}

}  // namespace
}  // namespace sgemm_tuned::detail
