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
#include "error.hpp"
#include "../db/db_test_util.hpp"
#include "export.hpp"
#include "family.hpp"
#include "index_sim.hpp"
#include "kernel_source.hpp"
#include "naive/naive_family.hpp"
#include "nvrtc_compiler.hpp"
#include "replay_evaluator.hpp"
#include "space.hpp"
#include "sqlite.hpp"
#include "store.hpp"
#include "test_support.hpp"
#include "tune.hpp"

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

using test::naive_config;

TEST(KernelFamilies, TheRegistryListsEachFamilyOnceByItsId) {
  naive();
  const auto& all = families();
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[0]->id(), "warptile");
  EXPECT_EQ(all[1]->id(), "ws_tma");
  EXPECT_EQ(all[2]->id(), "tf32x3");
  EXPECT_EQ(all[3]->id(), "tf32x3_wg");
  EXPECT_EQ(all[4]->id(), "warptile_ring");
  EXPECT_EQ(find_family("nope"), nullptr);
  EXPECT_EQ(all[5]->id(), "naive");
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
  EXPECT_EQ(name, "nv_32x16x4_w4x4_wn1_t2x4_n64_mb1");  // the prefix names the family
  EXPECT_EQ(name.rfind(f.name_prefix(), 0), 0u);
  ASSERT_TRUE(from_name(name));
  EXPECT_EQ(*from_name(name), c);
  // One config, one name: the warp-tiling spelling of the same fields is another config (of the
  // warp-tiling family), and no TMA value stands for this family.
  const auto wt = from_name("wt_32x16x4_w4x4_wn1_t2x4_n64_mb1");
  ASSERT_TRUE(wt);
  EXPECT_EQ(wt->family, "warptile");
  EXPECT_NE(*wt, c);
  EXPECT_FALSE(from_name("wt_32x16x4_w4x4_wn1_t2x4_n64_mb1_m2"));
  EXPECT_FALSE(from_name("nv_32x16x4_w4x4_wn1_t2x4_n64_mb1_m2"));
  // The built-in families' names keep meaning what they meant.
  EXPECT_EQ(from_name(test::kSeed)->family, "warptile");
  EXPECT_EQ(&family_of(*from_name(test::kSeed + std::string("_s2_m1"))), find_family("ws_tma"));
}

TEST(KernelFamilies, ASpaceOfANewFamilyEnumeratesThroughItsRules) {
  naive();
  const auto space = parse_space(nlohmann::json::parse(R"({
    "name": "naive", "description": "the test family",
    "parameters": {"BM": [16, 32], "BN": [16, 32], "BK": [4], "WM": [4], "WN": [4],
                   "WNITER": [1], "TM": [1, 2, 4], "TN": [4], "NUM_THREADS": [32, 64, 128],
                   "MIN_BLOCKS": [1], "family": ["naive"]}})"),
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

// The family is selected by its id, which the config carries: no value of a knob is reserved for
// it. Its configs' JSON names it; the legacy field TMA, which named the two families of earlier
// releases, has no value for it; a space selects it by id, beside a built-in family.
TEST(KernelFamilies, ANewFamilyIsSelectedByItsIdWithNoKnobValueReservedForIt) {
  const auto& f = naive();
  EXPECT_FALSE(f.legacy_tma());
  for (int tma = 0; tma <= 8; ++tma) EXPECT_NE(family_of_legacy_tma(tma), &f) << tma;
  const auto c = naive_config(32, 16, 2, 4);
  EXPECT_EQ(c.family, "naive");
  EXPECT_TRUE(f.claims(c));
  for (const auto* other : families())
    if (other != &f) EXPECT_FALSE(other->claims(c)) << other->id();
  // The same fields under another family's id are that family's config.
  auto as_wt = c;
  as_wt.family = "warptile";
  EXPECT_EQ(&family_of(as_wt), find_family("warptile"));
  EXPECT_FALSE(check(as_wt).empty());  // and its rules judge them
  auto unknown = c;
  unknown.family = "nope";
  const auto v = check(unknown);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].rule, "positive_values");
  EXPECT_NE(v[0].reason.find("nope"), std::string::npos) << v[0].reason;

  const nlohmann::json j = c;
  EXPECT_EQ(j.at("family"), "naive");
  EXPECT_FALSE(j.contains("TMA"));
  EXPECT_EQ(j.get<WarpTileConfig>(), c);
  auto legacy = j;
  legacy.erase("family");
  legacy["TMA"] = 2;
  EXPECT_THROW((void)legacy.get<WarpTileConfig>(), InputError);

  auto params = nlohmann::json::parse(R"({"BM": [16], "BN": [16], "BK": [4], "WM": [4],
      "WN": [4], "WNITER": [1], "TM": [1], "TN": [4], "NUM_THREADS": [64], "MIN_BLOCKS": [1]})");
  params["TMA"] = {2};
  EXPECT_THROW(parse_space({{"name", "x"}, {"parameters", params}}, "tma 2"), InputError);
  params.erase("TMA");
  params["family"] = {"warptile", "naive"};
  const auto e = enumerate(parse_space({{"name", "x"}, {"parameters", params}}, "both"));
  EXPECT_EQ(e.total, 2);
  ASSERT_EQ(e.survivors.size(), 1u);  // the warp-tiling geometry breaks with 4x4 warp tiles
  EXPECT_EQ(e.survivors[0], naive_config(16, 16, 1, 4));
  // A value that only the other family's rules refuse stays in a space that selects both.
  params["BM"] = {6};
  params["family"] = {"warptile"};
  EXPECT_THROW(parse_space({{"name", "x"}, {"parameters", params}}, "wt"), InputError);
  params["family"] = {"warptile", "naive"};
  EXPECT_NO_THROW(parse_space({{"name", "x"}, {"parameters", params}}, "both"));
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
  const GpuFingerprint gpu = test::h200(13000, 12);
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

