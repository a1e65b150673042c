// `sgemm-tune compile` through the CLI: shards partition the survivors and share one cache, a
// second run compiles nothing, and an entry the cache refuses stops only itself.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "space.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

namespace fs = std::filesystem;

nlohmann::json compile_json(const std::string& args) {
  const auto r = test::run_cli("compile --space quick --json " + args, false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

TEST(CompileCli, ShardsPartitionTheSpaceAndShareTheCache) {
  test::TempDir tmp;
  const std::string cache = "--cache-dir '" + (tmp.path() / "cache").string() + "'";
  const auto survivors = enumerate(load_space("quick")).survivors.size();

  const auto a = compile_json(cache + " --shard 0/2");
  const auto b = compile_json(cache + " --shard 1/2");
  EXPECT_EQ(a.at("configs").get<size_t>() + b.at("configs").get<size_t>(), survivors);
  EXPECT_EQ(a.at("compiled").get<size_t>() + b.at("compiled").get<size_t>(), survivors);
  std::set<std::string> names;
  for (const auto& j : {a, b}) {
    for (const auto& r : j.at("results")) {
      EXPECT_TRUE(names.insert(r.at("name").get<std::string>()).second) << "compiled twice";
    }
  }

  // The whole space afterwards: everything comes from the cache, with the progress line tune
  // draws (off a terminal: a log line at the end with the count).
  const auto logged = test::run_cli("compile --space quick " + cache);
  ASSERT_EQ(logged.exit_code, 0) << logged.out;
  EXPECT_NE(logged.out.find(fmt::format("{}/{} configs, {} ok", survivors, survivors, survivors)),
            std::string::npos)
      << logged.out;
  const auto all = compile_json(cache);
  EXPECT_EQ(all.at("configs").get<size_t>(), survivors);
  EXPECT_EQ(all.at("compiled").get<size_t>(), 0u);
  EXPECT_EQ(all.at("cache_hits").get<size_t>(), survivors);
}

// --loads auto compiles the instance a tune of --shape uses: single-float loads where the shape's
// operands refuse float4s (K = 1023 leaves A's rows unaligned in NN), float4s otherwise.
TEST(CompileCli, LoadsFollowTheShapeUnlessGiven) {
  test::TempDir tmp;
  const std::string cache = "--cache-dir '" + (tmp.path() / "cache").string() + "' --shard 0/8 ";
  EXPECT_EQ(compile_json(cache + "--shape 1024x1024x1023").at("loads"), "scalar");
  EXPECT_EQ(compile_json(cache + "--shape 1024x1024x1024").at("loads"), "float4");
  EXPECT_EQ(compile_json(cache).at("loads"), "float4");
  EXPECT_EQ(compile_json(cache + "--loads scalar").at("loads"), "scalar");
  // A^T's float4s run along M: TN with M = 1022 takes single floats, NN does not care about M.
  EXPECT_EQ(compile_json(cache + "--shape 1022x1024x1024 --layout TN").at("loads"), "scalar");
  EXPECT_EQ(compile_json(cache + "--shape 1022x1024x1024 --layout NN").at("loads"), "float4");
  EXPECT_EQ(test::run_cli("compile --space quick --loads half").exit_code, 2);
}

// Split-K variants share one binary: a shard takes the binary with every config it serves, so
// no two shards compile it (dealing configs round-robin would put them on both).
TEST(CompileCli, ShardsDealBinariesAndKeepSplitKVariantsTogether) {
  test::TempDir tmp;
  const auto list = tmp.path() / "configs.txt";
  const std::string seed = test::kSeed;
  std::ofstream(list) << seed << "\n"
                      << seed << "_k2\n"
                      << "wt_64x64x8_w32x32_wn1_t4x4_n128_mb1\n"
                      << seed << "_k4\n";
  const std::string args = "--configs '" + list.string() + "' --cache-dir '" +
                           (tmp.path() / "cache").string() + "' --json";
  std::map<std::string, int> shard_of;
  for (int i = 0; i < 2; ++i) {
    const auto r = test::run_cli(fmt::format("compile {} --shard {}/2", args, i), false);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("shard").at("of"), 2);  // two binaries
    EXPECT_EQ(j.at("shard").at("items"), 1);
    for (const auto& c : j.at("results")) shard_of[c.at("name")] = i;
  }
  ASSERT_EQ(shard_of.size(), 4u);
  EXPECT_EQ(shard_of.at(seed), shard_of.at(seed + "_k2"));
  EXPECT_EQ(shard_of.at(seed), shard_of.at(seed + "_k4"));
  EXPECT_NE(shard_of.at(seed), shard_of.at("wt_64x64x8_w32x32_wn1_t4x4_n128_mb1"));
}

// Three small configs of the quick space, written as a --configs file.
fs::path three_configs(const test::TempDir& tmp, std::vector<std::string>& names) {
  const auto survivors = enumerate(load_space("quick")).survivors;
  std::string text;
  for (size_t i = 0; i < 3 && i < survivors.size(); ++i) {
    names.push_back(to_name(survivors[i]));
    text += names.back() + "\n";
  }
  const auto path = tmp.path() / "configs.txt";
  std::ofstream(path) << text;
  return path;
}

// One entry the cache cannot take (a directory where its json belongs, which not even root can
// replace by a file) is reported in its row; the other configs still come out of the run.
TEST(CompileCli, OneBadCacheEntryIsReportedAndTheRestGoOn) {
  test::TempDir tmp;
  const auto cache = tmp.path() / "cache";
  std::vector<std::string> names;
  const auto list = three_configs(tmp, names);
  ASSERT_EQ(names.size(), 3u);
  const std::string args =
      "--configs " + test::sh_quote(list) + " --cache-dir " + test::sh_quote(cache) + " -j 1";
  ASSERT_EQ(test::run_cli("compile " + args).exit_code, 0);

  // The middle config's entry becomes a directory: its lookup fails, its store cannot rename.
  fs::path bad;
  for (const auto& e : fs::directory_iterator(cache)) {
    if (e.path().extension() != ".json") continue;
    std::ifstream f(e.path());
    if (nlohmann::json::parse(f).at("config_name") == names[1]) bad = e.path();
  }
  ASSERT_FALSE(bad.empty());
  fs::remove(bad);
  fs::create_directories(bad / "in-the-way");

  const auto r = test::run_cli("compile --json " + args, false);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("results").size(), 3u);
  EXPECT_EQ(j.at("cache_errors"), 1);
  EXPECT_EQ(j.at("statuses").at("cache_error"), 1);
  for (const auto& row : j.at("results")) {
    if (row.at("name") == names[1]) {
      EXPECT_EQ(row.at("status"), "cache_error");
      EXPECT_NE(row.at("reason").get<std::string>().find(bad.filename().string()),
                std::string::npos)
          << row;
    } else {
      EXPECT_EQ(row.at("from_cache"), true) << row;
      EXPECT_NE(row.at("status"), "cache_error") << row;
    }
  }

  // The table says the same, one line for the refused entry, and fails the run.
  const auto t = test::run_cli("compile " + args, false);
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.out.find(names[1] + ": cache_error: "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("cache_error=1"), std::string::npos) << t.out;
}

