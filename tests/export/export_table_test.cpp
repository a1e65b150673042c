// The table model and its renderings (tuner/export/export.cpp): default choice, config
// deduplication, C++ string escaping, what the header says about itself, atomic writes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "export.hpp"
#include "family.hpp"
#include "export_test_util.hpp"
#include "file_util.hpp"
#include "fixture_db.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

using test::contains;
using test::kConfigA;
using test::kConfigB;
using test::table_shape;

const WarpTileConfig kFallback = *from_name(kConfigA);

TEST(ExportTable, DefaultIsTheWinnerWithTheBestPctOfCublas) {
  TableGpu g;
  g.shapes = {table_shape(1024, 1024, 1024, kConfigA, 0.10, 0.09),   // 90%
              table_shape(2048, 2048, 1024, kConfigB, 0.30, 0.33),   // 110%
              table_shape(4096, 4096, 4096, kConfigA, 0.30, 0.33)};  // 110%, later: loses the tie
  choose_default(g, kFallback, kConfigA);
  ASSERT_TRUE(g.default_shape.has_value());
  EXPECT_EQ(*g.default_shape, 1u);
  EXPECT_EQ(g.default_name, kConfigB);
  EXPECT_EQ(g.default_config, *from_name(kConfigB));
}

TEST(ExportTable, DefaultIsChosenPerLayout) {
  TableGpu g;
  g.shapes = {table_shape(1024, 1024, 1024, kConfigA, 0.10, 0.09),        // NN 90%
              table_shape(1024, 1024, 1024, kConfigB, 0.10, 0.50, "TN"),  // TN 500%
              table_shape(2048, 1024, 1024, kConfigA, 0.10, 0.60, "TN"),  // TN 600%
              table_shape(4096, 1024, 1024, kConfigB, 0.10, 0.12)};       // NN 120%
  choose_default(g, kFallback, kConfigA);
  // The GPU-wide default is the NN one: a 600% TN winner does not displace it.
  ASSERT_TRUE(g.default_shape.has_value());
  EXPECT_EQ(*g.default_shape, 3u);
  EXPECT_EQ(g.default_name, kConfigB);
  ASSERT_EQ(g.layout_defaults.size(), 2u);
  EXPECT_EQ(g.layout_defaults[0].layout, "NN");
  EXPECT_EQ(g.layout_defaults[0].shape, 3u);
  EXPECT_EQ(g.layout_defaults[0].name, kConfigB);
  EXPECT_EQ(g.layout_defaults[1].layout, "TN");
  EXPECT_EQ(g.layout_defaults[1].shape, 2u);
  EXPECT_EQ(g.layout_defaults[1].name, kConfigA);
  EXPECT_EQ(g.layout_defaults[1].config, *from_name(kConfigA));

  // Choosing again starts from scratch.
  g.shapes.resize(1);
  choose_default(g, kFallback, kConfigA);
  ASSERT_EQ(g.layout_defaults.size(), 1u);
  EXPECT_EQ(*g.default_shape, 0u);
}

TEST(ExportTable, DefaultWithoutCublasTimingsIsStillATunedWinner) {
  TableGpu g;
  g.shapes = {table_shape(512, 512, 512, kConfigB, 0.02, 0)};
  choose_default(g, kFallback, kConfigA);
  ASSERT_TRUE(g.default_shape.has_value());
  EXPECT_EQ(g.default_name, kConfigB);
}

TEST(ExportTable, NothingTunedGetsTheBuiltInFallback) {
  TableGpu g;
  choose_default(g, kFallback, kConfigA);
  EXPECT_FALSE(g.default_shape.has_value());
  EXPECT_EQ(g.default_name, kConfigA);
  EXPECT_TRUE(g.layout_defaults.empty());

  // Only NT tuned: NT has its default, the GPU-wide (NN) one is the built-in fallback.
  g.shapes = {table_shape(512, 512, 512, kConfigB, 0.02, 0.01, "NT")};
  choose_default(g, kFallback, kConfigA);
  EXPECT_FALSE(g.default_shape.has_value());
  EXPECT_EQ(g.default_name, kConfigA);
  EXPECT_EQ(g.default_config, kFallback);
  ASSERT_EQ(g.layout_defaults.size(), 1u);
  EXPECT_EQ(g.layout_defaults[0].layout, "NT");
  EXPECT_EQ(g.layout_defaults[0].name, kConfigB);
}

