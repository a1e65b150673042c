// The precision contract (precision.hpp) through the seams a user meets: a strict request never
// enumerates, queries, lists or exports a kernel of the fp32-accurate class; an fp32-accurate
// request admits both classes, so its winner is never slower than the strict one; the exported
// table states its class.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include <nlohmann/json.hpp>

#include "../db/db_test_util.hpp"
#include "export.hpp"
#include "family.hpp"
#include "naive/naive_family.hpp"
#include "space.hpp"
#include "store.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

// The test families, registered once in this binary whichever test file asks first.
void register_test_families() {
  if (!find_family("naive")) register_family(test::make_naive_family());
  if (!find_family("naive_tf32")) register_family(test::make_naive_tf32_family());
}

// A space of one config of each family's fields, selecting `families`.
SearchSpace one_config_space(const std::vector<std::string>& families) {
  const auto c = test::naive_config(32, 16, 2, 4);
  nlohmann::json params = nlohmann::json::object();
  for (const auto& f : kConfigFields) params[std::string(f.name)] = {c.*f.member};
  params["family"] = families;
  return parse_space({{"name", "precision-test"}, {"parameters", params}}, "test");
}

TEST(Precision, TheClassesParseAndAdmitAsDocumented) {
  EXPECT_EQ(parse_precision("fp32"), Precision::fp32);
  EXPECT_EQ(parse_precision("fp32-accurate"), Precision::fp32_accurate);
  EXPECT_FALSE(parse_precision("tf32"));
  EXPECT_FALSE(parse_precision(""));
  EXPECT_TRUE(admits(Precision::fp32, Precision::fp32));
  EXPECT_FALSE(admits(Precision::fp32, Precision::fp32_accurate));
  EXPECT_TRUE(admits(Precision::fp32_accurate, Precision::fp32));
  EXPECT_TRUE(admits(Precision::fp32_accurate, Precision::fp32_accurate));
  // The built-in FFMA families are strict.
  for (const char* id : {"warptile", "ws_tma"}) {
    ASSERT_TRUE(find_family(id)) << id;
    EXPECT_EQ(find_family(id)->precision(), Precision::fp32) << id;
  }
}

TEST(Precision, AStrictEnumerationRejectsANonStrictFamilyByItsNamedRule) {
  register_test_families();
  const auto space = one_config_space({"naive", "naive_tf32"});
  const auto strict = enumerate(space);
  ASSERT_EQ(strict.survivors.size(), 1u);
  EXPECT_EQ(strict.survivors[0].family, "naive");
  const auto row = std::find_if(strict.rejections.begin(), strict.rejections.end(),
                                [](const RuleCount& r) { return r.rule == kPrecisionRule; });
  ASSERT_NE(row, strict.rejections.end());
  EXPECT_EQ(row->violations, 1);
  EXPECT_EQ(row->first, 1);
  EXPECT_NE(row->sample_reason.find("--precision fp32-accurate"), std::string::npos)
      << row->sample_reason;

  const auto accurate = enumerate(space, std::nullopt, Precision::fp32_accurate);
  ASSERT_EQ(accurate.survivors.size(), 2u);
  const auto arow = std::find_if(accurate.rejections.begin(), accurate.rejections.end(),
                                 [](const RuleCount& r) { return r.rule == kPrecisionRule; });
  EXPECT_EQ(arow, accurate.rejections.end());  // nothing refused: the rule is not listed

  // A space of strict families alone lists no such rule either way.
  const auto plain = enumerate(one_config_space({"naive"}));
  EXPECT_TRUE(std::none_of(plain.rejections.begin(), plain.rejections.end(),
                           [](const RuleCount& r) { return r.rule == kPrecisionRule; }));
}

