// query, list and db through the real CLI: exit codes, messages, and bad input that must leave the
// database byte-for-byte as it was.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include <sqlite3.h>

#include "db_test_util.hpp"
#include "test_support.hpp"

namespace sgt::db {
namespace {

using test::make_trial;
using test::q;
using test::run_cli;
using test::shape;
using test::TempDir;

bool contains(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = SqliteStore::open(db(), OpenMode::read_write);
    s.begin(test::h200(), big_);
    s.record(make_trial(big_, 0, 2.0));
    s.record(make_trial(big_, 1, 1.0));
    s.begin(test::h200(), small_);
    s.record(make_trial(small_, 2, 0.1));
  }
  std::filesystem::path db() const { return dir_.path() / "tuning.db"; }
  std::string dbarg() const { return " --db " + q(db()); }
  test::RunResult cli(const std::string& args) const { return run_cli(args + dbarg()); }

  TempDir dir_;
  Problem big_ = shape(4096, 4096, 4096), small_ = shape(1024, 1024, 1024);
};

// A GPU name with terminal escape sequences (a shared database may hold anything) is printed
// escaped by every human-readable output, and in error messages too.
TEST(CliEscaping, ControlCharactersFromTheDatabaseNeverReachTheTerminalRaw) {
  TempDir dir;
  const auto path = dir.path() / "evil.db";
  {
    auto s = SqliteStore::open(path, OpenMode::read_write);
    auto gpu = test::h200();
    gpu.name = "Evil\x1b[2J\x1b]0;pwned\x07GPU";
    const auto p = shape(512, 512, 512);
    s.begin(gpu, p);
    s.record(make_trial(p, 0, 0.5));
  }
  const std::string dbarg = " --db " + q(path);
  for (const std::string cmd : {"list", "query --gpu evil --shape 512x512x512",
                                "query --gpu nosuchgpu --shape 512x512x512"}) {
    const auto r = run_cli(cmd + dbarg);
    EXPECT_FALSE(contains(r.out, "\x1b")) << cmd;
    EXPECT_FALSE(contains(r.out, "\x07")) << cmd;
    EXPECT_TRUE(contains(r.out, "Evil")) << cmd << ": " << r.out;
  }
}

// A bad import file is refused before any database is opened: exit 2, the first bad field
// named, and no database file created.
TEST_F(CliTest, ABadImportNamesTheFieldAndCreatesNothing) {
  const auto file = dir_.path() / "export.json";
  ASSERT_EQ(cli("db export --json " + q(file)).exit_code, 0);
  auto j = nlohmann::json::parse(test::read_bytes(file));
  j["trials"][1]["trial"]["problem"]["layout"] = "XY";
  test::write_bytes(file, j.dump());
  const auto fresh = dir_.path() / "fresh.db";
  const auto r = run_cli("db import " + q(file) + " --db " + q(fresh));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "trial 1")) << r.out;
  EXPECT_TRUE(contains(r.out, "layout 'XY'")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(fresh));
}

// db info keeps a space between every table name and its count, however long the name; a
// directory given as a merge source is called a directory (not an I/O error).
TEST_F(CliTest, DbInfoSeparatesNamesAndCountsAndMergeRefusesADirectory) {
  const auto r = cli("db info");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "kernel_templates 1 rows")) << r.out;
  const auto m = cli("db merge " + q(dir_.path()));
  EXPECT_EQ(m.exit_code, 2) << m.out;
  EXPECT_TRUE(contains(m.out, "is a directory")) << m.out;
}

TEST_F(CliTest, QueryExactWinnerExitsZero) {
  const auto r = cli("query --gpu 'nvidia h200' --shape 4096x4096x4096");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, to_name(test::config_n(1)))) << r.out;
  EXPECT_TRUE(contains(r.out, "exact winner")) << r.out;
  EXPECT_TRUE(contains(r.out, "ratio 1.250x to cuBLAS")) << r.out;

  const auto j = cli("query --gpu auto --shape 4096x4096x4096 --json");
  ASSERT_EQ(j.exit_code, 0) << j.out;
  const auto parsed = nlohmann::json::parse(j.out);
  EXPECT_EQ(parsed.at("source"), "exact");
  EXPECT_EQ(parsed.at("exit_code"), 0);
  EXPECT_EQ(parsed.at("config_name"), to_name(test::config_n(1)));
  EXPECT_EQ(parsed.at("winner").at("trial").at("time").at("median_ms"), 1.0);
}

