// The on-disk kernel cache: a second compile of the same configs compiles nothing, a damaged entry
// is detected and recompiled rather than loaded, keys follow every input, writers do not collide.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config.hpp"
#include "error.hpp"
#include "family.hpp"
#include "kernel_source.hpp"
#include "nvrtc_compiler.hpp"
#include "sha256.hpp"
#include "space.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using sgt::TrialStatus;
using sgt::WarpTileConfig;
using sgt::eval::Compiled;
using sgt::gpu::KernelCompiler;

using sgt::test::config;
using sgt::test::kSeed;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << bytes;
}

TEST(KernelCache, SecondCompileOfTheSameConfigsCompilesNothing) {
  const std::vector<WarpTileConfig> cs = {
      config(kSeed), config("wt_64x128x16_w32x64_wn2_t8x4_n128_mb1"),
      config("wt_128x64x16_w64x32_wn2_t8x8_n128_mb1"),   // compile_failed: cached as json only
      config("wt_128x256x16_w64x64_wn4_t8x4_n256_mb2"),  // heavy: whatever ptxas says, cached
  };
  const auto quick = sgt::enumerate(sgt::load_space("quick")).survivors;
  ASSERT_NE(std::find(quick.begin(), quick.end(), cs[1]), quick.end());
  sgt::test::TempDir dir;
  std::vector<Compiled> first;
  {
    KernelCompiler k(dir.path(), {});
    first = k.compile_all(cs, 2);
    EXPECT_EQ(k.compilations(), cs.size());
    for (const auto& r : first) EXPECT_FALSE(r.from_cache) << r.config_name;
  }
  EXPECT_EQ(first[2].status, TrialStatus::compile_failed);

  // A fresh compiler over the same directory stands for the next process.
  KernelCompiler k(dir.path(), {});
  const auto t0 = std::chrono::steady_clock::now();
  const auto second = k.compile_all(cs, 2);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(k.compilations(), 0u);
  ASSERT_EQ(second.size(), first.size());
  for (size_t i = 0; i < cs.size(); ++i) {
    const auto &a = first[i], &b = second[i];
    SCOPED_TRACE(a.config_name);
    EXPECT_TRUE(b.from_cache);
    EXPECT_EQ(b.config_name, a.config_name);
    EXPECT_EQ(b.status, a.status);
    EXPECT_EQ(b.reason, a.reason);
    EXPECT_EQ(b.log, a.log);
    EXPECT_EQ(b.lowered_name, a.lowered_name);
    EXPECT_EQ(b.cubin_path, a.cubin_path);
    EXPECT_EQ(b.cubin_sha256, a.cubin_sha256);
    EXPECT_EQ(b.registers, a.registers);
    EXPECT_EQ(b.spill_store_bytes, a.spill_store_bytes);
    EXPECT_EQ(b.spill_load_bytes, a.spill_load_bytes);
    EXPECT_EQ(b.stack_bytes, a.stack_bytes);
    EXPECT_EQ(b.shared_bytes, a.shared_bytes);
    EXPECT_DOUBLE_EQ(b.compile_seconds, a.compile_seconds);
    const fs::path stem = dir.path() / k.cache_key(cs[i]);
    EXPECT_TRUE(fs::exists(fs::path(stem) += ".json"));
    EXPECT_EQ(fs::exists(fs::path(stem) += ".cubin"), a.status == TrialStatus::ok);
  }
  std::printf("[          ] %zu cached configs in %.4f s\n", cs.size(), secs);
}

