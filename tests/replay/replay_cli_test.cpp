// `tune --replay` and `dataset` as a user runs them: no GPU, the shipped datasets.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace sgt {
namespace {

std::string shipped(const std::string& name) {
  return test::sh_quote(std::filesystem::path(SGT_TEST_SOURCE_DIR) / "datasets" / "h200" /
                        (name + ".json.gz"));
}

TEST(ReplayCli, TuneReplaysADatasetAndStoresItsTrials) {
  test::TempDir dir;
  const auto db = test::sh_quote(dir.path() / "r.db");
  const auto r = test::run_cli("tune --replay " + shipped("512x2048x512-NT") +
                                   " --shape 512x2048x512 --layout NT --space tma-small --top 2 "
                                   "--strategy random --max-evals 100 --seed 3 --json --db " +
                                   db,
                               false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("evaluator"), "replay");
  EXPECT_EQ(j.at("strategy"), "random");
  EXPECT_EQ(j.at("measured"), 100);
  EXPECT_TRUE(j.at("budget_hit").get<bool>());
  EXPECT_EQ(j.at("gpu").at("name"), "NVIDIA H200");
  ASSERT_FALSE(j.at("finalists").empty());
  // The database now serves an exact winner, stored under the recorded GPU. (Unverified: the
  // recording verified only its own winner, so query ranks by median alone.)
  const auto q =
      test::run_cli("query --gpu 'NVIDIA H200' --shape 512x2048x512 --layout NT --db " + db);
  EXPECT_EQ(q.exit_code, 0) << q.out;
  EXPECT_NE(q.out.find("exact winner for 512x2048x512 NT f32 on NVIDIA H200"), std::string::npos)
      << q.out;
}

TEST(ReplayCli, AShapeWithoutARecordingIsBadInputBeforeAnythingIsStored) {
  test::TempDir dir;
  const auto path = dir.path() / "r.db";
  const auto r = test::run_cli("tune --replay " + shipped("512x2048x512-NT") +
                               " --shape 1024x1024x1024 --db " + test::sh_quote(path));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("no recording of 1024x1024x1024 NN"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(path));
  const auto bad = test::run_cli("tune --replay " + test::sh_quote(dir.path() / "none.json") +
                                 " --db " + test::sh_quote(path));
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("no such file"), std::string::npos) << bad.out;
  const auto strategy = test::run_cli("tune --strategy annealing --replay " +
                                      shipped("512x2048x512-NT") + " --db " + test::sh_quote(path));
  EXPECT_EQ(strategy.exit_code, 2) << strategy.out;
  EXPECT_NE(strategy.out.find("unknown strategy 'annealing'"), std::string::npos) << strategy.out;
}

// The issue's acceptance: a replay standing for four devices measures every candidate exactly
// once, stores each once, and picks the winner one device picks.
TEST(ReplayCli, FourReplayDevicesMeasureEachCandidateOnceAndAgreeWithOne) {
  test::TempDir dir;
  auto tune = [&](const std::string& gpus, const std::string& db) {
    const auto r = test::run_cli("tune --replay " + shipped("512x2048x512-NT") +
                                     " --shape 512x2048x512 --layout NT --space quick+tma "
                                     "--strategy exhaustive --top 3 --seed 5 --json --gpu " +
                                     gpus + " --db " + test::sh_quote(dir.path() / db),
                                 false);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return nlohmann::json::parse(r.out);
  };
  const auto one = tune("0", "one.db");
  const auto four = tune("0,1,2,3", "four.db");
  EXPECT_EQ(four.at("measured"), four.at("candidates"));
  EXPECT_EQ(four.at("measured"), one.at("measured"));
  ASSERT_EQ(four.at("devices").size(), 4u);
  int sum = 0;
  for (const auto& d : four.at("devices")) {
    EXPECT_GT(d.at("measured").get<int>(), 0) << d;
    EXPECT_EQ(d.at("lost"), "");
    sum += d.at("measured").get<int>();
  }
  EXPECT_EQ(sum, four.at("measured").get<int>());
  EXPECT_EQ(four.at("devices").at(3).at("device"), 3);
  EXPECT_EQ(four.at("finalists").at(0).at("trial").at("config_name"),
            one.at("finalists").at(0).at("trial").at("config_name"));
  // Each candidate is stored once (plus the finalists' re-timings), as with one device.
  const auto count = [&](const std::string& db) {
    return test::run_cli("db info --json --db " + test::sh_quote(dir.path() / db), false).out;
  };
  EXPECT_EQ(nlohmann::json::parse(count("four.db")).at("rows").at("trials"),
            nlohmann::json::parse(count("one.db")).at("rows").at("trials"));
  // A replay has no devices to count: 'all' is refused, naming the way to say it.
  const auto all = test::run_cli("tune --replay " + shipped("512x2048x512-NT") +
                                 " --shape 512x2048x512 --layout NT --gpu all --db " +
                                 test::sh_quote(dir.path() / "all.db"));
  EXPECT_EQ(all.exit_code, 2) << all.out;
  EXPECT_NE(all.out.find("--gpu 0,1,2,3"), std::string::npos) << all.out;
  const auto twice = test::run_cli("tune --gpu 0,0 --shape 64x64x64");
  EXPECT_EQ(twice.exit_code, 2) << twice.out;
  EXPECT_NE(twice.out.find("device 0 is listed twice"), std::string::npos) << twice.out;
}

