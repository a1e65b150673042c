// The edge-shape suite a winner is verified on: what it covers, derived from the config's tile.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

#include "edge_cases.hpp"
#include "problem.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

const EdgeCheck* find(const std::vector<EdgeCheck>& cases, const std::string& label) {
  for (const auto& c : cases) {
    if (c.label == label) return &c;
  }
  return nullptr;
}

TEST(EdgeCases, CoverTheIssuesShapesDerivedFromTheTile) {
  const auto c = test::config("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1");
  const auto cases = edge_cases(c, "NN");
  ASSERT_GE(cases.size(), 15u);
  auto shape = [&](const std::string& label) {
    const auto* e = find(cases, label);
    EXPECT_NE(e, nullptr) << label;
    return e ? e->problem.shape() : std::string();
  };
  EXPECT_EQ(shape("one"), "1x1x1");
  EXPECT_EQ(shape("tile-3"), "125x61x13");
  EXPECT_EQ(shape("tile+1"), "129x65x17");
  EXPECT_EQ(shape("K=0"), "133x71x0");
  EXPECT_EQ(shape("M=0"), "0x64x16");
  EXPECT_EQ(shape("N=0"), "128x0x16");
  // K not a multiple of BK, and primes.
  EXPECT_NE(find(cases, "K%BK")->problem.K % c.BK, 0);
  EXPECT_EQ(shape("primes"), "127x251x61");
  // Every label once, every case unrun.
  std::set<std::string> labels;
  for (const auto& e : cases) {
    EXPECT_TRUE(labels.insert(e.label).second) << e.label;
    EXPECT_FALSE(e.passed);
    EXPECT_EQ(e.error, -1);
  }
}

TEST(EdgeCases, LeadingDimensionsFollowTheLayoutAndPaddingIsExplicit) {
  const auto c = test::config("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1");
  for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
    const auto cases = edge_cases(c, layout);
    int padded = 0, offset = 0, beta_nonzero = 0, beta_zero = 0;
    for (const auto& e : cases) {
      EXPECT_EQ(e.problem.layout, layout);
      // Never below the stored row length (nor below 1, as BLAS requires).
      EXPECT_GE(e.lda, min_lda(e.problem)) << e.label;
      EXPECT_GE(e.ldb, min_ldb(e.problem)) << e.label;
      EXPECT_GE(e.ldc, min_ldc(e.problem)) << e.label;
      EXPECT_GE(e.lda, 1);
      if (e.lda > min_lda(e.problem)) ++padded;
      if (e.offset > 0) ++offset;
      (e.beta != 0.0f ? beta_nonzero : beta_zero)++;
    }
    EXPECT_GE(padded, 2) << layout;  // one float4-aligned padding, one that breaks alignment
    EXPECT_GE(offset, 2) << layout;
    EXPECT_GE(beta_nonzero, 3) << layout;
    EXPECT_GE(beta_zero, 10) << layout;  // beta = 0: C starts as NaN in the worker
    const auto* ld4 = find(cases, "ld+4");
    const auto* ld3 = find(cases, "ld+3");
    ASSERT_TRUE(ld4 && ld3);
    EXPECT_EQ(ld4->lda % 4, 0) << "ld+4 must keep rows 16-byte aligned";
    EXPECT_NE(ld3->ldc % 4, 0) << "ld+3 must break row alignment";
  }
  // The stored row length: K for A, M for A^T; N for B, K for B^T.
  Problem p;
  p.M = 7;
  p.N = 9;
  p.K = 11;
  p.layout = "TN";
  EXPECT_EQ(min_lda(p), 7);
  EXPECT_EQ(min_ldb(p), 9);
  p.layout = "NT";
  EXPECT_EQ(min_lda(p), 11);
  EXPECT_EQ(min_ldb(p), 11);
  p.K = 0;
  EXPECT_EQ(min_lda(p), 1);
}

