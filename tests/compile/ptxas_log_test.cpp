// parse_ptxas_info against logs captured verbatim from real NVRTC 13.0 and nvcc 13.0 runs (sm_90),
// so the parser is held to ptxas' actual wording rather than to a guess of it.
#include <gtest/gtest.h>

#include "nvrtc_compiler.hpp"

namespace {

using sgt::gpu::parse_ptxas_info;

constexpr const char* kSeedEntry =
    "_Z14sgemm_warptileILi128ELi64ELi16ELi64ELi32ELi2ELi4ELi4ELi128ELi1EEviiifPKfS1_fPf";
constexpr const char* kHeavyEntry =
    "_Z14sgemm_warptileILi128ELi256ELi16ELi64ELi64ELi4ELi8ELi4ELi256ELi2EEviiifPKfS1_fPf";

// NVRTC 13.0 log of one program holding two name expressions: the seed config, then
// wt_128x256x16_w64x64_wn4_t8x4_n256_mb2 (128 accumulators, 256 threads, MIN_BLOCKS=2, so ptxas
// must fit 128 registers and spills).
constexpr const char* kTwoEntryNvrtcLog =
    R"(ptxas info    : 8 bytes gmem
ptxas info    : Compiling entry function '_Z14sgemm_warptileILi128ELi64ELi16ELi64ELi32ELi2ELi4ELi4ELi128ELi1EEviiifPKfS1_fPf' for 'sm_90'
ptxas info    : Function properties for _Z14sgemm_warptileILi128ELi64ELi16ELi64ELi32ELi2ELi4ELi4ELi128ELi1EEviiifPKfS1_fPf
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 118 registers, used 1 barriers, 12288 bytes smem
ptxas info    : Compile time = 139.870 ms
ptxas info    : Compiling entry function '_Z14sgemm_warptileILi128ELi256ELi16ELi64ELi64ELi4ELi8ELi4ELi256ELi2EEviiifPKfS1_fPf' for 'sm_90'
ptxas info    : Function properties for _Z14sgemm_warptileILi128ELi256ELi16ELi64ELi64ELi4ELi8ELi4ELi256ELi2EEviiifPKfS1_fPf
ptxas         .     728 bytes stack frame, 3052 bytes spill stores, 2812 bytes spill loads
ptxas info    : Used 128 registers, used 1 barriers, 728 bytes cumulative stack size, 24576 bytes smem
ptxas info    : Compile time = 417.472 ms
)";

// nvcc 13.0 -Xptxas=-v on the seed config: the stack line has no "ptxas ." prefix there.
constexpr const char* kNvccLog =
    R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z14sgemm_warptileILi128ELi64ELi16ELi64ELi32ELi2ELi4ELi4ELi128ELi1EEviiifPKfS1_fPf' for 'sm_90'
ptxas info    : Function properties for _Z14sgemm_warptileILi128ELi64ELi16ELi64ELi32ELi2ELi4ELi4ELi128ELi1EEviiifPKfS1_fPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 118 registers, used 1 barriers, 12288 bytes smem
ptxas info    : Compile time = 74.427 ms
)";

// NVRTC 13.0 on a config whose static shared memory (64 KB) is over the 48 KB limit:
// nvrtcCompileProgram returned NVRTC_ERROR_COMPILATION with exactly this log, no error line.
constexpr const char* kOversizedSharedLog =
    R"(ptxas info    : 8 bytes gmem
ptxas info    : Compiling entry function '_Z14sgemm_warptileILi256ELi256ELi32ELi64ELi32ELi1ELi8ELi8ELi1024ELi1EEviiifPKfS1_fPf' for 'sm_90'
ptxas info    : Function properties for _Z14sgemm_warptileILi256ELi256ELi32ELi64ELi32ELi1ELi8ELi8ELi1024ELi1EEviiifPKfS1_fPf
ptxas         .     1224 bytes stack frame, 4608 bytes spill stores, 4560 bytes spill loads
ptxas info    : Used 64 registers, used 1 barriers, 1224 bytes cumulative stack size, 65536 bytes smem
ptxas info    : Compile time = 341.691 ms
)";

