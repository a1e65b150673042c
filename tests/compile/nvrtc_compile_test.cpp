// KernelCompiler against the real NVRTC (no GPU needed): survivors compile to verified CUBINs,
// heavy and invalid configs get the status that ptxas and the kernel's static_asserts give them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "config.hpp"
#include "error.hpp"
#include "family.hpp"
#include "kernel_source.hpp"
#include "instance.hpp"
#include "nvrtc_compiler.hpp"
#include "nvrtc_ptx.hpp"
#include "sha256.hpp"
#include "space.hpp"
#include "test_support.hpp"

namespace {

using sgt::TrialStatus;
using sgt::WarpTileConfig;
using sgt::eval::Compiled;
using sgt::gpu::KernelCompiler;

using sgt::test::config;
using sgt::test::kSeed;

std::vector<WarpTileConfig> survivors(const std::string& space) {
  return sgt::enumerate(sgt::load_space(space)).survivors;
}

bool contains(const std::vector<WarpTileConfig>& cs, const WarpTileConfig& c) {
  return std::find(cs.begin(), cs.end(), c) != cs.end();
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Everything an ok result promises to a caller that will load and launch it.
void expect_loadable(const Compiled& r, const WarpTileConfig& c, const KernelCompiler& k) {
  SCOPED_TRACE(r.config_name);
  EXPECT_EQ(r.config_name, sgt::to_name(c));
  ASSERT_EQ(r.status, TrialStatus::ok) << r.reason << "\n" << r.log;
  EXPECT_TRUE(r.reason.empty());
  EXPECT_GT(r.registers, 0);
  EXPECT_LE(r.registers, 255);
  EXPECT_EQ(r.spill_store_bytes, 0);
  EXPECT_EQ(r.spill_load_bytes, 0);
  EXPECT_EQ(r.stack_bytes, 0);
  // The kernel's only shared memory is As and Bs, which the host derives from the same header.
  EXPECT_EQ(r.shared_bytes, sgt::derive(c).SMEM_BYTES);
  EXPECT_EQ(r.lowered_name.rfind("_Z14sgemm_warptileIL", 0), 0u) << r.lowered_name;
  EXPECT_NE(r.log.find("Used " + std::to_string(r.registers) + " registers"), std::string::npos);
  EXPECT_EQ(r.cubin_path.parent_path(), k.cache_dir());
  const std::string bytes = slurp(r.cubin_path);
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(sgt::sha256_hex(bytes), r.cubin_sha256);
  EXPECT_EQ(KernelCompiler::load_verified_cubin(r.cubin_path, r.cubin_sha256), bytes);
  // The mangled name must be in the binary, or the loader's lookup by name would fail.
  EXPECT_NE(bytes.find(r.lowered_name), std::string::npos);
  // The split-K reduction travels in the same binary.
  EXPECT_EQ(r.reduce_lowered_name.rfind("_Z19sgemm_splitk_reduce", 0), 0u) << r.reduce_lowered_name;
  EXPECT_NE(bytes.find(r.reduce_lowered_name), std::string::npos);
}

TEST(NvrtcCompile, SeedAndQuickSurvivorsCompileToVerifiedCubins) {
  const auto quick = survivors("quick");
  const std::vector<std::string> names = {
      kSeed,
      "wt_64x128x8_w32x64_wn1_t4x4_n128_mb1",
      "wt_128x128x16_w64x64_wn2_t8x4_n128_mb1",
      "wt_128x64x8_w32x64_wn2_t8x4_n128_mb1",
      "wt_64x128x16_w64x32_wn1_t8x4_n128_mb1",
  };
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  for (const auto& name : names) {
    const auto c = config(name);
    ASSERT_TRUE(contains(quick, c)) << name << " is no longer a survivor of the quick space";
    const Compiled r = k.compile(c);
    EXPECT_FALSE(r.from_cache);
    EXPECT_GT(r.compile_seconds, 0);
    expect_loadable(r, c, k);
  }
  EXPECT_EQ(k.compilations(), names.size());
}

// NVRTC honours the CUDA JIT cache, and a program it has compiled before comes back without
// ptxas' report, which the compiler needs to rule out spills (seen on the H200 host: a split
// binary compiled a second time, once per layout, refused twice). A compiler turns the cache off
// for its process: the same program compiled again, into a second empty cache, reports its
// resources again and is used.
TEST(NvrtcCompile, TheSameProgramCompiledAgainStillReportsItsResources) {
  sgt::test::TempDir first, second;
  KernelCompiler a(first.path(), {});
  const char* off = std::getenv("CUDA_CACHE_DISABLE");
  ASSERT_NE(off, nullptr);
  EXPECT_STREQ(off, "1");
  KernelCompiler b(second.path(), {});
  const auto c = config(kSeed);
  const Compiled ra = a.compile(c);
  const Compiled rb = b.compile(c);
  for (const Compiled* r : {&ra, &rb}) {
    EXPECT_EQ(r->status, TrialStatus::ok) << r->reason;
    EXPECT_FALSE(r->from_cache);
    EXPECT_GT(r->registers, 0) << r->log;
  }
  EXPECT_EQ(ra.registers, rb.registers);
}

// A retry after a missing report compiles a program no cache has seen (an empty kernel of a random
// name appended): it reports the tile kernel's resources as the first compilation did, and two
// retries are two programs. Another program may get a register or two more or fewer from ptxas
// (seen once: 153 against 155), so the count is compared within a margin, the spills exactly.
TEST(NvrtcCompile, ARetryCompilesAFreshProgramThatReportsTheSameResources) {
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  const auto c = config(kSeed);
  const Compiled first = k.compile(c);
  ASSERT_EQ(first.status, TrialStatus::ok) << first.reason;
  const Compiled r1 = k.compile_as_retry(c), r2 = k.compile_as_retry(c);
  for (const Compiled* r : {&r1, &r2}) {
    EXPECT_EQ(r->status, TrialStatus::ok) << r->reason;
    EXPECT_GT(r->registers, 0) << r->log;
    EXPECT_NEAR(r->registers, first.registers, 8) << r->log;
    EXPECT_EQ(r->spill_store_bytes, first.spill_store_bytes) << r->log;
    EXPECT_EQ(r->lowered_name, first.lowered_name);
    EXPECT_FALSE(r->from_cache);
  }
  EXPECT_EQ(k.compilations(), 3u);
}

// The four outer-product orders of the 4096^3 winner's tile compile spill-free, each to a binary
// of its own (the order is in the kernel's template arguments and changes its code).
TEST(NvrtcCompile, EveryFmaOrderIsItsOwnSpillFreeBinary) {
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  std::set<std::string> binaries;
  for (int order = 0; order <= 3; ++order) {
    auto c = config("wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8");
    c.FMA_ORDER = order;
    const Compiled r = k.compile(c);
    expect_loadable(r, c, k);
    EXPECT_TRUE(binaries.insert(r.cubin_sha256).second) << r.config_name;
  }
}

// The single-float instance (for operands that refuse float4s) of the 4096^3 winner and of the
// seed compiles in every layout, spill-free, to its own binary.
TEST(NvrtcCompile, ScalarLoadInstancesCompileInEveryLayout) {
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  for (const char* name : {kSeed, "wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o1"}) {
    const auto c = config(name);
    for (const char* layout : {"NN", "NT", "TN", "TT"}) {
      SCOPED_TRACE(std::string(name) + " " + layout);
      const Compiled scalar = k.compile(c, layout, false);
      EXPECT_FALSE(scalar.vec_loads);
      expect_loadable(scalar, c, k);
      // The template arguments end with VEC: false, then true.
      EXPECT_NE(scalar.lowered_name.find("Lb0EEv"), std::string::npos) << scalar.lowered_name;
      const Compiled vec = k.compile(c, layout, true);
      EXPECT_TRUE(vec.vec_loads);
      EXPECT_NE(vec.lowered_name.find("Lb1EEv"), std::string::npos) << vec.lowered_name;
      EXPECT_NE(vec.cubin_sha256, scalar.cubin_sha256);
      // Each comes back from the cache as itself.
      EXPECT_FALSE(k.compile(c, layout, false).vec_loads);
      EXPECT_TRUE(k.compile(c, layout, false).from_cache);
    }
  }
}

// A PACK config runs its TN float4 instance on panels whatever the problem's layout and
// alignment, with the packing kernel in the same binary; only PACK configs carry it.
TEST(NvrtcCompile, PackConfigsCompileTheirTnInstanceWithThePackingKernel) {
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  const auto c = config("wt_64x128x16_w32x64_wn1_t4x4_n128_mb2_s2_p4_g8_k3_o1_x1");
  const Compiled tn = k.compile(c, "TN", true);
  expect_loadable(tn, c, k);
  EXPECT_EQ(tn.layout, "TN");
  EXPECT_TRUE(tn.vec_loads);
  EXPECT_EQ(tn.pack_lowered_name.rfind("_Z10sgemm_packILi0EEviN10sgt_kernel11PackOperandES1_", 0),
            0u)
      << tn.pack_lowered_name;
  EXPECT_NE(slurp(tn.cubin_path).find(tn.pack_lowered_name), std::string::npos);
  for (const char* layout : {"NN", "NT", "TT"}) {
    for (const bool vec : {true, false}) {
      SCOPED_TRACE(std::string(layout) + (vec ? " float4" : " scalar"));
      const Compiled r = k.compile(c, layout, vec);
      EXPECT_TRUE(r.from_cache);
      EXPECT_EQ(r.layout, "TN");
      EXPECT_TRUE(r.vec_loads);
      EXPECT_EQ(r.cubin_sha256, tn.cubin_sha256);
      EXPECT_EQ(r.pack_lowered_name, tn.pack_lowered_name);
    }
  }
  EXPECT_EQ(k.compilations(), 1u);
  auto unpacked = c;
  unpacked.PACK = 0;
  const Compiled plain = k.compile(unpacked, "NN", true);
  expect_loadable(plain, unpacked, k);
  EXPECT_TRUE(plain.pack_lowered_name.empty());
  EXPECT_NE(plain.cubin_sha256, tn.cubin_sha256);
}

// Family warptile_ring: the float4 instance of every layout (PACK's too) is sgemm_warptile_ring,
// whose PTX copies by cp.async and waits for all but STAGES - 2 commit groups; the instance for
// operands that refuse float4s is the double-buffered sgemm_warptile twin (STAGES 2) from the same
// program, with no cp.async. An operand stored with k contiguous (A in NN and NT, B in NT and TT)
// goes into k-contiguous buffers (rows of BK + 4 floats) instead of k-major ones. Through the
// tuner's compiler the ring is a spill-free cubin whose shared memory is its STAGES buffers of
// the layout's kind, with the split-K reduction beside it. Below sm_80 the ring's kernel still
// builds (a library built for several architectures holds it) with synchronous copies.
TEST(NvrtcCompile, RingConfigsCopyByCpAsyncInEveryLayoutsFloat4Instance) {
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  auto c = config("wr_128x32x16_w64x16_wn2_t4x4_n128_mb1_s3_p4_g8_o1_b4");
  const auto ptx = [&](const char* layout, bool vec, const char* arch = "compute_90") {
    return sgt::test::ptx_of("warptile_ring", sgt::resolve(c, layout, vec).name_expression, arch);
  };
  // Floats of one buffer of A (BM 128) and B (BN 32): k-major (BK rows of the side + its pad) or
  // k-contiguous (a row of BK per m or n, and 4 floats of pad every TM = TN = 4 rows).
  const int a_km = 16 * (128 + 4), b_km = 16 * (32 + 4), a_kc = 128 * 16 + 32 * 4,
            b_kc = 32 * 16 + 8 * 4;
  const std::map<std::string, int> buffers = {
      {"TN", a_km + b_km}, {"NN", a_kc + b_km}, {"NT", a_kc + b_kc}, {"TT", a_km + b_kc}};
  for (int stages : {3, 4}) {
    c.STAGES = stages;
    SCOPED_TRACE(sgt::to_name(c));
    for (const auto& [layout, floats] : buffers) {
      SCOPED_TRACE(layout);
      const std::string expr = sgt::resolve(c, layout, true).name_expression;
      const std::string trans = std::string(",") + (layout[0] == 'T' ? "1" : "0") + "," +
                                (layout[1] == 'T' ? "1" : "0") + ">";
      EXPECT_EQ(expr.rfind("sgemm_warptile_ring<", 0), 0u) << expr;
      EXPECT_EQ(expr.substr(expr.size() - trans.size()), trans) << expr;
      // Four buffers with A k-contiguous are over the 48 KB: the config breaks
      // ring_shared_memory, and the tuner never compiles it.
      if (stages * floats * 4 > 48 * 1024) {
        EXPECT_EQ(stages, 4);
        EXPECT_TRUE(layout == "NN" || layout == "NT");
        EXPECT_FALSE(sgt::check(c).empty());
        continue;
      }
      const auto p = ptx(layout.c_str(), true);
      ASSERT_TRUE(p.compiled) << p.log;
      EXPECT_NE(p.ptx.find("cp.async.cg.shared.global"), std::string::npos);
      EXPECT_NE(p.ptx.find("cp.async.wait_group " + std::to_string(stages - 2) + ";"),
                std::string::npos);
      EXPECT_NE(p.ptx.find("cp.async.commit_group"), std::string::npos);
      const Compiled r = k.compile(c, layout, true);
      ASSERT_EQ(r.status, TrialStatus::ok) << r.reason << "\n" << r.log;
      EXPECT_EQ(r.spill_store_bytes, 0);
      EXPECT_EQ(r.spill_load_bytes, 0);
      EXPECT_EQ(r.stack_bytes, 0);
      EXPECT_EQ(r.shared_bytes, stages * floats * 4);
      EXPECT_EQ(r.lowered_name.rfind("_Z19sgemm_warptile_ringIL", 0), 0u) << r.lowered_name;
      EXPECT_EQ(r.reduce_lowered_name.rfind("_Z19sgemm_splitk_reduce", 0), 0u);
      const std::string bytes = slurp(r.cubin_path);
      EXPECT_NE(bytes.find(r.lowered_name), std::string::npos);
      EXPECT_NE(bytes.find(r.reduce_lowered_name), std::string::npos);
      EXPECT_EQ(sgt::family_of(c).block_shared_bytes(c, layout[0] == 'T', layout[1] == 'T'),
                stages * floats * 4);
    }
    // Operands that refuse float4s: the twin, sgemm_warptile with STAGES 2.
    auto twin = c;
    twin.family = "warptile";
    twin.STAGES = 2;
    for (const char* layout : {"NN", "NT", "TN", "TT"}) {
      EXPECT_EQ(sgt::resolve(c, layout, false).name_expression,
                sgt::resolve(twin, layout, false).name_expression);
      const auto other = ptx(layout, false);
      ASSERT_TRUE(other.compiled) << layout << "\n" << other.log;
      EXPECT_EQ(other.ptx.find("cp.async"), std::string::npos) << layout;
    }
    const auto turing = ptx("NT", true, "compute_75");
    ASSERT_TRUE(turing.compiled) << turing.log;
    EXPECT_EQ(turing.ptx.find("cp.async"), std::string::npos);
  }
  // PACK: the TN ring on the panels in every layout, with the packing kernel.
  c.STAGES = 3;
  c.PACK = 1;
  for (const char* layout : {"NN", "NT", "TT"}) {
    for (bool vec : {false, true}) {
      EXPECT_EQ(sgt::resolve(c, layout, vec).name_expression,
                sgt::resolve(c, "TN", true).name_expression)
          << layout;
    }
  }
  const Compiled packed = k.compile(c, "NN", false);
  ASSERT_EQ(packed.status, TrialStatus::ok) << packed.reason << "\n" << packed.log;
  EXPECT_EQ(packed.layout, "TN");
  EXPECT_EQ(packed.pack_lowered_name.rfind("_Z10sgemm_packILi0E", 0), 0u);
}

void print_report(const Compiled& r) {
  std::printf("[          ] %s: %s, %d registers, %d B stack, %d/%d B spill st/ld, %d B smem\n",
              r.config_name.c_str(), std::string(sgt::to_string(r.status)).c_str(), r.registers,
              r.stack_bytes, r.spill_store_bytes, r.spill_load_bytes, r.shared_bytes);
}

TEST(NvrtcCompile, HeaviestDefaultSurvivorsCompile) {
  const auto all = survivors("default");
  ASSERT_FALSE(all.empty());
  auto heaviest = [&](auto&& key) {
    return *std::max_element(all.begin(), all.end(),
                             [&](const auto& a, const auto& b) { return key(a) < key(b); });
  };
  const std::vector<WarpTileConfig> picks = {
      heaviest([](const WarpTileConfig& c) { return sgt::derive(c).ACCUMULATORS; }),
      // MIN_BLOCKS=2 with the most accumulators, then the most threads: the tightest register
      // cap the rules still let through.
      heaviest([](const WarpTileConfig& c) {
        return std::tuple(c.MIN_BLOCKS, sgt::derive(c).ACCUMULATORS, c.NUM_THREADS);
      }),
      heaviest([](const WarpTileConfig& c) { return sgt::derive(c).SMEM_BYTES; }),
  };
  ASSERT_EQ(picks[1].MIN_BLOCKS, 2);
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  for (const auto& c : picks) {
    const Compiled r = k.compile(c);
    SCOPED_TRACE(r.config_name);
    print_report(r);
    // Survivors may still spill (the rules cannot know ptxas' register allocation); what must
    // hold is that they compile and that the status says exactly what ptxas reported.
    ASSERT_NE(r.status, TrialStatus::compile_failed) << r.reason;
    ASSERT_NE(r.status, TrialStatus::resources) << r.reason;
    const bool local = r.spill_store_bytes + r.spill_load_bytes + r.stack_bytes > 0;
    EXPECT_EQ(r.status == TrialStatus::spills, local) << r.reason;
    EXPECT_LE(r.registers, std::min(255, 65536 / (c.NUM_THREADS * c.MIN_BLOCKS)));
    if (r.status == TrialStatus::ok) expect_loadable(r, c, k);
  }
}

TEST(NvrtcCompile, HeavyConfigStatusMatchesThePtxasReport) {
  // 128 accumulators per thread with 256 threads and MIN_BLOCKS=2: __launch_bounds__ leaves
  // 65536 / (256 * 2) = 128 registers for them. The rules reject it for that reason; compiled
  // anyway, ptxas must confirm them one way or the other.
  const auto c = config("wt_128x256x16_w64x64_wn4_t8x4_n256_mb2");
  ASSERT_EQ(sgt::derive(c).ACCUMULATORS, 128);
  const auto violations = sgt::check(c);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations.front().rule, "register_cap");
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  const Compiled r = k.compile(c);
  print_report(r);
  ASSERT_TRUE(r.status == TrialStatus::ok || r.status == TrialStatus::spills)
      << sgt::to_string(r.status) << ": " << r.reason;
  EXPECT_GT(r.registers, 0);
  EXPECT_LE(r.registers, 65536 / (c.NUM_THREADS * c.MIN_BLOCKS));
  EXPECT_FALSE(r.lowered_name.empty());
  EXPECT_EQ(r.shared_bytes, sgt::derive(c).SMEM_BYTES);
  const bool local = r.spill_store_bytes + r.spill_load_bytes + r.stack_bytes > 0;
  EXPECT_EQ(r.status == TrialStatus::spills, local);
  if (r.status == TrialStatus::spills) {
    EXPECT_TRUE(r.cubin_path.empty());
    EXPECT_TRUE(r.cubin_sha256.empty());
    EXPECT_NE(r.reason.find("bytes stack frame"), std::string::npos) << r.reason;
  } else {
    expect_loadable(r, c, k);
  }
}

TEST(NvrtcCompile, StaticAssertViolationIsCompileFailedWithTheRuleName) {
  // TM=TN=8 leaves WM*WN = 2048 short of 32*TM*TN*WNITER = 4096: WMITER would be 0.
  const auto c = config("wt_128x64x16_w64x32_wn2_t8x8_n128_mb1");
  const auto violations = sgt::check(c);
  ASSERT_FALSE(violations.empty());
  EXPECT_EQ(violations.front().rule, "wmiter_divisibility");
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  const Compiled r = k.compile(c);
  EXPECT_EQ(r.status, TrialStatus::compile_failed);
  EXPECT_NE(r.reason.find("wmiter_divisibility"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("static assertion failed"), std::string::npos) << r.reason;
  // The error points at the kernel's own static_assert line.
  const std::string src(sgt::kernel_sources().at(0).text);
  const auto at = src.find("static_assert(g.WMITER >= 1");
  ASSERT_NE(at, std::string::npos);
  const auto line = 1 + std::count(src.begin(), src.begin() + static_cast<long>(at), '\n');
  EXPECT_NE(r.log.find("sgemm_warptile.cuh(" + std::to_string(line) + ")"), std::string::npos)
      << r.log;
  EXPECT_TRUE(r.cubin_path.empty());
  EXPECT_TRUE(r.lowered_name.empty());
  EXPECT_EQ(r.registers, 0);
  EXPECT_EQ(k.compilations(), 1u);
}

TEST(NvrtcCompile, ThreadCountViolationNamesItsRule) {
  // 256 threads for a block of (128/64) * (64/32) = 4 warps; every other rule holds.
  const auto c = config("wt_128x64x16_w64x32_wn2_t4x4_n256_mb1");
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  const Compiled r = k.compile(c);
  EXPECT_EQ(r.status, TrialStatus::compile_failed);
  EXPECT_NE(r.reason.find("thread_count"), std::string::npos) << r.reason;
}

TEST(NvrtcCompile, OversizedSharedMemoryIsResources) {
  // (256 + 256) * 32 floats = 64 KB of static shared memory; NVRTC fails it without an error
  // line, after ptxas has reported the size.
  const auto c = config("wt_256x256x32_w64x32_wn1_t8x8_n1024_mb1");
  ASSERT_EQ(sgt::derive(c).SMEM_BYTES, 65536);
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  const Compiled r = k.compile(c);
  EXPECT_EQ(r.status, TrialStatus::resources) << r.reason << "\n" << r.log;
  EXPECT_EQ(r.shared_bytes, 65536);
  EXPECT_NE(r.reason.find("shared memory"), std::string::npos) << r.reason;
  EXPECT_TRUE(r.cubin_path.empty());
}

TEST(NvrtcCompile, CompileAllKeepsInputOrderAndSerialisesCallbacks) {
  const std::vector<WarpTileConfig> cs = {
      config(kSeed),
      config("wt_128x64x16_w64x32_wn2_t8x8_n128_mb1"),  // compile_failed
      config("wt_128x64x8_w64x32_wn1_t8x4_n128_mb1"),
      config("wt_128x128x8_w64x64_wn1_t8x4_n128_mb1"),
      config(kSeed),  // a duplicate: compiled once, the second request waits for the entry
  };
  const auto quick = survivors("quick");
  for (size_t i : {0u, 2u, 3u}) ASSERT_TRUE(contains(quick, cs[i])) << sgt::to_name(cs[i]);
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  std::atomic<int> inside{0};
  int calls = 0;
  bool overlapped = false;
  const auto results = k.compile_all(cs, 2, [&](const Compiled&) {
    if (inside.fetch_add(1) != 0) overlapped = true;
    ++calls;
    inside.fetch_sub(1);
  });
  ASSERT_EQ(results.size(), cs.size());
  for (size_t i = 0; i < cs.size(); ++i) EXPECT_EQ(results[i].config_name, sgt::to_name(cs[i]));
  EXPECT_EQ(calls, static_cast<int>(cs.size()));
  EXPECT_FALSE(overlapped);
  EXPECT_EQ(results[1].status, TrialStatus::compile_failed);
  for (size_t i : {0u, 2u, 3u, 4u}) expect_loadable(results[i], cs[i], k);
  EXPECT_EQ(k.compilations(), 4u);
  EXPECT_NE(results[0].from_cache, results[4].from_cache);
  EXPECT_EQ(results[0].cubin_sha256, results[4].cubin_sha256);
}

TEST(NvrtcCompile, CompileAllRethrowsTheFirstError) {
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  EXPECT_THROW(k.compile_all({config(kSeed)}, 1, [](const Compiled&) { throw sgt::Error("x"); }),
               sgt::Error);
  EXPECT_TRUE(k.compile_all({}, 2).empty());
}

// TMA = 1 configs compile their own kernel (sgemm_ws_tma) for the architecture-specific target of
// the GPU, in every layout, to one instance whatever the loads asked for, spill-free; the static
// shared memory is only the mbarriers (the stages are dynamic). Below sm_90 they are a recorded
// failure naming the architecture, never an NVRTC error.
TEST(NvrtcCompile, TmaConfigsCompileTheirWarpSpecialisedKernelForSm90a) {
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  const auto c = config("wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o3_m1");
  ASSERT_TRUE(sgt::check(c).empty());
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    SCOPED_TRACE(layout);
    const Compiled r = k.compile(c, layout, true);
    ASSERT_EQ(r.status, TrialStatus::ok) << r.reason << "\n" << r.log;
    EXPECT_EQ(r.lowered_name.rfind("_Z12sgemm_ws_tmaIL", 0), 0u) << r.lowered_name;
    EXPECT_EQ(r.spill_store_bytes + r.spill_load_bytes + r.stack_bytes, 0);
    // The launch bound caps the entry at 168 (384 threads); setmaxnreg moves the rest.
    EXPECT_EQ(r.registers, 168);
    EXPECT_LT(r.shared_bytes, 256);
    // Compiled for the architecture-specific target, as the cache entry records.
    const auto entry =
        nlohmann::json::parse(slurp(dir.path() / (k.cache_key(c, layout, true) + ".json")));
    EXPECT_EQ(entry.at("inputs").at("options").at(0), "-arch=sm_90a");
    EXPECT_EQ(sgt::sha256_hex(slurp(r.cubin_path)), r.cubin_sha256);
    // The scalar-loads request is the same binary.
    EXPECT_EQ(k.compile(c, layout, false).cubin_sha256, r.cubin_sha256);
  }
  EXPECT_EQ(k.compilations(), 4u);
  // Its cache key differs from the TMA = 0 config of the same tile.
  auto plain = c;
  plain.family = "warptile";
  EXPECT_NE(k.cache_key(c), k.cache_key(plain));

  KernelCompiler old(dir.path() / "sm80", {.arch = "sm_80"});
  const Compiled r80 = old.compile(c);
  EXPECT_EQ(r80.status, TrialStatus::compile_failed);
  EXPECT_NE(r80.reason.find("sm_90"), std::string::npos) << r80.reason;
  EXPECT_NE(r80.reason.find("sm_80"), std::string::npos) << r80.reason;
  EXPECT_EQ(old.compilations(), 0u);
}

TEST(NvrtcCompile, RejectsArchitecturesWithoutACubin) {
  sgt::test::TempDir dir;
  EXPECT_THROW(KernelCompiler(dir.path(), {.arch = "compute_90"}), sgt::InputError);
  EXPECT_THROW(KernelCompiler(dir.path(), {.arch = "sm_9"}), sgt::InputError);
  EXPECT_THROW(KernelCompiler(dir.path(), {.arch = "90"}), sgt::InputError);
}

TEST(NvrtcCompile, ABadOptionIsAnErrorNotAConfigResult) {
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {.extra_options = {"--no-such-option"}});
  EXPECT_THROW(k.compile(config(kSeed)), sgt::Error);
  // Nothing may be cached for it: the config did nothing wrong.
  EXPECT_FALSE(std::filesystem::exists(dir.path() / (k.cache_key(config(kSeed)) + ".json")));
}

TEST(NvrtcCompile, Throughput) {
  auto cs = survivors("quick");
  ASSERT_GE(cs.size(), 8u);
  cs.resize(8);
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const auto t0 = std::chrono::steady_clock::now();
  const auto results = k.compile_all(cs, threads);
  const double cold = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& r : results) EXPECT_EQ(r.status, TrialStatus::ok) << r.config_name;
  const auto t1 = std::chrono::steady_clock::now();
  const auto again = k.compile_all(cs, threads);
  const double warm = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  for (const auto& r : again) EXPECT_TRUE(r.from_cache) << r.config_name;
  EXPECT_EQ(k.compilations(), cs.size());
  std::printf(
      "[          ] NVRTC %d.%d, %u threads: %zu configs in %.2f s = %.2f configs/s "
      "compiled, %.0f configs/s from cache\n",
      k.nvrtc_major(), k.nvrtc_minor(), threads, cs.size(), cold, cs.size() / cold,
      cs.size() / warm);
}

}  // namespace