TEST(KernelCache, EntryRecordsItsKeyInputs) {
  sgt::test::TempDir dir;
  KernelCompiler k(dir.path(), {});
  const auto c = config(kSeed);
  const Compiled r = k.compile(c);
  ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
  const auto j = nlohmann::json::parse(slurp(dir.path() / (k.cache_key(c) + ".json")));
  EXPECT_EQ(j.at("key"), k.cache_key(c));
  EXPECT_EQ(j.at("config_name"), kSeed);
  EXPECT_EQ(j.at("status"), "ok");
  EXPECT_EQ(j.at("cubin_sha256"), r.cubin_sha256);
  EXPECT_EQ(j.at("cubin_bytes").get<size_t>(), slurp(r.cubin_path).size());
  EXPECT_EQ(j.at("lowered_name"), r.lowered_name);
  EXPECT_EQ(j.at("registers"), r.registers);
  const auto& in = j.at("inputs");
  EXPECT_EQ(in.at("kernel_source_hash"), sgt::kernel_source_hash());
  EXPECT_EQ(in.at("arch"), "sm_90");
  EXPECT_EQ(in.at("nvrtc_version"),
            std::to_string(k.nvrtc_major()) + "." + std::to_string(k.nvrtc_minor()));
  EXPECT_EQ(in.at("options").get<std::vector<std::string>>(), k.nvrtc_options());
  EXPECT_EQ(in.at("config").get<WarpTileConfig>(), c);
}

// Each way an entry can go bad on disk: the damage must be detected, the bad cubin never handed
// out, and the entry rebuilt so that the next reader trusts it again.
enum class Damage { flip_cubin_byte, truncate_cubin, delete_cubin, garbage_json, wrong_digest };

class DamagedEntry : public testing::TestWithParam<Damage> {};

TEST_P(DamagedEntry, IsDetectedAndRecompiled) {
  sgt::test::TempDir dir;
  const auto c = config(kSeed);
  Compiled good;
  std::string key;
  {
    KernelCompiler k(dir.path(), {});
    good = k.compile(c);
    key = k.cache_key(c);
  }
  ASSERT_EQ(good.status, TrialStatus::ok) << good.reason;
  const fs::path cubin = good.cubin_path, json = dir.path() / (key + ".json");
  std::string bytes = slurp(cubin);
  switch (GetParam()) {
    case Damage::flip_cubin_byte:
      bytes[bytes.size() / 2] ^= 0x01;
      spit(cubin, bytes);
      break;
    case Damage::truncate_cubin:
      spit(cubin, bytes.substr(0, bytes.size() / 2));
      break;
    case Damage::delete_cubin:
      fs::remove(cubin);
      break;
    case Damage::garbage_json: {
      std::string text = slurp(json);
      spit(json, text.substr(0, text.size() / 2));  // torn write: valid prefix, invalid json
      break;
    }
    case Damage::wrong_digest: {
      auto j = nlohmann::json::parse(slurp(json));
      j["cubin_sha256"] = sgt::sha256_hex("something else");
      spit(json, j.dump());
      break;
    }
  }
  if (GetParam() != Damage::garbage_json && GetParam() != Damage::wrong_digest) {
    EXPECT_THROW(KernelCompiler::load_verified_cubin(cubin, good.cubin_sha256), sgt::Error);
  }

  KernelCompiler k(dir.path(), {});
  const Compiled again = k.compile(c);
  EXPECT_FALSE(again.from_cache);
  EXPECT_EQ(k.compilations(), 1u);
  ASSERT_EQ(again.status, TrialStatus::ok) << again.reason;
  EXPECT_EQ(again.cubin_path, cubin);
  EXPECT_EQ(sgt::sha256_hex(slurp(again.cubin_path)), again.cubin_sha256);
  EXPECT_NO_THROW(KernelCompiler::load_verified_cubin(again.cubin_path, again.cubin_sha256));

  KernelCompiler next(dir.path(), {});
  const Compiled third = next.compile(c);
  EXPECT_TRUE(third.from_cache);
  EXPECT_EQ(next.compilations(), 0u);
  EXPECT_EQ(third.cubin_sha256, again.cubin_sha256);
}