// The whole way on the CPU for a family the tool was not built with: tuned (a replay of recorded
// trials stands for the GPU), stored in a real SQLite file, served by query as current (fresh is
// "its hash is its family's current hash", for every registered family), and exported with its
// family's hash and launch. The dispatch library built from such a table is the nvcc test below.
TEST(KernelFamilies, ANewFamilysWinnerIsTunedStoredServedAsCurrentAndExported) {
  const auto& f = naive();
  const GpuFingerprint gpu = test::h200(13000, 13);
  Problem p;
  p.M = p.N = p.K = 512;
  eval::Recording rec{"recorded", gpu, p, {}};
  std::vector<WarpTileConfig> candidates;
  const double times[] = {0.9, 0.4, 0.7};
  int k = 0;
  for (const auto& c :
       {naive_config(32, 32, 2, 4), naive_config(32, 16, 2, 4), naive_config(16, 32, 2, 4)}) {
    Trial t;
    t.config = c;
    t.config_name = to_name(c);
    t.problem = p;
    t.status = TrialStatus::ok;
    t.time.median_ms = t.time.min_ms = t.time.max_ms = times[k++];
    t.time.repetitions = 5;
    t.cublas_median_ms = 0.5;
    t.kernel_hash = f.source_hash();
    t.strategy = "exhaustive";
    t.timestamp = "2026-01-01T00:00:00Z";
    rec.trials.push_back(t);
    candidates.push_back(c);
  }
  test::TempDir dir;
  const auto path = dir.path() / "naive.db";
  tune::TuneOptions o;
  o.problem = p;
  o.candidates = candidates;
  o.strategy = "exhaustive";
  o.top_k = 2;
  {
    auto store = db::SqliteStore::open(path, db::OpenMode::read_write);
    eval::ReplayEvaluator ev(rec, 1);
    const auto r = tune::run_tune(o, ev, store);
    ASSERT_FALSE(r.finalists.empty());
    EXPECT_EQ(r.finalists.front().trial.config_name, to_name(naive_config(32, 16, 2, 4)));
  }
  const auto store = db::SqliteStore::open(path, db::OpenMode::read_only);
  const auto q = store.query(db::GpuIdentity::of(gpu), p);
  EXPECT_EQ(q.source, db::Source::exact);
  EXPECT_EQ(q.config_name, to_name(naive_config(32, 16, 2, 4)));
  ASSERT_TRUE(q.winner);
  EXPECT_FALSE(q.winner->stale);
  EXPECT_EQ(q.stale_skipped.total, 0);
  // Another source of the family is another hash: its trials are stale, as any family's would be.
  db::QueryOptions other;
  other.reference.family_hashes["naive"] = "0123";
  EXPECT_EQ(store.query(db::GpuIdentity::of(gpu), p, other).source, db::Source::default_config);

  const auto winners = store.winners(false);
  ASSERT_EQ(winners.size(), 1u);
  Table t;
  t.tool_version = "test";
  t.database = path.string();
  t.generated_utc = "2026-01-01T00:00:00Z";
  t.kernel_template = "sgemm_warptile";
  t.family_hashes = current_family_hashes();
  TableGpu g;
  g.name = gpu.name;
  g.cc_major = gpu.cc_major;
  g.sm_count = gpu.sm_count;
  TableShape s;
  s.problem = p;
  s.config = winners[0].best.trial.config;
  s.config_name = winners[0].best.trial.config_name;
  s.median_ms = winners[0].best.trial.time.median_ms;
  s.cublas_median_ms = winners[0].best.trial.cublas_median_ms;
  s.ok_trials = winners[0].ok_trials;
  g.shapes = {s};
  choose_default(g, *from_name(test::kSeed), test::kSeed);
  t.gpus = {g};
  const auto h = render_cpp(t);
  EXPECT_NE(h.find("\"naive\""), std::string::npos) << h;
  EXPECT_NE(h.find(cpp_string_literal(f.source_hash())), std::string::npos) << h;
  EXPECT_NE(h.find("pointers, (" + f.name_expression(s.config, "NN", false) + ")"),
            std::string::npos)
      << h;
  const auto j = nlohmann::json::parse(render_json(t));
  EXPECT_EQ(j.at("kernel_hashes").at("naive"), f.source_hash());
}

