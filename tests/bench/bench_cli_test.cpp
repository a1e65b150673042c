// `sgemm-tune bench` without a GPU (CI's case): help, input checks before anything else, a clear
// error and no partial output without a device; the plot script on a CSV the report writer made;
// the shipped suite bench/shapes.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpu_support.hpp"
#include "problem.hpp"
#include "retime.hpp"
#include "space.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

namespace fs = std::filesystem;

fs::path source_dir() {
  return SGT_TEST_SOURCE_DIR;
}

fs::path plot_script() {
  return source_dir() / "tools" / "plot_bench.py";
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

std::string q(const fs::path& p) {
  return "'" + p.string() + "'";
}

// A python3 that can import matplotlib, found as the CLI finds it: $SGT_PYTHON, else python3 on
// PATH, else the system's.
std::optional<std::string> python_with_matplotlib() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("SGT_PYTHON"); env && *env) {
    candidates.push_back(env);
  } else {
    candidates = {"python3", "/usr/bin/python3"};
  }
  for (const auto& py : candidates) {
    if (test::run_shell(py + " -c 'import matplotlib' >/dev/null 2>&1").exit_code == 0) return py;
  }
  return std::nullopt;
}

TEST(BenchCli, HelpNamesTheOptions) {
  const auto r = test::run_cli("bench --help");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char* opt :
       {"--suite", "--csv", "--plot", "--reps", "--no-tune", "--space", "--db", "--gpu", "--json",
        "--seed", "--cache-dir", "--plot-script", "--baseline", "--l2", "--lt-algos"}) {
    EXPECT_NE(r.out.find(opt), std::string::npos) << opt << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("at least 20"), std::string::npos) << r.out;
  // The defaults: both baselines, both timings; and what each means.
  EXPECT_NE(r.out.find("--baseline TEXT=cublas,cublaslt"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--l2 TEXT=both"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--lt-algos INT:INT in [1 - 1024]=32"), std::string::npos) << r.out;
  for (const char* says : {"CUBLAS_COMPUTE_32F", "no TF32", "flush", "rotate", "twice the L2",
                           "ratio_lt", "ratio_cold", "ratio_lt_cold", "verified"}) {
    EXPECT_NE(r.out.find(says), std::string::npos) << says << "\n" << r.out;
  }
  // cuBLAS 1xTF32: opt-in, and said to be less accurate than the FP32 sides.
  for (const char* says : {"cublas-tf32", "CUBLAS_COMPUTE_32F_FAST_TF32", "NOT FP32-accurate",
                           "ratio_tf32", "tf32_error_ratio", "opt-in"}) {
    EXPECT_NE(r.out.find(says), std::string::npos) << says << "\n" << r.out;
  }
  // And the top-level help lists the command.
  EXPECT_NE(test::run_cli("--help").out.find("bench"), std::string::npos);
}

TEST(BenchCli, SuiteIsRequired) {
  const auto r = test::run_cli("bench");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--suite"), std::string::npos) << r.out;
}

TEST(BenchCli, BadSuiteFileIsBadInputNamingTheFile) {
  test::TempDir dir;
  const auto csv = dir.path() / "out.csv";
  const auto db = dir.path() / "t.db";
  const std::string tail = " --csv " + q(csv) + " --db " + q(db);

  const auto missing = dir.path() / "nope.json";
  auto r = test::run_cli("bench --suite " + q(missing) + tail);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(missing.string()), std::string::npos) << r.out;

  const auto bad = dir.path() / "bad.json";
  write(bad, R"(["1024x1024x1024", "12x"])");
  r = test::run_cli("bench --suite " + q(bad) + tail);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(bad.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("12x"), std::string::npos) << r.out;

  write(bad, R"([{"shape": "64x64x64", "layout": "XY"}])");
  r = test::run_cli("bench --suite " + q(bad) + tail);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(bad.string()), std::string::npos) << r.out;

  write(bad, "{not json");
  r = test::run_cli("bench --suite " + q(bad) + tail);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(bad.string()), std::string::npos) << r.out;

  EXPECT_FALSE(fs::exists(csv));
  EXPECT_FALSE(fs::exists(db));
}

