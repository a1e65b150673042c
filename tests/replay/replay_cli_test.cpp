// `tune --replay` and `dataset` as a user runs them: no GPU, the shipped datasets.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dataset.hpp"
#include "space.hpp"
#include "store.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

std::filesystem::path shipped_path(const std::string& name) {
  return std::filesystem::path(SGT_TEST_SOURCE_DIR) / "datasets" / "h200" / (name + ".json.gz");
}
std::string shipped(const std::string& name) {
  return test::sh_quote(shipped_path(name));
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
  // The replayed trials keep the kernel hash they were measured with: this recording's TMA trials
  // predate a change of the TMA kernel, so the database keeps them as stale, exactly as `db
  // import` of the same file does, and serves them only when stale trials are allowed.
  const std::string query = "query --gpu 'NVIDIA H200' --shape 512x2048x512 --layout NT --db " + db;
  const auto q = test::run_cli(query);
  EXPECT_NE(q.exit_code, 0) << q.out;
  EXPECT_NE(q.out.find("stale trial"), std::string::npos) << q.out;
  const auto stale = test::run_cli(query + " --allow-stale");
  EXPECT_EQ(stale.exit_code, 0) << stale.out;
  EXPECT_NE(stale.out.find("exact winner for 512x2048x512 NT f32 on NVIDIA H200"),
            std::string::npos)
      << stale.out;
  const auto imported = test::sh_quote(dir.path() / "i.db");
  ASSERT_EQ(
      test::run_cli("db import " + shipped("512x2048x512-NT") + " --db " + imported).exit_code, 0);
  const auto qj = nlohmann::json::parse(test::run_cli(query + " --json", false).out);
  const auto ij = nlohmann::json::parse(
      test::run_cli(
          "query --gpu 'NVIDIA H200' --shape 512x2048x512 --layout NT --json --db " + imported,
          false)
          .out);
  EXPECT_GT(qj.at("stale_skipped").at("kernel_hash").get<long long>(), 0) << qj;
  EXPECT_GT(ij.at("stale_skipped").at("kernel_hash").get<long long>(), 0) << ij;

  // The warp-tiling trials of the same recording are current: replayed, they are served.
  const auto wdb = test::sh_quote(dir.path() / "w.db");
  const auto w = test::run_cli("tune --replay " + shipped("512x2048x512-NT") +
                                   " --shape 512x2048x512 --layout NT --space small --top 2 "
                                   "--strategy random --max-evals 50 --seed 3 --db " +
                                   wdb,
                               false);
  ASSERT_EQ(w.exit_code, 0) << w.out;
  const auto wq =
      test::run_cli("query --gpu 'NVIDIA H200' --shape 512x2048x512 --layout NT --db " + wdb);
  EXPECT_EQ(wq.exit_code, 0) << wq.out;
  EXPECT_NE(wq.out.find("exact winner for 512x2048x512 NT f32 on NVIDIA H200"), std::string::npos)
      << wq.out;
}