TEST(EdgeCases, DeepKGivesEverySplitSeveralSlicesAndOneRaggedEnd) {
  for (const char* name :
       {"wt_128x64x16_w64x32_wn2_t4x4_n128_mb1", "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_k16"}) {
    const auto c = test::config(name);
    const auto* deep = find(edge_cases(c, "NN"), "deep-K");
    ASSERT_NE(deep, nullptr);
    const long long slices = deep->problem.K / c.BK;
    EXPECT_GE(slices, 3LL * c.SPLIT_K) << name;
    EXPECT_NE(deep->problem.K % c.BK, 0) << name;
  }
}

// The kernel's main loop takes edge tiles with clamped float4 loads when every operand allows
// float4s: these cases must qualify in every layout (pointers aligned, each leading dimension and
// each extent along which a float4 runs a multiple of 4) while leaving partial tiles in M and N.
TEST(EdgeCases, Float4EdgeCasesPutEdgeTilesOnTheMainLoopInEveryLayout) {
  for (const char* name : {"wt_128x64x16_w64x32_wn2_t4x4_n128_mb1",
                           "wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o1",
                           "wt_64x64x16_w32x32_wn2_t4x4_n128_mb2_k4"}) {
    const auto c = test::config(name);
    for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
      const auto cases = edge_cases(c, layout);
      int float4_edges = 0;
      for (const auto& e : cases) {
        if (e.label.rfind("edge-float4", 0) != 0) continue;
        ++float4_edges;
        const Problem& p = e.problem;
        EXPECT_EQ(e.offset, 0) << e.label;
        EXPECT_EQ(e.lda % 4, 0) << e.label << " " << layout;
        EXPECT_EQ(e.ldb % 4, 0) << e.label << " " << layout;
        EXPECT_EQ(p.M % 4, 0) << e.label;
        EXPECT_EQ(p.N % 4, 0) << e.label;
        EXPECT_EQ(p.K % 4, 0) << e.label;
        EXPECT_NE(p.M % c.BM, 0) << e.label << ": no partial tile in M";
        EXPECT_NE(p.N % c.BN, 0) << e.label << ": no partial tile in N";
      }
      EXPECT_EQ(float4_edges, 4) << name << " " << layout;
      EXPECT_EQ(find(cases, "edge-float4")->problem.K % c.BK, 0) << "whole slices only";
      EXPECT_NE(find(cases, "edge-float4-K%BK")->problem.K % c.BK, 0) << "a partial last slice";
      const auto* deep = find(cases, "edge-float4-deep-K");
      EXPECT_GE(deep->problem.K / c.BK, 3LL * c.SPLIT_K) << name;
    }
  }
}

// A TMA = 1 config is verified on the same shapes, with what its copies are served: A's and B's
// rows rounded up to whole float4s and offsets of whole float4s; C keeps its odd rows.
TEST(EdgeCases, TmaConfigsGetTheSameShapesWithRowsTheCopiesCanRead) {
  const auto plain = test::config("wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o3");
  auto tma = plain;
  tma.family = "ws_tma";
  for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
    SCOPED_TRACE(layout);
    const auto a = edge_cases(plain, layout), b = edge_cases(tma, layout);
    ASSERT_EQ(a.size(), b.size());
    bool odd_c = false, offset = false;
    for (size_t i = 0; i < a.size(); ++i) {
      SCOPED_TRACE(b[i].label);
      EXPECT_EQ(a[i].label, b[i].label);
      EXPECT_EQ(a[i].problem, b[i].problem);
      EXPECT_EQ(b[i].lda % 4, 0);
      EXPECT_EQ(b[i].ldb % 4, 0);
      EXPECT_GE(b[i].lda, a[i].lda);
      EXPECT_LT(b[i].lda, a[i].lda + 4);
      EXPECT_GE(b[i].ldb, a[i].ldb);
      EXPECT_LT(b[i].ldb, a[i].ldb + 4);
      EXPECT_EQ(b[i].ldc, a[i].ldc);
      EXPECT_EQ(b[i].offset, 4 * a[i].offset);
      odd_c = odd_c || b[i].ldc % 4 != 0;
      offset = offset || b[i].offset != 0;
    }
    EXPECT_TRUE(odd_c);
    EXPECT_TRUE(offset);
    // With PACK the kernel reads panels: the cases are the TMA = 0 config's, unrounded.
    auto packed = tma;
    packed.PACK = 1;
    auto plain_packed = plain;
    plain_packed.PACK = 1;
    const auto pc = edge_cases(packed, layout), pp = edge_cases(plain_packed, layout);
    ASSERT_EQ(pc.size(), pp.size());
    for (size_t i = 0; i < pc.size(); ++i) {
      EXPECT_EQ(pc[i].lda, pp[i].lda) << pc[i].label;
      EXPECT_EQ(pc[i].ldb, pp[i].ldb) << pc[i].label;
      EXPECT_EQ(pc[i].offset, pp[i].offset) << pc[i].label;
    }
  }
}