// The screening trials of a --results file: (shape layout, config) -> how often stored.
std::map<std::pair<std::string, std::string>, int> screened(const std::filesystem::path& file) {
  std::map<std::pair<std::string, std::string>, int> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const auto t = nlohmann::json::parse(line);
    if (t.at("strategy").get<std::string>().ends_with("/final")) continue;
    const auto& p = t.at("problem");
    ++out[{fmt::format("{}x{}x{} {}", p.at("M").get<int>(), p.at("N").get<int>(),
                       p.at("K").get<int>(), p.at("layout").get<std::string>()),
           t.at("config_name").get<std::string>()}];
  }
  return out;
}

// A suite on several replay devices is spread whole over them: each shape tuned on one device
// (all its candidates and finalists), in turns of the devices' recorded clocks, so the result is
// the same on every run. Each shape's winner is the one a single device picks, every candidate is
// stored once, and the JSON says which device tuned each shape.
TEST(ReplayCli, ASuiteSpreadOverThreeReplayDevicesAgreesWithOne) {
  test::TempDir dir;
  const std::vector<std::string> shapes = {"512x2048x512-NT", "1024x1024x1024-NN",
                                           "2048x512x2048-TN", "64x4096x4096-NN"};
  const auto suite = dir.path() / "suite.json";
  nlohmann::json entries = nlohmann::json::array();
  std::string replays;
  for (const auto& s : shapes) {
    entries.push_back({{"shape", s.substr(0, s.find('-'))}, {"layout", s.substr(s.find('-') + 1)}});
    replays += " --replay " + shipped(s);
  }
  std::ofstream(suite) << entries.dump();
  auto tune = [&](const std::string& gpus, const std::string& name, bool json = true) {
    const auto r =
        test::run_cli("tune --shapes " + test::sh_quote(suite) + replays +
                          " --space default --strategy exhaustive --top 2 --seed 7 --gpu " + gpus +
                          " --db " + test::sh_quote(dir.path() / (name + ".db")) + " --results " +
                          test::sh_quote(dir.path() / (name + ".jsonl")) + " --csv " +
                          test::sh_quote(dir.path() / (name + ".csv")) + (json ? " --json" : ""),
                      !json);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return r.out;
  };
  const auto one = nlohmann::json::parse(tune("0", "one"));
  const auto three = nlohmann::json::parse(tune("0,1,2", "three"));
  ASSERT_EQ(three.at("summary").size(), shapes.size());
  ASSERT_EQ(three.at("runs").size(), shapes.size());
  EXPECT_FALSE(one.contains("devices"));  // one device: the suite as before
  ASSERT_EQ(three.at("devices").size(), 3u);
  size_t taken = 0;
  for (size_t d = 0; d < 3; ++d) {
    const auto& dev = three.at("devices").at(d);
    EXPECT_EQ(dev.at("device"), d);
    EXPECT_GE(dev.at("shapes").get<size_t>(), 1u) << dev;
    EXPECT_EQ(dev.at("lost"), "") << dev;
    taken += dev.at("shapes").get<size_t>();
  }
  EXPECT_EQ(taken, shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto& s3 = three.at("summary").at(i);
    const auto& s1 = one.at("summary").at(i);
    const auto& run = three.at("runs").at(i);
    // Suite order, whatever device finished first.
    EXPECT_EQ(s3.at("shape").get<std::string>() + "-" + s3.at("layout").get<std::string>(),
              shapes[i]);
    EXPECT_EQ(s3.at("status"), "ok") << s3;
    EXPECT_EQ(s3.at("winner"), s1.at("winner")) << shapes[i];
    EXPECT_EQ(s1.at("device"), 0);
    // The shape was tuned whole on the device the summary names: its one lane screened every
    // candidate, and re-timed the finalists.
    EXPECT_EQ(run.at("device"), s3.at("device")) << shapes[i];
    ASSERT_EQ(run.at("devices").size(), 1u) << shapes[i];
    EXPECT_EQ(run.at("devices").at(0).at("device"), s3.at("device"));
    EXPECT_EQ(run.at("measured"), run.at("candidates"));
    EXPECT_EQ(run.at("measured"), one.at("runs").at(i).at("measured"));
  }
  // The devices' clocks start level: the first three shapes go to devices 0, 1, 2 in turn.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(three.at("summary").at(i).at("device"), i);
  // Every candidate of every shape stored once, as with one device.
  const auto stored = screened(dir.path() / "three.jsonl");
  EXPECT_EQ(stored, screened(dir.path() / "one.jsonl"));
  for (const auto& [key, n] : stored) EXPECT_EQ(n, 1) << key.first << " " << key.second;
  // The CSV names each shape's device last.
  std::ifstream csv(dir.path() / "three.csv");
  std::string header, row;
  std::getline(csv, header);
  EXPECT_TRUE(header.ends_with(",date,device")) << header;
  std::getline(csv, row);
  EXPECT_TRUE(row.ends_with(",0")) << row;

  // The same suite again, on devices listed in another order: the same shapes on the same turns,
  // now named by the indices given, and the same winners; the text says which GPU tuned what.
  const auto again = tune("2,0,1", "again", false);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto& s = three.at("summary").at(i);
    EXPECT_NE(again.find(s.at("winner").get<std::string>()), std::string::npos) << again;
  }
  EXPECT_NE(again.find("Tuned 512x2048x512 NT on NVIDIA H200 (GPU 2)"), std::string::npos) << again;
  EXPECT_NE(again.find("Tuned 1024x1024x1024 NN on NVIDIA H200 (GPU 0)"), std::string::npos)
      << again;
  EXPECT_NE(again.find("shapes tuned per GPU: GPU 2 "), std::string::npos) << again;
  EXPECT_NE(again.find("[info] [GPU 1] "), std::string::npos) << "the logs name the GPU\n" << again;
  EXPECT_EQ(screened(dir.path() / "again.jsonl"), stored);
}