TEST_F(CliTest, QueryNearestShapeExitsThreeAndSaysWhich) {
  const auto r = cli("query --gpu 'NVIDIA H200' --shape 4096x4096x2048");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_TRUE(contains(r.out, "nearest tuned shape 4096x4096x4096")) << r.out;
  EXPECT_TRUE(contains(r.out, "distance 1.000")) << r.out;
  EXPECT_TRUE(contains(r.out, to_name(test::config_n(1)))) << r.out;

  const auto j = cli("query --gpu 'NVIDIA H200@sm_90/132' --shape 1536x1024x1024 --json");
  ASSERT_EQ(j.exit_code, 3) << j.out;
  const auto parsed = nlohmann::json::parse(j.out);
  EXPECT_EQ(parsed.at("source"), "nearest");
  EXPECT_EQ(parsed.at("served").at("M"), 1024);
  EXPECT_NEAR(parsed.at("distance").get<double>(), std::log2(1.5), 1e-12);
}

TEST_F(CliTest, QueryDefaultExitsFourAndSaysSo) {
  const auto r = cli("query --gpu 'NVIDIA H200' --shape 4096x4096x4096 --layout TN");
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_TRUE(contains(r.out, std::string(kDefaultConfigName))) << r.out;
  EXPECT_TRUE(contains(r.out, "default config")) << r.out;

  // No database yet: the default, with a note, and nothing created.
  const auto missing = dir_.path() / "none" / "t.db";
  const auto m = run_cli("query --shape 256x256x256 --db " + q(missing));
  EXPECT_EQ(m.exit_code, 4) << m.out;
  EXPECT_TRUE(contains(m.out, "no tuning database")) << m.out;
  EXPECT_FALSE(std::filesystem::exists(missing));
}

TEST_F(CliTest, QueryReportsSkippedStaleTrials) {
  {
    auto s = SqliteStore::open(db(), OpenMode::read_write);
    s.begin(test::h200(), big_);
    auto stale = make_trial(big_, 5, 0.5);  // fastest, but compiled from another kernel source
    stale.kernel_hash = "deadbeef";
    s.record(stale);
  }
  auto r = cli("query --gpu auto --shape 4096x4096x4096");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, to_name(test::config_n(1)))) << r.out;
  EXPECT_TRUE(contains(r.out, "skipped 1 stale trial (1 from another kernel source)")) << r.out;

  r = cli("query --gpu auto --shape 4096x4096x4096 --allow-stale");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, to_name(test::config_n(5)))) << r.out;
  EXPECT_TRUE(contains(r.out, "STALE")) << r.out;
}

// --gpu means the same in every command: a part of a name that names one GPU on record picks it
// (and the output says which GPU that was), a part shared by several names is refused naming
// them, and an index or 'auto' means this machine's GPU, which this machine has none of.
TEST_F(CliTest, GpuByAPartOfItsNameAnIndexOrAuto) {
  {
    auto s = SqliteStore::open(db(), OpenMode::read_write);
    s.begin(test::a100(), big_);
  }
  auto r = cli("query --gpu h200 --shape 4096x4096x4096");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "--gpu 'h200' means NVIDIA H200 (sm_90, 132 SMs)")) << r.out;
  r = cli("query --gpu h200 --shape 4096x4096x4096 --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "\"name\": \"NVIDIA H200\"")) << r.out;
  r = cli("query --gpu nvidia --shape 4096x4096x4096");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--gpu 'nvidia' is part of 2 GPU names")) << r.out;
  EXPECT_TRUE(contains(r.out, "NVIDIA A100-SXM4-80GB")) << r.out;
  r = cli("query --gpu 0 --shape 4096x4096x4096");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--gpu 0: no such GPU here")) << r.out;
  for (const std::string bad : {"''", "-1"}) {
    r = cli("query --gpu " + bad + " --shape 4096x4096x4096");
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
  }
  // The commands that run on a GPU take the same texts and refuse the same bad ones, before
  // looking for a GPU.
  for (const std::string cmd : {"tune --shape 64x64x64 --gpu -1", "tune --shape 64x64x64 --gpu ''",
                                "bench --suite /nonexistent.json --gpu -2"}) {
    r = cli(cmd);
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.out;
    EXPECT_TRUE(contains(r.out, "--gpu")) << cmd << ": " << r.out;
  }
}

