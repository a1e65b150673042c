// Family warptile_ring's config rules and shape rule: the cp.async ring's stages, its STAGE_C,
// its architecture, its buffers in every layout's instance (ring_shared_memory), and the layouts
// whose operands its straight copies take.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config.hpp"
#include "index_sim_test_util.hpp"
#include "problem.hpp"

namespace sgt {
namespace {

using sim_test::named;
using sim_test::rule_names;

// Family warptile_ring: STAGES 3 or 4 (1 and 2 are warptile's), STAGE_C 0, sm_80 and later; no
// prefetch registers in register_cap (its copies bypass them) and its buffers in every layout's
// instance in ring_shared_memory; its shape rule admits only the problems whose instance runs the
// ring (operands that take float4s, or PACK), and its names are warptile's with the prefix wr_.
TEST(ConfigRing, StagesThreeAndFourFromComputeCapabilityEight) {
  auto c = named("wr_128x64x16_w64x32_wn2_t4x4_n128_mb1_s3_p4");
  EXPECT_EQ(c.family, "warptile_ring");
  EXPECT_EQ(to_name(c), "wr_128x64x16_w64x32_wn2_t4x4_n128_mb1_s3_p4");
  EXPECT_TRUE(check(c).empty());
  c.STAGES = 4;
  EXPECT_EQ(rule_names(check(c)),
            (std::vector<std::string>{"shared_memory", "ring_shared_memory"}));
  // Four k-major buffers of 128x64x16 are exactly the 48 KB of static shared memory, but the
  // k-contiguous ones of NT are not: rows of 16 k and 4 floats of pad every TM (TN) = 4 rows,
  // 4 * ((128 + 64) * 16 + (32 + 16) * 4) * 4 bytes.
  c.PAD_A = 0;
  const auto v4 = check(c);
  ASSERT_EQ(rule_names(v4), (std::vector<std::string>{"ring_shared_memory"}));
  EXPECT_NE(v4.front().reason.find("52224"), std::string::npos) << v4.front().reason;
  Limits roomy;
  roomy.max_static_shared_bytes = 52224;
  EXPECT_TRUE(check(c, roomy).empty());
  c.STAGES = 2;
  EXPECT_EQ(rule_names(check(c)), (std::vector<std::string>{"ring_stages"}));
  c.STAGES = 5;  // and five buffers are over the 48 KB
  EXPECT_EQ(rule_names(check(c)),
            (std::vector<std::string>{"ring_stages", "shared_memory", "ring_shared_memory"}));
  c.STAGES = 3;
  c.PAD_A = 4;
  c.STAGE_C = 1;
  EXPECT_EQ(rule_names(check(c)), (std::vector<std::string>{"ring_stage_c"}));
  c.STAGE_C = 0;
  Limits turing;
  turing.compute_capability = 75;
  const auto v = check(c, turing);
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{"ring_architecture"}));
  EXPECT_NE(v.front().reason.find("sm_80"), std::string::npos) << v.front().reason;
  // The double buffer's prefetch registers are not counted: 5 blocks of 128 threads cap a thread
  // at 96 registers, which hold 64 accumulators and 16 fragments, but not 24 more for the double
  // buffer's next slice (4 A and 2 B float4s).
  auto warptile = named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb5_s2_p4");
  auto ring = warptile;
  ring.family = "warptile_ring";
  ring.STAGES = 3;
  EXPECT_EQ(rule_names(check(warptile)), (std::vector<std::string>{"register_cap"}));
  EXPECT_TRUE(check(ring).empty()) << check(ring).front().reason;
}

// Every copy of the ring is straight, into k-major or k-contiguous buffers by layout: the shape
// rule refuses only operands that refuse float4s (an odd extent where a float4 runs along it).
TEST(ConfigRing, TheShapeRuleAdmitsEveryLayoutWhoseOperandsTakeFloat4s) {
  auto c = named("wr_128x64x16_w64x32_wn2_t4x4_n128_mb1_s3_p4");
  auto shape = [&](const std::string& layout, long long M, long long N) {
    Problem p;
    p.M = M;
    p.N = N;
    p.K = 1024;
    p.layout = layout;
    return rule_names(check_shape(c, p, Limits{}));
  };
  const std::vector<std::string> none, ring{"shape_warptile_ring"};
  for (const char* layout : {"NN", "NT", "TN", "TT"})
    EXPECT_EQ(shape(layout, 1024, 512), none) << layout;
  // M odd: A^T's rows (TN, TT) refuse float4s; A's rows of k (NN, NT) take them.
  EXPECT_EQ(shape("TN", 1023, 512), ring);
  EXPECT_EQ(shape("TT", 1023, 512), ring);
  EXPECT_EQ(shape("NN", 1023, 512), none);
  // N odd: B's rows of n (NN, TN) refuse them; B^T's rows of k (NT, TT) take them.
  EXPECT_EQ(shape("NN", 1024, 511), ring);
  EXPECT_EQ(shape("NT", 1023, 511), none);
  // PACK runs the TN float4 instance whatever the layout.
  c.PACK = 1;
  for (const char* layout : {"NN", "NT", "TN", "TT"}) EXPECT_EQ(shape(layout, 1023, 77), none);
}

}  // namespace
}  // namespace sgt