// dataset write counts coverage itself: a database imported from a dataset writes the same
// dataset back (complete for `auto`), and one narrowed to a subset says what it lacks.
TEST(DatasetCli, WriteAndInfoRoundTrip) {
  test::TempDir dir;
  const auto db = test::sh_quote(dir.path() / "d.db");
  ASSERT_EQ(test::run_cli("db import " + shipped("8192x128x8192-NN") + " --db " + db).exit_code, 0);
  const auto out = dir.path() / "again.json.gz";
  const auto w = test::run_cli("dataset write --db " + db + " --shape 8192x128x8192 -o " +
                                   test::sh_quote(out) + " --command 'test' --json",
                               false);
  ASSERT_EQ(w.exit_code, 0) << w.out;
  const auto h = nlohmann::json::parse(w.out);
  EXPECT_TRUE(h.at("complete").get<bool>());
  EXPECT_EQ(h.at("measured"), h.at("candidates"));
  const auto info = test::run_cli("dataset info --json " + test::sh_quote(out), false);
  ASSERT_EQ(info.exit_code, 0) << info.out;
  const auto all = nlohmann::json::parse(info.out);
  EXPECT_EQ(all.at("format_version"), 1);
  const auto i = all.at("datasets").at(0);
  EXPECT_EQ(i.at("statuses").at("ok"), 7240);
  EXPECT_EQ(i.at("dataset").at("command"), "test");
  // The wrong layout has no trials.
  const auto none =
      test::run_cli("dataset write --db " + db + " --shape 8192x128x8192 --layout TT -o " +
                    test::sh_quote(dir.path() / "x.json"));
  EXPECT_EQ(none.exit_code, 2) << none.out;
  EXPECT_NE(none.out.find("holds no trial of 8192x128x8192 TT"), std::string::npos) << none.out;
}

}  // namespace
}  // namespace sgt