TEST_F(CliTest, UnknownAndAmbiguousGpus) {
  auto r = cli("query --gpu 'RTX 9999' --shape 64x64x64");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "unknown GPU 'RTX 9999'")) << r.out;
  EXPECT_TRUE(contains(r.out, "NVIDIA H200 (sm_90, 132 SMs)")) << r.out;
  {
    auto s = SqliteStore::open(db(), OpenMode::read_write);
    s.begin(test::a100(), big_);
  }
  r = cli("query --gpu auto --shape 64x64x64");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "2 GPUs")) << r.out;
  r = cli("query --gpu 'NVIDIA A100-SXM4-80GB' --shape 4096x4096x4096");
  EXPECT_EQ(r.exit_code, 4) << r.out;  // known GPU, nothing tuned on it
}

TEST_F(CliTest, QueryRefusesAnUnknownLayoutByName) {
  const auto bytes = test::read_bytes(db());
  for (const char* bad : {"XN", "nn", "N", "NNT"}) {
    const auto r = cli(std::string("query --gpu 'NVIDIA H200' --shape 64x64x64 --layout ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
    EXPECT_TRUE(contains(r.out, std::string("bad layout '") + bad + "'")) << r.out;
    EXPECT_TRUE(contains(r.out, "NN, NT, TN or TT")) << r.out;
  }
  EXPECT_EQ(test::read_bytes(db()), bytes);
  // Each of the four is accepted (no TT winner here: the default, exit 4).
  EXPECT_EQ(cli("query --gpu 'NVIDIA H200' --shape 64x64x64 --layout TT").exit_code, 4);
}

TEST_F(CliTest, QuerySaysWhichEdgeChecksTheWinnerPassed) {
  const auto tn = shape(2048, 1024, 512, "TN"), nt = shape(2048, 1024, 512, "NT");
  {
    auto s = SqliteStore::open(db(), OpenMode::read_write);
    s.begin(test::h200(), tn);
    auto t = make_trial(tn, 30, 0.5);
    t.edge_checks = test::edge_checks(tn, 23);
    s.record(t);
    s.begin(test::h200(), nt);
    t = make_trial(nt, 31, 0.5);
    t.edge_checks = test::edge_checks(nt, 23, 2);
    s.record(t);
  }
  auto r = cli("query --gpu auto --shape 2048x1024x512 --layout TN");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, to_name(test::config_n(30)))) << r.out;
  EXPECT_TRUE(contains(r.out, "verified on 23 edge cases: all passed")) << r.out;

  r = cli("query --gpu auto --shape 2048x1024x500 --layout NT");  // nearest: the NT winner
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_TRUE(contains(r.out, to_name(test::config_n(31)))) << r.out;
  EXPECT_TRUE(contains(r.out, "verified on 23 edge cases: 2 failed: case-0 1x3x2 NT")) << r.out;
  EXPECT_TRUE(contains(r.out, "case-1 8x8x5 NT (mismatch at C[0][1])")) << r.out;

  // A winner recorded before edge checks existed says so.
  r = cli("query --gpu auto --shape 4096x4096x4096");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "not verified on edge cases")) << r.out;

  r = cli("query --gpu auto --shape 2048x1024x512 --layout NT --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("edge_checks").size(), 23u);
  EXPECT_EQ(j.at("edge_checks")[0].at("label"), "case-0");
  EXPECT_EQ(j.at("edge_checks")[0].at("passed"), false);
  EXPECT_EQ(j.at("edge_checks")[0].at("problem").at("layout"), "NT");
  EXPECT_EQ(j.at("edge_check_summary").at("passed"), 21);
  EXPECT_EQ(j.at("winner").at("trial").at("edge_checks").size(), 23u);

  // list: passed/run per winner, and a note that names how many failed.
  r = cli("list");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "23/23")) << r.out;
  EXPECT_TRUE(contains(r.out, "21/23")) << r.out;
  EXPECT_TRUE(contains(r.out, "1 winner failed edge checks")) << r.out;

  r = cli("db info --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("rows").at("edge_checks"), 46);
  r = cli("db info");
  EXPECT_TRUE(contains(r.out, "edge_checks")) << r.out;

  // Exported and imported elsewhere, the checks come along and are reported.
  const auto file = dir_.path() / "e.json";
  ASSERT_EQ(cli("db export --json " + q(file)).exit_code, 0);
  const auto other = dir_.path() / "other.db";
  r = run_cli("db import " + q(file) + " --db " + q(other));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "5 trials added, 0 already present, 1 new GPU, 46 edge checks added"))
      << r.out;
  r = run_cli("db merge " + q(db()) + " --db " + q(other) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("trials_added"), 0);
  EXPECT_EQ(j.at("edge_checks_added"), 0);
}

