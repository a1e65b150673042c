// Problem shapes: what parse_shape accepts and refuses, and the shape rules of check_shape.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error.hpp"
#include "problem.hpp"
#include "test_support.hpp"

#include <filesystem>
#include <fstream>

namespace sgt {
namespace {

WarpTileConfig seed() {
  return *from_name("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1");
}

TEST(ParseShape, AcceptsMxNxK) {
  const auto p = parse_shape("4096x4096x4096");
  EXPECT_EQ(p.M, 4096);
  EXPECT_EQ(p.N, 4096);
  EXPECT_EQ(p.K, 4096);
  EXPECT_EQ(p.layout, "NN");
  EXPECT_EQ(p.shape(), "4096x4096x4096");
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 4096.0 * 4096.0 * 4096.0);

  const auto one = parse_shape("1x1x1");
  EXPECT_EQ(one.M, 1);
  EXPECT_EQ(one.N, 1);
  EXPECT_EQ(one.K, 1);

  // Capital X too, and the dimensions stay in M, N, K order.
  const auto odd = parse_shape("4093X17X5");
  EXPECT_EQ(odd.M, 4093);
  EXPECT_EQ(odd.N, 17);
  EXPECT_EQ(odd.K, 5);
  EXPECT_EQ(odd.shape(), "4093x17x5");
}

TEST(ParseShape, AcceptsUpToIntMax) {
  EXPECT_EQ(parse_shape("2147483647x1x1").M, 2147483647);
  EXPECT_THROW(parse_shape("2147483648x1x1"), InputError);
  EXPECT_THROW(parse_shape("1x1x2147483648"), InputError);
}

TEST(ParseShape, RejectsMalformedTextQuotingIt) {
  const std::vector<std::string> bad = {
      "0x0x0",
      "-5x4x4",
      "4096x4096",
      "abc",
      "99999999999x1x1",
      "4x4x4x",
      "4x 4x4",
      "",
      "4x4x0",
      "x4x4",
      "4xx4x4",
      "4x4x4 ",
      " 4x4x4",
      "4*4*4",
      "4x4x4x4",
      "+4x4x4",
      "4.0x4x4",
      "0x4x4",
      "99999999999999999999999x1x1",
  };
  for (const auto& text : bad) {
    try {
      const auto p = parse_shape(text);
      ADD_FAILURE() << "accepted '" << text << "' as " << p.shape();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + text + "'"), std::string::npos)
          << "message does not quote the text: " << e.what();
    }
  }
}

TEST(CheckShape, AnyShapeOfTheFourLayoutsIsServed) {
  // The kernel guards its edge tiles: shapes off the 128x64x16 tile, primes and ones are fine.
  for (const char* text : {"4096x4096x4096", "128x64x16", "4000x4096x4096", "4096x4000x4096",
                           "4096x4096x4088", "1x1x1", "127x61x13", "131x67x19", "4093x1021x257"}) {
    for (const auto layout : kLayouts) {
      auto p = parse_shape(text);
      p.layout = std::string(layout);
      EXPECT_TRUE(check_shape(seed(), p).empty()) << text << " " << layout;
    }
  }
}

// A TMA = 1 config serves only operands its copies can read: lda and ldb (the stored rows of the
// layout) multiples of 4. The same shape stays open to TMA = 0 configs.
TEST(CheckShape, TmaConfigsNeedRowsOfWholeFloat4s) {
  auto tma = seed();
  tma.family = "ws_tma";
  const struct {
    const char* shape;
    const char* layout;
    bool ok;
  } cases[] = {
      {"1024x1024x1024", "NN", true},  {"1000x1000x1000", "TT", true},
      {"4095x4097x1023", "NN", false},  // lda = K = 1023
      {"1023x777x513", "NT", false},    // lda = K = 513 (ldb = K too)
      {"1023x776x512", "TN", false},    // lda = M = 1023
      {"1024x777x512", "TN", false},    // ldb = N = 777
      {"1024x777x512", "NT", true},     // lda = ldb = K = 512: N need not be
      {"3x5x8", "NN", false},          {"3x8x8", "NN", true},
  };
  for (const auto& c : cases) {
    auto p = parse_shape(c.shape);
    p.layout = c.layout;
    SCOPED_TRACE(std::string(c.shape) + " " + c.layout);
    EXPECT_EQ(tma_operands(p), c.ok);
    const auto v = check_shape(tma, p);
    if (c.ok) {
      EXPECT_TRUE(v.empty());
    } else {
      ASSERT_EQ(v.size(), 1u);
      EXPECT_EQ(v[0].rule, "shape_tma_operands");
      EXPECT_NE(v[0].reason.find("multiples of 4"), std::string::npos) << v[0].reason;
    }
    EXPECT_TRUE(check_shape(seed(), p).empty());
  }
}

