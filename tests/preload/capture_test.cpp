// The capture table and file without an interposer (preload/src/capture.hpp): the settings from
// the environment, the precision classes, what the file holds, how processes share one file, and
// that a file which is not a capture is never overwritten.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "capture.hpp"
#include "test_support.hpp"

namespace sgt::preload {
namespace {

using json = nlohmann::json;

Settings settings(std::map<std::string, std::string> env, long pid = 42) {
  return Settings::from_env(
      [&](const char* name) -> const char* {
        const auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      pid);
}

ProcessInfo process(long pid, std::string started = "2026-12-03T10:00:00.000Z") {
  ProcessInfo p;
  p.host = "node1";
  p.pid = pid;
  p.command = "app --train";
  p.started = std::move(started);
  return p;
}

CallFacts sgemm(char ta, char tb, long m, long n, long k) {
  CallFacts f;
  f.entry = "cublasSgemm_v2";
  f.call = {ta, tb, m, n, k, ta == 'N' ? m : k, tb == 'N' ? k : n, m};
  f.math_mode = "default";
  f.pointer_mode = "host";
  f.alpha = ScalarClass::One;
  f.beta = ScalarClass::Zero;
  return f;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CaptureSettings, FromTheEnvironment) {
  auto s = settings({});
  EXPECT_TRUE(s.enabled);
  EXPECT_TRUE(s.capture_path.empty());
  EXPECT_DOUBLE_EQ(s.interval_s, 30);
  EXPECT_FALSE(s.timing);
  EXPECT_EQ(s.log, LogLevel::Summary);
  EXPECT_TRUE(s.warnings.empty());

  s = settings({{"SGT_CAPTURE", "out/cap-%p.json"},
                {"SGT_CAPTURE_INTERVAL", "0.5"},
                {"SGT_CAPTURE_TIMING", "1"},
                {"SGT_CAPTURE_MAX_PROBLEMS", "7"},
                {"SGT_PRELOAD_LOG", "debug"}},
               1234);
  EXPECT_EQ(s.capture_path, "out/cap-1234.json");
  EXPECT_EQ(s.capture_template, "out/cap-%p.json");
  EXPECT_DOUBLE_EQ(s.interval_s, 0.5);
  EXPECT_TRUE(s.timing);
  EXPECT_EQ(s.max_problems, 7u);
  EXPECT_EQ(s.log, LogLevel::Debug);

  for (const char* off : {"off", "OFF", "0", "false", "no"}) {
    EXPECT_FALSE(settings({{"SGT_PRELOAD", off}}).enabled) << off;
  }
  // Nonsense is reported and the default kept: the library never stops the application.
  s = settings({{"SGT_PRELOAD", "maybe"},
                {"SGT_CAPTURE_INTERVAL", "soon"},
                {"SGT_CAPTURE_MAX_PROBLEMS", "-3"},
                {"SGT_PRELOAD_LOG", "loud\x1b[31m"}});
  EXPECT_TRUE(s.enabled);
  EXPECT_DOUBLE_EQ(s.interval_s, 30);
  EXPECT_EQ(s.max_problems, 100000u);
  EXPECT_EQ(s.log, LogLevel::Summary);
  ASSERT_EQ(s.warnings.size(), 4u);
  EXPECT_EQ(s.warnings[3].find('\x1b'), std::string::npos) << s.warnings[3];
}

TEST(CapturePrecision, WhatCountsAsPlainFp32) {
  CallFacts f = sgemm('N', 'N', 8, 8, 8);
  EXPECT_EQ(precision(f), "fp32");
  f.math_mode = "pedantic";
  EXPECT_EQ(precision(f), "fp32");
  f.math_mode = "tf32";
  EXPECT_EQ(precision(f), "tf32");
  f.math_mode = "tensor_op";
  EXPECT_EQ(precision(f), "reduced");
  f.math_mode = "bf16x9";
  EXPECT_EQ(precision(f), "emulated");
  f.math_mode = "default";
  f.compute = "32F_FAST_TF32";
  EXPECT_EQ(precision(f), "tf32");
  f.compute = "32F_FAST_16BF";
  EXPECT_EQ(precision(f), "reduced");
  f.compute = "32F_EMULATED_16BFX9";
  EXPECT_EQ(precision(f), "emulated");
  f.compute = "64F";
  EXPECT_EQ(precision(f), "other");
  f.compute = "32F_PEDANTIC";
  EXPECT_EQ(precision(f), "fp32");
  f.a_type = "f16";
  EXPECT_EQ(precision(f), "other");
}

TEST(CaptureFile, OneProcessItsProblemsMostTimeFirst) {
  Recorder r(settings({{"SGT_CAPTURE", "unused.json"}}), process(7));
  for (int i = 0; i < 3; ++i) {
    r.seen();
    r.record(sgemm('N', 'N', 64, 32, 16));
  }
  r.seen();
  Stats* big = r.record(sgemm('T', 'N', 100, 50, 30));
  r.add_time(big, 4.0);
  r.seen();
  r.skip(NotRecorded::Failed);
  r.add_device({0, "NVIDIA H200", "GPU-0123"});
  EXPECT_EQ(r.calls_seen(), 5);
  EXPECT_EQ(r.calls_recorded(), 4);
  EXPECT_EQ(r.problems(), 2u);

  const json j = json::parse(r.render(""));
  EXPECT_EQ(j["format"], "sgemm-tune-capture");
  EXPECT_EQ(j["format_version"], 1);
  ASSERT_EQ(j["processes"].size(), 1u);
  const auto& p = j["processes"][0];
  EXPECT_EQ(p["pid"], 7);
  EXPECT_EQ(p["host"], "node1");
  EXPECT_EQ(p["calls_seen"], 5);
  EXPECT_EQ(p["calls_recorded"], 4);
  EXPECT_EQ(p["not_recorded"], (json{{"failed", 1}}));
  EXPECT_EQ(p["devices"][0]["name"], "NVIDIA H200");
  ASSERT_EQ(j["problems"].size(), 2u);
  // The timed problem first, in sgemm-tune's terms, with the call's own under "cublas".
  const auto& t = j["problems"][0];
  EXPECT_EQ(t["shape"], "50x100x30");
  EXPECT_EQ(t["layout"], "NT");
  EXPECT_EQ(t["lda"], 30);  // the call's ldb: its B is the problem's A, stored M x K (50 x 30)
  EXPECT_EQ(t["ldb"], 30);  // the call's lda: its A is the problem's B, stored N x K (100 x 30)
  EXPECT_EQ(t["cublas"]["transa"], "T");
  EXPECT_EQ(t["cublas"]["m"], 100);
  EXPECT_EQ(t["time_ms"], 4.0);
  EXPECT_EQ(t["timed_calls"], 1);
  const auto& u = j["problems"][1];
  EXPECT_EQ(u["shape"], "32x64x16");
  EXPECT_EQ(u["calls"], 3);
  EXPECT_TRUE(u["time_ms"].is_null());
  EXPECT_EQ(u["precision"], "fp32");
  EXPECT_EQ(u["alpha"], "one");
  EXPECT_EQ(u["beta"], "zero");
  EXPECT_EQ(u["batch"], 1);
  EXPECT_EQ(u["process"], 0);
  EXPECT_TRUE(u["device"].is_null());
  EXPECT_FALSE(u.contains("epilogue"));  // cuBLASLt's fields only for cuBLASLt calls
}

TEST(CaptureFile, ProcessesShareAFileEachReplacingOnlyItsOwnEntries) {
  Recorder a(settings({{"SGT_CAPTURE", "x"}}), process(1));
  a.seen();
  a.record(sgemm('N', 'N', 8, 8, 8));
  Recorder b(settings({{"SGT_CAPTURE", "x"}}), process(2));
  b.seen();
  b.record(sgemm('N', 'N', 8, 8, 8));
  b.seen();
  b.record(sgemm('N', 'T', 16, 8, 8));

  std::string file = a.render("");
  file = b.render(file);
  a.seen();
  a.record(sgemm('N', 'N', 8, 8, 8));
  file = a.render(file);  // a again: its entry replaced, b's kept
  const json j = json::parse(file);
  ASSERT_EQ(j["processes"].size(), 2u);
  EXPECT_EQ(j["processes"][0]["pid"], 2);
  EXPECT_EQ(j["processes"][1]["pid"], 1);
  long long calls_a = 0, calls_b = 0;
  for (const auto& p : j["problems"]) {
    (p["process"] == 1 ? calls_a : calls_b) += p["calls"].get<long long>();
  }
  EXPECT_EQ(calls_a, 2);
  EXPECT_EQ(calls_b, 2);
  // The same pid started at another time is another process (a reused pid, a later run).
  Recorder again(settings({{"SGT_CAPTURE", "x"}}), process(1, "2026-12-04T00:00:00.000Z"));
  again.seen();
  again.record(sgemm('N', 'N', 8, 8, 8));
  EXPECT_EQ(json::parse(again.render(file))["processes"].size(), 3u);
}

TEST(CaptureFile, AFileThatIsNotACaptureIsLeftAlone) {
  Recorder r(settings({{"SGT_CAPTURE", "x"}}), process(1));
  r.seen();
  r.record(sgemm('N', 'N', 8, 8, 8));
  for (const std::string other :
       {"not json", "[1, 2]", R"({"shapes": ["8x8x8"]})",
        R"({"format": "sgemm-tune-capture", "format_version": 2, "problems": []})",
        R"({"format": "sgemm-tune-capture", "format_version": 1, "problems": {}})"}) {
    EXPECT_THROW(r.render(other), std::runtime_error) << other;
  }
  EXPECT_NO_THROW(r.render("  \n"));  // an empty file is no one's
}

TEST(CaptureFile, WritesAtomicallyAndCountsAFailure) {
  test::TempDir dir;
  const auto path = dir.path() / "cap.json";
  Recorder r(settings({{"SGT_CAPTURE", path.string()}}), process(1));
  EXPECT_TRUE(r.write(true));  // nothing seen: nothing written
  EXPECT_FALSE(std::filesystem::exists(path));
  r.seen();
  r.record(sgemm('N', 'N', 8, 8, 8));
  ASSERT_TRUE(r.write(true));
  EXPECT_EQ(json::parse(slurp(path))["problems"].size(), 1u);
  // Only the capture and the writers' lock file: no temporary left behind.
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_TRUE(e.path() == path || e.path().string() == path.string() + ".lock") << e.path();
    ++files;
  }
  EXPECT_EQ(files, 2u);

  // Someone else's file in its place is never overwritten; the failure is counted and said.
  std::ofstream(path) << "my notes";
  EXPECT_FALSE(r.write(true));
  EXPECT_EQ(slurp(path), "my notes");
  EXPECT_NE(r.summary().find("1 write failed"), std::string::npos) << r.summary();
  EXPECT_NE(r.summary().find("not JSON"), std::string::npos) << r.summary();

  Recorder nowhere(settings({{"SGT_CAPTURE", (dir.path() / "no" / "dir.json").string()}}),
                   process(2));
  nowhere.seen();
  nowhere.record(sgemm('N', 'N', 8, 8, 8));
  EXPECT_FALSE(nowhere.write(true));
  EXPECT_NE(nowhere.summary().find("cannot"), std::string::npos) << nowhere.summary();
}

TEST(CaptureFile, TheTableIsBounded) {
  Recorder r(settings({{"SGT_CAPTURE", "x"}, {"SGT_CAPTURE_MAX_PROBLEMS", "2"}}), process(1));
  EXPECT_NE(r.record(sgemm('N', 'N', 8, 8, 8)), nullptr);
  EXPECT_NE(r.record(sgemm('N', 'N', 9, 8, 8)), nullptr);
  EXPECT_NE(r.record(sgemm('N', 'N', 8, 8, 8)), nullptr);  // known: still counted
  EXPECT_EQ(r.record(sgemm('N', 'N', 10, 8, 8)), nullptr);
  EXPECT_EQ(r.problems(), 2u);
  EXPECT_NE(r.summary().find("1 over SGT_CAPTURE_MAX_PROBLEMS"), std::string::npos) << r.summary();
}

TEST(CaptureFile, AForkedChildStartsEmptyWithItsOwnFile) {
  Recorder r(settings({{"SGT_CAPTURE", "cap-%p.json"}}, 10), process(10));
  r.seen();
  r.record(sgemm('N', 'N', 8, 8, 8));
  r.lock_for_fork();
  r.unlock_after_fork();
  r.reset_after_fork(11);
  EXPECT_EQ(r.calls_seen(), 0);
  EXPECT_EQ(r.problems(), 0u);
  EXPECT_EQ(r.settings().capture_path, "cap-11.json");
  r.seen();
  r.record(sgemm('N', 'N', 8, 8, 8));
  const json j = json::parse(r.render(""));
  EXPECT_EQ(j["processes"][0]["pid"], 11);
  EXPECT_EQ(j["processes"][0]["host"], "node1");  // the parent's host and command line
  EXPECT_NE(j["processes"][0]["started"], "2026-12-03T10:00:00.000Z");
}

TEST(CaptureFile, SummaryLine) {
  Recorder off(settings({}), process(1));
  off.seen();
  EXPECT_EQ(off.summary(),
            "sgemm-tune preload: 1 GEMM call passed through (SGT_CAPTURE is not set: nothing "
            "recorded)");
  Recorder r(settings({{"SGT_CAPTURE", "c\x1b.json"}}), process(1));
  r.seen();
  r.record(sgemm('N', 'N', 8, 8, 8));
  r.seen();
  r.skip(NotRecorded::Empty);
  EXPECT_EQ(r.summary(),
            "sgemm-tune preload: 2 GEMM calls, 1 recorded as 1 problem in 'c\\x1b.json'; 1 not "
            "recorded (1 empty (m, n or k is 0))");
}

}  // namespace
}  // namespace sgt::preload