// A cache directory without write permission: every entry is reported, none stops the others.
TEST(CompileCli, ReadOnlyCacheDirIsReportedPerEntry) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into a directory whatever its mode";
  test::TempDir tmp;
  const auto cache = tmp.path() / "cache";
  fs::create_directories(cache);
  std::vector<std::string> names;
  const auto list = three_configs(tmp, names);
  fs::permissions(cache, fs::perms::owner_read | fs::perms::owner_exec);
  const auto r = test::run_cli("compile --json -j 1 --configs " + test::sh_quote(list) +
                                   " --cache-dir " + test::sh_quote(cache),
                               false);
  fs::permissions(cache, fs::perms::owner_all);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("results").size(), names.size());
  for (const auto& row : j.at("results")) {
    EXPECT_EQ(row.at("status"), "cache_error") << row;
    EXPECT_NE(row.at("reason").get<std::string>().find("cannot write"), std::string::npos) << row;
  }
}

TEST(CompileCli, BadShardIsRefused) {
  // auto outside a scheduler's job names no shard.
  test::ScopedEnv slurm("SLURM_ARRAY_TASK_ID", std::nullopt),
      k8s("JOB_COMPLETION_INDEX", std::nullopt), other("SGT_SHARD_INDEX", std::nullopt);
  for (const char* bad : {"2/2", "1", "a/b", "1/0", "0/2/3", "-1/2", "auto"}) {
    const auto r = test::run_cli(std::string("compile --space quick --shard ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
  }
}

}  // namespace
}  // namespace sgt
