// What the GPU commands do on a machine without a GPU (CI's case): a clear message, exit code 1,
// and nothing created. Skipped where a device is present.
#include <gtest/gtest.h>

#include "gpu_support.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

TEST(NoGpu, TuneSaysSoAndWritesNothing) {
  if (test::have_gpu()) GTEST_SKIP() << "a CUDA device is present";
  test::TempDir dir;
  const auto db = dir.path() / "t.db";
  const auto cache = dir.path() / "cache";
  const auto r = test::run_cli("tune --space quick --db '" + db.string() + "' --cache-dir '" +
                               cache.string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("no usable CUDA device"), std::string::npos) << r.out;
  // With no driver (the runtime's "driver version is insufficient") or no GPU it says that, and
  // names what runs without one; only a driver too old for the runtime is told to update it.
  if (r.out.find("install a newer driver") == std::string::npos) {
    EXPECT_NE(r.out.find("no NVIDIA GPU or driver on this machine"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("`sgemm-tune tune --dry-run"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("`sgemm-tune tune --replay datasets/h200/"), std::string::npos) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(db));
  EXPECT_FALSE(std::filesystem::exists(cache));
}

TEST(NoGpu, QueryAutoFallsBackToTheDefaultConfig) {
  if (test::have_gpu()) GTEST_SKIP() << "a CUDA device is present";
  test::TempDir dir;
  const auto r = test::run_cli("query --gpu auto --shape 4096x4096x4096 --db '" +
                               (dir.path() / "none.db").string() + "'");
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "none.db"));
}

}  // namespace
}  // namespace sgt