// The stress cases of a kernel's accuracy run on the trial's binary, so they must be problems it
// is served: the tuned problem's layout and depth (each size rounded up to a multiple of 64),
// aligned rows at their row lengths (a TMA config's copies read them as they are), no shape rule
// broken.
TEST(AccuracyStressCases, AreTheProblemsShapeWithInputsThatStressASplit) {
  auto tma = test::config("wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o3");
  tma.family = "ws_tma";
  auto tma_packed = tma;
  tma_packed.PACK = 1;
  const std::vector<WarpTileConfig> configs = {
      test::config(test::kSeed), test::config("wt_128x128x8_w64x32_wn2_t4x4_n256_mb1_s2_k4"),
      test::config("wt_64x128x16_w32x64_wn1_t4x4_n128_mb2_s2_p4_g8_o1_x1"), tma, tma_packed};
  for (const auto& c : configs) {
    for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
      for (const auto& [m, n, k] :
           {std::tuple{1000LL, 777LL, 1023LL}, std::tuple{4096LL, 4096LL, 4096LL},
            std::tuple{96LL, 96LL, 32768LL}}) {
        Problem problem;
        problem.M = m, problem.N = n, problem.K = k;
        problem.layout = layout;
        SCOPED_TRACE(to_name(c) + " " + problem.shape() + " " + layout);
        const auto cases = accuracy_stress_cases(c, problem);
        std::set<std::string> labels;
        for (const auto& e : cases) {
          SCOPED_TRACE(e.label);
          labels.insert(e.label);
          const Problem& p = e.problem;
          EXPECT_EQ(p.layout, layout);
          EXPECT_EQ(p.M, (m + 63) / 64 * 64);
          EXPECT_EQ(p.N, (n + 63) / 64 * 64);
          EXPECT_EQ(p.K, (k + 63) / 64 * 64);
          EXPECT_EQ(e.lda, min_lda(p));
          EXPECT_EQ(e.ldb, min_ldb(p));
          EXPECT_EQ(e.ldc, min_ldc(p));
          EXPECT_EQ(e.offset, 0);
          EXPECT_EQ(e.alpha, 1.0f);
          EXPECT_EQ(e.beta, 0.0f);
          EXPECT_TRUE(kernel_vec_loads(p));
          EXPECT_TRUE(check_shape(c, p).empty());
          EXPECT_EQ(e.error, -1);
        }
        EXPECT_EQ(labels, (std::set<std::string>{"exponents", "underflow", "cancellation"}));
      }
    }
  }
  // Deterministic.
  Problem p;
  p.M = 512, p.N = 384, p.K = 2048;
  p.layout = "NT";
  const auto a = accuracy_stress_cases(configs[1], p), b = accuracy_stress_cases(configs[1], p);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(describe(a[i]), describe(b[i]));
}

TEST(EdgeCases, DescribeNamesWhatDiffersFromAPackedCall) {
  const auto cases = edge_cases(test::config("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1"), "TN");
  EXPECT_EQ(describe(*find(cases, "one")), "1x1x1 TN");
  EXPECT_NE(describe(*find(cases, "ld+3")).find(" ld "), std::string::npos);
  EXPECT_NE(describe(*find(cases, "offset")).find(" off1"), std::string::npos);
  EXPECT_NE(describe(*find(cases, "alpha-beta")).find(" a1.5 b-0.75"), std::string::npos);
  // Same config and layout, same list: the suite is reproducible.
  const auto again = edge_cases(test::config("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1"), "TN");
  ASSERT_EQ(again.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(describe(again[i]), describe(cases[i]));
}

}  // namespace
}  // namespace sgt