// One problem with a strict trial (0.9 ms) and a faster fp32-accurate one (0.4 ms, measured as
// accurate as cuBLAS): the strict query serves the strict one, the accurate query the faster.
TEST(Precision, QueriesAndWinnersKeepToTheClassAskedFor) {
  register_test_families();
  test::TempDir dir;
  const auto path = dir.path() / "tuning.db";
  const GpuFingerprint gpu = test::h200(13000, 13);
  Problem p;
  p.M = p.N = p.K = 512;
  const auto strict_config = test::naive_config(32, 16, 2, 4);
  const auto split_config = test::naive_tf32_config(32, 16, 2, 4);
  {
    auto store = db::SqliteStore::open(path, db::OpenMode::read_write);
    store.begin(gpu, p);
    for (const auto& [c, ms] : {std::pair{strict_config, 0.9}, std::pair{split_config, 0.4}}) {
      Trial t;
      t.config = c;
      t.config_name = to_name(c);
      t.problem = p;
      t.status = TrialStatus::ok;
      t.time.median_ms = t.time.min_ms = t.time.max_ms = ms;
      t.time.repetitions = 5;
      t.cublas_median_ms = 0.5;
      t.kernel_hash = family_of(c).source_hash();
      t.tuner_version = "test";
      t.strategy = "exhaustive";
      t.timestamp = "2026-01-01T00:00:00Z";
      if (c.family == "naive_tf32") t.error_ratio = 0.8;
      store.record(t);
    }
  }
  const auto store = db::SqliteStore::open(path, db::OpenMode::read_only);
  const auto id = db::GpuIdentity::of(gpu);

  const auto strict = store.query(id, p);
  EXPECT_EQ(strict.source, db::Source::exact);
  EXPECT_EQ(strict.config_name, to_name(strict_config));
  db::QueryOptions accurate;
  accurate.precision = Precision::fp32_accurate;
  const auto acc = store.query(id, p, accurate);
  EXPECT_EQ(acc.source, db::Source::exact);
  EXPECT_EQ(acc.config_name, to_name(split_config));
  ASSERT_TRUE(acc.winner);
  EXPECT_EQ(acc.winner->ok_trials, 2);  // chosen from both classes' trials

  // The nearest-shape fallback keeps to the class too, and never takes a non-strict winner to a
  // shape other than the one its accuracy was measured at: not deeper, not shallower (its error
  // ratio grows at small K: the split's windows), not wider (cuBLAS's algorithm changes).
  for (const auto& [M, N, K] : std::vector<std::array<long long, 3>>{
           {p.M, p.N, p.K + 128}, {p.M, p.N, p.K - 128}, {p.M + 64, p.N, p.K}}) {
    Problem other = p;
    other.M = M, other.N = N, other.K = K;
    SCOPED_TRACE(other.shape());
    EXPECT_EQ(store.query(id, other).config_name, to_name(strict_config));
    const auto q = store.query(id, other, accurate);
    EXPECT_EQ(q.source, db::Source::nearest);
    EXPECT_EQ(q.config_name, to_name(strict_config));
    ASSERT_EQ(q.skipped.size(), 1u);
    EXPECT_EQ(q.skipped[0].config_name, to_name(split_config));
    ASSERT_FALSE(q.skipped[0].violations.empty());
    EXPECT_EQ(q.skipped[0].violations[0].rule, "precision_shape");
  }

  const auto ws = store.winners(false);
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_EQ(ws[0].best.trial.config_name, to_name(strict_config));
  const auto wa = store.winners(false, Precision::fp32_accurate);
  ASSERT_EQ(wa.size(), 1u);
  EXPECT_EQ(wa[0].best.trial.config_name, to_name(split_config));

  // A database holding only the non-strict trial serves nothing tuned to a strict query.
  {
    auto only = db::SqliteStore::open(dir.path() / "only.db", db::OpenMode::read_write);
    only.begin(gpu, p);
    Trial t = wa[0].best.trial;
    only.record(t);
  }
  const auto only = db::SqliteStore::open(dir.path() / "only.db", db::OpenMode::read_only);
  EXPECT_EQ(only.query(id, p).source, db::Source::default_config);
  EXPECT_EQ(only.query(id, p, accurate).source, db::Source::exact);
  EXPECT_TRUE(only.winners(false).empty());
}

TEST(Precision, TheExportedTableStatesItsClass) {
  Table t;
  t.tool_version = "test";
  t.database = "x.db";
  t.generated_utc = "2026-01-01T00:00:00Z";
  t.kernel_template = "sgemm_warptile";
  t.family_hashes = current_family_hashes();
  const auto strict_h = render_cpp(t);
  EXPECT_NE(strict_h.find("inline constexpr const char* kPrecision = \"fp32\";"), std::string::npos)
      << strict_h;
  EXPECT_NE(strict_h.find("inline constexpr bool kPrecisionFp32Accurate = false;"),
            std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(render_json(t)).at("precision"), "fp32");
  t.precision = Precision::fp32_accurate;
  const auto h = render_cpp(t);
  EXPECT_NE(h.find("inline constexpr bool kPrecisionFp32Accurate = true;"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(render_json(t)).at("precision"), "fp32-accurate");
}

TEST(Precision, TheCommandsTakeTheClassAndRefuseAnUnknownOne) {
  const auto ok = test::run_cli(
      "tune --dry-run --json --shape 1024x1024x1024 --space quick --precision fp32-accurate",
      false);
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_EQ(nlohmann::json::parse(ok.out).at("precision"), "fp32-accurate");
  const auto dflt =
      test::run_cli("tune --dry-run --json --shape 1024x1024x1024 --space quick", false);
  ASSERT_EQ(dflt.exit_code, 0) << dflt.out;
  EXPECT_EQ(nlohmann::json::parse(dflt.out).at("precision"), "fp32");
  for (const char* cmd :
       {"tune --dry-run", "query --shape 64x64x64", "list", "export -o -", "bench"}) {
    const auto bad = test::run_cli(std::string(cmd) + " --precision tf32");
    EXPECT_NE(bad.exit_code, 0) << cmd << "\n" << bad.out;
    EXPECT_NE(bad.out.find("--precision"), std::string::npos) << cmd << "\n" << bad.out;
  }
}

}  // namespace
}  // namespace sgt
