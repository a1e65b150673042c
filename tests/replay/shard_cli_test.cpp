// `tune --shapes --shard`, `db merge` of the shards and `--shard auto`, as a user runs them, on
// replays of the shipped datasets (no GPU): the shards split the suite, each shape once, and the
// merge serves the winners of one process that tuned the whole suite.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace sgt {
namespace {

const std::vector<std::string> kShapes = {"1024x1024x1024-NN", "512x2048x512-NT",
                                          "4096x4096x4096-NN", "2048x512x2048-TN",
                                          "64x4096x4096-NN"};

std::string shipped(const std::string& name) {
  return test::sh_quote(std::filesystem::path(SGT_TEST_SOURCE_DIR) / "datasets" / "h200" /
                        (name + ".json.gz"));
}

// A suite of kShapes and the tune options that replay it.
struct Suite {
  test::TempDir dir;
  std::filesystem::path file = dir.path() / "suite.json";
  std::string tune;
  // `default`: every shape has uncut recorded candidates there, so finalists (the recordings cut
  // all of `quick`'s on some shapes); `quick` where nothing is tuned.
  explicit Suite(const std::string& space = "default") {
    nlohmann::json j = nlohmann::json::array();
    tune = "tune --shapes " + test::sh_quote(file) + " --strategy exhaustive --space " + space +
           " --seed 7 --top 2 --json";
    for (const auto& s : kShapes) {
      j.push_back({{"shape", s.substr(0, s.find('-'))}, {"layout", s.substr(s.find('-') + 1)}});
      tune += " --replay " + shipped(s);
    }
    std::ofstream(file) << j.dump();
  }
  std::string db(const std::string& name) const { return test::sh_quote(dir.path() / name); }
};

// The environment of a scheduler, none of it inherited from the one running the tests.
struct NoSchedulerEnv {
  test::ScopedEnv a{"SLURM_ARRAY_TASK_ID", std::nullopt}, b{"SLURM_ARRAY_TASK_COUNT", std::nullopt},
      c{"SLURM_ARRAY_TASK_MIN", std::nullopt}, d{"SLURM_ARRAY_TASK_MAX", std::nullopt},
      e{"SLURM_ARRAY_TASK_STEP", std::nullopt}, f{"JOB_COMPLETION_INDEX", std::nullopt},
      g{"SGT_SHARD_INDEX", std::nullopt}, h{"SGT_SHARD_COUNT", std::nullopt};
};

// shape+layout -> winner of an exported table.
std::map<std::string, std::string> exported_winners(const std::string& db, const Suite& s) {
  const auto out = s.dir.path() / "table.json";
  const auto r =
      test::run_cli("export --format json --allow-stale --db " + db + " -o " + test::sh_quote(out));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(out);
  const auto t = nlohmann::json::parse(in);
  std::map<std::string, std::string> w;
  for (const auto& g : t.at("gpus")) {
    for (const auto& sh : g.at("shapes")) {
      w[fmt::format("{}x{}x{} {}", sh.at("M").get<int>(), sh.at("N").get<int>(),
                    sh.at("K").get<int>(), sh.at("layout").get<std::string>())] =
          sh.at("config_name");
    }
  }
  return w;
}

TEST(ShardCli, ShardsSplitTheSuiteAndTheirMergeEqualsOneProcess) {
  NoSchedulerEnv clean;
  Suite s;
  const auto ref = test::run_cli(s.tune + " --db " + s.db("ref.db"), false);
  ASSERT_EQ(ref.exit_code, 0) << ref.out;

  std::map<std::string, unsigned> shard_of;
  double costs = 0, total_cost = 0;
  for (unsigned i = 0; i < 2; ++i) {
    const auto r = test::run_cli(
        s.tune + fmt::format(" --shard {}/2 --db ", i) + s.db(fmt::format("shard{}.db", i)), false);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    const auto& sh = j.at("shard");
    EXPECT_EQ(sh.at("index"), i);
    EXPECT_EQ(sh.at("count"), 2);
    EXPECT_EQ(sh.at("of"), kShapes.size());
    EXPECT_EQ(sh.at("source"), fmt::format("--shard {}/2", i));
    EXPECT_EQ(sh.at("items"), j.at("summary").size());
    costs += sh.at("cost").get<double>();
    total_cost = sh.at("total_cost");
    for (const auto& row : j.at("summary")) {
      EXPECT_EQ(row.at("status"), "ok") << row;
      const auto key =
          row.at("shape").get<std::string>() + " " + row.at("layout").get<std::string>();
      EXPECT_TRUE(shard_of.emplace(key, i).second) << key << " on both shards";
    }
  }
  EXPECT_EQ(shard_of.size(), kShapes.size());
  EXPECT_NEAR(costs, total_cost, 1e-9 * total_cost);
  // 4096^3 costs more than the other four together: it has a shard to itself.
  for (const auto& [key, i] : shard_of) {
    if (key != "4096x4096x4096 NN") EXPECT_NE(i, shard_of.at("4096x4096x4096 NN")) << key;
  }

  const auto m = test::run_cli("db merge --json --db " + s.db("merged.db") + " " +
                                   s.db("shard0.db") + " " + s.db("shard1.db"),
                               false);
  ASSERT_EQ(m.exit_code, 0) << m.out;
  const auto mj = nlohmann::json::parse(m.out);
  ASSERT_EQ(mj.at("sources").size(), 2u);
  EXPECT_FALSE(mj.contains("from"));
  long long per_source = 0;
  size_t problems = 0;
  for (const auto& src : mj.at("sources")) {
    per_source += src.at("trials_added").get<long long>();
    EXPECT_EQ(src.at("trials_skipped"), 0);
    problems += src.at("problems").size();
  }
  EXPECT_EQ(per_source, mj.at("trials_added").get<long long>());
  EXPECT_EQ(problems, kShapes.size());
  EXPECT_EQ(mj.at("problems").size(), kShapes.size());

  // Nothing lost or doubled: every trial of both shards. (Not the reference's count: a replayed
  // finalist's re-timing stored in the same second as its screening trial is the same trial.)
  long long shard_trials = 0;
  for (const char* db : {"shard0.db", "shard1.db"}) {
    const auto info = test::run_cli("db info --json --db " + s.db(db), false);
    ASSERT_EQ(info.exit_code, 0) << info.out;
    shard_trials += nlohmann::json::parse(info.out).at("rows").at("trials").get<long long>();
  }
  EXPECT_EQ(mj.at("trials_added"), shard_trials);

  const auto reference = exported_winners(s.db("ref.db"), s);
  EXPECT_EQ(reference.size(), kShapes.size());
  EXPECT_EQ(exported_winners(s.db("merged.db"), s), reference);

  // Merging again adds nothing, and the text says so source by source and in all.
  const auto again = test::run_cli("db merge --db " + s.db("merged.db") + " " + s.db("shard0.db") +
                                   " " + s.db("shard1.db"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("in all, from 2 databases: 0 trials added"), std::string::npos)
      << again.out;
  EXPECT_NE(again.out.find("  4096x4096x4096 NN: 0 added, "), std::string::npos) << again.out;
}

TEST(ShardCli, AMissingSourceMergesNothing) {
  Suite s("quick");
  ASSERT_EQ(test::run_cli(s.tune + " --shard 0/3 --db " + s.db("a.db"), false).exit_code, 0);
  const auto r = test::run_cli("db merge --db " + s.db("m.db") + " " + s.db("a.db") + " " +
                               s.db("missing.db"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("no database to merge at"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(s.dir.path() / "m.db"));
}

TEST(ShardCli, AutoReadsASlurmArrayOrAKubernetesIndex) {
  NoSchedulerEnv clean;
  Suite s("quick");
  const std::string dry = s.tune + " --dry-run --shard auto";
  {
    // --array=3-9:3: task 6 is shard 1 of 3.
    test::ScopedEnv id("SLURM_ARRAY_TASK_ID", "6"), n("SLURM_ARRAY_TASK_COUNT", "3"),
        lo("SLURM_ARRAY_TASK_MIN", "3"), hi("SLURM_ARRAY_TASK_MAX", "9"),
        step("SLURM_ARRAY_TASK_STEP", "3");
    const auto r = test::run_cli(dry);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("shard 1/3 (SLURM_ARRAY_TASK_ID=6 of array 3-9:3 (3 tasks))"),
              std::string::npos)
        << r.out;
    // A shard's dry run is the several-shapes form, whatever number of shapes it was dealt.
    const auto j = test::run_cli(dry, false);
    ASSERT_EQ(j.exit_code, 0);
    EXPECT_TRUE(nlohmann::json::parse(j.out).at("runs").is_array()) << j.out;
  }
  {
    test::ScopedEnv k("JOB_COMPLETION_INDEX", "4");
    const auto no_count = test::run_cli(dry);
    EXPECT_EQ(no_count.exit_code, 2) << no_count.out;
    EXPECT_NE(no_count.out.find("set SGT_SHARD_COUNT"), std::string::npos) << no_count.out;
    EXPECT_EQ(test::run_cli(s.tune + " --dry-run --shard auto/5").exit_code, 0);
    test::ScopedEnv c("SGT_SHARD_COUNT", "4");
    const auto out_of_range = test::run_cli(dry);
    EXPECT_EQ(out_of_range.exit_code, 2) << out_of_range.out;
    EXPECT_NE(out_of_range.out.find("shard 4 does not exist among 4"), std::string::npos)
        << out_of_range.out;
  }
  const auto none = test::run_cli(dry);
  EXPECT_EQ(none.exit_code, 2) << none.out;
  EXPECT_NE(none.out.find("no shard in the environment"), std::string::npos) << none.out;
}

TEST(ShardCli, BadShardsAreBadInputForEveryCommand) {
  NoSchedulerEnv clean;
  Suite s("quick");
  for (const char* bad : {"2/2", "1/0", "x", "auto"}) {
    const auto t = test::run_cli(s.tune + " --shard " + bad + " --db " + s.db("t.db"));
    EXPECT_EQ(t.exit_code, 2) << bad << ": " << t.out;
    const auto b = test::run_cli("bench --suite " + test::sh_quote(s.file) + " --shard " + bad +
                                 " --db " + s.db("b.db"));
    EXPECT_EQ(b.exit_code, 2) << bad << ": " << b.out;
    EXPECT_NE(b.out.find("--shard"), std::string::npos) << b.out;
  }
  EXPECT_FALSE(std::filesystem::exists(s.dir.path() / "t.db"));
  // One shape is no suite.
  const auto one = test::run_cli("tune --shape 1024x1024x1024 --shard 0/2 --replay " +
                                 shipped("1024x1024x1024-NN") + " --db " + s.db("o.db"));
  EXPECT_EQ(one.exit_code, 2) << one.out;
  EXPECT_NE(one.out.find("--shard splits a suite: it needs --shapes"), std::string::npos)
      << one.out;
}

}  // namespace
}  // namespace sgt
