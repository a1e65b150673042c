// Generated headers through the system C++ compiler (plain C++17, no CUDA): they compile, their
// constexpr tables hold what the database held, and escaped names come back byte for byte.
#include <gtest/gtest.h>

#include <sstream>

#include <fmt/format.h>

#include "export_test_util.hpp"
#include "fixture_db.hpp"
#include "store.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

using test::contains;
using test::sh_quote;

// Exports `db` as <dir>/sgemm_tuned_table.hpp, the name the dispatch library includes.
std::filesystem::path export_header(const std::filesystem::path& db,
                                    const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const auto header = dir / "sgemm_tuned_table.hpp";
  const auto r =
      test::run_cli("export --format cpp --db " + sh_quote(db) + " -o " + sh_quote(header));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return header;
}

test::RunResult compile(const std::filesystem::path& include_dir, const std::filesystem::path& tu,
                        const std::string& flags) {
  return test::run_shell(test::cxx() + " -std=c++17 -Wall -Wextra -Werror -pedantic " + flags +
                         " -I " + sh_quote(include_dir) + " " + sh_quote(tu));
}

TEST(ExportHeaderCompile, FixtureTableIsValidCxx17WithTheDatabasesValues) {
  test::TempDir dir;
  // Quotes and backslashes in the database path end up in a string literal and in comments.
  const auto db_dir = dir.path() / "odd \"db\" \\ dir";
  std::filesystem::create_directories(db_dir);
  const auto db = db_dir / "tuning.db";
  test::write_fixture_db(db);
  const auto inc = dir.path() / "include";
  export_header(db, inc);

  // Included twice: #pragma once must hold.
  const auto syntax = dir.path() / "syntax.cpp";
  test::write_file(syntax,
                   "#include \"sgemm_tuned_table.hpp\"\n#include \"sgemm_tuned_table.hpp\"\n");
  const auto s = compile(inc, syntax, "-fsyntax-only");
  ASSERT_EQ(s.exit_code, 0) << s.out;

  const auto tu = dir.path() / "table.cpp";
  test::write_file(tu, std::string(R"(#include "sgemm_tuned_table.hpp"
#include <cstdio>
namespace t = sgt_tuned_table;
static_assert(t::kFormatVersion == SGT_TUNED_TABLE_FORMAT_VERSION, "");
static_assert(t::kGpuCount == 3 && t::kShapeCount == 14 && t::kConfigCount == 5, "");
static_assert(t::kFieldCount == )" +
                                   std::to_string(kConfigFields.size()) + R"(, "");
static_assert(t::kConfigs[0] == t::Config{)" +
                                   test::field_values(*from_name(test::kConfigA)) + R"(}, "A");
static_assert(t::kConfigs[2] == t::Config{)" +
                                   test::field_values(*from_name(test::kConfigTma)) + R"(}, "TMA");
static_assert(t::kConfigs[1].SPLIT_K == 4 && t::kConfigLaunch[1].abi == 1 &&
                  t::kConfigLaunch[0].abi == 0,
              "TMA split");
static_assert(t::kConfigFamilies[1][0] == 'w' && t::kConfigFamilies[1][1] == 's' &&
                  t::kConfigFamilies[0][1] == 'a',
              "families: ws_tma, warptile");
static_assert(t::kConfigs[3].BN == 128 && t::kConfigs[3].TM == 8 && t::kConfigs[3].MIN_BLOCKS == 1,
              "B");
constexpr const t::Gpu& h200 = t::kGpus[2];
static_assert(h200.cc_major == 9 && h200.sm_count == 132 && h200.shape_count == 13, "");
static_assert(t::kShapes[h200.default_shape].M == 2048 && h200.default_config == 3, "");
static_assert(t::kShapes[h200.first_shape + 11].K == 4096, "");
static_assert(t::kShapes[h200.first_shape + 2].K == 100 && t::kShapes[h200.first_shape + 2].config == 2,
              "");
static_assert(t::kGpus[1].shape_count == 0 && t::kGpus[1].default_shape == -1, "");
#define SGT_COUNT(index, ...) +1
static_assert(0 SGT_TUNED_CONFIGS(SGT_COUNT) == t::kConfigCount, "");
// The X-list's rows are the template's fields, TAIL last; the family is no field: one
// tensor-maps launch per config of the TMA family.
#define SGT_COUNT_TMA(index, launch, ...) +(sizeof(#launch) == sizeof("tensor_maps") ? 1 : 0)
static_assert(0 SGT_TUNED_INSTANCES(SGT_COUNT_TMA) == 3, "");
#define SGT_LAST_FIELD(index, BM, BN, BK, WM, WN, WNITER, TM, TN, NT, MB, STAGES, PAD_A, GROUP_M, \
                       SPLIT_K, FMA_ORDER, PAD_B, PACK, STAGE_C, TAIL)                        \
  +(TAIL >= 0 ? 1 : 0)
static_assert(0 SGT_TUNED_CONFIGS(SGT_LAST_FIELD) == t::kConfigCount, "");
static_assert(t::kConfigLaunch[4].abi == 1 && t::kConfigs[4].PACK == 1, "TMA on panels");
static_assert(t::kShapes[h200.first_shape + 12].M == 4100 && t::kShapes[h200.first_shape + 12].config == 4,
              "");
static void hex(const char* s) {
  for (; *s; ++s) std::printf("%02x", static_cast<unsigned>(static_cast<unsigned char>(*s)));
  std::printf("\n");
}
int main() {
  for (int i = 0; i < t::kGpuCount; ++i) hex(t::kGpus[i].name);
  hex(t::kDatabase);
  std::printf("%s %s %s\n", t::kConfigNames[0], t::kConfigNames[2], t::kConfigNames[3]);
}
)"));
  const auto exe = dir.path() / "table";
  const auto c = compile(inc, tu, "-o " + sh_quote(exe));
  ASSERT_EQ(c.exit_code, 0) << c.out;
  const auto run = test::run_shell(sh_quote(exe));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  std::istringstream lines(run.out);
  std::string line;
  for (const auto& want : {test::kOddGpuName, std::string("NVIDIA A100-SXM4-80GB"),
                           std::string("NVIDIA H200"), db.string()}) {
    ASSERT_TRUE(std::getline(lines, line)) << run.out;
    EXPECT_EQ(line, test::hex(want)) << "expected the bytes of '" << want << "'";
  }
  ASSERT_TRUE(std::getline(lines, line));
  EXPECT_EQ(line, test::kConfigA + " " + test::kConfigTma + " " + test::kConfigB);
}

TEST(ExportHeaderCompile, EmptyTableIsValidCxx17) {
  test::TempDir dir;
  const auto db = dir.path() / "empty.db";
  { db::SqliteStore::open(db, db::OpenMode::read_write); }
  const auto inc = dir.path() / "include";
  export_header(db, inc);
  const auto tu = dir.path() / "empty.cpp";
  test::write_file(tu, R"(#include "sgemm_tuned_table.hpp"
namespace t = sgt_tuned_table;
static_assert(t::kGpuCount == 0 && t::kShapeCount == 0 && t::kConfigCount == 0, "");
#define SGT_COUNT(index, ...) +1
static_assert(0 SGT_TUNED_CONFIGS(SGT_COUNT) == 0, "");
int main() {
  int n = 0;
  for (int i = 0; i < t::kGpuCount; ++i) n += t::kGpus[i].shape_count;
  return n;
}
)");
  const auto c = compile(inc, tu, "-o " + sh_quote(dir.path() / "empty"));
  ASSERT_EQ(c.exit_code, 0) << c.out;
  EXPECT_EQ(test::run_shell(sh_quote(dir.path() / "empty")).exit_code, 0);
}

TEST(ExportHeaderCompile, LayoutsAndEdgeCheckCommentsAreValidCxx17) {
  test::TempDir dir;
  const auto db = dir.path() / "layouts.db";
  test::write_layout_db(db);
  const auto inc = dir.path() / "include";
  export_header(db, inc);
  const auto tu = dir.path() / "layouts.cpp";
  test::write_file(tu, R"(#include "sgemm_tuned_table.hpp"
namespace t = sgt_tuned_table;
constexpr bool same(const char* a, const char* b) {
  return *a == *b && (*a == '\0' || same(a + 1, b + 1));
}
static_assert(t::kGpuCount == 1 && t::kShapeCount == 4 && t::kConfigCount == 2, "");
static_assert(same(t::kShapes[0].layout, "NN") && same(t::kShapes[1].layout, "TN"), "");
static_assert(same(t::kShapes[2].layout, "NN") && same(t::kShapes[3].layout, "TN"), "");
static_assert(t::kGpus[0].default_config == 1 && t::kGpus[0].default_shape == 2, "");
static_assert(t::kLayoutDefaultCount == 2, "");
static_assert(t::kLayoutDefaults[0].gpu == 0 && same(t::kLayoutDefaults[0].layout, "NN"), "");
static_assert(t::kLayoutDefaults[0].config == 1 && t::kLayoutDefaults[0].shape == 2, "");
static_assert(same(t::kLayoutDefaults[1].layout, "TN") && t::kLayoutDefaults[1].shape == 1, "");
static_assert(t::kShapes[t::kLayoutDefaults[1].shape].config == t::kLayoutDefaults[1].config, "");
int main() { return 0; }
)");
  const auto c = compile(inc, tu, "-o " + sh_quote(dir.path() / "layouts"));
  ASSERT_EQ(c.exit_code, 0) << c.out;
  EXPECT_EQ(test::run_shell(sh_quote(dir.path() / "layouts")).exit_code, 0);

  // The empty table defines the new names too.
  const auto empty = dir.path() / "empty.db";
  { db::SqliteStore::open(empty, db::OpenMode::read_write); }
  const auto inc2 = dir.path() / "include2";
  export_header(empty, inc2);
  const auto tu2 = dir.path() / "empty.cpp";
  test::write_file(tu2, R"(#include "sgemm_tuned_table.hpp"
static_assert(sgt_tuned_table::kLayoutDefaultCount == 0, "");
static_assert(sizeof(sgt_tuned_table::kLayoutDefaults) > 0, "");
)");
  const auto e = compile(inc2, tu2, "-fsyntax-only");
  EXPECT_EQ(e.exit_code, 0) << e.out;
}

TEST(ExportHeaderCompile, DispatchLibraryCompilesWithNvccForAnEmptyTable) {
  // The build compiles dispatch.cu for the fixture table; an empty table (no kernels at all) is the
  // other extreme, and the one a fresh database gives.
  const std::string nvcc = SGT_NVCC;
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc in this build";
  test::TempDir dir;
  const auto db = dir.path() / "empty.db";
  { db::SqliteStore::open(db, db::OpenMode::read_write); }
  const auto inc = dir.path() / "include";
  export_header(db, inc);
  const std::filesystem::path src(SGT_TEST_SOURCE_DIR);
  const auto r = test::run_shell(
      sh_quote(nvcc) + " -std=c++17 -arch=sm_90 -Werror all-warnings -Xcompiler=-Wall,-Wextra -c" +
      " -I " + sh_quote(inc) + " -I " + sh_quote(src / "sgemm_tuned" / "include") + " -I " +
      sh_quote(src / "sgemm_tuned" / "src") + " -I " + sh_quote(src / "kernel_templates") + " " +
      sh_quote(src / "sgemm_tuned" / "src" / "dispatch.cu") + " -o " +
      sh_quote(dir.path() / "dispatch.o"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

// dispatch.cu compiled by nvcc for sm_90a, as a TMA-capable build of sgemm_tuned is, against the
// table header in `inc`, free of warnings.
test::RunResult compile_dispatch_sm90a(const std::string& nvcc, const std::filesystem::path& inc,
                                       const std::filesystem::path& obj) {
  const std::filesystem::path src(SGT_TEST_SOURCE_DIR);
  return test::run_shell(
      sh_quote(nvcc) + " -std=c++17 -gencode arch=compute_90a,code=sm_90a -DSGT_TUNED_SM90A=1" +
      " -Werror all-warnings -Xcompiler=-Wall,-Wextra -c -I " + sh_quote(inc) + " -I " +
      sh_quote(src / "sgemm_tuned" / "include") + " -I " + sh_quote(src / "sgemm_tuned" / "src") +
      " -I " + sh_quote(src / "kernel_templates") + " " +
      sh_quote(src / "sgemm_tuned" / "src" / "dispatch.cu") + " -o " + sh_quote(obj));
}

// The dispatch library with TMA = 1 configs, built for sm_90a as a TMA-capable build is: the kernel
// bodies (four layouts), their launch with tensor maps, and the probe, all free of warnings.
TEST(ExportHeaderCompile, DispatchLibraryCompilesWithNvccForSm90aWithTmaConfigs) {
  const std::string nvcc = SGT_NVCC;
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc in this build";
  test::TempDir dir;
  const auto db = dir.path() / "tma.db";
  {
    auto s = db::SqliteStore::open(db, db::OpenMode::read_write);
    for (const char* layout : {"NN", "TT"}) {
      auto p = test::fixture_shape(300, 200, 100);
      p.layout = layout;
      s.begin(test::fixture_h200(), p);
      s.record(test::fixture_trial(p, test::kConfigTma, 0.01, 0.01, 1));
    }
    const auto deep = test::fixture_shape(192, 160, 4000);
    s.begin(test::fixture_h200(), deep);
    s.record(test::fixture_trial(deep, test::kConfigTmaSplit, 0.1, 0.1, 2));
  }
  const auto inc = dir.path() / "include";
  export_header(db, inc);
  EXPECT_TRUE(contains(test::read_file(inc / "sgemm_tuned_table.hpp"),
                       "inline constexpr int kConfigCount = 2;"));
  const auto obj = dir.path() / "dispatch.o";
  const auto r = compile_dispatch_sm90a(nvcc, inc, obj);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // One kernel of the family per layout; the warp-tiling template is not instantiated for them.
  const auto syms = test::run_shell("nm " + sh_quote(obj));
  if (syms.exit_code == 0) {
    // kConfigTma's template arguments: every field but SPLIT_K, PACK, STAGE_C and TMA.
    const std::string args =
        "ILi64ELi128ELi32ELi32ELi32ELi1ELi4ELi4ELi256ELi1ELi3ELi4ELi8ELi1ELi0E";
    for (const char* layout : {"Lb0ELb0E", "Lb0ELb1E", "Lb1ELb0E", "Lb1ELb1E"}) {
      EXPECT_TRUE(contains(syms.out, "_Z12sgemm_ws_tma" + args + layout + "Ev")) << layout;
    }
    EXPECT_FALSE(contains(syms.out, "sgemm_warptileI")) << syms.out;
  }
}

// A winner of family warptile_ring: the table names its kernel file, and the dispatch library,
// built by nvcc, holds the ring's kernel for its four float4 instances (one a layout: k-major or
// k-contiguous buffers) and the double-buffered sgemm_warptile twin (STAGES 2) for its four
// scalar ones, free of warnings; and for sm_75 too, where the ring's copies are synchronous.
TEST(ExportHeaderCompile, DispatchLibraryHoldsARingWinnerAndItsTwin) {
  const std::string nvcc = SGT_NVCC;
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc in this build";
  test::TempDir dir;
  const auto db = dir.path() / "ring.db";
  {
    auto s = db::SqliteStore::open(db, db::OpenMode::read_write);
    auto p = test::fixture_shape(4096, 96, 8192);
    p.layout = "TN";
    s.begin(test::fixture_h200(), p);
    s.record(test::fixture_trial(p, "wr_128x32x16_w64x16_wn2_t4x4_n128_mb1_s3_p4_g8_k4_o1", 0.18,
                                 0.185, 1));
  }
  const auto inc = dir.path() / "include";
  export_header(db, inc);
  const auto header = test::read_file(inc / "sgemm_tuned_table.hpp");
  EXPECT_TRUE(contains(header, "\"sgemm_warptile_ring.cuh\"")) << header;
  const std::filesystem::path src(SGT_TEST_SOURCE_DIR);
  for (const char* arch : {"sm_90", "sm_75"}) {
    const auto obj = dir.path() / (std::string(arch) + ".o");
    const auto r = test::run_shell(
        sh_quote(nvcc) + " -std=c++17 -arch=" + arch +
        " -Werror all-warnings -Xcompiler=-Wall,-Wextra -c -I " + sh_quote(inc) + " -I " +
        sh_quote(src / "sgemm_tuned" / "include") + " -I " + sh_quote(src / "sgemm_tuned" / "src") +
        " -I " + sh_quote(src / "kernel_templates") + " " +
        sh_quote(src / "sgemm_tuned" / "src" / "dispatch.cu") + " -o " + sh_quote(obj));
    ASSERT_EQ(r.exit_code, 0) << arch << "\n" << r.out;
    const auto syms = test::run_shell("nm " + sh_quote(obj));
    if (syms.exit_code != 0) continue;
    // The config's template arguments: every field but SPLIT_K and TAIL.
    const std::string args = "ILi128ELi32ELi16ELi64ELi16ELi2ELi4ELi4ELi128ELi1E";
    // Then STAGES 3, PAD_A 4, GROUP_M 8, FMA_ORDER 1, PAD_B, PACK, STAGE_C 0, and the layout.
    for (const char* layout : {"Li0ELi0E", "Li0ELi1E", "Li1ELi0E", "Li1ELi1E"}) {
      EXPECT_TRUE(contains(syms.out, "_Z19sgemm_warptile_ring" + args +
                                         "Li3ELi4ELi8ELi1ELi0ELi0ELi0E" + layout + "Ev"))
          << arch << " " << layout;
    }
    EXPECT_TRUE(contains(syms.out, "_Z14sgemm_warptile" + args + "Li2E")) << arch;
  }
}

// A table exported in format 7, before the header named each config's instances, kernel files
// and launch, still builds: the library derives them from the TMA field, as for that format's two
// families, and instantiates the same TMA kernels.
TEST(ExportHeaderCompile, ATableOfFormat7StillBuilds) {
  const std::string nvcc = SGT_NVCC;
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc in this build";
  test::TempDir dir;
  const auto db = dir.path() / "tma.db";
  {
    auto s = db::SqliteStore::open(db, db::OpenMode::read_write);
    const auto p = test::fixture_shape(300, 200, 100);
    s.begin(test::fixture_h200(), p);
    s.record(test::fixture_trial(p, test::kConfigTma, 0.01, 0.01, 1));
  }
  const auto inc = dir.path() / "include";
  export_header(db, inc);
  // Format 8's additions out, format 9's removal back (the field TMA, last, 1 for the one
  // config, of the TMA family), format 11's field TAIL out (the last field, where TMA goes), and
  // the version back to 7: what format 7 wrote.
  std::istringstream in(test::read_file(inc / "sgemm_tuned_table.hpp"));
  std::string old, line;
  bool skip = false, in_configs = false;
  int dropped = 0, tma_rows = 0;
  while (std::getline(in, line)) {
    const bool starts = line.starts_with("// X(index, launch") ||
                        line.starts_with("// How a config's kernel is launched") ||
                        line.starts_with("inline constexpr Launch kConfigLaunch");
    if (starts) skip = true, ++dropped;
    if (!skip) {
      if (line == "#define SGT_TUNED_TABLE_FORMAT_VERSION 11")
        line = "#define SGT_TUNED_TABLE_FORMAT_VERSION 7";
      if (line == "inline constexpr int kFormatVersion = 11;")
        line = "inline constexpr int kFormatVersion = 7;";
      // TAIL (0) is each row's last value: TMA (1) takes its place.
      if (line.starts_with("  X(0, ") && line.ends_with(", 0)"))
        line.replace(line.size() - 2, 1, "1");
      if (in_configs && line.starts_with("    {")) {
        const auto end = line.find(", 0},  // ");
        if (end != std::string::npos) line.replace(end, 3, ", 1"), ++tma_rows;
      }
      in_configs = line.starts_with("inline constexpr Config kConfigs[] = {") ||
                   (in_configs && line != "};");
      if (line.starts_with("  int TAIL;")) line = "  int TMA;";
      if (line.ends_with("&& a.TAIL == b.TAIL;"))
        line.replace(line.rfind("&& a.TAIL"), 20, "&& a.TMA == b.TMA;");
      if (line.starts_with("inline constexpr const char* kFieldNames[]"))
        line.replace(line.rfind("\"TAIL\""), 6, "\"TMA\"");
      old += line + "\n";
    }
    if (skip && (line.starts_with("#define SGT_TUNED_KERNEL_FILE_COUNT") || line == "};"))
      skip = false;
  }
  ASSERT_EQ(dropped, 3) << old;
  ASSERT_EQ(tma_rows, 1) << old;
  ASSERT_TRUE(contains(old, "inline constexpr int kConfigCount = 1;")) << old;
  ASSERT_FALSE(contains(old, "SGT_TUNED_INSTANCES")) << old;
  ASSERT_FALSE(contains(old, "Launch")) << old;
  ASSERT_TRUE(contains(old, "#define SGT_TUNED_TABLE_FORMAT_VERSION 7\n")) << old;
  test::write_file(inc / "sgemm_tuned_table.hpp", old);
  const auto obj = dir.path() / "dispatch.o";
  const auto r = compile_dispatch_sm90a(nvcc, inc, obj);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto syms = test::run_shell("nm " + sh_quote(obj));
  if (syms.exit_code == 0) {
    const std::string args =
        "ILi64ELi128ELi32ELi32ELi32ELi1ELi4ELi4ELi256ELi1ELi3ELi4ELi8ELi1ELi0E";
    for (const char* layout : {"Lb0ELb0E", "Lb0ELb1E", "Lb1ELb0E", "Lb1ELb1E"})
      EXPECT_TRUE(contains(syms.out, "_Z12sgemm_ws_tma" + args + layout + "Ev")) << layout;
  }
}

// select.hpp restates the TMA operand rule of tma_maps.h (which needs the CUDA headers, and the
// CPU selection tests have none): compiled together by nvcc, the two must agree everywhere.
TEST(ExportHeaderCompile, TmaRefusalIsTheRuleOfTmaOperand) {
  const std::string nvcc = SGT_NVCC;
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc in this build";
  test::TempDir dir;
  const auto inc = dir.path() / "include";
  { db::SqliteStore::open(dir.path() / "empty.db", db::OpenMode::read_write); }
  export_header(dir.path() / "empty.db", inc);
  const auto tu = dir.path() / "agree.cu";
  test::write_file(tu, R"(#include "select.hpp"
#include "tma_maps.h"
#include <cstdio>
int main() {
  int checked = 0;
  for (std::uintptr_t base : {std::uintptr_t(0x10000), std::uintptr_t(0x7f0000001000)}) {
    for (int off = 0; off < 64; ++off) {
      for (int ld = -5; ld < 70; ++ld) {
        const std::uintptr_t p = base + static_cast<std::uintptr_t>(off);
        const bool a = sgemm_tuned::detail::tma_refusal(p, ld) == nullptr;
        const bool b = sgt_kernel::tma_operand(reinterpret_cast<const float*>(p), ld);
        if (a != b) {
          std::printf("disagree at offset %d, ld %d: select.hpp %d, tma_maps.h %d\n", off, ld, a, b);
          return 1;
        }
        ++checked;
      }
    }
  }
  std::printf("%d agree\n", checked);
  return 0;
}
)");
  const std::filesystem::path src(SGT_TEST_SOURCE_DIR);
  const auto exe = dir.path() / "agree";
  const auto c = test::run_shell(sh_quote(nvcc) + " -std=c++17 -I " + sh_quote(inc) + " -I " +
                                 sh_quote(src / "sgemm_tuned" / "src") + " -I " +
                                 sh_quote(src / "kernel_templates") + " " + sh_quote(tu) + " -o " +
                                 sh_quote(exe));
  ASSERT_EQ(c.exit_code, 0) << c.out;
  const auto run = test::run_shell(sh_quote(exe));
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(contains(run.out, "9600 agree")) << run.out;
}

TEST(ExportHeaderCompile, SelectionCodeCompilesAgainstATableAsPlainCxx17) {
  // select.hpp is what dispatch.cu runs; it must stay free of CUDA and of C++20. It shares the
  // kernel's float4 rule through warptile_geometry.h, beside the kernel dispatch.cu includes.
  test::TempDir dir;
  const auto db = dir.path() / "tuning.db";
  test::write_fixture_db(db);
  const auto inc = dir.path() / "include";
  export_header(db, inc);
  const auto tu = dir.path() / "select.cpp";
  test::write_file(tu, R"(#include "select.hpp"
#include <cstdio>
using namespace sgemm_tuned::detail;
int main() {
  const DeviceIdentity h200{"NVIDIA H200", 9, 0, 132};
  const Call call{2048, 2048, 1024, 1024, 2048, 2048, 0, 0, 0};
  const auto c = choose(h200, call, [](int) { return std::string(); });
  std::puts(describe(h200, call, c).c_str());
  return c.path == Path::kernel && c.source == Source::exact ? 0 : 1;
}
)");
  const auto exe = dir.path() / "select";
  const auto c = compile(
      inc, tu,
      "-I " + sh_quote(std::filesystem::path(SGT_TEST_SOURCE_DIR) / "sgemm_tuned" / "src") +
          " -I " + sh_quote(std::filesystem::path(SGT_TEST_SOURCE_DIR) / "kernel_templates") +
          " -o " + sh_quote(exe));
  ASSERT_EQ(c.exit_code, 0) << c.out;
  const auto run = test::run_shell(sh_quote(exe));
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(contains(run.out, "tuned kernel " + test::kConfigB)) << run.out;
}

}  // namespace
}  // namespace sgt