namespace sgt {
namespace {

// The model strategy as a user runs it on a replay: it learns from the shipped datasets of the
// other shapes (never the replayed one) and stops at the budget.
TEST(ReplayCli, ModelStrategyReplaysWithTheShippedHistory) {
  test::TempDir dir;
  const auto r = test::run_cli("tune --replay " + shipped("1000x1000x1000-NN") +
                                   " --shape 1000x1000x1000 --space auto --strategy model "
                                   "--max-evals 64 --top 2 --seed 4 --json --db " +
                                   test::sh_quote(dir.path() / "m.db"),
                               false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("strategy"), "model");
  EXPECT_EQ(j.at("measured"), 64);
  EXPECT_EQ(j.at("stopped"), "max_evals");
  EXPECT_EQ(j.at("patience"), 200);
  ASSERT_FALSE(j.at("finalists").empty());
  EXPECT_GT(j.at("finalists").at(0).at("ratio").get<double>(), 1.0);
  EXPECT_FALSE(j.at("finalists").at(0).contains("ratio_to_cublas"));
}

// The default tune, replayed: the model with the default patience stops once it no longer gains,
// long before the candidates run out, and says why; --patience 0 keeps searching.
TEST(ReplayCli, TheDefaultTuneStopsWhenItConverges) {
  test::TempDir dir;
  const std::string cmd = "tune --replay " + shipped("2048x512x2048-TN") +
                          " --shape 2048x512x2048 --layout TN --top 2 --seed 5 --db " +
                          test::sh_quote(dir.path() / "c.db");
  const auto r = test::run_cli(cmd + " --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("stopped"), "converged");
  EXPECT_EQ(j.at("patience"), 200);
  EXPECT_GE(j.at("measured").get<int>(), 200);
  EXPECT_LT(j.at("measured").get<int>(), j.at("candidates").get<int>() / 4);
  EXPECT_FALSE(j.at("budget_hit").get<bool>());
  const auto text = test::run_cli(cmd + " --retune --max-evals 30 --patience 0");
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("stopped at --max-evals 30"), std::string::npos) << text.out;
  const auto again = test::run_cli(cmd + " --retune --patience 20");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("converged: the last 20 measurements"), std::string::npos) << again.out;
}

// tune --shapes --csv speaks bench's vocabulary (ratio after the two times; status, gpu, date),
// so tools/plot_bench.py draws it as it draws bench's CSV; the table and JSON say ratio too.
TEST(TuneCli, TheSuiteCsvHasBenchsColumnsAndPlots) {
  test::TempDir dir;
  const auto suite = dir.path() / "suite.json";
  std::ofstream(suite) << R"({"shapes": [{"shape": "512x2048x512", "layout": "NT"},
                                         {"shape": "1000x1000x1000", "layout": "NN"}]})";
  const auto csv = dir.path() / "tune.csv";
  const auto r = test::run_cli(
      "tune --shapes " + test::sh_quote(suite) + " --replay " + shipped("512x2048x512-NT") +
          " --replay " + shipped("1000x1000x1000-NN") +
          " --space tma-small --strategy random --max-evals 20 --top 1 --seed 9 --json --csv " +
          test::sh_quote(csv) + " --db " + test::sh_quote(dir.path() / "t.db"),
      false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j.at("geomean_ratio").get<double>(), 0.5);
  EXPECT_GT(j.at("summary").at(0).at("ratio").get<double>(), 0.5);
  EXPECT_FALSE(j.at("summary").at(0).contains("ratio_to_cublas"));
  EXPECT_FALSE(j.contains("geomean_ratio_to_cublas"));
  std::ifstream in(csv);
  std::string header, row;
  std::getline(in, header);
  EXPECT_EQ(header,
            "shape,M,N,K,layout,winner,median_ms,cublas_ms,ratio,gflops,wall_s,"
            "edge_checks_passed,edge_checks_total,status,gpu,date,device");
  int rows = 0;
  while (std::getline(in, row)) {
    EXPECT_NE(row.find(",ok,NVIDIA H200,"), std::string::npos) << row;
    ++rows;
  }
  EXPECT_EQ(rows, 2);
  std::string py;
  for (const char* c : {"python3", "/usr/bin/python3"}) {
    if (py.empty() &&
        test::run_shell(std::string(c) + " -c 'import matplotlib' 2>/dev/null").exit_code == 0)
      py = c;
  }
  if (py.empty()) GTEST_SKIP() << "no python3 with matplotlib";
  const auto png = dir.path() / "tune.png";
  const auto plot = test::run_shell(
      py + " " +
      test::sh_quote(std::filesystem::path(SGT_TEST_SOURCE_DIR) / "tools" / "plot_bench.py") + " " +
      test::sh_quote(csv) + " " + test::sh_quote(png));
  EXPECT_EQ(plot.exit_code, 0) << plot.out;
  EXPECT_TRUE(std::filesystem::exists(png));
}