TEST_F(CliTest, BadShapesAreInputErrors) {
  for (const char* bad : {"12x0x5", "4096x4096", "abc", "1x2x3x4", "99999999999x1x1"}) {
    const auto r = cli(std::string("query --shape ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
    EXPECT_TRUE(contains(r.out, "bad shape")) << r.out;
  }
}

TEST_F(CliTest, ListShowsGpusShapesAndWinners) {
  auto r = cli("list");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "NVIDIA H200@sm_90/132")) << r.out;
  EXPECT_TRUE(contains(r.out, "4096x4096x4096")) << r.out;
  // The ratio column: cuBLAS 1.25 ms / winner 1.0 ms.
  EXPECT_TRUE(contains(r.out, " ratio ")) << r.out;
  EXPECT_TRUE(contains(r.out, " 1.250x ")) << r.out;
  EXPECT_FALSE(contains(r.out, "cuBLAS ")) << r.out;

  r = cli("list --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("gpus").size(), 1u);
  EXPECT_EQ(j.at("shapes").size(), 2u);
  ASSERT_EQ(j.at("winners").size(), 2u);
  for (const auto& w : j.at("winners")) {
    if (w.at("shape") == "4096x4096x4096") {
      EXPECT_DOUBLE_EQ(w.at("ratio").get<double>(), 1.25);
      EXPECT_FALSE(w.contains("pct_of_cublas"));
      EXPECT_EQ(w.at("ok_trials"), 2);
    }
  }

  const auto missing = dir_.path() / "missing.db";
  r = run_cli("list --db " + q(missing));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, missing.string())) << r.out;
  EXPECT_FALSE(std::filesystem::exists(missing));
}

