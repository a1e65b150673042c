// A kernel family added from a folder of its own (tests/families/naive/) and one registration:
// enumerated in a space, checked by its own named rules, named and parsed, compiled by the real
// NVRTC, and stored in and read back from a tuning database, with no edit anywhere else.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "config.hpp"
#include "family.hpp"
#include "kernel_source.hpp"
#include "naive/naive_family.hpp"
#include "nvrtc_compiler.hpp"
#include "space.hpp"
#include "sqlite.hpp"
#include "store.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

namespace fs = std::filesystem;

const KernelFamily& naive() {
  // The one registration: what a family added to the registry gets from its one line there.
  static const KernelFamily* f = [] {
    register_family(test::make_naive_family());
    return find_family("naive");
  }();
  return *f;
}

WarpTileConfig naive_config(int BM, int BN, int TM, int TN) {
  WarpTileConfig c;
  c.BM = BM, c.BN = BN, c.TM = TM, c.TN = TN;
  c.NUM_THREADS = (BM / TM) * (BN / TN);
  c.MIN_BLOCKS = 1;
  c.BK = c.WM = c.WN = 4;
  c.WNITER = 1;
  c.TMA = 2;
  return c;
}

TEST(KernelFamilies, TheRegistryListsEachFamilyOnceByItsId) {
  naive();
  const auto& all = families();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0]->id(), "warptile");
  EXPECT_EQ(all[1]->id(), "ws_tma");
  EXPECT_EQ(find_family("nope"), nullptr);
  EXPECT_EQ(all[2]->id(), "naive");
  // A second family with the same id would make stored ids ambiguous.
  EXPECT_THROW(register_family(test::make_naive_family()), std::logic_error);
}

TEST(KernelFamilies, ANewFamilyClaimsItsConfigsAndChecksThemByItsOwnRules) {
  const auto& f = naive();
  const auto c = naive_config(32, 32, 2, 4);
  EXPECT_EQ(&family_of(c), &f);
  EXPECT_TRUE(check(c).empty()) << check(c).front().reason;
  // Its rules are in rules() (after the built-in families'), so spaces count them.
  std::vector<std::string> names;
  for (const auto& r : rules()) names.emplace_back(r.name);
  for (const auto& r : f.rules())
    EXPECT_NE(std::find(names.begin(), names.end(), r.name), names.end()) << r.name;

  auto bad = c;
  bad.NUM_THREADS = 64;
  auto v = check(bad);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].rule, "naive_tile");
  bad = c;
  bad.STAGES = 2;  // a knob it has no use for
  v = check(bad);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].rule, "naive_fixed_fields");
  // Its own resource rule, not the warp-tiling one (whose thread_count a 4x4 "warp tile" breaks).
  bad = naive_config(64, 64, 4, 4);  // 256 threads
  Limits small;
  small.max_threads_per_block = 128;
  v = check(bad, small);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].rule, "naive_threads");
}

TEST(KernelFamilies, ANewFamilysNamesLeadWithItsPrefixAndRoundTrip) {
  const auto& f = naive();
  const auto c = naive_config(32, 16, 2, 4);
  const auto name = to_name(c);
  EXPECT_EQ(name, "nv_32x16x4_w4x4_wn1_t2x4_n64_mb1");  // TMA = 2 is implied by the prefix
  EXPECT_EQ(name.rfind(f.name_prefix(), 0), 0u);
  ASSERT_TRUE(from_name(name));
  EXPECT_EQ(*from_name(name), c);
  // One config, one name: the warp-tiling spelling of the same fields is not one.
  EXPECT_FALSE(from_name("wt_32x16x4_w4x4_wn1_t2x4_n64_mb1_m2"));
  EXPECT_FALSE(from_name("nv_32x16x4_w4x4_wn1_t2x4_n64_mb1_m2"));
  // The built-in families' names keep meaning what they meant.
  EXPECT_EQ(from_name(test::kSeed)->TMA, 0);
  EXPECT_EQ(&family_of(*from_name(test::kSeed + std::string("_s2_m1"))), find_family("ws_tma"));
}

