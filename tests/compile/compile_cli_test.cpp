// `sgemm-tune compile` through the CLI: shards partition the survivors and share one cache, and a
// second run compiles nothing.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "space.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

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