TEST(ExportTable, ConfigsAreDeduplicatedInOrderOfFirstUse) {
  Table t;
  TableGpu a, b;
  a.shapes = {table_shape(1024, 1024, 1024, kConfigB, 0.1, 0.1),
              table_shape(2048, 2048, 2048, kConfigB, 0.1, 0.1)};
  choose_default(a, kFallback, kConfigA);
  choose_default(b, kFallback, kConfigA);  // nothing tuned: the fallback A
  t.gpus = {a, b};
  const auto configs = table_configs(t);
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(to_name(configs[0]), kConfigB);
  EXPECT_EQ(to_name(configs[1]), kConfigA);
}

TEST(ExportTable, StringLiteralsEscapeEveryByteThatCouldBreakThem) {
  EXPECT_EQ(cpp_string_literal("NVIDIA H200"), "\"NVIDIA H200\"");
  EXPECT_EQ(cpp_string_literal("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(cpp_string_literal("?\?="), R"("\?\?=")");  // no trigraph for pre-C++17 compilers
  EXPECT_EQ(cpp_string_literal("a\nb\tc"), R"("a\012b\011c")");
  // Octal escapes stop after three digits; a following digit stays a digit (\x would eat it).
  EXPECT_EQ(cpp_string_literal(std::string("\x01") + "7"), R"("\0017")");
  EXPECT_EQ(cpp_string_literal(std::string("\0", 1)), R"("\000")");
  EXPECT_EQ(cpp_string_literal("\xc3\xa9"), R"("\303\251")");
  EXPECT_EQ(cpp_string_literal(""), "\"\"");
}

Table sample_table(const std::string& database) {
  Table t;
  t.tool_version = "9.8.7";
  t.database = database;
  t.generated_utc = "2025-01-01T12:00:00Z";
  t.kernel_template = "sgemm_warptile";
  t.family_hashes = {{"warptile", "abc123"}, {"ws_tma", "def456"}};
  TableGpu g;
  g.name = "NVIDIA H200";
  g.cc_major = 9;
  g.sm_count = 132;
  g.shapes = {table_shape(1024, 1024, 1024, kConfigA, 0.1, 0.09),
              table_shape(2048, 2048, 1024, kConfigB, 0.3, 0.33)};
  choose_default(g, kFallback, kConfigA);
  t.gpus.push_back(g);
  return t;
}

TEST(ExportTable, HeaderSaysWhatGeneratedItFromWhichDatabaseAndWhen) {
  const auto h = render_cpp(sample_table("/data/tuning.db"));
  const auto head = h.substr(0, h.find("#pragma once"));
  EXPECT_TRUE(contains(head, "generated by sgemm-tune 9.8.7")) << head;
  EXPECT_TRUE(contains(head, "\"/data/tuning.db\"")) << head;
  EXPECT_TRUE(contains(head, "2025-01-01T12:00:00Z")) << head;
  EXPECT_TRUE(contains(head, "DO NOT EDIT")) << head;
  EXPECT_TRUE(contains(h, "inline constexpr const char* kToolVersion = \"9.8.7\";")) << h;
  EXPECT_TRUE(
      contains(h, "inline constexpr const char* kGeneratedUtc = \"2025-01-01T12:00:00Z\";"));
  EXPECT_TRUE(contains(h, "inline constexpr const char* kKernelHash = \"abc123\";"));
  EXPECT_TRUE(contains(h, "inline constexpr const char* kTmaKernelHash = \"def456\";"));
  EXPECT_TRUE(contains(head, "kernel source hashes warptile abc123, ws_tma def456")) << head;
  EXPECT_TRUE(contains(h, "#define SGT_TUNED_TABLE_FORMAT_VERSION 11\n")) << h;
}

// A winner of the TMA family is a config like any other: its family is its id (kConfigFamilies,
// the JSON's "family"), not a field of the X-list row or of kConfigs; its JSON config writes the
// family as earlier releases did ("TMA": 1), and its name carries _m1.
TEST(ExportTable, TmaConfigsCarryTheirFamilyEverywhere) {
  Table t = sample_table("x.db");
  t.gpus[0].shapes.push_back(table_shape(300, 200, 100, test::kConfigTma, 0.01, 0.01, "TN"));
  choose_default(t.gpus[0], kFallback, kConfigA);
  const auto tma = *from_name(test::kConfigTma);
  ASSERT_EQ(tma.family, "ws_tma");
  ASSERT_EQ(std::string(kConfigFields.back().name), "TAIL");
  const auto values = test::field_values(tma);
  ASSERT_TRUE(values.ends_with(", 0")) << values;
  const auto h = render_cpp(t);
  EXPECT_TRUE(contains(h, "  X(2, " + values + ")\n")) << h;
  EXPECT_TRUE(contains(h, "    {" + values + "},  // " + test::kConfigTma + "\n")) << h;
  EXPECT_TRUE(contains(h, "  X(0, " + test::field_values(*from_name(kConfigA)) + ") \\\n")) << h;
  EXPECT_TRUE(contains(h, "{300, 200, 100, \"TN\", 2, 0.01, 100},  // " + test::kConfigTma)) << h;
  EXPECT_FALSE(contains(h, "TMA;")) << h;
  EXPECT_TRUE(contains(h, "&& a.TAIL == b.TAIL;")) << h;
  EXPECT_TRUE(contains(h,
                       "inline constexpr const char* kConfigFamilies[] = {\n    \"warptile\",\n"
                       "    \"warptile\",\n    \"ws_tma\",\n};"))
      << h;
  EXPECT_TRUE(contains(h, "  X(2, tensor_maps, (sgemm_ws_tma<")) << h;

  const auto j = nlohmann::json::parse(render_json(t));
  EXPECT_EQ(j.at("tma_kernel_hash"), "def456");
  ASSERT_EQ(j.at("configs").size(), 3u);
  EXPECT_EQ(j.at("configs")[2].at("name"), test::kConfigTma);
  EXPECT_EQ(j.at("configs")[2].at("family"), "ws_tma");
  EXPECT_EQ(j.at("configs")[2].at("config").at("TMA"), 1);
  EXPECT_EQ(j.at("configs")[0].at("config").at("TMA"), 0);
  EXPECT_EQ(j.at("configs")[2].at("config").get<WarpTileConfig>(), tma);
  for (const auto& f : j.at("fields")) EXPECT_NE(f, "TMA");
  const auto& shape = j.at("gpus")[0].at("shapes")[2];
  EXPECT_EQ(shape.at("config").at("TMA"), 1);
  EXPECT_EQ(shape.at("config_index"), 2);
  EXPECT_EQ(j.at("gpus")[0].at("layout_defaults")[1].at("config_name"), test::kConfigTma);
}

// Format 7: every config and shape names its kernel family by id, in the header too, and the
// table carries every family's source hash.
TEST(ExportTable, EveryConfigCarriesItsFamilyId) {
  Table t = sample_table("x.db");
  t.gpus[0].shapes.push_back(table_shape(300, 200, 100, test::kConfigTma, 0.01, 0.01, "TN"));
  choose_default(t.gpus[0], kFallback, kConfigA);
  const auto h = render_cpp(t);
  EXPECT_TRUE(contains(h,
                       "inline constexpr const char* kConfigFamilies[] = {\n"
                       "    \"warptile\",\n    \"warptile\",\n    \"ws_tma\",\n};"))
      << h;
  const auto j = nlohmann::json::parse(render_json(t));
  EXPECT_EQ(j.at("format_version"), 11);
  EXPECT_EQ(j.at("configs")[0].at("family"), "warptile");
  EXPECT_EQ(j.at("configs")[2].at("family"), "ws_tma");
  EXPECT_EQ(j.at("gpus")[0].at("shapes")[2].at("family"), "ws_tma");
  EXPECT_EQ(j.at("kernel_hashes").at("warptile"), "abc123");
  EXPECT_EQ(j.at("kernel_hashes").at("ws_tma"), "def456");
  EXPECT_EQ(j.at("kernel_hash"), "abc123");  // the names earlier formats gave them
  EXPECT_EQ(j.at("tma_kernel_hash"), "def456");
  // The header: a hash per family, whatever families there are.
  EXPECT_TRUE(contains(h, "inline constexpr int kFamilyCount = 2;")) << h;
  EXPECT_TRUE(contains(h, "kFamilyIds[] = {\"warptile\", \"ws_tma\"};")) << h;
  EXPECT_TRUE(contains(h, "kFamilyHashes[] = {\"abc123\", \"def456\"};")) << h;

  Table empty = sample_table("x.db");
  empty.gpus.clear();
  EXPECT_TRUE(contains(render_cpp(empty), "inline constexpr const char* kConfigFamilies[1] = {};"));
  EXPECT_TRUE(contains(render_cpp(empty), "inline constexpr Launch kConfigLaunch[1] = {};"));
  EXPECT_TRUE(contains(render_cpp(empty), "#define SGT_TUNED_INSTANCES(X)\n"));
}

// Format 8: each config's kernel instances are its family's name expressions (what NVRTC compiles
// for the tuner), its kernel files and its launch are its family's, so the dispatch library
// instantiates and launches any family with no code of its own.
TEST(ExportTable, EveryConfigCarriesItsFamilysInstancesAndLaunch) {
  Table t = sample_table("x.db");
  t.gpus[0].shapes.push_back(table_shape(300, 200, 100, test::kConfigTma, 0.01, 0.01, "TN"));
  choose_default(t.gpus[0], kFallback, kConfigA);
  const auto h = render_cpp(t);
  const auto a = *from_name(kConfigA), tma = *from_name(test::kConfigTma);
  const auto& wt = family_of(a);
  const auto& ws = family_of(tma);
  std::string instances;
  for (const bool vec : {true, false})
    for (const char* layout : {"NN", "NT", "TN", "TT"})
      instances += ", (" + wt.name_expression(a, layout, vec) + ")";
  EXPECT_TRUE(contains(h, "  X(0, pointers" + instances + ") \\\n")) << h;
  // The TMA kernel has one instance per layout, whatever the loads.
  EXPECT_TRUE(contains(h, "(" + ws.name_expression(tma, "NT", true) + "), (" +
                              ws.name_expression(tma, "TN", true) + ")"))
      << h;
  EXPECT_TRUE(contains(h, "#define SGT_TUNED_KERNEL_FILE_0 \"sgemm_warptile.cuh\"\n")) << h;
  EXPECT_TRUE(contains(h, "#define SGT_TUNED_KERNEL_FILE_1 \"sgemm_ws_tma.cuh\"\n")) << h;
  EXPECT_TRUE(contains(h, "#define SGT_TUNED_KERNEL_FILE_COUNT 2\n")) << h;
  // Launches: pointers with static shared memory; tensor maps with the producer warpgroup, the
  // dynamic shared memory of each layout, and sm_90a only.
  const auto wt_bytes = wt.block_shared_bytes(a, false, false);
  EXPECT_TRUE(contains(
      h, fmt::format("    {{0, {}, {{0, 0, 0, 0}}, {{{}, {}, {}, {}}}, 0, "
                     "false}},  // {}",
                     wt.block_threads(a), wt_bytes, wt_bytes, wt_bytes, wt_bytes, kConfigA)))
      << h;
  EXPECT_TRUE(contains(
      h, fmt::format(
             "    {{1, {}, {{{}, {}, {}, {}}}, {{{}, {}, {}, {}}}, 90, true}},  // {}",
             ws.block_threads(tma), ws.dynamic_shared_bytes(tma, false, false),
             ws.dynamic_shared_bytes(tma, false, true), ws.dynamic_shared_bytes(tma, true, false),
             ws.dynamic_shared_bytes(tma, true, true), ws.block_shared_bytes(tma, false, false),
             ws.block_shared_bytes(tma, false, true), ws.block_shared_bytes(tma, true, false),
             ws.block_shared_bytes(tma, true, true), test::kConfigTma)))
      << h;
}

TEST(ExportTable, HeaderFieldsComeFromTheOneConfigFieldList) {
  const auto h = render_cpp(sample_table("x.db"));
  std::string xlist_doc = "// X(index";
  for (const auto& f : kConfigFields) {
    EXPECT_TRUE(contains(h, fmt::format("  int {};  // {}", f.name, f.description))) << f.name;
    xlist_doc += fmt::format(", {}", f.name);
  }
  EXPECT_TRUE(contains(h, xlist_doc + "):")) << h;
  EXPECT_TRUE(
      contains(h, fmt::format("inline constexpr int kFieldCount = {};", kConfigFields.size())));
  // The X-list, one row per config in kConfigs order, values in field order.
  const auto a = test::field_values(*from_name(kConfigA)),
             b = test::field_values(*from_name(kConfigB));
  EXPECT_EQ(a.rfind("128, 64, 16, 64, 32, 2, 4, 4, 128, 1", 0), 0u) << a;  // the seed's ten first
  EXPECT_TRUE(contains(h, "  X(0, " + a + ") \\\n")) << h;
  EXPECT_TRUE(contains(h, "  X(1, " + b + ")\n")) << h;
  EXPECT_TRUE(contains(h, "{" + b + "},  // " + kConfigB)) << h;
  // Default: B, the second shape (110% of cuBLAS), config index 1.
  EXPECT_TRUE(contains(h, "{\"NVIDIA H200\", 9, 0, 132, 0, 2, 1, 1},")) << h;
}

TEST(ExportTable, DatabaseTextCannotEscapeTheComments) {
  // A newline would end the comment; a trailing backslash would splice the next line into it.
  const auto h = render_cpp(sample_table("/tmp/x\n#error injected\\"));
  std::istringstream lines(h);
  std::string line;
  bool in_xlist = false;
  while (std::getline(lines, line)) {
    EXPECT_FALSE(line.starts_with("#error")) << h;
    if (line.starts_with("#define SGT_TUNED_CONFIGS(X)") ||
        line.starts_with("#define SGT_TUNED_INSTANCES(X)"))
      in_xlist = true;
    if (!in_xlist) EXPECT_FALSE(line.ends_with("\\")) << line;
    if (in_xlist && !line.ends_with("\\")) in_xlist = false;
  }
  EXPECT_TRUE(contains(h, R"("/tmp/x\012#error injected\\")")) << h;
}

TEST(ExportTable, EmptyTableStillDefinesEveryName) {
  Table t = sample_table("empty.db");
  t.gpus.clear();
  const auto h = render_cpp(t);
  EXPECT_TRUE(contains(h, "#define SGT_TUNED_CONFIGS(X)\n")) << h;
  EXPECT_TRUE(contains(h, "inline constexpr int kGpuCount = 0;"));
  EXPECT_TRUE(contains(h, "inline constexpr Gpu kGpus[1] = {};"));
  EXPECT_TRUE(contains(h, "inline constexpr int kShapeCount = 0;"));
  EXPECT_TRUE(contains(h, "inline constexpr Shape kShapes[1] = {};"));
  EXPECT_TRUE(contains(h, "inline constexpr int kConfigCount = 0;"));
  EXPECT_TRUE(contains(h, "inline constexpr Config kConfigs[1] = {};"));
}

TEST(ExportTable, JsonHoldsTheSameTable) {
  const auto j = nlohmann::json::parse(render_json(sample_table("x.db")));
  EXPECT_EQ(j.at("format"), "sgemm-tune-table");
  EXPECT_EQ(j.at("format_version"), kTableFormatVersion);
  EXPECT_EQ(j.at("generated_by"), "sgemm-tune 9.8.7");
  ASSERT_EQ(j.at("fields").size(), kConfigFields.size());
  EXPECT_EQ(j.at("fields")[0], "BM");
  ASSERT_EQ(j.at("configs").size(), 2u);
  const auto& g = j.at("gpus").at(0);
  EXPECT_EQ(g.at("arch"), "sm_90");
  EXPECT_EQ(g.at("default").at("config_name"), kConfigB);
  EXPECT_EQ(g.at("default").at("source"), "best_ratio");
  EXPECT_EQ(g.at("default").at("shape"), 1);
  ASSERT_EQ(g.at("shapes").size(), 2u);
  EXPECT_EQ(g.at("shapes")[1].at("config").at("TM"), 8);
  EXPECT_NEAR(g.at("shapes")[1].at("ratio").get<double>(), 1.10, 1e-9);
}

EdgeCheck edge(const std::string& label, long long M, long long N, long long K,
               const std::string& layout, bool passed) {
  EdgeCheck e;
  e.label = label;
  e.problem.M = M;
  e.problem.N = N;
  e.problem.K = K;
  e.problem.layout = layout;
  e.lda = layout[0] == 'N' ? K : M;
  e.ldb = layout[1] == 'N' ? N : K;
  e.ldc = N;
  e.passed = passed;
  e.error = passed ? 1e-7 : 0.5;
  e.reason = passed ? "" : "mismatch";
  return e;
}

std::vector<EdgeCheck> suite(const std::string& layout, int n, int failed) {
  std::vector<EdgeCheck> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(edge("case" + std::to_string(i), 100 + i, 60 + i, 10 + i, layout, i >= failed));
  }
  return out;
}

// One GPU with NN and TN shapes: NN verified on 23 cases, TN with 2 failures (one with a label
// that tries to break out of its comment), a second NN shape never verified.
Table layout_table() {
  Table t = sample_table("layouts.db");
  auto& g = t.gpus[0];
  g.shapes[0].edge_checks = suite("NN", 23, 0);
  auto tn = table_shape(1024, 1024, 1024, kConfigB, 0.1, 0.2, "TN");
  tn.edge_checks = suite("TN", 23, 2);
  tn.edge_checks[1].label = "evil\n#error x\\";
  g.shapes.insert(g.shapes.begin() + 1, tn);
  choose_default(g, kFallback, kConfigA);
  return t;
}

TEST(ExportTable, HeaderServesEveryLayoutWithPerLayoutDefaults) {
  const auto t = layout_table();
  const auto& g = t.gpus[0];
  ASSERT_EQ(g.shapes.size(), 3u);
  ASSERT_EQ(g.layout_defaults.size(), 2u);
  const auto h = render_cpp(t);
  EXPECT_TRUE(contains(h, "{1024, 1024, 1024, \"NN\", 0, 0.1, 90},  // " + kConfigA)) << h;
  EXPECT_TRUE(contains(h, "{1024, 1024, 1024, \"TN\", 1, 0.1, 200},  // " + kConfigB)) << h;
  EXPECT_TRUE(contains(h, "struct LayoutDefault {")) << h;
  EXPECT_TRUE(contains(h, "inline constexpr int kLayoutDefaultCount = 2;")) << h;
  // NN: B on 2048x2048x1024 (shape 2, 110%); TN: B on its only shape (shape 1).
  EXPECT_TRUE(contains(h, "    {0, \"NN\", 1, 2},  // " + kConfigB)) << h;
  EXPECT_TRUE(contains(h, "    {0, \"TN\", 1, 1},  // " + kConfigB)) << h;
  EXPECT_TRUE(contains(h, "{\"NVIDIA H200\", 9, 0, 132, 0, 3, 1, 2},")) << h;
  EXPECT_TRUE(contains(h, "NN default " + kConfigB)) << h;
  EXPECT_TRUE(contains(h, "TN default " + kConfigB + " (200.0% of cuBLAS on 1024x1024x1024)")) << h;

  Table empty = t;
  empty.gpus.clear();
  const auto e = render_cpp(empty);
  EXPECT_TRUE(contains(e, "inline constexpr int kLayoutDefaultCount = 0;")) << e;
  EXPECT_TRUE(contains(e, "inline constexpr LayoutDefault kLayoutDefaults[1] = {};")) << e;
}

TEST(ExportTable, HeaderSaysHowEachWinnerFaredOnItsEdgeChecks) {
  const auto h = render_cpp(layout_table());
  EXPECT_TRUE(contains(h, "90},  // " + kConfigA + "; verified: 23/23 edge cases\n")) << h;
  EXPECT_TRUE(contains(h, "200},  // " + kConfigB +
                              "; verified: 21/23 edge cases, failed: \"case0\" 100x60x10 \"TN\", "
                              "\"evil\\012#error x\\\\\" 101x61x11 \"TN\"\n"))
      << h;
  EXPECT_TRUE(contains(h, "110},  // " + kConfigB + "; not verified on edge cases\n")) << h;
  std::istringstream lines(h);
  std::string line;
  while (std::getline(lines, line)) EXPECT_FALSE(line.starts_with("#error")) << h;

  // Long failure lists are cut after four names.
  Table many = layout_table();
  many.gpus[0].shapes[1].edge_checks = suite("TN", 10, 7);
  const auto m = render_cpp(many);
  EXPECT_TRUE(contains(m, "verified: 3/10 edge cases, failed: \"case0\"")) << m;
  EXPECT_TRUE(contains(m, "\"case3\" 103x63x13 \"TN\" and 3 more\n")) << m;
  EXPECT_FALSE(contains(m, "\"case4\"")) << m;
}

TEST(ExportTable, JsonCarriesEdgeChecksAndLayoutDefaults) {
  const auto j = nlohmann::json::parse(render_json(layout_table()));
  const auto& g = j.at("gpus").at(0);
  const auto& shapes = g.at("shapes");
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[1].at("layout"), "TN");
  EXPECT_EQ(shapes[1].at("edge_check_summary").at("total"), 23);
  EXPECT_EQ(shapes[1].at("edge_check_summary").at("passed"), 21);
  const auto& checks = shapes[1].at("edge_checks");
  ASSERT_EQ(checks.size(), 23u);
  EXPECT_EQ(checks[0].at("label"), "case0");
  EXPECT_EQ(checks[0].at("shape"), "100x60x10");
  EXPECT_EQ(checks[0].at("layout"), "TN");
  EXPECT_EQ(checks[0].at("passed"), false);
  EXPECT_EQ(checks[0].at("error"), 0.5);
  EXPECT_EQ(checks[0].at("lda"), 100);
  EXPECT_EQ(checks[2].at("passed"), true);
  EXPECT_TRUE(shapes[2].at("edge_checks").empty());
  EXPECT_EQ(shapes[2].at("edge_check_summary").at("all_passed"), false);

  const auto& defaults = g.at("layout_defaults");
  ASSERT_EQ(defaults.size(), 2u);
  EXPECT_EQ(defaults[0].at("layout"), "NN");
  EXPECT_EQ(defaults[0].at("shape"), 2);
  EXPECT_EQ(defaults[1].at("layout"), "TN");
  EXPECT_EQ(defaults[1].at("config_name"), kConfigB);
  EXPECT_EQ(defaults[1].at("shape"), 1);
  EXPECT_EQ(g.at("default").at("shape"), 2);
}

TEST(ExportTable, SourceDateEpochFixesTheDate) {
  const char* old = std::getenv("SOURCE_DATE_EPOCH");
  const std::string saved = old ? old : "";
  setenv("SOURCE_DATE_EPOCH", "86399", 1);
  EXPECT_EQ(export_timestamp(), "1970-01-01T23:59:59Z");
  setenv("SOURCE_DATE_EPOCH", "yesterday", 1);
  EXPECT_THROW(export_timestamp(), InputError);
  if (old) {
    setenv("SOURCE_DATE_EPOCH", saved.c_str(), 1);
  } else {
    unsetenv("SOURCE_DATE_EPOCH");
  }
  if (!old) EXPECT_EQ(export_timestamp().size(), std::string("2025-01-01T00:00:00Z").size());
}

TEST(ExportTable, AtomicWriteReplacesTheFileAndLeavesNoTemporary) {
  test::TempDir dir;
  const auto file = dir.path() / "table.hpp";
  write_file_atomically(file, "old");
  write_file_atomically(file, "new contents");
  EXPECT_EQ(test::read_file(file), "new contents");
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1);
  EXPECT_THROW(write_file_atomically(dir.path() / "missing" / "t.hpp", "x"), Error);
}

}  // namespace
}  // namespace sgt