INSTANTIATE_TEST_SUITE_P(KernelCache, DamagedEntry,
                         testing::Values(Damage::flip_cubin_byte, Damage::truncate_cubin,
                                         Damage::delete_cubin, Damage::garbage_json,
                                         Damage::wrong_digest),
                         [](const testing::TestParamInfo<Damage>& info) {
                           switch (info.param) {
                             case Damage::flip_cubin_byte:
                               return "flip_cubin_byte";
                             case Damage::truncate_cubin:
                               return "truncate_cubin";
                             case Damage::delete_cubin:
                               return "delete_cubin";
                             case Damage::garbage_json:
                               return "garbage_json";
                             case Damage::wrong_digest:
                               return "wrong_digest";
                           }
                           return "unknown";
                         });

// Each kernel family has its own source hash, over the files its kernel is built from: the
// template's covers only its own two files, so the TMA kernel's files can change without making
// the template's trials and cache entries stale.
TEST(KernelCache, EachKernelFamilyHashesItsOwnFiles) {
  auto plain = sgt::test::config("wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o3");
  auto tma = plain;
  tma.family = "ws_tma";
  const sgt::KernelFamily* warptile = sgt::find_family("warptile");
  const sgt::KernelFamily* ws_tma = sgt::find_family("ws_tma");
  ASSERT_TRUE(warptile && ws_tma);
  EXPECT_EQ(&sgt::family_of(plain), warptile);
  EXPECT_EQ(&sgt::family_of(tma), ws_tma);
  EXPECT_EQ(sgt::kernel_source_hash(plain), sgt::kernel_source_hash());
  EXPECT_NE(sgt::kernel_source_hash(tma), sgt::kernel_source_hash());
  const sgt::KernelFamily* tf32x3 = sgt::find_family("tf32x3");
  const sgt::KernelFamily* tf32x3_wg = sgt::find_family("tf32x3_wg");
  ASSERT_TRUE(tf32x3 && tf32x3_wg);
  const sgt::KernelFamily* ring = sgt::find_family("warptile_ring");
  ASSERT_TRUE(ring);
  EXPECT_EQ(sgt::kernel_source_hashes(),
            (std::vector<std::string>{sgt::kernel_source_hash(plain), sgt::kernel_source_hash(tma),
                                      tf32x3->source_hash(), tf32x3_wg->source_hash(),
                                      ring->source_hash()}));
  // The hashes every stored trial and the fixture databases carry: moving the families into the
  // registry must not make one of them stale.
  EXPECT_EQ(warptile->source_hash(),
            "7fb9669d7aef4c0e74b8c8e06f08460fd8a3bd3f2c5a5b33b9c85c50482fe29b");
  EXPECT_EQ(ws_tma->source_hash(),
            "858f7e287ae426a961e7f394060087f2a0bd63949cf2afca98b4d98b9e98d144");
  std::vector<std::string> names;
  for (const auto& f : warptile->sources()) names.emplace_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"sgemm_warptile.cuh", "warptile_geometry.h"}));
  names.clear();
  for (const auto& f : ws_tma->sources()) {
    names.emplace_back(f.name);
    EXPECT_FALSE(f.text.empty()) << f.name;
  }
  EXPECT_EQ(names.front(), "sgemm_ws_tma.cuh");
  EXPECT_EQ(names.size(), 4u);
  // The files of every family, each once: tf32x3 and tf32x3_wg each add their kernel and geometry
  // header, tf32x3_wg its BF16 split's kernel too, warptile_ring its kernel and ring header. The
  // ring is a family of its own so that the template's files, and with them every stored trial
  // of the other families, stay as they were.
  EXPECT_EQ(sgt::kernel_sources().size(), 11u);
  names.clear();
  for (const auto& f : ring->sources()) names.emplace_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"sgemm_warptile_ring.cuh", "sgemm_warptile.cuh",
                                             "warptile_geometry.h", "warptile_ring.h"}));
  // The template's hash is the hash over its two files alone (what trials before the TMA kernel
  // recorded).
  std::string all;
  for (const auto& f : warptile->sources()) {
    all += f.name;
    all += '\0';
    all += f.text;
    all += '\0';
  }
  EXPECT_EQ(sgt::sha256_hex(all), sgt::kernel_source_hash());
}