TEST(CheckShape, LayoutMustBeOneOfTheFourAndDtypeF32) {
  auto p = parse_shape("100x100x100");
  for (const char* bad : {"XN", "nn", "N", "NNN", ""}) {
    p.layout = bad;
    const auto v = check_shape(seed(), p);
    ASSERT_EQ(v.size(), 1u) << bad;
    EXPECT_EQ(v[0].rule, "shape_layout");
    EXPECT_NE(v[0].reason.find("'" + std::string(bad) + "'"), std::string::npos) << v[0].reason;
  }
  p.layout = "TT";
  p.dtype = "f16";
  const auto v = check_shape(seed(), p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].rule, "shape_layout");
  EXPECT_NE(v[0].reason.find("f16"), std::string::npos) << v[0].reason;
}

TEST(Layout, TheFourAreAcceptedAndAnythingElseIsNamed) {
  for (const auto l : kLayouts) {
    EXPECT_TRUE(is_layout(l));
    EXPECT_EQ(parse_layout(l), l);
  }
  for (const char* bad : {"XN", "nt", "N", "NTN", "", " NN"}) {
    EXPECT_FALSE(is_layout(bad)) << bad;
    try {
      parse_layout(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("'" + std::string(bad) + "'"), std::string::npos) << msg;
      for (const char* l : {"NN", "NT", "TN", "TT"}) {
        EXPECT_NE(msg.find(l), std::string::npos) << msg;
      }
    }
  }
}

TEST(CheckShape, LeavesDegenerateTilesToCheck) {
  auto c = seed();
  c.BK = 0;  // would be a modulo by zero if check_shape still divided by the tile
  EXPECT_TRUE(check_shape(c, parse_shape("4093x4096x4096")).empty());
  EXPECT_FALSE(check(c).empty());
}

}  // namespace
}  // namespace sgt

namespace sgt {
namespace {

std::string write_temp(const test::TempDir& dir, const std::string& text) {
  const auto path = (dir.path() / "shapes.json").string();
  std::ofstream(path) << text;
  return path;
}

TEST(ShapeList, AcceptsAListOrAnObjectOfStringsAndObjects) {
  test::TempDir dir;
  auto ps =
      load_shape_list(write_temp(dir, R"(["64x128x256", {"shape": "1x2x3", "layout": "NN"}])"));
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].shape(), "64x128x256");
  EXPECT_EQ(ps[1].M, 1);
  EXPECT_EQ(ps[1].K, 3);
  ps = load_shape_list(write_temp(dir, R"({"shapes": ["8x8x8"]})"));
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].layout, "NN");
}

TEST(ShapeList, EveryLayoutAndADefaultForEntriesWithout) {
  test::TempDir dir;
  const auto path =
      write_temp(dir, R"(["64x64x64", {"shape": "64x64x64", "layout": "NT"}, {"shape": "64x64x64",
              "layout": "TN"}, {"shape": "64x64x64", "layout": "TT"}, {"shape": "5x7x11"}])");
  auto ps = load_shape_list(path);
  ASSERT_EQ(ps.size(), 5u);
  EXPECT_EQ(ps[0].layout, "NN");
  EXPECT_EQ(ps[1].layout, "NT");
  EXPECT_EQ(ps[2].layout, "TN");
  EXPECT_EQ(ps[3].layout, "TT");
  EXPECT_EQ(ps[4].layout, "NN");

  // With another default, "64x64x64" becomes TN and collides with the explicit TN entry.
  try {
    load_shape_list(path, "TN");
    ADD_FAILURE() << "a duplicate under the default layout was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("listed twice"), std::string::npos) << e.what();
  }
  ps = load_shape_list(write_temp(dir, R"(["8x8x8", {"shape": "9x9x9", "layout": "NN"}])"), "TT");
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].layout, "TT");
  EXPECT_EQ(ps[1].layout, "NN");
  EXPECT_THROW(load_shape_list(path, "XN"), InputError);
}

