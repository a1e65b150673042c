// --gpu's one vocabulary (gpu_select.hpp): what each text means, and which GPU names a name picks.
#include <gtest/gtest.h>

#include "error.hpp"
#include "gpu_select.hpp"

namespace sgt {
namespace {

TEST(GpuSelect, AutoAnIndexOrAName) {
  EXPECT_EQ(parse_gpu_selector("auto").kind, GpuSelector::Kind::automatic);
  EXPECT_EQ(parse_gpu_selector("AUTO").kind, GpuSelector::Kind::automatic);
  const auto i = parse_gpu_selector("3");
  EXPECT_EQ(i.kind, GpuSelector::Kind::index);
  EXPECT_EQ(i.index, 3);
  EXPECT_EQ(i.text(), "3");
  const auto n = parse_gpu_selector("h200");
  EXPECT_EQ(n.kind, GpuSelector::Kind::name);
  EXPECT_EQ(n.name, "h200");
  EXPECT_EQ(n.text(), "h200");
  // A key, and a name that starts with a digit, are names.
  EXPECT_EQ(parse_gpu_selector("NVIDIA H200@sm_90/132").kind, GpuSelector::Kind::name);
  EXPECT_EQ(parse_gpu_selector("4090").kind, GpuSelector::Kind::index);
  EXPECT_EQ(parse_gpu_selector("4090 RTX").kind, GpuSelector::Kind::name);
}

TEST(GpuSelect, EmptyNegativeAndHugeAreBadInput) {
  EXPECT_THROW(parse_gpu_selector(""), InputError);
  EXPECT_THROW(parse_gpu_selector("-1"), InputError);
  EXPECT_THROW(parse_gpu_selector("99999999999999999999"), InputError);
}

TEST(GpuSelect, AWholeNameOrKeyBeatsAPartAndCaseIsIgnored) {
  const std::vector<std::string> names = {"NVIDIA H200", "NVIDIA H200 NVL",
                                          "NVIDIA A100-SXM4-80GB"};
  const std::vector<std::string> keys = {"NVIDIA H200@sm_90/132", "NVIDIA H200 NVL@sm_90/132",
                                         "NVIDIA A100-SXM4-80GB@sm_80/108"};
  EXPECT_EQ(match_gpu_names(names, keys, "nvidia h200"), (std::vector<size_t>{0}));
  EXPECT_EQ(match_gpu_names(names, keys, "NVIDIA H200 NVL@sm_90/132"), (std::vector<size_t>{1}));
  EXPECT_EQ(match_gpu_names(names, keys, "a100"), (std::vector<size_t>{2}));
  EXPECT_EQ(match_gpu_names(names, keys, "h200"), (std::vector<size_t>{0, 1}));  // ambiguous
  EXPECT_EQ(match_gpu_names(names, keys, "nvl"), (std::vector<size_t>{1}));
  EXPECT_TRUE(match_gpu_names(names, keys, "rtx").empty());
  // Keys match exactly only: a part of a key is not a part of a name.
  EXPECT_TRUE(match_gpu_names(names, keys, "sm_90").empty());
  // Several devices of one model all match (a device index then picks one).
  EXPECT_EQ(match_gpu_names({"NVIDIA H200", "NVIDIA H200"}, {}, "h200"),
            (std::vector<size_t>{0, 1}));
}

TEST(GpuSelect, AllOrAListOfIndicesIsASetForATune) {
  EXPECT_EQ(parse_gpu_set("all").kind, GpuSet::Kind::all);
  EXPECT_EQ(parse_gpu_set("ALL").kind, GpuSet::Kind::all);
  const auto l = parse_gpu_set("0,2,3");
  EXPECT_EQ(l.kind, GpuSet::Kind::list);
  EXPECT_EQ(l.indices, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(l.text(), "0,2,3");
  EXPECT_TRUE(l.several());
  const auto one = parse_gpu_set("h200");
  EXPECT_FALSE(one.several());
  EXPECT_EQ(one.one.kind, GpuSelector::Kind::name);
  EXPECT_EQ(parse_gpu_set("1").one.index, 1);
  for (const char* bad : {"0,,1", "0,1,", ",0", "0,-1", "0,h200", "1,1", "0, 1"})
    EXPECT_THROW(parse_gpu_set(bad), sgt::InputError) << bad;
  // A command that runs on one GPU says so instead of looking for a GPU named "all".
  EXPECT_THROW(parse_gpu_selector("all"), sgt::InputError);
  EXPECT_THROW(parse_gpu_selector("0,1"), sgt::InputError);
}

}  // namespace
}  // namespace sgt