TEST(KernelFamilies, ASpaceOfANewFamilyEnumeratesThroughItsRules) {
  naive();
  const auto space = parse_space(nlohmann::json::parse(R"({
    "name": "naive", "description": "the test family",
    "parameters": {"BM": [16, 32], "BN": [16, 32], "BK": [4], "WM": [4], "WN": [4],
                   "WNITER": [1], "TM": [1, 2, 4], "TN": [4], "NUM_THREADS": [32, 64, 128],
                   "MIN_BLOCKS": [1], "TMA": [2]}})"),
                                 "naive space");
  const auto e = enumerate(space);
  // (BM/TM)*(BN/4) threads: 16x16 with TM 1 (64), 2 (32); 16x32 and 32x16 with TM 1 (128),
  // 2 (64), 4 (32); 32x32 with TM 2 (128), 4 (64).
  ASSERT_EQ(e.survivors.size(), 10u);
  for (const auto& c : e.survivors) {
    EXPECT_EQ(family_of(c).id(), "naive") << to_name(c);
    EXPECT_TRUE(check(c).empty()) << to_name(c);
  }
  const auto row = std::find_if(e.rejections.begin(), e.rejections.end(),
                                [](const RuleCount& r) { return r.rule == "naive_tile"; });
  ASSERT_NE(row, e.rejections.end());
  EXPECT_EQ(row->first, 2 * 2 * 3 * 3 - 10);
}

TEST(KernelFamilies, ANewFamilyCompilesWithNvrtcToARealKernel) {
  const auto& f = naive();
  const auto c = naive_config(32, 32, 2, 4);
  test::TempDir dir;
  gpu::KernelCompiler k(dir.path(), {});
  for (const char* layout : {"NN", "TT"}) {
    SCOPED_TRACE(layout);
    const auto r = k.compile(c, layout, true);
    ASSERT_EQ(r.status, TrialStatus::ok) << r.reason << "\n" << r.log;
    EXPECT_FALSE(r.vec_loads);  // the family's only instance
    EXPECT_EQ(r.lowered_name.rfind("_Z11sgemm_naiveILi32ELi32ELi2ELi4ELi128ELi1EL", 0), 0u)
        << r.lowered_name;
    // Registers from ptxas' report of the real kernel, not a stub's.
    EXPECT_GT(r.registers, 8);
    EXPECT_NE(r.log.find("Used " + std::to_string(r.registers) + " registers"), std::string::npos);
    EXPECT_TRUE(r.reduce_lowered_name.empty());  // no reduction kernel in its sources
    std::ifstream in(r.cubin_path, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    EXPECT_EQ(bytes.substr(0, 4),
              "\x7f"
              "ELF");
    EXPECT_NE(bytes.find(r.lowered_name), std::string::npos);
  }
  // The cache keys on the family's own source hash.
  EXPECT_EQ(kernel_source_hash(c), f.source_hash());
  EXPECT_NE(f.source_hash(), kernel_source_hash());
}

TEST(KernelFamilies, ATrialOfANewFamilyIsStoredWithItsFamilyAndFoundAgain) {
  const auto& f = naive();
  test::TempDir dir;
  const auto path = dir.path() / "tuning.db";
  auto store = db::SqliteStore::open(path, db::OpenMode::read_write);
  GpuFingerprint gpu;
  gpu.name = "NVIDIA H200";
  gpu.uuid = "GPU-test";
  gpu.cc_major = 9;
  gpu.sm_count = 132;
  gpu.driver_version = 13000;
  gpu.nvrtc_major = 12;
  Problem p;
  p.M = p.N = p.K = 512;
  store.begin(gpu, p);
  Trial t;
  t.config = naive_config(32, 32, 2, 4);
  t.config_name = to_name(t.config);
  t.problem = p;
  t.status = TrialStatus::ok;
  t.time.median_ms = 0.5;
  t.time.repetitions = 5;
  t.kernel_template = "sgemm_naive";
  t.kernel_hash = f.source_hash();
  t.tuner_version = "test";
  t.strategy = "exhaustive";
  t.timestamp = "2026-01-01T00:00:00Z";
  store.record(t);
  const auto back = store.finished(t.config_name, f.source_hash());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->config, t.config);
  EXPECT_EQ(back->config_name, "nv_32x32x4_w4x4_wn1_t2x4_n128_mb1");

  db::Connection conn(path, SQLITE_OPEN_READONLY, 1000);
  db::Stmt s(conn, "SELECT family FROM configs WHERE name = :name");
  s.bind(":name", t.config_name);
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.text(0), "naive");
}

// Where the family lives: every file of it in its folder, and nothing of the project's own
// (libraries, kernels, dispatch library, build scripts) names it.
TEST(KernelFamilies, ANewFamilyLivesInItsFolderAlone) {
  const fs::path root = SGT_TEST_SOURCE_DIR;
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(root / "tests" / "families" / "naive"))
    files.insert(e.path().filename().string());
  EXPECT_EQ(files,
            (std::set<std::string>{"naive_family.cpp", "naive_family.hpp", "sgemm_naive.cuh"}));
  for (const auto& s : naive().sources()) EXPECT_TRUE(files.contains(std::string(s.name)));
  for (const char* dir : {"tuner", "db", "sgemm_tuned", "kernel_templates", "cmake"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      EXPECT_EQ(text.find("naive"), std::string::npos) << e.path();
    }
  }
}

}  // namespace
}  // namespace sgt