TEST(ShapeList, AnUnknownLayoutIsRefusedByName) {
  test::TempDir dir;
  const auto path = write_temp(dir, R"(["8x8x8", {"shape": "16x16x16", "layout": "XN"}])");
  try {
    load_shape_list(path);
    ADD_FAILURE() << "layout XN was accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("shape #1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'XN'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("NN, NT, TN or TT"), std::string::npos) << msg;
  }
}

TEST(ShapeList, AnEntryMayNameItsOwnSearchSpace) {
  test::TempDir dir;
  const auto path = write_temp(
      dir, R"(["8x8x8", {"shape": "16x16x16", "space": "skinny"}, {"shape": "16x16x16", "layout":
              "NT", "space": "my/space.json"}])");
  const auto suite = load_suite(path);
  ASSERT_EQ(suite.size(), 3u);
  EXPECT_EQ(suite[0].space, "");  // the command's --space
  EXPECT_EQ(suite[1].space, "skinny");
  EXPECT_EQ(suite[1].problem.layout, "NN");
  EXPECT_EQ(suite[2].space, "my/space.json");
  EXPECT_EQ(suite[2].problem.layout, "NT");
  // The problems alone, as before.
  const auto ps = load_shape_list(path);
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps[2], suite[2].problem);
  // A relative path names a file beside the suite when there is one; the current directory is
  // not consulted for it.
  std::filesystem::create_directories(dir.path() / "suite" / "spaces");
  std::ofstream(dir.path() / "suite" / "spaces" / "one.json") << "{}";
  const auto nested = (dir.path() / "suite" / "s.json").string();
  std::ofstream(nested) << R"([{"shape": "8x8x8", "space": "spaces/one.json"},
                               {"shape": "9x9x9", "space": "spaces/none.json"}])";
  const auto moved = load_suite(nested);
  EXPECT_EQ(moved[0].space, (dir.path() / "suite" / "spaces" / "one.json").string());
  EXPECT_EQ(moved[1].space, "spaces/none.json");  // no such file beside it: kept as written
  // The same shape and layout twice is one problem whatever the spaces say.
  try {
    load_suite(write_temp(dir, R"([{"shape": "8x8x8", "space": "quick"}, "8x8x8"])"));
    ADD_FAILURE() << "a shape listed twice with different spaces was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("listed twice"), std::string::npos) << e.what();
  }
}

// A space the suite names is checked with the rest of the input: before any GPU is looked for.
TEST(ShapeList, TuneAndBenchRefuseAnUnknownSpaceOfAnEntryNamingTheShape) {
  test::TempDir dir;
  const auto path =
      write_temp(dir, R"(["8x8x8", {"shape": "96x64x32", "layout": "TN", "space": "nope"}])");
  const auto db = (dir.path() / "t.db").string();
  for (const std::string cmd : {"tune --shapes '" + path + "' --db '" + db + "'",
                                "bench --suite '" + path + "' --db '" + db + "' --csv '" +
                                    (dir.path() / "b.csv").string() + "'"}) {
    const auto r = test::run_cli(cmd);
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("96x64x32 TN"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(path), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nope"), std::string::npos) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(ShapeList, TheShippedBenchSuiteLoads) {
  const auto ps = load_shape_list(std::string(SGT_TEST_SOURCE_DIR) + "/bench/shapes.json");
  EXPECT_GE(ps.size(), 8u);
}

TEST(ShapeList, BadFilesNameTheFileAndTheEntry) {
  test::TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[", "invalid JSON"},
      {"[]", "non-empty list"},
      {"{}", "'shapes'"},
      {R"({"shapes": ["8x8x8"], "extra": 1})", "'shapes'"},
      {R"(["8x8x8", "0x1x1"])", "shape #1"},
      {R"(["8x8x8", 5])", "shape #1"},
      {R"([{"shape": "8x8x8", "layout": "TX"}])", "layout 'TX'"},
      {R"([{"shape": "8x8x8", "layout": 1}])", "layout must be a string"},
      {R"([{"shape": "8x8x8", "lda": 9}])", "unknown key 'lda'"},
      {R"([{"shape": "8x8x8", "space": 3}])", "space must be a non-empty string"},
      {R"([{"shape": "8x8x8", "space": ""}])", "space must be a non-empty string"},
      {R"(["8x8x8", "8x8x8"])", "listed twice"},
  };
  for (const auto& [text, needle] : cases) {
    const auto path = write_temp(dir, text);
    try {
      load_shape_list(path);
      ADD_FAILURE() << text << " was accepted";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find(needle), std::string::npos) << text << " -> " << msg;
    }
  }
  EXPECT_THROW(load_shape_list((dir.path() / "missing.json").string()), InputError);
}

TEST(ShapeList, TuneRefusesABadListBeforeLookingForAGpu) {
  test::TempDir dir;
  const auto path = write_temp(dir, R"(["8x8x8", "abc"])");
  const auto r = test::run_cli("tune --shapes '" + path + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("shape #1"), std::string::npos) << r.out;
  // --shape and --shapes together is a usage error, also exit 2.
  EXPECT_EQ(test::run_cli("tune --shape 8x8x8 --shapes '" + path + "'").exit_code, 2);
}

TEST(ShapeList, TuneRefusesABadLayoutBeforeLookingForAGpu) {
  for (const char* args :
       {"tune --shape 8x8x8 --layout XN", "tune --shapes /nonexistent --layout XN"}) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.out;
    EXPECT_NE(r.out.find("bad layout 'XN'"), std::string::npos) << args << ": " << r.out;
  }
}