TEST(KernelCache, CachedFailureIsNotRecompiled) {
  sgt::test::TempDir dir;
  const auto bad = config("wt_128x64x16_w64x32_wn2_t8x8_n128_mb1");
  {
    KernelCompiler k(dir.path(), {});
    EXPECT_EQ(k.compile(bad).status, TrialStatus::compile_failed);
  }
  KernelCompiler k(dir.path(), {});
  const Compiled r = k.compile(bad);
  EXPECT_TRUE(r.from_cache);
  EXPECT_EQ(k.compilations(), 0u);
  EXPECT_EQ(r.status, TrialStatus::compile_failed);
  EXPECT_NE(r.reason.find("wmiter_divisibility"), std::string::npos) << r.reason;
}

TEST(KernelCache, KeyFollowsArchOptionsAndConfig) {
  sgt::test::TempDir dir;
  const auto seed = config(kSeed);
  KernelCompiler sm90(dir.path(), {});
  KernelCompiler sm90_again(dir.path(), {.arch = "sm_90"});
  KernelCompiler sm80(dir.path(), {.arch = "sm_80"});
  KernelCompiler lineinfo(dir.path(), {.extra_options = {"-lineinfo"}});
  KernelCompiler maxreg(dir.path(), {.extra_options = {"-maxrregcount=128"}});

  const std::string key = sm90.cache_key(seed);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(sm90_again.cache_key(seed), key);
  EXPECT_NE(sm80.cache_key(seed), key);
  EXPECT_NE(lineinfo.cache_key(seed), key);
  EXPECT_NE(maxreg.cache_key(seed), key);
  EXPECT_NE(lineinfo.cache_key(seed), maxreg.cache_key(seed));
  EXPECT_NE(sm90.cache_key(config("wt_128x64x16_w64x32_wn2_t4x4_n128_mb2")), key);

  const auto& opts = sm90.nvrtc_options();
  EXPECT_NE(std::find(opts.begin(), opts.end(), "-arch=sm_90"), opts.end());
  EXPECT_NE(std::find(opts.begin(), opts.end(), "--ptxas-options=-v"), opts.end());
  EXPECT_EQ(lineinfo.nvrtc_options().back(), "-lineinfo");
  EXPECT_EQ(resolve(seed, "NN", true).name_expression,
            "sgemm_warptile<128,64,16,64,32,2,4,4,128,1,1,0,1,0,0,0,0,false,false,true>");

  // The layout picks the instance, so it is part of the key; SPLIT_K is a launch parameter, so
  // configs differing only in it share one binary; the other knobs change the code.
  EXPECT_EQ(resolve(seed, "TN", true).name_expression,
            "sgemm_warptile<128,64,16,64,32,2,4,4,128,1,1,0,1,0,0,0,0,true,false,true>");
  // So does the main loop's loads.
  EXPECT_EQ(resolve(seed, "TN", false).name_expression,
            "sgemm_warptile<128,64,16,64,32,2,4,4,128,1,1,0,1,0,0,0,0,true,false,false>");
  EXPECT_NE(sm90.cache_key(seed, "NN", false), key);
  EXPECT_NE(sm90.cache_key(seed, "TN", false), sm90.cache_key(seed, "TN"));
  EXPECT_NE(sm90.cache_key(seed, "NT"), key);
  EXPECT_NE(sm90.cache_key(seed, "NT"), sm90.cache_key(seed, "TN"));
  EXPECT_EQ(sm90.cache_key(seed, "NN"), key);
  EXPECT_EQ(sm90.cache_key(config("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_k4")), key);
  EXPECT_NE(sm90.cache_key(config("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_s2")), key);
  EXPECT_NE(sm90.cache_key(config("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p4")), key);
  EXPECT_NE(sm90.cache_key(config("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_g8")), key);
  EXPECT_NE(sm90.cache_key(config("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_o1")), key);
  EXPECT_THROW(resolve(seed, "NX", true), sgt::InputError);
  EXPECT_THROW(resolve(seed, "nn", true), sgt::InputError);
}