TEST(BenchCli, BadOptionsAreBadInput) {
  test::TempDir dir;
  const auto suite = dir.path() / "s.json";
  write(suite, R"(["256x256x256"])");
  const std::string base = "bench --suite " + q(suite) + " --db " + q(dir.path() / "t.db");
  struct Case {
    std::string args, says;
  };
  const std::vector<Case> cases = {
      {" --reps 19", "--reps"},
      {" --plot " + q(dir.path() / "chart.pdf"), ".png or .svg"},
      {" --plot " + q(dir.path() / "chart.png") + " --plot-script " + q(dir.path() / "nope.py"),
       "nope.py"},
      {" --csv " + q(dir.path() / "no-such-dir" / "x.csv"), "no-such-dir"},
      {" --csv " + q(dir.path()), "is a directory"},
      {" --gpu -1", "--gpu"},  // a name ("first") is a GPU to look for, a negative index is not
      {" --gpu ''", "--gpu"},
      {" --gpu 0,0", "device 0 is listed twice"},  // a GPU set, as tune reads it
      {" --gpu 0,h200", "--gpu"},
      {" --space " + q(dir.path() / "nope-space.json"), "nope-space.json"},
      // cuBLAS is the reference of every ratio and verification: it cannot be left out.
      {" --baseline cublaslt", "cublas is always timed"},
      {" --baseline cublas,cublas", "cublas is listed twice"},
      {" --baseline cublas,cublaslt,cublaslt", "cublaslt is listed twice"},
      {" --baseline cublas,tf32", "unknown baseline 'tf32'"},
      // The message names every baseline there is.
      {" --baseline cublas,tf32", "cublas, cublaslt or cublas-tf32"},
      {" --baseline cublas,cublas_tf32", "unknown baseline 'cublas_tf32'"},
      {" --baseline cublas-tf32", "cublas is always timed"},
      {" --baseline cublas-tf32", "give cublas,cublas-tf32"},
      {" --baseline cublaslt,cublas-tf32", "give cublas,cublaslt,cublas-tf32"},
      {" --baseline cublas,cublas-tf32,CUBLAS-TF32", "cublas-tf32 is listed twice"},
      {" --baseline cublas,,cublas-tf32", "an empty name"},
      {" --baseline ''", "an empty name"},
      {" --baseline cublas,", "an empty name"},
      {" --l2 cold", "--l2 'cold': expected flush, rotate or both"},
      {" --l2 ''", "expected flush, rotate or both"},
      {" --lt-algos 0", "--lt-algos"},
      {" --lt-algos 2000", "--lt-algos"},
  };
  for (const auto& c : cases) {
    const auto r = test::run_cli(base + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
  }
  EXPECT_FALSE(fs::exists(dir.path() / "t.db"));
}

TEST(BenchCli, WithoutAGpuSaysSoAndWritesNothing) {
  if (test::have_gpu()) GTEST_SKIP() << "a CUDA device is present";
  test::TempDir dir;
  const auto suite = dir.path() / "s.json";
  write(suite, R"([{"shape": "1024x1024x1024", "layout": "NN"}, "512x512x512"])");
  const auto csv = dir.path() / "out.csv";
  const auto png = dir.path() / "out.png";
  const auto db = dir.path() / "t.db";
  const auto cache = dir.path() / "cache";
  // A GPU set needs its GPUs as one GPU does: none here, nothing written; whatever is timed.
  for (const std::string extra :
       {"", " --no-tune", " --gpu all", " --gpu 0,1 --no-tune", " --baseline cublas --l2 flush",
        " --baseline CUBLAS,cuBLASLt --l2 Rotate --lt-algos 4",
        " --baseline cublas,cublas-tf32 --l2 flush", " --baseline cuBLAS-TF32,cublaslt,cublas"}) {
    const auto r =
        test::run_cli("bench --suite " + q(suite) + " --csv " + q(csv) + " --plot " + q(png) +
                      " --db " + q(db) + " --cache-dir " + q(cache) + " --space quick" + extra);
    EXPECT_EQ(r.exit_code, 1) << extra << "\n" << r.out;
    EXPECT_NE(r.out.find("no usable CUDA device"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(csv));
    EXPECT_FALSE(fs::exists(png));
    EXPECT_FALSE(fs::exists(db));
    EXPECT_FALSE(fs::exists(cache));
    // Nothing left beside them either (no temporary CSV).
    std::set<std::string> left;
    for (const auto& e : fs::directory_iterator(dir.path())) left.insert(e.path().filename());
    EXPECT_EQ(left, std::set<std::string>{"s.json"});
  }
}

std::vector<tune::BenchRow> sample_rows() {
  auto make = [](const std::string& shape, const std::string& layout, double t, double c,
                 const std::string& status) {
    tune::BenchRow r;
    r.problem = parse_shape(shape);
    r.problem.layout = layout;
    r.config = status == "untuned" ? "" : "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1";
    r.status = status;
    r.tuned_ms = t;
    r.cublas_ms = c;
    r.repetitions = 20;
    r.gpu = "NVIDIA H200";
    r.date = "2026-11-30T10:00:00Z";
    return r;
  };
  return {make("4096x4096x4096", "NN", 3.0562, 2.6914, "ok"),
          make("8192x128x8192", "NN", 0.561, 0.204, "ok"),
          make("2048x512x2048", "TN", 0.2, 0.22, "ok"),
          make("1000x1000x1000", "NN", 0, 0, "untuned")};
}

TEST(BenchPlot, ScriptDrawsAPngAndAnSvgFromTheBenchCsv) {
  const auto py = python_with_matplotlib();
  if (!py) GTEST_SKIP() << "no python3 with matplotlib (apt-get install python3-matplotlib)";
  test::TempDir dir;
  const auto csv = dir.path() / "r.csv";
  write(csv, tune::bench_csv(sample_rows()));
  for (const char* name : {"r.png", "r.svg"}) {
    const auto out = dir.path() / name;
    const auto r = test::run_shell(*py + " " + q(plot_script()) + " " + q(csv) + " " + q(out));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    ASSERT_TRUE(fs::exists(out));
    EXPECT_GT(fs::file_size(out), 2000u);
    std::ifstream in(out, std::ios::binary);
    std::string head(8, '\0');
    in.read(head.data(), 8);
    if (std::string(name).ends_with(".png")) {
      EXPECT_EQ(head, "\x89PNG\r\n\x1a\n");
    } else {
      std::string all((std::istreambuf_iterator<char>(in)), {});
      EXPECT_NE(all.find("<svg"), std::string::npos);
      EXPECT_NE(all.find("NVIDIA H200"), std::string::npos);
    }
  }
}

TEST(BenchPlot, ScriptRefusesABadCsvOrExtension) {
  const auto py = python_with_matplotlib();
  if (!py) GTEST_SKIP() << "no python3 with matplotlib (apt-get install python3-matplotlib)";
  test::TempDir dir;
  const auto csv = dir.path() / "r.csv";
  write(csv, tune::bench_csv(sample_rows()));
  auto r =
      test::run_shell(*py + " " + q(plot_script()) + " " + q(csv) + " " + q(dir.path() / "r.pdf"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(".png or .svg"), std::string::npos) << r.out;

  const auto bad = dir.path() / "bad.csv";
  write(bad, "a,b\n1,2\n");
  r = test::run_shell(*py + " " + q(plot_script()) + " " + q(bad) + " " + q(dir.path() / "x.png"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("not a bench or tune CSV"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir.path() / "x.png"));
}

TEST(BenchPlot, ScriptSaysWhenMatplotlibIsMissing) {
  // A python3 that cannot import matplotlib: an empty module path hides site-packages.
  if (test::run_shell("python3 -S -I -c 'import csv' >/dev/null 2>&1").exit_code != 0) {
    GTEST_SKIP() << "no python3";
  }
  test::TempDir dir;
  const auto csv = dir.path() / "r.csv";
  write(csv, tune::bench_csv(sample_rows()));
  const auto r = test::run_shell("python3 -S -I " + q(plot_script()) + " " + q(csv) + " " +
                                 q(dir.path() / "x.png"));
  if (r.exit_code == 0) GTEST_SKIP() << "this python3 has matplotlib in its standard library path";
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("python3-matplotlib"), std::string::npos) << r.out;
}

// The spaces the shipped suite names exist: its split-K shapes (skinny M or N, deep K) name the
// split-K space (the suite space stops at SPLIT_K 16 and MIN_BLOCKS 2 there), its small shapes
// (too few large tiles to fill the GPU) the small one, and the shapes with an awkward edge but
// work for 256-wide tiles (odd sizes, transposes, deep K over a few tiles) the large one.
// Shapes whose operands allow tensor copies join the TMA kernel's space to their own ("small+tma";
// "+tma-split" where their own space splits K); NT shapes and those whose operands refuse copies
// join its space on PACK's panels ("+tma-pack"). Shapes whose M or N is not a multiple of 64 also
// join the small-block TMA space last ("+tma-small").
TEST(BenchSuite, ShippedShapesNameSpacesThatLoad) {
  const auto suite = load_suite((source_dir() / "bench" / "shapes.json").string());
  int skinny = 0, small = 0, large = 0, with_tma = 0, with_small_tma = 0;
  for (const auto& e : suite) {
    if (e.space.empty()) continue;
    auto parts = split_space_union(e.space);
    for (const auto& part : parts) EXPECT_NO_THROW(load_space(part)) << part;
    const auto& p = e.problem;
    ASSERT_LE(parts.size(), 3u) << e.space;
    const bool small_tma = parts.back() == "tma-small";
    EXPECT_EQ(small_tma, p.M % 64 != 0 || p.N % 64 != 0) << p.shape() << " " << e.space;
    if (small_tma) {
      ++with_small_tma;
      parts.pop_back();
    }
    const bool packed = std::find(parts.begin(), parts.end(), "tma-pack") != parts.end();
    // The TMA kernel on PACK's panels where its own copies cannot read the operands or would
    // transpose both (NT); nowhere else.
    EXPECT_EQ(packed, !tma_operands(p) || p.layout == "NT") << p.shape() << " " << e.space;
    if (packed) EXPECT_EQ(parts.back(), "tma-pack") << e.space;
    const size_t direct = parts.size() - (packed ? 1 : 0);
    EXPECT_EQ(direct == 2, tma_operands(p)) << p.shape() << " " << e.space;
    if (direct == 2) {
      ++with_tma;
      const bool split = parts[0] == "skinny" || p.K >= 4 * std::min(p.M, p.N);
      EXPECT_EQ(parts[1], split ? "tma-split" : "tma") << p.shape() << " " << e.space;
    }
    const std::string& space = parts[0];
    if (space == "default") continue;
    if (space == "skinny") {
      EXPECT_TRUE(std::min(p.M, p.N) <= 256 || p.K >= 8 * std::max(p.M, p.N)) << p.shape();
      ++skinny;
    } else if (space == "large") {
      // Work for 256-wide tiles: 2^31 multiply-adds or more, and M, N at least one tile.
      EXPECT_GE(static_cast<long long>(p.M) * p.N * p.K, 1LL << 31) << p.shape();
      EXPECT_GE(std::min(p.M, p.N), 128) << p.shape();
      ++large;
    } else {
      EXPECT_EQ(space, "small") << p.shape();
      // Fewer than two waves of the 128x256 tile on a 132-SM GPU.
      EXPECT_LT((p.M + 127) / 128 * ((p.N + 255) / 256), 2 * 132) << p.shape();
      ++small;
    }
  }
  EXPECT_EQ(skinny, 2);
  EXPECT_EQ(small, 4);
  EXPECT_EQ(large, 5);
  EXPECT_EQ(with_tma, 14);
  EXPECT_EQ(with_small_tma, 3);
  std::set<int> splits;
  for (const auto& c : enumerate(load_space("skinny")).survivors) splits.insert(c.SPLIT_K);
  EXPECT_EQ(splits, (std::set<int>{1, 2, 4, 8, 16, 32}));
  // The small space's winners of its own measurement (bench/NOTES.md) are in it.
  std::set<std::string> names;
  for (const auto& c : enumerate(load_space("small")).survivors) names.insert(to_name(c));
  for (const char* w : {"wt_128x64x16_w32x64_wn1_t4x4_n128_mb1_s2_p4_g8_k4_o1",
                        "wt_64x128x16_w64x16_wn2_t4x4_n256_mb1_s2_p4_g8_o1",
                        "wt_64x128x16_w16x64_wn1_t8x4_n256_mb1_s2_p4_g8_o1",
                        "wt_64x128x16_w64x16_wn2_t4x4_n256_mb2_s2_p4_g8_o1"}) {
    EXPECT_TRUE(names.count(w)) << w;
  }
}

// The shipped suite loads and covers every category the benchmark claims to cover.
TEST(BenchSuite, ShippedShapesLoadAndCoverEveryCategory) {
  const auto problems = load_shape_list((source_dir() / "bench" / "shapes.json").string());
  EXPECT_GE(problems.size(), 14u);
  EXPECT_LE(problems.size(), 18u);
  auto has = [&](auto pred) { return std::any_of(problems.begin(), problems.end(), pred); };
  for (long long n : {1024, 2048, 4096, 8192}) {
    EXPECT_TRUE(has([&](const Problem& p) {
      return p.M == n && p.N == n && p.K == n && p.layout == "NN";
    })) << "square "
        << n;
  }
  EXPECT_TRUE(has([](const Problem& p) {
    const auto lo = std::min(p.M, p.N), hi = std::max(p.M, p.N);
    return lo >= 64 && lo <= 128 && hi >= 4096;
  })) << "skinny M or N";
  EXPECT_TRUE(has([](const Problem& p) { return p.M <= 128 && p.N >= 4096; })) << "skinny M";
  EXPECT_TRUE(has([](const Problem& p) { return p.N <= 128 && p.M >= 4096; })) << "skinny N";
  EXPECT_TRUE(has([](const Problem& p) { return p.K >= 8 * std::max(p.M, p.N); })) << "deep K";
  EXPECT_TRUE(has([](const Problem& p) { return p.M % 2 == 1 || p.N % 2 == 1 || p.K % 2 == 1; }))
      << "odd size";
  EXPECT_TRUE(has([](const Problem& p) { return p.M % 64 != 0 && p.N % 64 != 0; }))
      << "no tile divides it";
  std::set<std::string> layouts;
  for (const auto& p : problems) layouts.insert(p.layout);
  EXPECT_EQ(layouts, (std::set<std::string>{"NN", "NT", "TN", "TT"}));
  // Moderate enough to tune with a small space in minutes.
  double flops = 0;
  for (const auto& p : problems) flops += p.flops();
  EXPECT_LT(flops, 2e12);
}

// tools/bench/winners_suite.py: a bench CSV becomes a suite whose every problem's space is that
// row's winner alone, so tuning it re-measures exactly the configs an earlier run reported.
TEST(WinnersSuite, EveryProblemsSpaceIsItsRecordedWinnerAlone) {
  test::TempDir dir;
  const auto csv = source_dir() / "bench" / "results" / "2026-12-01-h200-suite-tma-small-r4.csv";
  const auto made = test::run_shell(
      "python3 " + test::sh_quote(source_dir() / "tools" / "bench" / "winners_suite.py") + " " +
      test::sh_quote(csv) + " " + test::sh_quote(dir.path()));
  ASSERT_EQ(made.exit_code, 0) << made.out;
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // the header: shape,M,N,K,layout,config,...
  int rows = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 6u) << line;
    const auto space = dir.path() / (f[0] + "-" + f[4] + ".json");
    const auto listed =
        test::run_cli("space --space " + test::sh_quote(space) + " --shape " + f[0] + " --list");
    ASSERT_EQ(listed.exit_code, 0) << listed.out;
    EXPECT_NE(listed.out.find(f[5] + "\n"), std::string::npos) << f[0] << ": " << listed.out;
    EXPECT_NE(listed.out.find("1 survivor"), std::string::npos) << f[0] << ": " << listed.out;
    ++rows;
  }
  EXPECT_EQ(rows, 16);
  const auto suite = test::run_cli("tune --dry-run --strategy exhaustive --json --shapes " +
                                       test::sh_quote(dir.path() / "suite.json"),
                                   false);
  ASSERT_EQ(suite.exit_code, 0) << suite.out;
  const auto j = nlohmann::json::parse(suite.out);
  EXPECT_EQ(j.at("format_version"), 2);
  ASSERT_EQ(j.at("runs").size(), 16u);
  for (const auto& p : j.at("runs")) EXPECT_EQ(p.at("candidates"), 1) << p.dump();
  // A name that is not a config is refused, and nothing is written for it.
  std::ofstream(dir.path() / "bad.csv") << "shape,M,N,K,layout,config,status\n"
                                           "64x64x64,64,64,64,NN,wt_64x64_nonsense,ok\n";
  const auto bad = test::run_shell(
      "python3 " + test::sh_quote(source_dir() / "tools" / "bench" / "winners_suite.py") + " " +
      test::sh_quote(dir.path() / "bad.csv") + " " + test::sh_quote(dir.path() / "bad"));
  EXPECT_NE(bad.exit_code, 0) << bad.out;
  EXPECT_FALSE(fs::exists(dir.path() / "bad" / "suite.json"));
}

}  // namespace
}  // namespace sgt