// A capture of libsgemm_tune_preload (docs/preload.md) as a suite: each problem once, its calls
// and time summed over processes and entry points, most time first, the untunable left out.
TEST(ShapeList, ACaptureIsReadMostTimeFirst) {
  test::TempDir dir;
  const auto path = write_temp(dir, R"({"format": "sgemm-tune-capture", "format_version": 1,
    "processes": [{"pid": 1}, {"pid": 2}],
    "problems": [
      {"shape": "64x64x64", "layout": "NN", "calls": 10, "precision": "fp32", "batch": 1,
       "alpha": "one", "beta": "zero", "timed_calls": 10, "time_ms": 1.0, "process": 0},
      {"shape": "64x64x64", "layout": "NN", "calls": 10, "precision": "fp32", "batch": 1,
       "alpha": "one", "beta": "one", "timed_calls": 5, "time_ms": 1.0, "process": 1},
      {"shape": "128x32x16", "layout": "TN", "calls": 1000, "precision": "fp32", "batch": 1,
       "alpha": "other", "beta": "zero", "timed_calls": 1000, "time_ms": 2.5, "process": 0},
      {"shape": "8x8x8", "layout": "TT", "calls": 99, "precision": "fp32", "batch": 1,
       "alpha": "one", "beta": "zero", "time_ms": null, "process": 1},
      {"shape": "9x9x9", "layout": "NN", "calls": 1, "precision": "fp32", "batch": 1,
       "alpha": "unknown", "beta": "unknown", "process": 1},
      {"shape": "512x512x512", "layout": "NN", "calls": 5, "precision": "tf32", "batch": 1,
       "alpha": "one", "beta": "zero", "process": 0},
      {"shape": "32x32x32", "layout": "NT", "calls": 5, "precision": "fp32", "batch": 8,
       "alpha": "one", "beta": "zero", "process": 0},
      {"shape": "16x16x16", "layout": "NN", "calls": 5, "precision": "fp32", "batch": 1,
       "alpha": "one", "beta": "zero", "epilogue": "bias", "process": 0},
      {"shape": "16x16x16", "layout": "NN", "calls": 5, "precision": "fp32", "batch": 1,
       "alpha": "zero", "beta": "one", "process": 0},
      {"shape": "16x16x16", "layout": "TT", "calls": 5, "precision": "fp32", "batch": 1,
       "alpha": "one", "beta": "one", "c_matches_d": false, "process": 0},
      {"shape": "16x16x16", "layout": "NT", "calls": 5, "precision": "other", "batch": 1,
       "alpha": "one", "beta": "zero", "process": 0},
      {"shape": "4294967296x16x16", "layout": "NN", "calls": 5, "precision": "fp32",
       "batch": 1, "alpha": "one", "beta": "zero", "process": 0}]})");
  SuiteSource src;
  const auto suite = load_suite(path, "TT", &src);
  EXPECT_EQ(src.format, "capture");
  EXPECT_EQ(src.problems, 11u);  // 64x64x64 NN once, from both processes
  EXPECT_EQ(src.calls, 1155);
  std::vector<std::string> got;
  for (const auto& e : suite) got.push_back(e.problem.shape() + " " + e.problem.layout);
  // 64x64x64: 1 ms + 1 ms scaled from 5 timed calls to 10 = 3 ms, before 2.5 ms; then the untimed
  // by calls. The layouts are the capture's, whatever the default.
  EXPECT_EQ(got, (std::vector<std::string>{"64x64x64 NN", "128x32x16 TN", "8x8x8 TT", "9x9x9 NN"}));
  EXPECT_EQ(suite[0].space, "");
  const std::vector<std::pair<std::string, size_t>> left = {{"C and D layouts differ", 1},
                                                            {"TF32 allowed", 1},
                                                            {"alpha = 0", 1},
                                                            {"batched", 1},
                                                            {"epilogue", 1},
                                                            {"not FP32", 1},
                                                            {"too large", 1}};
  EXPECT_EQ(src.left_out, left);
  EXPECT_NE(src.note.find("11 problems, 1155 calls (capture), 4 to tune, most time first; left "
                          "out 7"),
            std::string::npos)
      << src.note;
  // A plain suite says what it is too.
  load_suite(write_temp(dir, R"(["8x8x8"])"), "NN", &src);
  EXPECT_EQ(src.format, "suite");
  EXPECT_EQ(src.problems, 1u);
  EXPECT_TRUE(src.left_out.empty());
}

