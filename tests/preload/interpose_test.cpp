// libsgemm_tune_preload in a real process: the test application (capture_app.cpp) calls the
// stand-in cuBLAS (fake_cublas.cpp), with and without the library preloaded. The stand-in's log
// of every argument and the statuses must be the same either way; the capture must hold the
// calls as sgemm-tune problems; sgemm-tune must tune from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "problem.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct AppRun {
  int exit_code = -1;
  std::string out;  // the statuses
  std::string err;  // the library's summary and messages
  std::string log;  // the stand-in's record of every call's arguments
};

// Runs the application with exactly the given SGT_ variables (the test's own environment does
// not leak in), the library preloaded or not.
AppRun run_app(const test::TempDir& dir, const std::string& tag, const std::string& args,
               const std::map<std::string, std::string>& env, bool preload = true) {
  const auto log = dir.path() / (tag + ".log");
  const auto err = dir.path() / (tag + ".err");
  std::string cmd = "env -u LD_PRELOAD";
  for (const char* v : {"SGT_PRELOAD", "SGT_CAPTURE", "SGT_CAPTURE_INTERVAL", "SGT_CAPTURE_TIMING",
                        "SGT_CAPTURE_MAX_PROBLEMS", "SGT_PRELOAD_LOG"}) {
    cmd += std::string(" -u ") + v;
  }
  cmd += " SGT_FAKE_CUBLAS_LOG=" + test::sh_quote(log);
  if (preload) cmd += " LD_PRELOAD=" + test::sh_quote(SGT_PRELOAD_LIB);
  for (const auto& [k, v] : env) cmd += " " + k + "=" + test::sh_quote(v);
  cmd += " " + test::sh_quote(SGT_PRELOAD_APP) + " " + args + " 2>" + test::sh_quote(err);
  const auto r = test::run_shell(cmd, false);
  return {r.exit_code, r.out, slurp(err), slurp(log)};
}

json load(const fs::path& p) {
  return json::parse(slurp(p));
}

// The problems of a capture with these fields.
std::vector<json> find(const json& capture, const json& fields) {
  std::vector<json> out;
  for (const auto& p : capture["problems"]) {
    bool all = true;
    for (const auto& [k, v] : fields.items()) all = all && p.contains(k) && p[k] == v;
    if (all) out.push_back(p);
  }
  return out;
}

json one(const json& capture, const json& fields) {
  const auto found = find(capture, fields);
  EXPECT_EQ(found.size(), 1u) << fields.dump();
  return found.empty() ? json::object() : found[0];
}

TEST(Preload, CallsReachCublasUntouchedInEveryMode) {
  test::TempDir dir;
  const auto plain = run_app(dir, "plain", "mixed", {}, false);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_NE(plain.log.find("cublasLtMatmul"), std::string::npos) << plain.log;
  EXPECT_NE(plain.out.find("sgemm 7"), std::string::npos);  // m = -1: INVALID_VALUE, untouched

  const auto cap = dir.path() / "cap.json";
  const std::map<std::string, std::map<std::string, std::string>> modes = {
      {"capture", {{"SGT_CAPTURE", cap.string()}}},
      {"capture-every-call", {{"SGT_CAPTURE", cap.string()}, {"SGT_CAPTURE_INTERVAL", "0"}}},
      {"timing-without-driver", {{"SGT_CAPTURE", cap.string()}, {"SGT_CAPTURE_TIMING", "1"}}},
      {"off", {{"SGT_PRELOAD", "off"}, {"SGT_CAPTURE", (dir.path() / "off.json").string()}}},
      {"no-capture", {}},
  };
  for (const auto& [mode, env] : modes) {
    const auto run = run_app(dir, mode, "mixed", env);
    EXPECT_EQ(run.exit_code, 0) << mode << ": " << run.err;
    EXPECT_EQ(run.out, plain.out) << mode;
    EXPECT_EQ(run.log, plain.log) << mode;
  }
  // The kill switch: no file, not a word.
  EXPECT_FALSE(fs::exists(dir.path() / "off.json"));
  EXPECT_EQ(slurp(dir.path() / "off.err"), "");
  EXPECT_EQ(slurp(dir.path() / "no-capture.err"),
            "sgemm-tune preload: 26 GEMM calls passed through (SGT_CAPTURE is not set: nothing "
            "recorded)\n");
  // The library really sat in between: the application refers to versioned cuBLAS symbols, as
  // one linked against cuBLAS does, and still reached the unversioned definitions.
  EXPECT_TRUE(fs::exists(cap));
}

