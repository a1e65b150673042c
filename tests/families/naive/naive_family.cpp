// The test family `naive`: everything a kernel family is (identity, names, rules, sources, NVRTC
// instance, launch shape), in one folder, for the test that adding a family needs nothing else.
// Its configs name it by its id, "naive" (no knob value is reserved for it); it reads BM, BN, TM,
// TN, NUM_THREADS and MIN_BLOCKS, and every other field holds one value.
#include "naive/naive_family.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

namespace sgt::test {

namespace {

const std::vector<RuleInfo>& naive_rules() {
  static const std::vector<RuleInfo> kRules = {
      {"naive_tile", "NUM_THREADS == (BM/TM)*(BN/TN): one TM x TN patch of C per thread", true},
      {"naive_fixed_fields",
       "the fields the naive kernel does not read hold one value: BK = WM = WN = 4, WNITER = 1, "
       "every knob its default (no split-K: the family has no reduction kernel)",
       false},
      {"naive_threads", "NUM_THREADS and MIN_BLOCKS*NUM_THREADS within the block and SM limits",
       false},
  };
  return kRules;
}

class Naive : public KernelFamily {
 public:
  Naive() {
    const auto path = std::filesystem::path(SGT_TEST_SOURCE_DIR) / "tests" / "families" / "naive" /
                      "sgemm_naive.cuh";
    std::ifstream f(path, std::ios::binary);
    text_.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    if (text_.empty()) throw std::runtime_error("cannot read " + path.string());
  }

  std::string_view id() const override { return "naive"; }
  std::string_view description() const override {
    return "naive SGEMM: one TM x TN patch of C per thread, from global memory (a test family)";
  }
  std::string_view name_prefix() const override { return "nv_"; }

  const std::vector<RuleInfo>& rules() const override { return naive_rules(); }
  void check(const WarpTileConfig& c, const Limits& limits,
             std::vector<RuleViolation>& out) const override {
    if (c.BM % c.TM != 0 || c.BN % c.TN != 0 || (c.BM / c.TM) * (c.BN / c.TN) != c.NUM_THREADS) {
      out.push_back({"naive_tile", fmt::format("{}x{} patches of a {}x{} tile are not {} threads",
                                               c.TM, c.TN, c.BM, c.BN, c.NUM_THREADS)});
    }
    WarpTileConfig fixed;
    fixed.BM = c.BM, fixed.BN = c.BN, fixed.TM = c.TM, fixed.TN = c.TN;
    fixed.NUM_THREADS = c.NUM_THREADS, fixed.MIN_BLOCKS = c.MIN_BLOCKS;
    fixed.BK = fixed.WM = fixed.WN = 4;
    fixed.WNITER = 1;
    fixed.family = id();
    if (!(c == fixed)) {
      out.push_back({"naive_fixed_fields",
                     "the naive kernel reads only BM, BN, TM, TN, NUM_THREADS and MIN_BLOCKS; "
                     "BK, WM, WN must be 4, WNITER 1 and every knob its default"});
    }
    if (c.NUM_THREADS > limits.max_threads_per_block ||
        1LL * c.NUM_THREADS * c.MIN_BLOCKS > limits.max_threads_per_sm) {
      out.push_back({"naive_threads",
                     fmt::format("{} threads x MIN_BLOCKS {} exceed the block ({}) or SM ({}) "
                                 "limit",
                                 c.NUM_THREADS, c.MIN_BLOCKS, limits.max_threads_per_block,
                                 limits.max_threads_per_sm)});
    }
  }

  std::vector<KernelSourceFile> sources() const override { return {{"sgemm_naive.cuh", text_}}; }
  std::string name_expression(const WarpTileConfig& c, std::string_view layout,
                              bool) const override {
    auto flag = [](bool b) { return b ? "true" : "false"; };
    return fmt::format("sgemm_naive<{},{},{},{},{},{},{},{}>", c.BM, c.BN, c.TM, c.TN,
                       c.NUM_THREADS, c.MIN_BLOCKS, flag(layout[0] == 'T'), flag(layout[1] == 'T'));
  }
  std::pair<std::string_view, bool> instance(const WarpTileConfig&, std::string_view layout,
                                             bool) const override {
    return {layout, false};  // scalar loads only: one instance per layout
  }
  bool has_split_k_reduce() const override { return false; }
  int block_threads(const WarpTileConfig& c) const override { return c.NUM_THREADS; }
  long long block_shared_bytes(const WarpTileConfig&, bool, bool) const override { return 0; }

 protected:
  std::string text_;
};

// The naive kernel with its operands rounded to TF32 as it loads them (SGT_NAIVE_TF32): a kernel
// of the precision class fp32-accurate whose error against FP64 is far above cuBLAS FP32's, for
// the test that the tuner measures it and records it inaccurate.
class NaiveTf32 final : public Naive {
 public:
  NaiveTf32() : program_("#define SGT_NAIVE_TF32 1\n" + text_) {}
  std::string_view id() const override { return "naive_tf32"; }
  std::string_view description() const override {
    return "the naive kernel on operands rounded to TF32 (a test family of a non-strict "
           "precision class)";
  }
  std::string_view name_prefix() const override { return "nt_"; }
  Precision precision() const override { return Precision::fp32_accurate; }
  std::vector<KernelSourceFile> sources() const override { return {{"sgemm_naive.cuh", program_}}; }

 private:
  std::string program_;
};

}  // namespace

std::unique_ptr<KernelFamily> make_naive_family() {
  return std::make_unique<Naive>();
}

std::unique_ptr<KernelFamily> make_naive_tf32_family() {
  return std::make_unique<NaiveTf32>();
}

WarpTileConfig naive_tf32_config(int BM, int BN, int TM, int TN) {
  auto c = naive_config(BM, BN, TM, TN);
  c.family = "naive_tf32";
  return c;
}

WarpTileConfig naive_config(int BM, int BN, int TM, int TN) {
  WarpTileConfig c;
  c.BM = BM, c.BN = BN, c.TM = TM, c.TN = TN;
  c.NUM_THREADS = (BM / TM) * (BN / TN);
  c.MIN_BLOCKS = 1;
  c.BK = c.WM = c.WN = 4;
  c.WNITER = 1;
  c.family = "naive";
  return c;
}

}  // namespace sgt::test
