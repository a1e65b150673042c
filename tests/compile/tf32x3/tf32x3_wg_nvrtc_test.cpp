// The split-TF32 wgmma kernel (sgemm_tf32x3_wgmma.cuh, family tf32x3_wg) against the real NVRTC
// (no GPU needed): every config of its search space compiles through the tuner's compiler for
// sm_90 (its target sm_90a) into one cubin with the tile kernel (the split entry for SPLIT_K > 1),
// the split prepass and the split-K reduction, spill-free and with the registers of a real body
// (setmaxnreg's consumers hold three sets of 64 accumulators), its PTX made of wgmma.mma_async and
// tensor copies, the split entry's copies starting at its split's first slice and its epilogue
// writing the partial products; a STAGES its rule refuses fails on the kernel's static_assert; on
// other architectures the family is refused by its rule.
#include <nvrtc.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config.hpp"
#include "family.hpp"
#include "instance.hpp"
#include "kernel_source.hpp"
#include "nvrtc_compiler.hpp"
#include "nvrtc_ptx.hpp"
#include "space.hpp"
#include "test_support.hpp"
#include "tf32x3_wg_geometry.h"

namespace {

using sgt::test::Ptx;

Ptx ptx_of(const std::string& expr, const std::string& arch) {
  return sgt::test::ptx_of("tf32x3_wg", expr, arch);
}

std::vector<sgt::WarpTileConfig> space_configs() {
  return sgt::enumerate(sgt::load_space("tf32x3_wg"), {}, sgt::Precision::fp32_accurate).survivors;
}

TEST(Tf32x3WgNvrtc, EveryConfigOfTheSpaceCompilesSpillFreeWithItsPrepass) {
  const auto configs = space_configs();
  // TF32: 12 unsplit, 36 split (SPLIT_K 2, 3, 4), 12 with the wave-aware tail (TAIL 1, the split
  // entry); the BF16 split (FMA_ORDER 3, two stages): 2, 6 and 2. The tail configs share the
  // split configs' binaries.
  ASSERT_EQ(configs.size(), 70u);
  sgt::test::TempDir dir;
  sgt::gpu::KernelCompiler k(dir.path(), {});
  const auto results = k.compile_all(configs, 2, {}, "TN", false);
  ASSERT_EQ(results.size(), configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    const auto& r = results[i];
    SCOPED_TRACE(sgt::to_name(configs[i]));
    ASSERT_EQ(r.status, sgt::TrialStatus::ok) << r.reason << "\n" << r.log;
    // The one instance of every layout and alignment: the panels' NT.
    EXPECT_EQ(r.layout, "NT");
    // The accumulation its FMA_ORDER names: ACC 3 (0), ACC 6 (1) or ACC 7 (2), or the BF16
    // split's kernel (3, whose first template argument is STAGES); the split entry for a split
    // config; the prepass of its split.
    const bool bf16 = configs[i].FMA_ORDER == 3;
    const std::string first =
        bf16 ? std::to_string(configs[i].STAGES) : std::string(1, "367"[configs[i].FMA_ORDER]);
    const bool split = configs[i].SPLIT_K > 1 || configs[i].TAIL != 0;
    const std::string entry =
        bf16 ? (split ? "_Z25sgemm_bf16x6_wgmma_splitkILi" : "_Z18sgemm_bf16x6_wgmmaILi")
             : (split ? "_Z25sgemm_tf32x3_wgmma_splitkILi" : "_Z18sgemm_tf32x3_wgmmaILi");
    EXPECT_EQ(r.lowered_name.rfind(entry + first + "EL", 0), 0u) << r.lowered_name;
    EXPECT_EQ(r.pack_lowered_name.rfind(
                  bf16 ? "_Z20bf16x6_split_operand" : "_Z20tf32x3_split_operand", 0),
              0u)
        << r.pack_lowered_name;
    // The split-K reduction is in every binary of the family (has_split_k_reduce).
    EXPECT_EQ(r.reduce_lowered_name.rfind("_Z19sgemm_splitk_reduce", 0), 0u)
        << r.reduce_lowered_name;
    EXPECT_EQ(r.spill_store_bytes, 0);
    EXPECT_EQ(r.spill_load_bytes, 0);
    EXPECT_EQ(r.stack_bytes, 0);
    // A real body: the launch bounds' 168 registers (a stub would use a handful).
    EXPECT_GE(r.registers, 128) << r.log;
    // Its barriers are static (a full and an empty one per stage, padded to the dynamic ring's
    // 1024-byte alignment); the ring is dynamic.
    EXPECT_EQ(r.shared_bytes, sgt_kernel::tf32x3_wg_static_smem_bytes(configs[i].STAGES));
    std::ifstream in(r.cubin_path, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    EXPECT_NE(bytes.find(r.lowered_name), std::string::npos);
    EXPECT_NE(bytes.find(r.pack_lowered_name), std::string::npos);
    EXPECT_NE(bytes.find(r.reduce_lowered_name), std::string::npos);
    EXPECT_EQ(sgt::kernel_source_hash(configs[i]), sgt::find_family("tf32x3_wg")->source_hash());
    printf("[          ] %s: %d registers, %d B static smem, %.1f s\n",
           sgt::to_name(configs[i]).c_str(), r.registers, r.shared_bytes, r.compile_seconds);
  }
  // Every layout and alignment shares that one binary: the cache answers the others.
  const auto again = k.compile(configs[0], "NN", true);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.lowered_name, results[0].lowered_name);
  // SPLIT_K 2, 3 and 4 of a config share the split entry's binary, apart from SPLIT_K 1's.
  for (size_t i = 0; i < configs.size(); ++i) {
    for (size_t j = 0; j < configs.size(); ++j) {
      auto a = configs[i], b = configs[j];
      if (a.SPLIT_K == b.SPLIT_K) continue;
      const bool both_split = a.SPLIT_K > 1 && b.SPLIT_K > 1;
      a.SPLIT_K = b.SPLIT_K = 1;
      if (a != b) continue;
      EXPECT_EQ(results[i].cubin_path == results[j].cubin_path, both_split)
          << sgt::to_name(configs[i]) << " " << sgt::to_name(configs[j]);
    }
  }
}

// The split entry is the unsplit one's body on its split's slices: its PTX reads blockIdx.z, the
// launch's z extent (whether it splits at all) and the partial products' pointer, and still runs
// the wgmma kernel with tensor copies; the unsplit entry reads none of them.
TEST(Tf32x3WgNvrtc, TheSplitEntryTakesItsSplitsSlicesAndWritesItsPartialProduct) {
  auto c = sgt::test::config("tw3_128x128x32_s2_g8");
  c.SPLIT_K = 3;
  const auto expr = sgt::resolve(c, "NN", true).name_expression;
  EXPECT_EQ(expr, "sgemm_tf32x3_wgmma_splitk<3,2,8>");
  const Ptx split = ptx_of(expr, "compute_90a");
  ASSERT_TRUE(split.compiled) << split.log;
  EXPECT_NE(split.ptx.find("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"),
            std::string::npos);
  EXPECT_NE(split.ptx.find("cp.async.bulk.tensor.2d"), std::string::npos);
  EXPECT_NE(split.ptx.find("%ctaid.z"), std::string::npos);
  EXPECT_NE(split.ptx.find("%nctaid.z"), std::string::npos);
  // Its parameters: the unsplit entry's eleven, then k_chunk and partial.
  EXPECT_NE(split.ptx.find("_param_12"), std::string::npos);
  EXPECT_EQ(split.ptx.find("_param_13"), std::string::npos);
  const Ptx plain = ptx_of("sgemm_tf32x3_wgmma<3,2,8>", "compute_90a");
  ASSERT_TRUE(plain.compiled) << plain.log;
  EXPECT_EQ(plain.ptx.find("%ctaid.z"), std::string::npos);
  EXPECT_EQ(plain.ptx.find("%nctaid.z"), std::string::npos);
  EXPECT_NE(plain.ptx.find("_param_10"), std::string::npos);
  EXPECT_EQ(plain.ptx.find("_param_11"), std::string::npos);
  // Elsewhere than sm_90a the split entry is empty too.
  const Ptx stub = ptx_of(expr, "compute_90");
  ASSERT_TRUE(stub.compiled) << stub.log;
  EXPECT_EQ(stub.ptx.find("wgmma.mma_async"), std::string::npos);
  // A STAGES its rule refuses fails on the body's static_assert in the split entry as well.
  c.STAGES = 4;
  const Ptx bad = ptx_of(sgt::resolve(c, "NN", true).name_expression, "compute_90a");
  EXPECT_FALSE(bad.compiled);
  EXPECT_NE(bad.log.find("tf32x3_wg_stages"), std::string::npos) << bad.log;
}

// Its PTX for sm_90a is the wgmma kernel, not the empty body other targets get.
TEST(Tf32x3WgNvrtc, ItsBodyIsMadeOfWgmmaAndTensorCopies) {
  const auto c = sgt::test::config("tw3_128x128x32_s2_g8");
  const auto expr = sgt::resolve(c, "NN", true).name_expression;
  EXPECT_EQ(expr, "sgemm_tf32x3_wgmma<3,2,8>");
  const Ptx p = ptx_of(expr, "compute_90a");
  ASSERT_TRUE(p.compiled) << p.log;
  EXPECT_NE(p.ptx.find("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"), std::string::npos);
  EXPECT_NE(p.ptx.find("cp.async.bulk.tensor.2d"), std::string::npos);
  EXPECT_NE(p.ptx.find("setmaxnreg"), std::string::npos);
  // The plain sm_90 target has no body: the family never compiles there (target_arch).
  const Ptx plain = ptx_of(expr, "compute_90");
  ASSERT_TRUE(plain.compiled) << plain.log;
  EXPECT_EQ(plain.ptx.find("wgmma.mma_async"), std::string::npos);
  EXPECT_EQ(sgt::family_of(c).target_arch("sm_90"), "sm_90a");
}

// The BF16 split (FMA_ORDER 3): its entries run six wgmma m64n128k16 BF16 products a k16 step,
// four steps a 64-value slice (24 in the slice loop's unrolled body), on six tensor copies a stage;
// its prepass rounds to BF16 three times an element; the split entry reads its split's z. A ring
// of three 96 KB stages fails on the body's static_assert, by the rule's name.
TEST(Tf32x3WgNvrtc, TheBf16SplitRunsSixBf16ProductsAStep) {
  auto c = sgt::test::config("tw3_128x128x64_s2_g8_o3");
  ASSERT_EQ(c.FMA_ORDER, 3);
  EXPECT_TRUE(sgt::check(c).empty());
  const auto expr = sgt::resolve(c, "TT", true).name_expression;
  EXPECT_EQ(expr, "sgemm_bf16x6_wgmma<2,8>");
  const Ptx p = ptx_of(expr, "compute_90a");
  ASSERT_TRUE(p.compiled) << p.log;
  const auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(p.ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"), 24u);
  EXPECT_EQ(count(p.ptx, "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32"), 0u);
  // Part 0 of each operand from its 2-D "big" map, parts 1 and 2 from planes of the 3-D "small".
  EXPECT_EQ(count(p.ptx, "cp.async.bulk.tensor.2d"), 2u);
  EXPECT_EQ(count(p.ptx, "cp.async.bulk.tensor.3d"), 4u);
  EXPECT_NE(p.ptx.find("setmaxnreg"), std::string::npos);
  const Ptx prepass = ptx_of("bf16x6_split_operand<3>", "compute_90a");
  ASSERT_TRUE(prepass.compiled) << prepass.log;
  EXPECT_GE(count(prepass.ptx, "cvt.rn.bf16.f32"), 3u * sgt_kernel::kSplitPasses);
  c.SPLIT_K = 2;
  const auto split_expr = sgt::resolve(c, "NN", true).name_expression;
  EXPECT_EQ(split_expr, "sgemm_bf16x6_wgmma_splitk<2,8>");
  const Ptx split = ptx_of(split_expr, "compute_90a");
  ASSERT_TRUE(split.compiled) << split.log;
  EXPECT_NE(split.ptx.find("%ctaid.z"), std::string::npos);
  EXPECT_EQ(count(split.ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"), 24u);
  c.SPLIT_K = 1;
  c.STAGES = 3;
  bool named = false;
  for (const auto& v : sgt::check(c)) named = named || v.rule == "tf32x3_wg_stages";
  EXPECT_TRUE(named);
  const Ptx bad = ptx_of(sgt::resolve(c, "NN", true).name_expression, "compute_90a");
  EXPECT_FALSE(bad.compiled);
  EXPECT_NE(bad.log.find("tf32x3_wg_stages"), std::string::npos) << bad.log;
}

// The kernel refuses what rule tf32x3_wg_stages refuses, on its static_assert; elsewhere than
// sm_90 the compiler refuses the family by its rule, without compiling a stub.
TEST(Tf32x3WgNvrtc, RefusalsNameTheRule) {
  auto c = sgt::test::config("tw3_128x128x32_s3_g8");
  c.STAGES = 4;
  bool named = false;
  for (const auto& v : sgt::check(c)) named = named || v.rule == "tf32x3_wg_stages";
  EXPECT_TRUE(named);
  const Ptx p = ptx_of(sgt::resolve(c, "NN", true).name_expression, "compute_90a");
  EXPECT_FALSE(p.compiled);
  EXPECT_NE(p.log.find("tf32x3_wg_stages"), std::string::npos) << p.log;

  const auto ok = sgt::test::config("tw3_128x128x32_s3_g8");
  for (const char* arch : {"sm_80", "sm_89"}) {
    sgt::test::TempDir dir;
    sgt::gpu::KernelCompiler k(dir.path(), {arch, {}});
    const auto r = k.compile(ok, "NN", true);
    EXPECT_EQ(r.status, sgt::TrialStatus::compile_failed) << arch;
    EXPECT_EQ(r.reason.rfind("rule tf32x3_wg_architecture", 0), 0u) << r.reason;
  }
}

}  // namespace