TEST(Preload, CaptureHoldsEachCallAsARowMajorProblem) {
  test::TempDir dir;
  const auto cap = dir.path() / "cap.json";
  const auto run = run_app(dir, "mixed", "mixed", {{"SGT_CAPTURE", cap.string()}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "sgemm-tune preload: 26 GEMM calls, 24 recorded as 21 problems in '" +
                         cap.string() + "'; 2 not recorded (1 failed, 1 empty (m, n or k is 0))\n");
  const json j = load(cap);
  ASSERT_EQ(j["processes"].size(), 1u);
  const auto& proc = j["processes"][0];
  EXPECT_EQ(proc["calls_seen"], 26);
  EXPECT_EQ(proc["calls_recorded"], 24);
  EXPECT_EQ(proc["not_recorded"], (json{{"failed", 1}, {"empty", 1}}));
  EXPECT_EQ(proc["devices"], json::array());  // no driver here: no device, and nothing broke
  EXPECT_EQ(j["problems"].size(), 21u);

  // cublasSgemm(N, N, m=64, n=32, k=16, lda=64, ldb=16, ldc=64), three times.
  auto p = one(j, {{"shape", "32x64x16"}, {"math_mode", "default"}});
  EXPECT_EQ(p["layout"], "NN");
  EXPECT_EQ(p["entry"], "cublasSgemm_v2");
  EXPECT_EQ(p["calls"], 3);
  EXPECT_EQ(p["lda"], 16);
  EXPECT_EQ(p["ldb"], 64);
  EXPECT_EQ(p["ldc"], 64);
  EXPECT_EQ(p["precision"], "fp32");
  EXPECT_EQ(p["pointer_mode"], "host");
  EXPECT_EQ(p["alpha"], "one");
  EXPECT_EQ(p["beta"], "zero");
  EXPECT_EQ(p["cublas"]["m"], 64);
  EXPECT_TRUE(p["device"].is_null());
  // The same call with TF32 allowed by the handle: another problem.
  EXPECT_EQ(one(j, {{"shape", "32x64x16"}, {"math_mode", "tf32"}})["precision"], "tf32");
  // cublasSgemm(T, N, 100, 50, 30, lda 40, ldb 30, ldc 128): 50x100x30 NT, A = B at ldb.
  p = one(j, {{"shape", "50x100x30"}});
  EXPECT_EQ(p["layout"], "NT");
  EXPECT_EQ(p["lda"], 30);
  EXPECT_EQ(p["ldb"], 40);
  EXPECT_EQ(p["ldc"], 128);
  EXPECT_EQ(p["alpha"], "other");
  EXPECT_EQ(p["beta"], "one");
  EXPECT_EQ(p["calls"], 2);
  EXPECT_EQ(one(j, {{"shape", "8x8x8"}})["layout"], "NT");  // OP_C is OP_T
  EXPECT_EQ(one(j, {{"entry", "cublasSgemm_v2_64"}})["shape"], "6x5x7");
  EXPECT_EQ(one(j, {{"entry", "cublasSgemm_v2_64"}})["layout"], "TN");
  // GemmEx: the compute type and the data types decide.
  EXPECT_EQ(one(j, {{"entry", "cublasGemmEx"}, {"compute", "32F"}, {"precision", "fp32"}})["shape"],
            "256x128x64");
  EXPECT_EQ(one(j, {{"entry", "cublasGemmEx"}, {"precision", "other"}})["cublas"]["a_type"], "f16");
  EXPECT_EQ(one(j, {{"entry", "cublasGemmEx"}, {"compute", "32F_FAST_TF32"}})["precision"], "tf32");
  EXPECT_EQ(one(j, {{"entry", "cublasGemmEx_64"}})["precision"], "fp32");  // 32F_PEDANTIC
  p = one(j, {{"entry", "cublasSgemmEx"}});
  EXPECT_EQ(p["shape"], "30x40x20");
  EXPECT_EQ(p["layout"], "TN");
  EXPECT_EQ(p["beta"], "other");
  // Device pointers: never read.
  p = one(j, {{"pointer_mode", "device"}});
  EXPECT_EQ(p["alpha"], "unknown");
  EXPECT_EQ(p["beta"], "unknown");
  EXPECT_EQ(one(j, {{"shape", "20x20x20"}})["alpha"], "zero");
  // Batched calls are recorded with their batch.
  p = one(j, {{"entry", "cublasSgemmBatched"}});
  EXPECT_EQ(p["batch"], 4);
  EXPECT_EQ(p["batch_kind"], "pointer_array");
  p = one(j, {{"entry", "cublasSgemmStridedBatched"}});
  EXPECT_EQ(p["shape"], "24x24x24");
  EXPECT_EQ(p["layout"], "NT");
  EXPECT_EQ(p["batch"], 3);
  EXPECT_EQ(p["cublas"]["stride_a"], 576);
  EXPECT_EQ(one(j, {{"entry", "cublasGemmStridedBatchedEx"}})["batch"], 1);
  // cuBLASLt: column-major, row-major, mixed orders, and what makes a call untunable.
  p = one(j, {{"entry", "cublasLtMatmul"},
              {"layout", "NN"},
              {"compute", "32F"},
              {"epilogue", "default"},
              {"in_place", true}});
  EXPECT_EQ(p["shape"], "40x48x24");
  EXPECT_EQ(p["precision"], "fp32");
  EXPECT_TRUE(p["math_mode"].is_null());
  EXPECT_EQ(p["c_matches_d"], true);
  p = one(j, {{"entry", "cublasLtMatmul"}, {"shape", "10x20x30"}});
  EXPECT_EQ(p["layout"], "NT");
  EXPECT_EQ(p["lda"], 30);
  EXPECT_EQ(p["ldc"], 20);
  EXPECT_EQ(p["cublas"]["order_c"], "row");
  p = one(j, {{"entry", "cublasLtMatmul"}, {"layout", "TN"}});
  EXPECT_EQ(p["shape"], "40x48x24");
  EXPECT_EQ(p["lda"], 40);
  EXPECT_EQ(one(j, {{"entry", "cublasLtMatmul"}, {"compute", "32F_FAST_TF32"}})["precision"],
            "tf32");
  EXPECT_EQ(find(j, {{"entry", "cublasLtMatmul"}, {"epilogue", "bias"}}).size(), 1u);
  p = one(j, {{"entry", "cublasLtMatmul"}, {"in_place", false}});
  EXPECT_EQ(p["c_matches_d"], false);
  EXPECT_EQ(p["ldc"], 64);  // D's
}

TEST(Preload, SgemmTuneTunesTheCaptureMostCallsFirst) {
  test::TempDir dir;
  const auto cap = dir.path() / "cap.json";
  ASSERT_EQ(run_app(dir, "mixed", "mixed", {{"SGT_CAPTURE", cap.string()}}).exit_code, 0);
  SuiteSource src;
  const auto suite = load_suite(cap.string(), "NN", &src);
  EXPECT_EQ(src.format, "capture");
  EXPECT_EQ(src.problems, 21u);
  EXPECT_EQ(src.calls, 24);
  std::vector<std::string> got;
  for (const auto& e : suite) got.push_back(e.problem.shape() + " " + e.problem.layout);
  const std::vector<std::string> expected = {
      "32x64x16 NN", "50x100x30 NT", "256x128x64 NN", "80x72x88 NN", "44x33x55 NN", "40x48x24 NN",
      "40x48x24 TN", "30x40x20 TN",  "10x20x30 NT",   "16x16x16 NN", "8x8x8 NT",    "6x5x7 TN"};
  EXPECT_EQ(got, expected);
  const std::vector<std::pair<std::string, size_t>> left = {
      {"TF32 allowed", 3}, {"batched", 2},  {"C and D layouts differ", 1},
      {"alpha = 0", 1},    {"epilogue", 1}, {"not FP32", 1}};
  EXPECT_EQ(src.left_out, left);
  EXPECT_NE(src.note.find("21 problems, 24 calls (capture), 12 to tune, most calls first; left "
                          "out 9: 3 TF32 allowed, 2 batched"),
            std::string::npos)
      << src.note;

  // The command itself: the plan of every tunable problem, in that order, and the note.
  const auto r =
      test::run_shell(test::sh_quote(test::cli_path()) +
                          " tune --dry-run --arch sm_90 --space quick --json --shapes " +
                          test::sh_quote(cap) + " 2>" + test::sh_quote(dir.path() / "note.txt"),
                      false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json plan = json::parse(r.out);
  ASSERT_EQ(plan["runs"].size(), expected.size()) << r.out.substr(0, 400);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(plan["runs"][i]["shape"].get<std::string>() + " " +
                  plan["runs"][i]["layout"].get<std::string>(),
              expected[i]);
  }
  const auto note = slurp(dir.path() / "note.txt");
  EXPECT_NE(note.find("[warning] " + cap.string() + ": 21 problems"), std::string::npos) << note;
}

TEST(Preload, ThreadsAreCountedExactly) {
  test::TempDir dir;
  const auto cap = dir.path() / "cap.json";
  const auto run = run_app(dir, "threads", "threads 8 200", {{"SGT_CAPTURE", cap.string()}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json j = load(cap);
  ASSERT_EQ(j["problems"].size(), 8u);
  for (const auto& p : j["problems"]) EXPECT_EQ(p["calls"], 200) << p.dump();
  EXPECT_EQ(j["processes"][0]["calls_recorded"], 1600);
}

TEST(Preload, AForkedChildIsAProcessOfItsOwn) {
  test::TempDir dir;
  const auto cap = dir.path() / "cap.json";
  const auto run = run_app(dir, "fork", "fork", {{"SGT_CAPTURE", cap.string()}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json j = load(cap);
  ASSERT_EQ(j["processes"].size(), 2u) << j.dump();
  std::map<long long, std::string> shapes;  // pid -> its problem
  std::map<long long, long long> calls;
  for (const auto& p : j["problems"]) {
    const long long pid = j["processes"][p["process"].get<size_t>()]["pid"];
    shapes[pid] += p["shape"].get<std::string>();
    calls[pid] += p["calls"].get<long long>();
  }
  ASSERT_EQ(shapes.size(), 2u);
  std::vector<std::string> got;
  for (const auto& [pid, s] : shapes) got.push_back(s + "=" + std::to_string(calls[pid]));
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"11x11x11=7", "22x22x22=3"}));
}

TEST(Preload, PeriodicWritesSurviveAnExitWithoutAtexit) {
  test::TempDir dir;
  const auto cap = dir.path() / "cap.json";
  auto run = run_app(dir, "early", "exit-early 5",
                     {{"SGT_CAPTURE", cap.string()}, {"SGT_CAPTURE_INTERVAL", "0"}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_TRUE(fs::exists(cap));
  EXPECT_EQ(load(cap)["problems"][0]["calls"], 5);
  // With the default interval nothing was due, and _exit skips the final write.
  const auto late = dir.path() / "late.json";
  run = run_app(dir, "late", "exit-early 5", {{"SGT_CAPTURE", late.string()}});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_FALSE(fs::exists(late));
}

TEST(Preload, AFailedWriteNeverFailsTheApplication) {
  test::TempDir dir;
  const auto plain = run_app(dir, "plain", "mixed", {}, false);
  const auto bad = dir.path() / "missing" / "cap.json";
  const auto run = run_app(dir, "bad", "mixed", {{"SGT_CAPTURE", bad.string()}});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, plain.out);
  EXPECT_EQ(run.log, plain.log);
  EXPECT_NE(run.err.find("1 write failed, the last: cannot open"), std::string::npos) << run.err;
  // A file that is not a capture is left as it was.
  const auto notes = dir.path() / "notes.json";
  std::ofstream(notes) << "[\"8x8x8\"]";
  const auto kept = run_app(dir, "kept", "mixed", {{"SGT_CAPTURE", notes.string()}});
  EXPECT_EQ(kept.exit_code, 0);
  EXPECT_EQ(slurp(notes), "[\"8x8x8\"]");
  EXPECT_NE(kept.err.find("not a capture"), std::string::npos) << kept.err;
}

TEST(Preload, TwoRunsShareOneFile) {
  test::TempDir dir;
  const auto cap = dir.path() / "cap.json";
  for (const char* tag : {"one", "two"}) {
    ASSERT_EQ(run_app(dir, tag, "exit-early 3",
                      {{"SGT_CAPTURE", cap.string()}, {"SGT_CAPTURE_INTERVAL", "0"}})
                  .exit_code,
              0);
  }
  const json j = load(cap);
  EXPECT_EQ(j["processes"].size(), 2u);
  SuiteSource src;
  const auto suite = load_suite(cap.string(), "NN", &src);
  ASSERT_EQ(suite.size(), 1u);  // one problem, its calls summed over both processes
  EXPECT_EQ(src.calls, 6);
  EXPECT_EQ(suite[0].problem.shape() + " " + suite[0].problem.layout, "64x128x32 TN");
}

TEST(Preload, ExportsOnlyTheInterposedEntryPoints) {
  const auto r = test::run_shell("nm -D --defined-only " + test::sh_quote(SGT_PRELOAD_LIB), false);
  if (r.exit_code != 0) GTEST_SKIP() << "nm is not available";
  std::istringstream lines(r.out);
  std::vector<std::string> names;
  for (std::string line; std::getline(lines, line);) {
    const auto name = line.substr(line.rfind(' ') + 1);
    EXPECT_EQ(name.rfind("cublas", 0), 0u) << line;
    names.push_back(name);
  }
  for (const char* entry : {"cublasSgemm_v2", "cublasSgemm_v2_64", "cublasGemmEx", "cublasSgemmEx",
                            "cublasSgemmStridedBatched", "cublasGemmBatchedEx", "cublasLtMatmul"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), entry), names.end()) << entry;
  }
}

TEST(Preload, TheCaptureMatchesItsSchema) {
  test::TempDir dir;
  const auto cap = dir.path() / "cap.json";
  ASSERT_EQ(run_app(dir, "mixed", "mixed", {{"SGT_CAPTURE", cap.string()}}).exit_code, 0);
  const std::string src = SGT_TEST_SOURCE_DIR;
  const auto r = test::run_shell(
      "python3 " + test::sh_quote(src + "/tests/preload/validate_capture.py") + " " +
      test::sh_quote(src + "/docs/schemas/captured.schema.json") + " " + test::sh_quote(cap) + " " +
      test::sh_quote(src + "/tests/preload/data/captured.json"));
  if (r.exit_code == 77) GTEST_SKIP() << r.out;
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

}  // namespace
}  // namespace sgt