TEST(ShapeList, ABadCaptureNamesTheFileAndTheProblem) {
  test::TempDir dir;
  const std::string ok_problem =
      R"({"shape": "8x8x8", "layout": "NN", "calls": 1, "precision": "fp32", "batch": 1,
          "alpha": "one", "beta": "zero"})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"format": "sgemm-tune-trials", "format_version": 1, "problems": []})",
       "unknown format \"sgemm-tune-trials\""},
      {R"({"format": "sgemm-tune-capture", "format_version": 2, "problems": []})",
       "capture format_version 2, and this sgemm-tune reads version 1"},
      {R"({"format": "sgemm-tune-capture", "problems": []})", "integer format_version"},
      {R"({"format": "sgemm-tune-capture", "format_version": 1})", "a list 'problems'"},
      {R"({"format": "sgemm-tune-capture", "format_version": 1, "problems": []})",
       "no problem sgemm-tune can tune (the file lists none)"},
      {R"({"format": "sgemm-tune-capture", "format_version": 1, "problems": [)" + ok_problem +
           R"(, {"layout": "NN"}]})",
       "problem #1: 'shape' must be a string"},
      {R"({"format": "sgemm-tune-capture", "format_version": 1, "problems": [{"shape": "0x8x8",
          "layout": "NN", "calls": 1, "precision": "fp32", "batch": 1, "alpha": "one",
          "beta": "zero"}]})",
       "problem #0: bad shape '0x8x8'"},
      {R"({"format": "sgemm-tune-capture", "format_version": 1, "problems": [{"shape": "8x8x8",
          "layout": "XN", "calls": 1, "precision": "fp32", "batch": 1, "alpha": "one",
          "beta": "zero"}]})",
       "problem #0: bad layout 'XN'"},
      {R"({"format": "sgemm-tune-capture", "format_version": 1, "problems": [{"shape": "8x8x8",
          "layout": "NN", "calls": -1, "precision": "fp32", "batch": 1, "alpha": "one",
          "beta": "zero"}]})",
       "'calls' must be a whole number"},
      {R"({"format": "sgemm-tune-capture", "format_version": 1, "problems": [{"shape": "8x8x8",
          "layout": "NN", "calls": 1, "precision": "tf32", "batch": 1, "alpha": "one",
          "beta": "zero"}]})",
       "no problem sgemm-tune can tune (left out 1 TF32 allowed)"},
  };
  for (const auto& [text, needle] : cases) {
    const auto path = write_temp(dir, text);
    try {
      load_suite(path);
      ADD_FAILURE() << text << " was accepted";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find(needle), std::string::npos) << text << " -> " << msg;
    }
  }
}

}  // namespace
}  // namespace sgt