// NVRTC 13.0 on an instantiation that violates a static_assert: the front end stops, ptxas never
// runs (first error of four, verbatim).
constexpr const char* kStaticAssertLog =
    R"(sgemm_warptile.cuh(22): error: static assertion failed with "wmiter_divisibility: WM*WN must be a multiple of 32*TM*TN*WNITER"
    static_assert(g.WMITER >= 1 && g.WMITER * kWarpSize * TM * TN * WNITER == WM * WN,
    ^
          detected during instantiation of "void sgemm_warptile<BM,BN,BK,WM,WN,WNITER,TM,TN,NUM_THREADS,MIN_BLOCKS>(int, int, int, float, const float *, const float *, float, float *) [with BM=128, BN=64, BK=16, WM=64, WN=32, WNITER=2, TM=8, TN=8, NUM_THREADS=128, MIN_BLOCKS=1]"

4 errors detected in the compilation of "sgemm_warptile.cuh".
)";

TEST(PtxasLog, NamedEntryGetsItsOwnNumbers) {
  const auto heavy = parse_ptxas_info(kTwoEntryNvrtcLog, kHeavyEntry);
  ASSERT_TRUE(heavy.found);
  EXPECT_EQ(heavy.registers, 128);
  EXPECT_EQ(heavy.stack_bytes, 728);
  EXPECT_EQ(heavy.spill_store_bytes, 3052);
  EXPECT_EQ(heavy.spill_load_bytes, 2812);
  EXPECT_EQ(heavy.shared_bytes, 24576);

  const auto seed = parse_ptxas_info(kTwoEntryNvrtcLog, kSeedEntry);
  ASSERT_TRUE(seed.found);
  EXPECT_EQ(seed.registers, 118);
  EXPECT_EQ(seed.stack_bytes, 0);
  EXPECT_EQ(seed.spill_store_bytes, 0);
  EXPECT_EQ(seed.spill_load_bytes, 0);
  EXPECT_EQ(seed.shared_bytes, 12288);
}

TEST(PtxasLog, WithoutAnEntryTheFirstEntryCounts) {
  const auto first = parse_ptxas_info(kTwoEntryNvrtcLog);
  ASSERT_TRUE(first.found);
  EXPECT_EQ(first.registers, 118);
  EXPECT_EQ(first.stack_bytes, 0);
  EXPECT_EQ(first.shared_bytes, 12288);
}

TEST(PtxasLog, NvccWordingParsesTheSame) {
  const auto info = parse_ptxas_info(kNvccLog, kSeedEntry);
  ASSERT_TRUE(info.found);
  EXPECT_EQ(info.registers, 118);
  EXPECT_EQ(info.stack_bytes, 0);
  EXPECT_EQ(info.spill_store_bytes, 0);
  EXPECT_EQ(info.spill_load_bytes, 0);
  EXPECT_EQ(info.shared_bytes, 12288);
}

TEST(PtxasLog, FailedCompileStillReportsSharedMemory) {
  const auto info = parse_ptxas_info(kOversizedSharedLog);
  ASSERT_TRUE(info.found);
  EXPECT_EQ(info.registers, 64);
  EXPECT_EQ(info.shared_bytes, 65536);
  EXPECT_EQ(info.stack_bytes, 1224);
  EXPECT_EQ(info.spill_store_bytes, 4608);
  EXPECT_EQ(info.spill_load_bytes, 4560);
}

TEST(PtxasLog, AbsentReportsAreNotFound) {
  EXPECT_FALSE(parse_ptxas_info(kStaticAssertLog).found);
  EXPECT_FALSE(parse_ptxas_info("").found);
  // An entry that is not in the log must not borrow another entry's numbers.
  const auto other = parse_ptxas_info(kNvccLog, kHeavyEntry);
  EXPECT_FALSE(other.found);
  EXPECT_EQ(other.registers, 0);
  EXPECT_EQ(other.shared_bytes, 0);
}

TEST(PtxasLog, WindowsLineEndingsAreTolerated) {
  std::string crlf;
  for (const char ch : std::string(kTwoEntryNvrtcLog)) {
    if (ch == '\n') crlf += '\r';
    crlf += ch;
  }
  const auto heavy = parse_ptxas_info(crlf, kHeavyEntry);
  ASSERT_TRUE(heavy.found);
  EXPECT_EQ(heavy.registers, 128);
  EXPECT_EQ(heavy.spill_load_bytes, 2812);
}

}  // namespace