// The tables name the speed against cuBLAS as the CSV and JSON do: `ratio`, printed as 1.147x.
TEST(TuneCli, TablesShowTheRatioToCublas) {
  test::TempDir dir;
  const auto r = test::run_cli("tune --replay " + shipped("512x2048x512-NT") +
                               " --shape 512x2048x512 --layout NT --space tma-small --top 2 "
                               "--strategy random --max-evals 20 --seed 3 --db " +
                               test::sh_quote(dir.path() / "t.db"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("%cuBLAS"), std::string::npos) << r.out;
  const std::regex header(R"(rank +config +ms +GFLOP/s +ratio +regs)");
  const std::regex row(R"(\n1 +\S+ +[0-9.]+ +[0-9.]+ +[0-9]\.[0-9]{3}x +[0-9]+ )");
  EXPECT_TRUE(std::regex_search(r.out, header)) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, row)) << r.out;
}

// A new user's first look, with no GPU: the default candidate set has both kernel families.
TEST(TuneCli, DryRunShowsTheAutoSetWithTheTmaFamilyStrategyAndBudget) {
  const auto r = test::run_cli("tune --dry-run --arch sm_90 --shape 3000x3000x3000 --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("space"), "auto");
  EXPECT_EQ(j.at("strategy"), "model");
  EXPECT_EQ(j.at("budget_s"), 300.0);
  EXPECT_EQ(j.at("patience"), 200);
  EXPECT_GT(j.at("families").at("ws_tma").get<int>(), 1000);
  EXPECT_GT(j.at("families").at("warptile").get<int>(), 5000);
  EXPECT_EQ(j.at("spaces").size(), 10u);
  EXPECT_EQ(j.at("dropped").at("ws_tma"), 0);
  // Off Hopper the TMA family is not there; the text form says so, with the family's rule.
  const auto ampere = test::run_cli("tune --dry-run --arch sm_86 --shape 3000x3000x3000");
  ASSERT_EQ(ampere.exit_code, 0) << ampere.out;
  EXPECT_NE(ampere.out.find("ws_tma configs dropped: rule tma_architecture"), std::string::npos)
      << ampere.out;
  const auto ampere_json =
      nlohmann::json::parse(test::run_cli("tune --dry-run --arch sm_86 --shape 3000x3000x3000 "
                                          "--json",
                                          false)
                                .out);
  EXPECT_EQ(ampere_json.at("families").at("ws_tma"), 0);
  EXPECT_EQ(ampere_json.at("dropped").at("ws_tma"), j.at("families").at("ws_tma"));
  EXPECT_EQ(ampere_json.at("tma_dropped"), j.at("families").at("ws_tma"));
  EXPECT_EQ(test::run_cli("tune --dry-run --budget 5x").exit_code, 2);
  EXPECT_EQ(test::run_cli("tune --arch sm_90").exit_code, 2);
}

// strategy-bench over every shipped dataset, briefly: a row per strategy, dataset and seed, and
// fractions of the optimum that only grow with the share measured.
TEST(StrategyBenchCli, ReplaysEveryShippedDatasetForEachStrategy) {
  test::TempDir dir;
  const auto csv = dir.path() / "sb.csv";
  const auto r = test::run_cli(
      "strategy-bench --strategies random,model --seeds 1 "
      "--max-fraction 0.03 --patience 30 --json --csv " +
          test::sh_quote(csv),
      false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("format_version"), 1);
  const auto& j = doc.at("strategies");
  for (const char* s : {"random", "model"}) {
    ASSERT_TRUE(j.contains(s)) << r.out;
    EXPECT_GE(j.at(s).at("runs").get<int>(), 8);
    const auto& f = j.at(s).at("fraction_of_optimum");
    EXPECT_GT(f.at("1%").get<double>(), 0.0);
    EXPECT_LE(f.at("1%").get<double>(), f.at("2%").get<double>());
    EXPECT_LE(f.at("2%").get<double>(), 1.0);
    // Where the runs stopped: never past the cap, at a fraction no better than optimal.
    const auto& stop = j.at(s).at("at_stop");
    EXPECT_GE(stop.at("evaluations").get<double>(), 1.0);
    EXPECT_LE(stop.at("fraction_of_optimum").get<double>(), 1.0);
    EXPECT_LE(stop.at("min_fraction_of_optimum").get<double>(),
              stop.at("fraction_of_optimum").get<double>());
  }
  std::ifstream in(csv);
  std::string line;
  int rows = -1;  // the header
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 2 * j.at("random").at("runs").get<int>());
  const auto bad = test::run_cli("strategy-bench --strategies random,annealing");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
}

}  // namespace
}  // namespace sgt
