// tools/ncu_stalls.py, the summary of an Nsight Compute source-page export, on a small export
// written here in ncu's layout: the instruction mix, the not-issued samples by opcode and reason,
// the hottest instructions, an address range, the kernel filter, and clear errors for bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.hpp"

namespace sgt {
namespace {

namespace fs = std::filesystem;

std::string script() {
  return test::sh_quote(fs::path(SGT_TEST_SOURCE_DIR) / "tools" / "ncu_stalls.py");
}

bool have_python() {
  return test::run_shell("python3 -c 'import csv, json' >/dev/null 2>&1").exit_code == 0;
}

// Two kernels as `ncu --page source --csv --print-source sass` writes them: a "Kernel Name" line,
// the header, one line per instruction; counts with thousands separators as ncu prints them.
const char* kHeader =
    "\"Address\",\"Source\",\"Warp Stall Sampling (All Samples)\","
    "\"Warp Stall Sampling (Not-issued Samples)\",\"# Samples\",\"Instructions Executed\","
    "\"stall_barrier\",\"stall_short_sb\",\"stall_wait\",\"stall_barrier (Not Issued)\","
    "\"stall_short_sb (Not Issued)\",\"stall_wait (Not Issued)\"\n";

std::string fixture() {
  std::string s = "\"Kernel Name\",\"void sgemm_warptile<128>(int)\"\n";
  s += kHeader;
  s += "\"0x100\",\"LDS.128 R60, [R179+0x10]\",\"40\",\"10\",\"40\",\"2,000\",\"0\",\"0\",\"10\","
       "\"0\",\"0\",\"10\"\n";
  s += "\"0x110\",\"FFMA R1, R2, R3, R1\",\"300\",\"30\",\"300\",\"6,000\",\"0\",\"30\",\"0\","
       "\"0\",\"30\",\"0\"\n";
  s += "\"0x120\",\"FFMA R4, R2, R5, R4\",\"200\",\"0\",\"200\",\"6,000\",\"0\",\"0\",\"0\","
       "\"0\",\"0\",\"0\"\n";
  s += "\"0x130\",\"BAR.SYNC.DEFER_BLOCKING 0x0\",\"20\",\"5\",\"20\",\"1,000\",\"5\",\"0\","
       "\"0\",\"5\",\"0\",\"0\"\n";
  s += "\"0x140\",\"@P0 BRA 0x100\",\"60\",\"55\",\"60\",\"1,000\",\"50\",\"0\",\"5\",\"50\","
       "\"0\",\"5\"\n";
  s += "\"Kernel Name\",\"void sgemm_splitk_reduce<0>(int)\"\n";
  s += kHeader;
  s += "\"0x200\",\"LDG.E R2, desc[UR4][R2.64]\",\"9\",\"9\",\"9\",\"100\",\"0\",\"0\",\"9\","
       "\"0\",\"0\",\"9\"\n";
  return s;
}

struct Fixture {
  test::TempDir dir;
  fs::path csv = dir.path() / "source.csv";
  Fixture() { std::ofstream(csv) << fixture(); }
};

nlohmann::json run_json(const std::string& args) {
  const auto r = test::run_shell("python3 " + script() + " " + args + " --json", false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

TEST(NcuStalls, SummarisesEachKernel) {
  if (!have_python()) GTEST_SKIP() << "no python3";
  Fixture f;
  const auto j = run_json(test::sh_quote(f.csv));
  ASSERT_EQ(j["kernels"].size(), 2u);
  const auto& k = j["kernels"][0];
  EXPECT_EQ(k["kernel"], "void sgemm_warptile<128>(int)");
  EXPECT_EQ(k["instructions_executed"], 16000);
  EXPECT_EQ(k["samples"], 620);
  EXPECT_EQ(k["not_issued_samples"], 100);
  // Mix: FFMA 12000 of 16000, the mnemonic without modifiers or predicate.
  EXPECT_EQ(k["mix"][0]["opcode"], "FFMA");
  EXPECT_EQ(k["mix"][0]["count"], 12000);
  EXPECT_DOUBLE_EQ(k["mix"][0]["percent"].get<double>(), 75.0);
  EXPECT_EQ(k["mix"][1]["opcode"], "LDS");
  // Not issued: the predicated BRA leads, then FFMA, LDS and BAR; the FFMA without samples is
  // in the mix but not here.
  const auto& by_op = k["not_issued_by_opcode"];
  ASSERT_EQ(by_op.size(), 4u);
  EXPECT_EQ(by_op[0]["opcode"], "BRA");
  EXPECT_EQ(by_op[0]["count"], 55);
  EXPECT_EQ(by_op[1]["opcode"], "FFMA");
  EXPECT_EQ(by_op[1]["count"], 30);
  // Reasons from the "(Not Issued)" columns only: barrier 55, short_sb 30, wait 15.
  const auto& by_reason = k["not_issued_by_reason"];
  ASSERT_EQ(by_reason.size(), 3u);
  EXPECT_EQ(by_reason[0]["reason"], "barrier");
  EXPECT_EQ(by_reason[0]["count"], 55);
  EXPECT_DOUBLE_EQ(by_reason[0]["percent"].get<double>(), 55.0);
  EXPECT_EQ(by_reason[1]["reason"], "short_sb");
  EXPECT_EQ(by_reason[2]["reason"], "wait");
  EXPECT_EQ(by_reason[2]["count"], 15);
  // Hottest first, instructions without not-issued samples left out.
  const auto& hot = k["hot"];
  ASSERT_EQ(hot.size(), 4u);
  EXPECT_EQ(hot[0]["address"], "0x140");
  EXPECT_EQ(hot[0]["reasons"]["barrier"], 50);
  EXPECT_EQ(hot[0]["reasons"]["wait"], 5);
  EXPECT_EQ(hot[1]["address"], "0x110");
  EXPECT_EQ(hot[3]["address"], "0x130");
  EXPECT_TRUE(k["range"].empty());
  EXPECT_EQ(j["kernels"][1]["kernel"], "void sgemm_splitk_reduce<0>(int)");
  EXPECT_EQ(j["kernels"][1]["not_issued_by_reason"][0]["reason"], "wait");
}

TEST(NcuStalls, RangeHotAndKernelFilter) {
  if (!have_python()) GTEST_SKIP() << "no python3";
  Fixture f;
  const auto j = run_json(test::sh_quote(f.csv) + " --kernel warptile --hot 1 --range 0x110 0x130");
  ASSERT_EQ(j["kernels"].size(), 1u);
  const auto& k = j["kernels"][0];
  ASSERT_EQ(k["hot"].size(), 1u);
  EXPECT_EQ(k["hot"][0]["address"], "0x140");
  const auto& range = k["range"];
  ASSERT_EQ(range.size(), 3u);  // 0x110, 0x120, 0x130: both ends included, samples or not
  EXPECT_EQ(range[0]["address"], "0x110");
  EXPECT_EQ(range[1]["not_issued"], 0);
  EXPECT_EQ(range[2]["sass"], "BAR.SYNC.DEFER_BLOCKING 0x0");
}

TEST(NcuStalls, TextOutputNamesTheTables) {
  if (!have_python()) GTEST_SKIP() << "no python3";
  Fixture f;
  const auto r =
      test::run_shell("python3 " + script() + " " + test::sh_quote(f.csv) + " --kernel reduce");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char* s : {"kernel: void sgemm_splitk_reduce<0>(int)", "instruction mix",
                        "not-issued samples by opcode", "not-issued samples by reason",
                        "hottest 1 instructions", "LDG.E R2"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("sgemm_warptile"), std::string::npos) << r.out;
}

TEST(NcuStalls, BadInputIsAClearErrorWithExitCode2) {
  if (!have_python()) GTEST_SKIP() << "no python3";
  Fixture f;
  auto expect_error = [&](const std::string& args, const std::string& needle) {
    const auto r = test::run_shell("python3 " + script() + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
  };
  expect_error(test::sh_quote(f.dir.path() / "none.csv"), "cannot read");
  const auto plain = f.dir.path() / "plain.csv";
  std::ofstream(plain) << "a,b\n1,2\n";
  expect_error(test::sh_quote(plain), "no kernel found");
  const auto thin = f.dir.path() / "thin.csv";
  std::ofstream(thin) << "\"Kernel Name\",\"k\"\n\"Address\",\"Source\"\n\"0x0\",\"NOP\"\n";
  expect_error(test::sh_quote(thin), "lacks the columns Instructions Executed");
  expect_error(test::sh_quote(f.csv) + " --kernel nothing_like_it",
               "no kernel whose name contains");
  expect_error(test::sh_quote(f.csv) + " --range 0x200 0x100", "--range needs two hex addresses");
}

}  // namespace
}  // namespace sgt