// A winner whose accuracy against FP64 was measured (a kernel of a non-strict precision class)
// shows its error ratio in query --json and list --json; one without shows none. A config recorded
// inaccurate is not served, however fast its ok trial was.
TEST_F(CliTest, QueryAndListShowTheErrorRatioAndNeverServeAnInaccurateConfig) {
  const auto p = shape(2048, 2048, 2048);
  {
    auto s = SqliteStore::open(db(), OpenMode::read_write);
    s.begin(test::h200(), p);
    auto accurate = make_trial(p, 4, 1.0);
    accurate.error_ratio = 0.98;
    accurate.stress_ratio = 1.02;
    accurate.stress_case = "long-K 64x64x65536 NN";
    s.record(accurate);
    auto fast = make_trial(p, 6, 0.5);
    fast.error_ratio = 0.99;
    s.record(fast);
    auto inaccurate = make_trial(p, 6, 0.0, TrialStatus::inaccurate);
    inaccurate.timestamp = "2025-06-01T12:00:01Z";
    inaccurate.error_ratio = 0.99;
    inaccurate.stress_ratio = 4.0;
    inaccurate.stress_case = "underflow 128x128x1024 NN";
    s.record(inaccurate);
  }
  auto r = cli("query --gpu auto --shape 2048x2048x2048 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("config_name"), to_name(test::config_n(4)));
  EXPECT_EQ(j.at("winner").at("error_ratio"), 0.98);
  EXPECT_EQ(j.at("winner").at("trial").at("error_ratio"), 0.98);
  EXPECT_EQ(j.at("winner").at("trial").at("stress_ratio"), 1.02);
  EXPECT_EQ(j.at("winner").at("trial").at("stress_case"), "long-K 64x64x65536 NN");

  r = cli("query --gpu auto --shape 4096x4096x4096 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j.at("winner").contains("error_ratio"));
  EXPECT_FALSE(j.at("winner").at("trial").contains("error_ratio"));

  r = cli("list --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  j = nlohmann::json::parse(r.out);
  int measured = 0;
  for (const auto& w : j.at("winners")) {
    if (w.at("shape") == "2048x2048x2048") {
      ++measured;
      EXPECT_EQ(w.at("config_name"), to_name(test::config_n(4)));
      EXPECT_EQ(w.at("error_ratio"), 0.98);
    } else {
      EXPECT_FALSE(w.contains("error_ratio")) << w.dump();
    }
  }
  EXPECT_EQ(measured, 1);
}

TEST_F(CliTest, DbExportImportMergeVacuumInfo) {
  const auto file = dir_.path() / "out.json";
  auto r = cli("db export --json " + q(file));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "exported 3 trials")) << r.out;

  const auto other = dir_.path() / "other.db";
  r = run_cli("db import " + q(file) + " --db " + q(other));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "3 trials added")) << r.out;
  r = run_cli("db import " + q(file) + " --db " + q(other) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("trials_skipped"), 3);

  {
    auto s = SqliteStore::open(other, OpenMode::read_write);
    s.begin(test::h200(), big_);
    s.record(make_trial(big_, 9, 0.9));
  }
  r = cli("db merge " + q(other));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "1 trial added, 3 already present")) << r.out;
  r = cli("db merge " + q(other) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("trials_added"), 0);
  r = cli("query --gpu auto --shape 4096x4096x4096");
  EXPECT_TRUE(contains(r.out, to_name(test::config_n(9)))) << r.out;  // the winner followed

  r = cli("db vacuum");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = cli("db info --check --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto info = nlohmann::json::parse(r.out);
  EXPECT_EQ(info.at("schema_version"), SqliteStore::schema_version());
  EXPECT_EQ(info.at("rows").at("trials"), 4);
  EXPECT_EQ(info.at("integrity"), "ok");
  r = cli("db info");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "schema version")) << r.out;

  r = cli("db merge " + q(db()));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  r = run_cli("db vacuum --db " + q(dir_.path() / "missing.db"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "missing.db"));
}

// list's winners come sorted by GPU, layout and shape, however they were recorded, and the
// columns line up whatever the length of the config names.
TEST(CliList, WinnersAreSortedAndAligned) {
  TempDir dir;
  const auto path = dir.path() / "l.db";
  {
    auto s = SqliteStore::open(path, OpenMode::read_write);
    auto tma = make_trial(shape(64, 64, 64), 0, 0.01);
    tma.config = *from_name("wt_64x128x32_w32x32_wn1_t4x4_n256_mb1_s3_p4_g8_k4_o1_x1_m1");
    tma.config_name = to_name(tma.config);
    tma.kernel_hash = kernel_source_hash(tma.config);
    for (const auto& [p, t] : std::vector<std::pair<Problem, Trial>>{
             {shape(4096, 4096, 4096), make_trial(shape(4096, 4096, 4096), 1, 2.0)},
             {shape(512, 512, 512, "TN"), make_trial(shape(512, 512, 512, "TN"), 2, 0.1)},
             {shape(64, 64, 64), tma},
             {shape(1024, 1024, 1024), make_trial(shape(1024, 1024, 1024), 3, 0.2)}}) {
      s.begin(test::h200(), p);
      s.record(t);
    }
  }
  const auto r = run_cli("list --allow-stale --db " + q(path));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto at = r.out.find("Winners (");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream lines(r.out.substr(at));
  std::string line;
  std::getline(lines, line);  // the title
  std::vector<std::string> rows;
  while (std::getline(lines, line) && !line.empty()) rows.push_back(line);
  ASSERT_EQ(rows.size(), 5u) << r.out;
  const std::vector<std::string> order = {"64x64x64 NN", "1024x1024x1024 NN", "4096x4096x4096 NN",
                                          "512x512x512 TN"};
  for (size_t i = 0; i < order.size(); ++i)
    EXPECT_NE(rows[i + 1].find(order[i]), std::string::npos) << rows[i + 1];
  // "ratio" ends where every ratio ends; "median ms" where every median ends.
  for (const std::string col : {"median ms", "ratio"}) {
    const auto end = rows[0].find(col) + col.size();
    for (size_t i = 1; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].find_last_not_of(' ', end - 1), end - 1) << col << "\n" << rows[i];
      EXPECT_EQ(rows[i][end], ' ') << col << "\n" << rows[i];
    }
  }
}