// The worker runs a family by its launch ABI, not its id: a family with the warp-tiling kernel's
// argument list (the naive one) needs no launch code; the TMA family's request carries tensor maps'
// pads and dynamic shared memory, and both block shapes are the families' own.
TEST(KernelFamilies, ANewFamilysTrialRequestCarriesItsLaunch) {
  naive();
  eval::Compiled comp;
  comp.config_name = "x";
  comp.layout = "NT";
  const auto c = naive_config(32, 16, 2, 4);
  auto r = tune::make_trial_request(comp, c);
  EXPECT_EQ(r.family, "naive");
  EXPECT_EQ(r.launch, "pointers");
  EXPECT_EQ(r.block, 64u);
  EXPECT_EQ(r.tile.smem_bytes, 0);
  EXPECT_EQ(r.tile.BM, 32);
  EXPECT_EQ(r.tile.BN, 16);

  auto tma = *from_name(test::kSeed + std::string("_s2_m1"));
  tma.PAD_A = 4;
  const auto& ws = *find_family("ws_tma");
  ASSERT_EQ(&family_of(tma), &ws);
  r = tune::make_trial_request(comp, tma);
  EXPECT_EQ(r.family, "ws_tma");
  EXPECT_EQ(r.launch, "tensor_maps");
  EXPECT_EQ(r.block, static_cast<unsigned>(ws.block_threads(tma)));
  EXPECT_GT(r.block, static_cast<unsigned>(tma.NUM_THREADS));  // the producer warpgroup
  EXPECT_EQ(r.tile.smem_bytes, ws.dynamic_shared_bytes(tma, false, true));
  EXPECT_GT(r.tile.smem_bytes, 0);
  EXPECT_EQ(r.tile.pad_a, 4);
  EXPECT_EQ(parse_launch_abi(r.launch), LaunchAbi::tensor_maps);
  EXPECT_FALSE(parse_launch_abi("registers"));
}

// A family that brings no index simulation is reported as not simulated, never as clean; the
// built-in families' simulations are theirs.
TEST(KernelFamilies, ANewFamilyWithoutASimulationIsNotCalledClean) {
  const auto& f = naive();
  const auto r = simulate_config(naive_config(32, 32, 2, 4));
  ASSERT_EQ(r.defects.size(), 1u);
  EXPECT_EQ(r.defects[0].kind, "not_simulated");
  EXPECT_NE(r.defects[0].detail.find("naive"), std::string::npos);
  EXPECT_NE(f.simulation_scope().find("no index simulation"), std::string::npos);
  EXPECT_TRUE(f.derived(naive_config(32, 32, 2, 4)).empty());
  const auto seed = *from_name(test::kSeed);
  EXPECT_TRUE(simulate_config(seed).ok()) << simulate_config(seed).summary();
  EXPECT_EQ(family_of(seed).simulation_scope(), simulate_config_scope());
  EXPECT_TRUE(family_of(seed).derived(seed).contains("WMITER"));
}