TEST(KernelCache, OtherArchIsASeparateEntry) {
  sgt::test::TempDir dir;
  const auto seed = config(kSeed);
  KernelCompiler sm90(dir.path(), {});
  KernelCompiler sm80(dir.path(), {.arch = "sm_80"});
  const Compiled a = sm90.compile(seed);
  const Compiled b = sm80.compile(seed);
  ASSERT_EQ(a.status, TrialStatus::ok) << a.reason;
  ASSERT_EQ(b.status, TrialStatus::ok) << b.reason;
  EXPECT_FALSE(b.from_cache);
  EXPECT_NE(a.cubin_path, b.cubin_path);
  EXPECT_NE(a.log.find("for 'sm_90'"), std::string::npos);
  EXPECT_NE(b.log.find("for 'sm_80'"), std::string::npos);
}

TEST(KernelCache, ConcurrentCompilersOfOneDirectoryCompileOnce) {
  // Two compiler objects share nothing in memory, like two processes; only the lock file in
  // the cache directory can keep them from compiling the same key twice.
  sgt::test::TempDir dir;
  const auto seed = config(kSeed);
  KernelCompiler a(dir.path(), {}), b(dir.path(), {});
  Compiled ra, rb;
  {
    std::jthread ta([&] { ra = a.compile(seed); });
    std::jthread tb([&] { rb = b.compile(seed); });
  }
  EXPECT_EQ(a.compilations() + b.compilations(), 1u);
  EXPECT_NE(ra.from_cache, rb.from_cache);
  EXPECT_EQ(ra.cubin_sha256, rb.cubin_sha256);
  EXPECT_NO_THROW(KernelCompiler::load_verified_cubin(ra.cubin_path, ra.cubin_sha256));
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(KernelCache, LoadVerifiedCubinRefusesWhatItCannotVouchFor) {
  sgt::test::TempDir dir;
  const fs::path p = dir.path() / "x.cubin";
  EXPECT_THROW(KernelCompiler::load_verified_cubin(p, sgt::sha256_hex("abc")), sgt::Error);
  spit(p, "abc");
  EXPECT_EQ(KernelCompiler::load_verified_cubin(p, sgt::sha256_hex("abc")), "abc");
  EXPECT_THROW(KernelCompiler::load_verified_cubin(p, sgt::sha256_hex("abd")), sgt::Error);
  EXPECT_THROW(KernelCompiler::load_verified_cubin(p, ""), sgt::Error);
  spit(p, "");
  EXPECT_THROW(KernelCompiler::load_verified_cubin(p, sgt::sha256_hex("")), sgt::Error);
}

TEST(KernelCache, DefaultDirectoryFollowsTheEnvironment) {
  struct Env {
    std::string name;
    std::optional<std::string> old;
    explicit Env(std::string n) : name(std::move(n)) {
      if (const char* v = std::getenv(name.c_str())) old = v;
    }
    ~Env() {
      if (old)
        setenv(name.c_str(), old->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  } cache("SGT_CACHE_DIR"), xdg("XDG_CACHE_HOME"), home("HOME");

  setenv("SGT_CACHE_DIR", "/a/b", 1);
  setenv("XDG_CACHE_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  EXPECT_EQ(sgt::gpu::default_cache_dir(), fs::path("/a/b"));
  unsetenv("SGT_CACHE_DIR");
  EXPECT_EQ(sgt::gpu::default_cache_dir(), fs::path("/x/sgemm-tune/kernels"));
  setenv("XDG_CACHE_HOME", "", 1);
  EXPECT_EQ(sgt::gpu::default_cache_dir(), fs::path("/h/.cache/sgemm-tune/kernels"));
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  EXPECT_THROW(sgt::gpu::default_cache_dir(), sgt::Error);
}

}  // namespace