// A replayed tune stores every trial with the source replayed and the strategy's name alone, the
// finalists' re-timings with the phase final; `db export` writes both as keys of their own and
// `db import` into another database gives back the very same trials.
TEST(ReplayCli, AReplayStoresItsRolesAndExportThenImportKeepsThem) {
  test::TempDir dir;
  const auto a = dir.path() / "a.db", b = dir.path() / "b.db";
  const auto exported = dir.path() / "a.json";
  const auto r = test::run_cli("tune --replay " + shipped("512x2048x512-NT") +
                                   " --shape 512x2048x512 --layout NT --space tma-small --top 3 "
                                   "--strategy random --max-evals 40 --seed 5 --json --db " +
                                   test::sh_quote(a),
                               false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto finalists = nlohmann::json::parse(r.out).at("finalists");
  ASSERT_FALSE(finalists.empty());
  for (const auto& f : finalists) {
    EXPECT_EQ(f.at("trial").at("phase"), "final");
    EXPECT_EQ(f.at("trial").at("source"), "replayed");
    EXPECT_EQ(f.at("trial").at("strategy"), "random");
  }

  const auto roles = [](const std::filesystem::path& db) {
    std::map<std::string, int> out;
    for (const auto& st : db::SqliteStore::open(db, db::OpenMode::read_only).trials()) {
      ++out[fmt::format("{} {} {}", st.trial.strategy, to_string(st.trial.phase),
                        to_string(st.trial.source))];
    }
    return out;
  };
  const std::map<std::string, int> expected = {
      {"random screen replayed", 40},
      {"random final replayed", static_cast<int>(finalists.size())}};
  EXPECT_EQ(roles(a), expected);

  ASSERT_EQ(
      test::run_cli("db export --json " + test::sh_quote(exported) + " --db " + test::sh_quote(a))
          .exit_code,
      0);
  std::ifstream in(exported);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("format_version"), 2);
  for (const auto& e : j.at("trials")) {
    EXPECT_EQ(e.at("trial").at("source"), "replayed");
    EXPECT_EQ(e.at("trial").at("strategy"), "random");
  }
  const auto imp =
      test::run_cli("db import " + test::sh_quote(exported) + " --db " + test::sh_quote(b));
  ASSERT_EQ(imp.exit_code, 0) << imp.out;
  EXPECT_EQ(roles(b), expected);
  const auto ta = db::SqliteStore::open(a, db::OpenMode::read_only).trials();
  const auto tb = db::SqliteStore::open(b, db::OpenMode::read_only).trials();
  ASSERT_EQ(ta.size(), tb.size());
  for (size_t i = 0; i < ta.size(); ++i)
    EXPECT_EQ(nlohmann::json(ta[i].trial), nlohmann::json(tb[i].trial)) << i;
  // Imported again: the same measurements, nothing added.
  const auto again = test::run_cli(
      "db import --json " + test::sh_quote(exported) + " --db " + test::sh_quote(b), false);
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(nlohmann::json::parse(again.out).at("trials_added"), 0);
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

// A replay answers only for the GPU it recorded: another GPU's name, or a lone device index other
// than 0, is refused before anything is stored; the recorded GPU's name (or part of it) is taken.
TEST(ReplayCli, AGpuThatIsNotTheRecordedOneIsRefused) {
  test::TempDir dir;
  const auto path = dir.path() / "g.db";
  const std::string base = "tune --replay " + shipped("512x2048x512-NT") +
                           " --shape 512x2048x512 --layout NT --space small --strategy random "
                           "--max-evals 5 --top 1 --seed 2 --db " +
                           test::sh_quote(path) + " --gpu ";
  for (const std::string gpu : {"a100", "h100", "3"}) {
    const auto r = test::run_cli(base + gpu);
    EXPECT_EQ(r.exit_code, 2) << gpu << ": " << r.out;
    EXPECT_NE(r.out.find("--gpu"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(path)) << gpu;
  }
  EXPECT_NE(test::run_cli(base + "a100").out.find("NVIDIA H200"), std::string::npos);
  for (const std::string gpu : {"h200", "'NVIDIA H200'", "auto", "0"}) {
    const auto r = test::run_cli(base + gpu);
    EXPECT_EQ(r.exit_code, 0) << gpu << ": " << r.out;
  }
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
    if (t.at("phase") == "final") continue;
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

nlohmann::json read_gzip_json(const std::filesystem::path& file) {
  std::string text;
  FILE* pipe = popen(("gzip -dc " + test::sh_quote(file)).c_str(), "r");
  if (!pipe) return nullptr;
  char buf[1 << 16];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) text.append(buf, n);
  pclose(pipe);
  return nlohmann::json::parse(text);
}

// A dataset holding the same measurement twice with different results is refused by the replay and
// by the import alike, naming the config and both entries; a file with trials removed is counted,
// not taken at its header's word.
TEST(DatasetCli, ADuplicateThatDisagreesIsRefusedAndRemovedTrialsAreCounted) {
  test::TempDir dir;
  const auto src = std::filesystem::path(SGT_TEST_SOURCE_DIR) / "datasets" / "h200" /
                   "8192x8192x8192-NN.json.gz";
  auto j = read_gzip_json(src);
  ASSERT_TRUE(j.is_object());
  auto& trials = j.at("trials");
  size_t pick = trials.size();
  for (size_t i = 0; i < trials.size(); ++i) {
    if (trials[i].at("trial").at("status") == "ok") pick = i;
  }
  ASSERT_LT(pick, trials.size());
  const std::string name = trials[pick].at("trial").at("config_name");
  auto twin = trials[pick];
  twin["trial"]["time"]["median_ms"] = 0.001;  // the copy would win by far
  auto conflicting = j;
  conflicting["trials"].push_back(twin);
  const auto bad = dir.path() / "bad.json";
  std::ofstream(bad) << conflicting.dump();

  const auto db = dir.path() / "d.db";
  const auto replay = test::run_cli("tune --replay " + test::sh_quote(bad) +
                                    " --shape 8192x8192x8192 --strategy random --max-evals 5 "
                                    "--db " +
                                    test::sh_quote(db));
  EXPECT_EQ(replay.exit_code, 2) << replay.out;
  EXPECT_NE(replay.out.find(name), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find(fmt::format("trials {} and {}", pick, trials.size())),
            std::string::npos)
      << replay.out;
  const auto import =
      test::run_cli("db import " + test::sh_quote(bad) + " --db " + test::sh_quote(db));
  EXPECT_EQ(import.exit_code, 2) << import.out;
  EXPECT_NE(import.out.find(name), std::string::npos) << import.out;
  EXPECT_FALSE(std::filesystem::exists(db));

  // The same line twice, word for word, is one measurement: accepted.
  auto same = j;
  same["trials"].push_back(trials[pick]);
  const auto dup = dir.path() / "dup.json";
  std::ofstream(dup) << same.dump();
  EXPECT_EQ(
      test::run_cli("db import " + test::sh_quote(dup) + " --db " + test::sh_quote(db)).exit_code,
      0);

  // Ten screened configs removed: counted, and the header's claim called out.
  auto fewer = j;
  auto& ft = fewer["trials"];
  int removed = 0;
  for (size_t i = 0; i < ft.size() && removed < 10;) {
    const std::string strategy = ft[i].at("trial").at("strategy");
    if (strategy.find("/final") == std::string::npos &&
        ft[i].at("trial").at("config_name") != name) {
      ft.erase(i);
      ++removed;
    } else {
      ++i;
    }
  }
  const auto cut = dir.path() / "cut.json";
  std::ofstream(cut) << fewer.dump();
  const long long header_measured = j.at("dataset").at("measured");
  const auto info = test::run_cli("dataset info --json " + test::sh_quote(cut), false);
  ASSERT_EQ(info.exit_code, 0) << info.out;
  const auto i = nlohmann::json::parse(info.out).at("datasets").at(0);
  EXPECT_EQ(i.at("measured").get<long long>(), header_measured - 10);
  EXPECT_FALSE(i.at("complete").get<bool>());
  EXPECT_FALSE(i.at("header_agrees").get<bool>());
  const auto text = test::run_cli("dataset info " + test::sh_quote(cut));
  EXPECT_NE(text.out.find("INCOMPLETE"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("changed after it was written"), std::string::npos) << text.out;
  const auto whole = test::run_cli("dataset info --json " + test::sh_quote(src), false);
  EXPECT_TRUE(nlohmann::json::parse(whole.out).at("datasets").at(0).at("header_agrees").get<bool>())
      << whole.out;
}

// dataset write counts coverage itself: a database imported from a dataset writes the same
// dataset back (complete for the spaces it was recorded with), and one narrowed to a subset says
// what it lacks.
TEST(DatasetCli, WriteAndInfoRoundTrip) {
  test::TempDir dir;
  const auto db = test::sh_quote(dir.path() / "d.db");
  ASSERT_EQ(test::run_cli("db import " + shipped("8192x128x8192-NN") + " --db " + db).exit_code, 0);
  const auto out = dir.path() / "again.json.gz";
  const auto recorded = db::read_dataset(shipped_path("8192x128x8192-NN")).header.space;
  const auto w =
      test::run_cli("dataset write --db " + db + " --shape 8192x128x8192 -o " +
                        test::sh_quote(out) + " --space " + recorded + " --command 'test' --json",
                    false);
  ASSERT_EQ(w.exit_code, 0) << w.out;
  const auto h = nlohmann::json::parse(w.out);
  EXPECT_EQ(h.at("space"), recorded);
  EXPECT_TRUE(h.at("complete").get<bool>());
  EXPECT_EQ(h.at("measured"), h.at("candidates"));
  const auto info = test::run_cli("dataset info --json " + test::sh_quote(out), false);
  ASSERT_EQ(info.exit_code, 0) << info.out;
  const auto all = nlohmann::json::parse(info.out);
  EXPECT_EQ(all.at("format_version"), 2);
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

// A recording of the split-TF32 family is counted under the class it was tuned in: written with
// --precision fp32-accurate it is complete and says so; written under fp32 no candidate of it
// counts. A replay of it takes the recorded class, and --precision fp32 refuses its space.
TEST(DatasetCli, APrecisionClassIsCountedRecordedAndReplayed) {
  test::TempDir dir;
  const auto db = test::sh_quote(dir.path() / "d.db");
  ASSERT_EQ(test::run_cli("db import " + shipped("2048x2048x2048-NN") + " --db " + db).exit_code,
            0);
  const auto shipped_header = db::read_dataset(shipped_path("2048x2048x2048-NN")).header;
  ASSERT_EQ(shipped_header.precision, Precision::fp32_accurate);
  ASSERT_EQ(shipped_header.space, "tf32x3");
  const auto write = [&](const std::string& name, const std::string& extra) {
    return test::run_cli("dataset write --db " + db + " --shape 2048x2048x2048 --space tf32x3 -o " +
                             test::sh_quote(dir.path() / name) + extra + " --json",
                         false);
  };
  const auto accurate = write("a.json.gz", " --precision fp32-accurate");
  ASSERT_EQ(accurate.exit_code, 0) << accurate.out;
  const auto a = nlohmann::json::parse(accurate.out);
  EXPECT_EQ(a.at("precision"), "fp32-accurate");
  EXPECT_EQ(a.at("candidates"), shipped_header.candidates);
  EXPECT_TRUE(a.at("complete").get<bool>());
  const auto strict = write("s.json.gz", "");
  ASSERT_EQ(strict.exit_code, 0) << strict.out;
  const auto st = nlohmann::json::parse(strict.out);
  EXPECT_EQ(st.at("precision"), "fp32");
  EXPECT_EQ(st.at("candidates"), 0);
  EXPECT_FALSE(st.at("complete").get<bool>());
  EXPECT_EQ(db::read_dataset(dir.path() / "a.json.gz").header.precision, Precision::fp32_accurate);
  // Files written before the field exist: they read as fp32.
  EXPECT_EQ(db::read_dataset(shipped_path("1000x1000x1000-NN")).header.precision, Precision::fp32);

  const std::string replay = "tune --replay " + test::sh_quote(dir.path() / "a.json.gz") +
                             " --shape 2048x2048x2048 --strategy random --max-evals 8 --top 1 "
                             "--seed 3 --json --db ";
  const auto r = test::run_cli(replay + test::sh_quote(dir.path() / "r.db"), false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("precision"), "fp32-accurate");
  EXPECT_EQ(j.at("measured"), 8);
  const auto refused =
      test::run_cli(replay + test::sh_quote(dir.path() / "f.db") + " --precision fp32");
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find("no valid config"), std::string::npos) << refused.out;
}

// Runs replayed at once give the runs replayed one after the other, row for row: each run is a
// session of its own, and the model fits with a fixed thread count whatever the machine has.
TEST(StrategyBenchCli, ParallelRunsGiveTheSameRowsAsOneAtATime) {
  test::TempDir dir;
  const std::string cmd = "strategy-bench " + shipped("1024x1024x1024-NN") + " " +
                          shipped("512x2048x512-NT") + " " + shipped("2048x512x2048-TN") +
                          " --strategies model,anneal --seeds 2 --max-fraction 0.01 --csv ";
  auto rows = [&](const std::string& jobs) {
    const auto csv = dir.path() / ("sb-" + jobs + ".csv");
    const auto r = test::run_cli(cmd + test::sh_quote(csv) + " --jobs " + jobs);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    std::ifstream in(csv);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const auto one = rows("1");
  EXPECT_EQ(std::count(one.begin(), one.end(), '\n'), 1 + 2 * 3 * 2) << one;
  EXPECT_EQ(rows("3"), one);
  const auto bad = test::run_cli(cmd + test::sh_quote(dir.path() / "x.csv") + " --jobs -1");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
}

}  // namespace
}  // namespace sgt

namespace sgt {
namespace {

// The model strategy as a user runs it on a replay: it learns from the shipped datasets of the
// other shapes (never the replayed one) and stops at the budget. No --space: a replay tunes the
// space its dataset recorded (`auto` today holds spaces added after this recording).
TEST(ReplayCli, ModelStrategyReplaysWithTheShippedHistory) {
  test::TempDir dir;
  const auto r = test::run_cli("tune --replay " + shipped("1000x1000x1000-NN") +
                                   " --shape 1000x1000x1000 --strategy model "
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
  EXPECT_FALSE(j.at("done_before").get<bool>());
  // The same command again: the search is done; nothing measured, the same winner from the store.
  const auto again_j = nlohmann::json::parse(test::run_cli(cmd + " --json", false).out);
  EXPECT_TRUE(again_j.at("done_before").get<bool>()) << again_j.dump();
  EXPECT_EQ(again_j.at("measured"), 0);
  EXPECT_EQ(again_j.at("stopped"), "converged");
  ASSERT_FALSE(again_j.at("finalists").empty());
  EXPECT_EQ(again_j.at("finalists").at(0).at("trial").at("config_name"),
            j.at("finalists").at(0).at("trial").at("config_name"));
  EXPECT_NE(test::run_cli(cmd).out.find("already done"), std::string::npos);
  // --continue searches on, counting patience afresh.
  const auto more =
      nlohmann::json::parse(test::run_cli(cmd + " --continue --patience 25 --json", false).out);
  EXPECT_FALSE(more.at("done_before").get<bool>());
  EXPECT_GE(more.at("measured").get<int>(), 25);
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
  EXPECT_EQ(j.at("spaces").size(), builtin_space_names().size());
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

// Numbers that would wrap or overflow are refused (exit 2) with the valid range, never taken as
// 2^64 - 1; and every numeric option of every command states its range in --help (the seeds take
// any 64-bit value and say so).
TEST(TuneCli, NegativeAndOverflowingNumbersAreRefusedWithTheirRange) {
  test::TempDir dir;
  const std::string base =
      "tune --dry-run --shape 512x512x512 --db " + test::sh_quote(dir.path() / "n.db") + " ";
  for (const std::string opt : {"--max-evals", "--patience", "--seed"}) {
    for (const std::string v : {"-1", "99999999999999999999999", "1e3", "0x10"}) {
      const auto r = test::run_cli(base + opt + " " + v);
      EXPECT_EQ(r.exit_code, 2) << opt << " " << v << ": " << r.out;
      EXPECT_NE(r.out.find(opt), std::string::npos) << opt << " " << v << ": " << r.out;
    }
  }
  const auto evals = test::run_cli(base + "--max-evals 2000000000");
  EXPECT_EQ(evals.exit_code, 2) << evals.out;
  EXPECT_NE(evals.out.find("1000000000"), std::string::npos) << evals.out;
  for (const std::string b : {"99999999h", "inf", "nan", "1e9s", "-5m"}) {
    const auto r = test::run_cli(base + "--budget " + b);
    EXPECT_EQ(r.exit_code, 2) << b << ": " << r.out;
    EXPECT_EQ(r.out.find("budget -"), std::string::npos) << b << ": " << r.out;
  }
  EXPECT_NE(test::run_cli(base + "--budget 99999999h").out.find("8760h"), std::string::npos);
  EXPECT_EQ(test::run_cli(base + "--max-evals 30 --patience 7 --budget 2h30m").exit_code, 0);
  const auto sb = test::run_cli("strategy-bench --patience -1");
  EXPECT_EQ(sb.exit_code, 2) << sb.out;
  for (const std::string cmd : {"space", "check", "tune", "bench", "compile", "query", "list",
                                "export", "strategy-bench", "db merge", "db import", "db export",
                                "db vacuum", "db info", "dataset write", "dataset info"}) {
    const auto help = test::run_cli(cmd + " --help");
    std::istringstream lines(help.out);
    for (std::string line; std::getline(lines, line);) {
      const bool numeric = std::regex_search(line, std::regex("^ +-[^ ]* (U?INT|FLOAT)\\b"));
      if (!numeric || line.find("--seed") != std::string::npos) continue;
      EXPECT_NE(line.find(" in ["), std::string::npos) << cmd << ": " << line;
    }
  }
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
  EXPECT_EQ(doc.at("format_version"), 2);
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
  EXPECT_EQ(j.at("model").at("runs_without_history"), 0);
  const auto bad = test::run_cli("strategy-bench --strategies random,annealing");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
}

// With one dataset the model has nothing to learn from: the bench says so and claims no result
// for it; a run that never reached 0.98 is counted in the seconds as in the evaluations, marked.
TEST(StrategyBenchCli, OneDatasetGivesTheModelNoHistoryAndNoClaim) {
  test::TempDir dir;
  const std::string cmd = "strategy-bench " + shipped("8192x128x8192-NN") +
                          " --strategies random,model --seeds 2 --max-fraction 0.002 --csv " +
                          test::sh_quote(dir.path() / "sb.csv");
  const auto r = test::run_cli(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("model: 2 of 2 runs had no history"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("fewer evaluations than random"), std::string::npos) << r.out;
  // Every row of the table: where the evaluations carry '>', the seconds do too.
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("random ") && !line.starts_with("model ")) continue;
    std::istringstream f(line);
    std::vector<std::string> cols;
    for (std::string c; f >> c;) cols.push_back(c);
    if (cols.size() != 11) continue;  // the at-the-stop lines
    EXPECT_EQ(cols[7].starts_with(">"), cols[9].starts_with(">")) << line;
    EXPECT_EQ(cols[8].starts_with(">"), cols[10].starts_with(">")) << line;
  }
  const auto j = nlohmann::json::parse(test::run_cli(cmd + " --json", false).out);
  EXPECT_EQ(j.at("strategies").at("model").at("runs_without_history"), 2);
  EXPECT_TRUE(j.at("strategies").at("random").at("seconds_to_0.98").is_number());
}

}  // namespace
}  // namespace sgt