// The dispatch library built for a table that holds a new family's winner: the table names its
// kernel instances, kernel file and launch (format 8), so nvcc instantiates the family's kernel
// from dispatch.cu as it is, with the family's folder on the include path.
TEST(KernelFamilies, TheDispatchLibraryBuildsANewFamilysWinnerWithNoCodeOfItsOwn) {
  const std::string nvcc = SGT_NVCC;
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc in this build";
  const auto& f = naive();
  const auto c = naive_config(32, 32, 2, 4);
  Table t;
  t.tool_version = "test";
  t.database = "naive.db";
  t.generated_utc = "2026-01-01T00:00:00Z";
  t.kernel_template = "sgemm_warptile";
  TableGpu g;
  g.name = "NVIDIA H200";
  g.cc_major = 9;
  g.sm_count = 132;
  TableShape s;
  s.problem.M = s.problem.N = s.problem.K = 512;
  s.config = c;
  s.config_name = to_name(c);
  s.median_ms = 0.5;
  s.cublas_median_ms = 0.1;
  s.ok_trials = 1;
  g.shapes = {s};
  choose_default(g, *from_name(test::kSeed), test::kSeed);
  t.gpus = {g};
  const auto h = render_cpp(t);
  const std::string expr = f.name_expression(c, "NT", false);
  EXPECT_NE(h.find("pointers, (" + f.name_expression(c, "NN", false) + "), (" + expr + ")"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("#define SGT_TUNED_KERNEL_FILE_1 \"sgemm_naive.cuh\""), std::string::npos) << h;
  EXPECT_NE(h.find("\"naive\","), std::string::npos) << h;  // kConfigFamilies

  test::TempDir dir;
  const auto inc = dir.path() / "include";
  fs::create_directories(inc);
  std::ofstream(inc / "sgemm_tuned_table.hpp", std::ios::binary) << h;
  const fs::path src(SGT_TEST_SOURCE_DIR);
  const auto obj = dir.path() / "dispatch.o";
  const auto r = test::run_shell(
      test::sh_quote(nvcc) + " -std=c++17 -arch=sm_90 -Werror all-warnings -c -I " +
      test::sh_quote(inc) + " -I " + test::sh_quote(src / "sgemm_tuned" / "include") + " -I " +
      test::sh_quote(src / "sgemm_tuned" / "src") + " -I " +
      test::sh_quote(src / "kernel_templates") + " -I " +
      test::sh_quote(src / "tests" / "families" / "naive") + " " +
      test::sh_quote(src / "sgemm_tuned" / "src" / "dispatch.cu") + " -o " + test::sh_quote(obj));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto syms = test::run_shell("nm " + test::sh_quote(obj));
  ASSERT_EQ(syms.exit_code, 0) << syms.out;
  // Its four layouts: template arguments BM, BN, TM, TN, NUM_THREADS, MIN_BLOCKS, TRANS_A, TRANS_B.
  for (const char* layout : {"Lb0ELb0E", "Lb0ELb1E", "Lb1ELb0E", "Lb1ELb1E"}) {
    EXPECT_NE(
        syms.out.find(std::string("_Z11sgemm_naiveILi32ELi32ELi2ELi4ELi128ELi1E") + layout + "E"),
        std::string::npos)
        << layout << "\n"
        << syms.out;
  }
}

const KernelFamily& naive_tf32() {
  static const KernelFamily* f = [] {
    register_family(test::make_naive_tf32_family());
    return find_family("naive_tf32");
  }();
  return *f;
}

// A family of a non-strict precision class has its accuracy measured: its trial requests ask for
// it (a strict family's do not), and a tune stores the ratios the worker answered and its status,
// inaccurate included, which is never a finalist. A replay answers them as recorded, and refuses
// a recording that lacks them rather than guess.
TEST(KernelFamilies, ANonStrictFamilysAccuracyIsAskedForStoredAndReplayed) {
  naive();
  const auto& f = naive_tf32();
  EXPECT_EQ(f.precision(), Precision::fp32_accurate);
  EXPECT_EQ(naive().precision(), Precision::fp32);
  eval::Compiled comp;
  comp.config_name = "x";
  comp.layout = "TN";
  EXPECT_FALSE(tune::make_trial_request(comp, naive_config(32, 16, 2, 4)).accuracy);
  EXPECT_FALSE(tune::make_trial_request(comp, *from_name(test::kSeed)).accuracy);
  const auto req = tune::make_trial_request(comp, test::naive_tf32_config(32, 16, 2, 4));
  EXPECT_TRUE(req.accuracy);
  EXPECT_EQ(req.family, "naive_tf32");
  EXPECT_EQ(to_name(test::naive_tf32_config(32, 16, 2, 4)).rfind("nt_", 0), 0u);
  // Its kernel is the naive one with its operands rounded, a program and a hash of its own.
  EXPECT_NE(f.source_hash(), naive().source_hash());
  {
    test::TempDir cache;
    gpu::KernelCompiler k(cache.path(), {});
    const auto built = k.compile(test::naive_tf32_config(32, 16, 2, 4), "NN", true);
    ASSERT_EQ(built.status, TrialStatus::ok) << built.reason << "\n" << built.log;
    EXPECT_GT(built.registers, 8);
  }

  const GpuFingerprint gpu = test::h200(13000, 13);
  Problem p;
  p.M = p.N = p.K = 512;
  eval::Recording rec{"recorded", gpu, p, {}};
  std::vector<WarpTileConfig> candidates;
  const auto fast = test::naive_tf32_config(32, 16, 2, 4);
  const auto slow = test::naive_tf32_config(16, 32, 2, 4);
  for (const auto& c : {fast, slow}) {
    Trial t;
    t.config = c;
    t.config_name = to_name(c);
    t.problem = p;
    t.kernel_hash = f.source_hash();
    t.strategy = "exhaustive";
    t.timestamp = "2026-01-01T00:00:00Z";
    t.cublas_median_ms = 0.5;
    t.verify_error = 2e-4;
    if (c == fast) {  // fast, and 300 times cuBLAS's error against FP64
      t.status = TrialStatus::inaccurate;
      t.reason = "error ratio 300 on the problem exceeds 1.05";
      t.error_ratio = 300;
      t.stress_ratio = 410;
      t.stress_case = "long-K 64x64x65536 NN";
    } else {
      t.status = TrialStatus::ok;
      t.time.median_ms = t.time.min_ms = t.time.max_ms = 0.8;
      t.time.repetitions = 5;
      t.error_ratio = 0.97;
      t.stress_ratio = 1.01;
      t.stress_case = "underflow 64x64x1024 NN";
    }
    rec.trials.push_back(t);
    candidates.push_back(c);
  }
  test::TempDir dir;
  const auto path = dir.path() / "tf32.db";
  tune::TuneOptions o;
  o.problem = p;
  o.candidates = candidates;
  o.strategy = "exhaustive";
  o.top_k = 2;
  {
    auto store = db::SqliteStore::open(path, db::OpenMode::read_write);
    eval::ReplayEvaluator ev(rec, 1);
    const auto r = tune::run_tune(o, ev, store);
    EXPECT_EQ(r.status_counts.at("inaccurate"), 1);
    ASSERT_EQ(r.finalists.size(), 1u);
    EXPECT_EQ(r.finalists.front().trial.config_name, to_name(slow));
    EXPECT_EQ(r.finalists.front().trial.error_ratio, 0.97);
  }
  const auto store = db::SqliteStore::open(path, db::OpenMode::read_only);
  for (const auto& st : store.trials()) {
    const auto& t = st.trial;
    ASSERT_TRUE(t.error_ratio) << t.config_name;
    if (t.config_name == to_name(fast)) {
      EXPECT_EQ(t.status, TrialStatus::inaccurate);
      EXPECT_EQ(t.error_ratio, 300);
      EXPECT_EQ(t.stress_ratio, 410);
      EXPECT_EQ(t.stress_case, "long-K 64x64x65536 NN");
    } else {
      EXPECT_EQ(t.status, TrialStatus::ok);
      EXPECT_EQ(t.stress_case, "underflow 64x64x1024 NN");
    }
  }
  // Recorded without its accuracy (as if by a build that did not measure it): refused, named.
  for (auto& t : rec.trials) t.error_ratio.reset();
  auto other = db::SqliteStore::open(dir.path() / "other.db", db::OpenMode::read_write);
  eval::ReplayEvaluator ev(rec, 1);
  try {
    tune::run_tune(o, ev, other);
    ADD_FAILURE() << "replayed a trial without its accuracy";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("without its error against FP64"), std::string::npos)
        << e.what();
  }
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