// A merge with a directory or a damaged file among its sources is all or nothing: the sources
// before the bad one add nothing, the error names the bad one, and nothing is printed as merged.
TEST_F(CliTest, AMergeWithABadSourceInTheMiddleAddsNothing) {
  const auto good = dir_.path() / "good.db";
  {
    auto s = SqliteStore::open(good, OpenMode::read_write);
    s.begin(test::h200(), big_);
    s.record(make_trial(big_, 7, 0.7));
  }
  const auto damaged = dir_.path() / "damaged.db";
  {
    std::ofstream f(damaged, std::ios::binary);
    f << "SQLite format 3" << std::string(200, '\x7f') << "not a database at all";
  }
  const auto into = dir_.path() / "into.db";
  for (const auto& bad : {damaged, dir_.path()}) {
    const auto r =
        run_cli("db merge " + q(good) + " " + q(bad) + " " + q(db()) + " --db " + q(into));
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, bad.string())) << r.out;
    EXPECT_TRUE(contains(r.out, "nothing was merged")) << r.out;
    if (std::filesystem::exists(into)) {
      const auto s = SqliteStore::open(into, OpenMode::read_only);
      const auto info = s.info();
      for (const auto& [table, n] : info.rows) {
        if (table == "trials") EXPECT_EQ(n, 0) << "a partial merge: " << r.out;
      }
    }
  }
  const auto r = run_cli("db merge " + q(good) + " " + q(db()) + " --db " + q(into) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("trials_added"), 4);
}

// Runs every command against a bad database: each must fail naming the file and change nothing.
void expect_every_command_refuses(const std::filesystem::path& bad, const std::string& needle,
                                  const std::filesystem::path& import_file) {
  const auto bytes = test::read_bytes(bad);
  const std::string db = " --db " + q(bad);
  const std::vector<std::string> commands = {"query --gpu auto --shape 4096x4096x4096",
                                             "list",
                                             "db info",
                                             "db vacuum",
                                             "db export --json " + q(bad.parent_path() / "x.json"),
                                             "db import " + q(import_file)};
  for (const auto& cmd : commands) {
    const auto r = run_cli(cmd + db);
    EXPECT_NE(r.exit_code, 0) << cmd << ": " << r.out;
    EXPECT_NE(r.exit_code, 4) << cmd << ": " << r.out;  // never the "nothing tuned" default
    EXPECT_TRUE(contains(r.out, bad.string())) << cmd << ": " << r.out;
    EXPECT_TRUE(contains(r.out, needle)) << cmd << ": " << r.out;
    EXPECT_EQ(test::read_bytes(bad), bytes) << cmd;
  }
  EXPECT_FALSE(std::filesystem::exists(bad.parent_path() / "x.json"));
}

TEST_F(CliTest, CorruptDatabasesAreRefusedUntouched) {
  const auto file = dir_.path() / "good.json";
  ASSERT_EQ(cli("db export --json " + q(file)).exit_code, 0);
  {
    // Enough trials for the file to span many pages.
    auto s = SqliteStore::open(db(), OpenMode::read_write);
    s.begin(test::h200(), big_);
    for (int i = 100; i < 400; ++i) s.record(make_trial(big_, i, 3.0));
    s.vacuum();
  }
  const auto full = test::read_bytes(db());
  ASSERT_GT(full.size(), 16384u);

  const auto truncated = dir_.path() / "truncated.db";
  test::write_bytes(truncated, full.substr(0, full.size() / 2));
  expect_every_command_refuses(truncated, "malformed", file);

  const auto noise = dir_.path() / "noise.db";
  std::mt19937 rng(42);
  std::string random_bytes(8192, '\0');
  for (auto& ch : random_bytes) ch = static_cast<char>(rng());
  test::write_bytes(noise, random_bytes);
  expect_every_command_refuses(noise, "not a database", file);
}

