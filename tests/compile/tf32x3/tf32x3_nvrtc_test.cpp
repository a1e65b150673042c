// The split-TF32 kernel (sgemm_tf32x3.cuh) against the real NVRTC (no GPU needed): the probe's
// configs compile for sm_90 (and sm_80) in all four layouts, with the 16-byte and the 4-byte
// copies, without static shared memory (the pipeline's is dynamic), each to an entry the loader
// finds by its lowered name; those with 64 accumulators per thread spill-free, the 64x64 warp
// tiles with at most 64 bytes; a config the kernel's rules refuse fails on its static_assert.
// As the family tf32x3 (tuner/core/families/tf32x3/): the tuner's compiler builds a config with
// its split-K reduction kernel, and the family's rules refuse at their boundaries what the
// kernel's static_asserts refuse.
#include <nvrtc.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config.hpp"
#include "family.hpp"
#include "kernel_source.hpp"
#include "nvrtc_compiler.hpp"
#include "test_support.hpp"

namespace {

struct Instance {
  int BM, BN, BK, WM, WN, STAGES, GROUP_M, ACC;
  bool trans_a, trans_b, vec;

  std::string expression() const {
    char b[160];
    std::snprintf(b, sizeof b, "sgemm_tf32x3<%d,%d,%d,%d,%d,%d,%d,%d,%s,%s,%s>", BM, BN, BK, WM, WN,
                  STAGES, GROUP_M, ACC, trans_a ? "true" : "false", trans_b ? "true" : "false",
                  vec ? "true" : "false");
    return b;
  }
};

struct Result {
  bool compiled = false;
  std::string log, lowered;
  std::string cubin;
  sgt::gpu::PtxasInfo info;
};

std::string text_of(const char* name) {
  const auto f = sgt::embedded_kernel_file(name);
  return std::string(f.text);
}

// One NVRTC program for one instance, with the project's own options (nvrtc_compiler.cpp): the
// family's kernel files as named headers.
Result compile(const Instance& in, const std::string& arch) {
  const char* names[] = {"sgemm_tf32x3.cuh", "tf32x3_geometry.h", "warptile_geometry.h",
                         "sgemm_warptile.cuh"};
  std::vector<std::string> texts;
  for (const char* n : names) texts.push_back(text_of(n));
  std::vector<const char*> ptrs;
  for (const auto& t : texts) ptrs.push_back(t.c_str());
  nvrtcProgram prog = nullptr;
  const std::string main_text = "#include \"sgemm_tf32x3.cuh\"\n";
  EXPECT_EQ(nvrtcCreateProgram(&prog, main_text.c_str(), "tf32x3.cu", 4, ptrs.data(), names),
            NVRTC_SUCCESS);
  const std::string expr = in.expression();
  EXPECT_EQ(nvrtcAddNameExpression(prog, expr.c_str()), NVRTC_SUCCESS);
  const std::string arch_opt = "-arch=" + arch;
  const char* opts[] = {arch_opt.c_str(), "-std=c++17", "-default-device", "--ptxas-options=-v"};
  Result r;
  r.compiled = nvrtcCompileProgram(prog, 4, opts) == NVRTC_SUCCESS;
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  r.log.resize(n);
  nvrtcGetProgramLog(prog, r.log.data());
  if (r.compiled) {
    const char* lowered = nullptr;
    EXPECT_EQ(nvrtcGetLoweredName(prog, expr.c_str(), &lowered), NVRTC_SUCCESS);
    if (lowered) r.lowered = lowered;
    size_t size = 0;
    nvrtcGetCUBINSize(prog, &size);
    r.cubin.resize(size);
    nvrtcGetCUBIN(prog, r.cubin.data());
    r.info = sgt::gpu::parse_ptxas_info(r.log, r.lowered);
  }
  nvrtcDestroyProgram(&prog);
  return r;
}

// The probe's configs with 64 accumulators per thread, spill-free in every layout and copy
// width: what a search may take as is.
std::vector<Instance> spill_free_configs() {
  return {
      {64, 128, 32, 32, 64, 4, 8, 1, false, false, true},
      {128, 128, 32, 64, 32, 3, 8, 1, false, false, true},
  };
}
// The probe's 64x64 warp tiles (128 accumulators and 64 fragment registers per thread): the
// fastest at 4096^3, but ptxas spills a few bytes in some layouts (4-32 B, sm_90, NVRTC 13.0).
std::vector<Instance> wide_warp_configs() {
  return {
      {128, 128, 32, 64, 64, 3, 8, 1, false, false, true},
      {128, 256, 32, 64, 64, 3, 8, 1, false, false, true},
      {256, 128, 16, 64, 64, 3, 8, 1, false, false, true},
  };
}

// Each instance in the four layouts, with the given copy width.
std::vector<Instance> with_layouts(const std::vector<Instance>& base, bool vec) {
  std::vector<Instance> out;
  for (auto in : base)
    for (int l = 0; l < 4; ++l) {
      in.trans_a = (l & 2) != 0;
      in.trans_b = (l & 1) != 0;
      in.vec = vec;
      out.push_back(in);
    }
  return out;
}

// Compiles all, two at a time (NVRTC is thread-safe per program), and checks each: at most
// max_spill bytes of spill stores and loads (0: none, and no stack).
void expect_compiles(const std::vector<Instance>& instances, const std::string& arch,
                     int max_spill = 0) {
  std::vector<std::future<Result>> jobs;
  std::vector<Result> results;
  for (const auto& in : instances) {
    jobs.push_back(std::async(std::launch::async, compile, in, arch));
    if (jobs.size() == 2) {
      for (auto& j : jobs) results.push_back(j.get());
      jobs.clear();
    }
  }
  for (auto& j : jobs) results.push_back(j.get());
  for (size_t i = 0; i < instances.size(); ++i) {
    const Result& r = results[i];
    SCOPED_TRACE(instances[i].expression() + " " + arch);
    ASSERT_TRUE(r.compiled) << r.log;
    ASSERT_TRUE(r.info.found) << r.log;
    std::printf("[          ] %s %s: %d registers, %d B stack, %d/%d B spill st/ld, %d B smem\n",
                instances[i].expression().c_str(), arch.c_str(), r.info.registers,
                r.info.stack_bytes, r.info.spill_store_bytes, r.info.spill_load_bytes,
                r.info.shared_bytes);
    EXPECT_GT(r.info.registers, 0);
    EXPECT_LE(r.info.registers, 255);
    EXPECT_LE(r.info.spill_store_bytes, max_spill);
    EXPECT_LE(r.info.spill_load_bytes, max_spill);
    if (max_spill == 0) EXPECT_EQ(r.info.stack_bytes, 0);
    EXPECT_EQ(r.info.shared_bytes, 0);  // all of it dynamic
    EXPECT_EQ(r.lowered.rfind("_Z12sgemm_tf32x3IL", 0), 0u) << r.lowered;
    EXPECT_EQ(r.cubin.substr(0, 4),
              "\x7f"
              "ELF");
    EXPECT_NE(r.cubin.find(r.lowered), std::string::npos);
  }
}

TEST(Tf32x3Nvrtc, SpillFreeConfigsCompileForSm90InEveryLayoutAndCopyWidth) {
  auto v = with_layouts(spill_free_configs(), true);
  const auto s = with_layouts(spill_free_configs(), false);
  v.insert(v.end(), s.begin(), s.end());
  expect_compiles(v, "sm_90");
}

TEST(Tf32x3Nvrtc, SpillFreeConfigsCompileForSm80) {
  auto v = with_layouts({spill_free_configs()[0]}, true);
  const auto s = with_layouts({spill_free_configs()[1]}, false);
  v.insert(v.end(), s.begin(), s.end());
  expect_compiles(v, "sm_80");
}

// The 64x64 warp tiles compile in every layout with at most a few bytes of spills, so that a
// change that makes them spill in earnest shows here.
TEST(Tf32x3Nvrtc, WideWarpTilesCompileWithAtMostAFewSpilledBytes) {
  expect_compiles(with_layouts(wide_warp_configs(), true), "sm_90", 64);
  expect_compiles(with_layouts({wide_warp_configs()[0]}, false), "sm_90", 64);
}

// ACC = 0 (the running sum in the tensor core) is a measurement instance: it compiles too.
TEST(Tf32x3Nvrtc, InTensorCoreAccumulationCompiles) {
  auto in = wide_warp_configs()[0];
  in.ACC = 0;
  expect_compiles({in}, "sm_90");
}

// The family's config through the tuner's compiler: its program is the kernel file with every
// kernel file as a header, and it holds the split-K reduction kernel the launch plan needs.
TEST(Tf32x3Nvrtc, TheFamilysConfigCompilesWithItsSplitKReduction) {
  const auto c = sgt::test::config("tc3_64x64x16_w32x32_n128_s2_k4");
  ASSERT_TRUE(sgt::check(c).empty());
  sgt::test::TempDir dir;
  sgt::gpu::KernelCompiler k(dir.path(), {});
  const auto r = k.compile(c, "NT", true);
  ASSERT_EQ(r.status, sgt::TrialStatus::ok) << r.reason << "\n" << r.log;
  EXPECT_EQ(
      r.lowered_name.rfind("_Z12sgemm_tf32x3ILi64ELi64ELi16ELi32ELi32ELi2ELi1ELi1ELb0ELb1ELb1E", 0),
      0u)
      << r.lowered_name;
  EXPECT_FALSE(r.reduce_lowered_name.empty());
  EXPECT_GT(r.registers, 32);
  EXPECT_EQ(r.spill_store_bytes, 0);
  EXPECT_EQ(r.shared_bytes, 0);  // all of it dynamic
  std::ifstream in(r.cubin_path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_NE(bytes.find(r.lowered_name), std::string::npos);
  EXPECT_NE(bytes.find(r.reduce_lowered_name), std::string::npos);
  EXPECT_EQ(sgt::kernel_source_hash(c), sgt::find_family("tf32x3")->source_hash());
  // Below sm_80 the family has no kernel: refused by its rule, not compiled into a stub.
  sgt::test::TempDir old_dir;
  sgt::gpu::KernelCompiler turing(old_dir.path(), {"sm_75", {}});
  const auto t = turing.compile(c, "NN", true);
  EXPECT_EQ(t.status, sgt::TrialStatus::compile_failed);
  EXPECT_EQ(t.reason.rfind("rule tf32x3_architecture", 0), 0u) << t.reason;
}

// At the boundaries of the family's rules the kernel agrees: what a rule refuses fails on the
// static_assert the rule names, and the smallest config its copies allow in the 4-byte TN layout
// compiles.
TEST(Tf32x3Nvrtc, TheFamilysRulesRefuseWhatTheStaticAssertsRefuse) {
  struct Refused {
    const char* name;
    const char* layout;
    bool vec;
    const char* rule;
    const char* assert_text;
  };
  const Refused refused[] = {
      {"tc3_48x96x48_w16x32_n288_s2", "NN", true, "tf32x3_block_tile", "block_tile"},
      {"tc3_64x64x16_w32x32_n128_s9", "NN", true, "tf32x3_stages", "stages: 2 to 8"},
      {"tc3_256x32x16_w64x32_n128_s3", "TN", false, "tf32x3_copy_mapping", "copy_mapping"},
  };
  for (const auto& x : refused) {
    SCOPED_TRACE(x.name);
    const auto c = sgt::test::config(x.name);
    bool named = false;
    for (const auto& v : sgt::check(c)) named = named || v.rule == x.rule;
    EXPECT_TRUE(named) << x.rule;
    const auto& f = sgt::family_of(c);
    const auto expr = f.name_expression(c, x.layout, x.vec);
    Instance in{c.BM,
                c.BN,
                c.BK,
                c.WM,
                c.WN,
                c.STAGES,
                c.GROUP_M,
                1,
                x.layout[0] == 'T',
                x.layout[1] == 'T',
                x.vec};
    ASSERT_EQ(in.expression(), expr);
    const Result r = compile(in, "sm_90");
    EXPECT_FALSE(r.compiled);
    EXPECT_NE(r.log.find(x.assert_text), std::string::npos) << r.log;
  }
  // tc3_256x32x16_w64x32_n128_s3's copies fit in NN with 16-byte copies: only the instances the
  // rule names fail, but the dispatch library instantiates every one.
  const Result nn = compile({256, 32, 16, 64, 32, 3, 1, 1, false, false, true}, "sm_90");
  EXPECT_TRUE(nn.compiled) << nn.log;
  // 32x32 tiles of 16x16 warp tiles, 4 warps: the 4-byte TN copies of A (16 x 32 stored) are 32
  // per row for 128 threads, the smallest mapping the rule allows.
  const auto small = sgt::test::config("tc3_32x32x16_w16x16_n128_s2");
  ASSERT_TRUE(sgt::check(small).empty());
  const Result ok = compile({32, 32, 16, 16, 16, 2, 1, 1, true, false, false}, "sm_90");
  EXPECT_TRUE(ok.compiled) << ok.log;
}

TEST(Tf32x3Nvrtc, RefusedConfigsFailOnTheirStaticAssert) {
  auto in = spill_free_configs()[1];
  in.WM = 48;  // not a divisor of BM = 128
  Result r = compile(in, "sm_90");
  EXPECT_FALSE(r.compiled);
  EXPECT_NE(r.log.find("warp_grid"), std::string::npos) << r.log;
  in = spill_free_configs()[1];
  in.BK = 12;
  r = compile(in, "sm_90");
  EXPECT_FALSE(r.compiled);
  EXPECT_NE(r.log.find("bk: a multiple of 8"), std::string::npos) << r.log;
}

}  // namespace