TEST_F(CliTest, NewerSchemaIsRefusedUntouched) {
  const auto file = dir_.path() / "good.json";
  ASSERT_EQ(cli("db export --json " + q(file)).exit_code, 0);
  {
    Connection c(db(), SQLITE_OPEN_READWRITE, 1000);
    c.exec_script("PRAGMA user_version = 42");
  }
  expect_every_command_refuses(db(), "newer", file);
}

TEST_F(CliTest, LockedDatabaseFailsWritesQuicklyButServesReads) {
  const auto file = dir_.path() / "good.json";
  ASSERT_EQ(cli("db export --json " + q(file)).exit_code, 0);
  const auto other = dir_.path() / "other.db";
  {
    auto s = SqliteStore::open(other, OpenMode::read_write);
    s.begin(test::h200(), big_);
    s.record(make_trial(big_, 50, 0.3));
  }
  test::ScopedEnv timeout("SGT_DB_BUSY_TIMEOUT_MS", "200");
  Connection locker(db(), SQLITE_OPEN_READWRITE, 0);
  locker.exec_script("BEGIN EXCLUSIVE");
  for (const std::string& cmd : std::vector<std::string>{"db merge " + q(other), "db vacuum"}) {
    const auto r = cli(cmd);
    EXPECT_EQ(r.exit_code, 1) << cmd << ": " << r.out;
    EXPECT_TRUE(contains(r.out, "locked")) << cmd << ": " << r.out;
    EXPECT_TRUE(contains(r.out, db().string())) << cmd << ": " << r.out;
  }
  EXPECT_EQ(cli("query --gpu auto --shape 4096x4096x4096").exit_code, 0);
  EXPECT_EQ(cli("list").exit_code, 0);
  locker.exec_script("ROLLBACK");
  EXPECT_EQ(test::count_rows(db(), "SELECT count(*) FROM trials"), 3);
  EXPECT_EQ(cli("db merge " + q(other)).exit_code, 0);
  EXPECT_EQ(test::count_rows(db(), "SELECT count(*) FROM trials"), 4);
}

void make_read_only(const std::filesystem::path& p) {
  namespace fs = std::filesystem;
  fs::permissions(p, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
}

TEST_F(CliTest, ReadOnlyFileServesReads) {
  make_read_only(db());
  const auto bytes = test::read_bytes(db());
  EXPECT_EQ(cli("query --gpu auto --shape 4096x4096x4096").exit_code, 0);
  EXPECT_EQ(cli("list").exit_code, 0);
  EXPECT_EQ(cli("db info").exit_code, 0);
  EXPECT_EQ(cli("db export --json " + q(dir_.path() / "e.json")).exit_code, 0);
  EXPECT_EQ(test::read_bytes(db()), bytes);
}

TEST_F(CliTest, ReadOnlyFileRefusesWrites) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: chmod 0444 does not stop root's writes";
  const auto file = dir_.path() / "good.json";
  ASSERT_EQ(cli("db export --json " + q(file)).exit_code, 0);
  make_read_only(db());
  const auto bytes = test::read_bytes(db());
  const auto r = cli("db import " + q(file));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "not writable")) << r.out;
  EXPECT_EQ(test::read_bytes(db()), bytes);
}

TEST_F(CliTest, BadImportFilesImportNothing) {
  const auto before = test::count_rows(db(), "SELECT count(*) FROM trials");
  const auto garbage = dir_.path() / "garbage.json";
  test::write_bytes(garbage, "[1, 2");
  auto r = cli("db import " + q(garbage));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, garbage.string())) << r.out;
  r = cli("db import " + q(dir_.path() / "missing.json"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(test::count_rows(db(), "SELECT count(*) FROM trials"), before);
}

}  // namespace
}  // namespace sgt::db
