// The worker protocol's trial request and response as JSON, on the CPU: what the client writes the
// worker reads back field for field, accuracy and its stress cases included; a request or response
// of a caller that knows nothing of accuracy reads as not asking for it and not measured.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "edge_cases.hpp"
#include "error.hpp"
#include "test_support.hpp"
#include "worker_protocol.hpp"

namespace sgt::eval {
namespace {

TrialRequest full_request() {
  TrialRequest t;
  t.name = "wt_x";
  t.family = "ws_tma";
  t.launch = "tensor_maps";
  t.cubin_path = "/cache/abc.cubin";
  t.cubin_sha256 = "abc";
  t.kernel = "_Z4tile";
  t.reduce_kernel = "_Z6reduce";
  t.pack_kernel = "_Z4pack";
  t.tile = LaunchTile{128, 64, 16, 3, 0, 4, 0, 98304};
  t.block = 384;
  t.warmup = 2;
  t.repetitions = 7;
  t.cut_after = 3;
  t.cut_ratio = 1.5;
  t.best_ms = 0.25;
  t.tolerance = 2e-4;
  t.checksum = true;
  t.l2 = L2Mode::rotate;
  t.accuracy = true;
  Problem p;
  p.M = 640, p.N = 384, p.K = 2048;
  p.layout = "TN";
  t.stress = accuracy_stress_cases(test::config(test::kSeed), p);
  return t;
}

TEST(WorkerProtocol, ATrialRequestReadsBackFieldForField) {
  const auto t = full_request();
  const auto j = nlohmann::json::parse(trial_request_json(t).dump());
  EXPECT_EQ(j.at("op"), "trial");
  EXPECT_EQ(j.at("accuracy"), true);
  ASSERT_EQ(j.at("stress").size(), 3u);
  const auto back = trial_request_from_json(j);
  EXPECT_EQ(back.name, t.name);
  EXPECT_EQ(back.family, t.family);
  EXPECT_EQ(back.launch, t.launch);
  EXPECT_EQ(back.cubin_path, t.cubin_path);
  EXPECT_EQ(back.cubin_sha256, t.cubin_sha256);
  EXPECT_EQ(back.kernel, t.kernel);
  EXPECT_EQ(back.reduce_kernel, t.reduce_kernel);
  EXPECT_EQ(back.pack_kernel, t.pack_kernel);
  EXPECT_EQ(back.tile.BM, 128);
  EXPECT_EQ(back.tile.BN, 64);
  EXPECT_EQ(back.tile.BK, 16);
  EXPECT_EQ(back.tile.split_k, 3);
  EXPECT_EQ(back.tile.tma, 1);  // from the launch ABI, not sent
  EXPECT_EQ(back.tile.pad_b, 0);
  EXPECT_EQ(back.tile.pad_a, 4);
  EXPECT_EQ(back.tile.smem_bytes, 98304);
  EXPECT_EQ(back.block, 384u);
  EXPECT_EQ(back.warmup, 2);
  EXPECT_EQ(back.repetitions, 7);
  EXPECT_EQ(back.cut_after, 3);
  EXPECT_EQ(back.cut_ratio, 1.5);
  EXPECT_EQ(back.best_ms, 0.25);
  EXPECT_EQ(back.tolerance, 2e-4);
  EXPECT_TRUE(back.checksum);
  EXPECT_EQ(back.l2, L2Mode::rotate);
  EXPECT_TRUE(back.accuracy);
  ASSERT_EQ(back.stress.size(), t.stress.size());
  for (size_t i = 0; i < t.stress.size(); ++i) {
    EXPECT_EQ(back.stress[i].label, t.stress[i].label);
    EXPECT_EQ(describe(back.stress[i]), describe(t.stress[i]));
  }
}

// accuracy defaults to false: a request that does not ask carries neither key, and one written
// without them (an older caller) reads as not asking.
TEST(WorkerProtocol, AccuracyIsAskedForOnlyWhenSet) {
  auto t = full_request();
  t.accuracy = false;
  const auto j = trial_request_json(t);
  EXPECT_FALSE(j.contains("accuracy"));
  EXPECT_FALSE(j.contains("stress"));
  auto back = trial_request_from_json(j);
  EXPECT_FALSE(back.accuracy);
  EXPECT_TRUE(back.stress.empty());
  EXPECT_EQ(TrialRequest{}.accuracy, false);

  // Without l2 and checksum too, as protocol 5 wrote a trial.
  auto old = j;
  old.erase("l2");
  old.erase("checksum");
  back = trial_request_from_json(old);
  EXPECT_EQ(back.l2, L2Mode::flush);
  EXPECT_FALSE(back.checksum);

  auto bad = j;
  bad["l2"] = "warm";
  EXPECT_THROW(trial_request_from_json(bad), Error);
  bad = j;
  bad["launch"] = "registers";
  EXPECT_THROW(trial_request_from_json(bad), Error);
  bad = j;
  bad["tile"]["BK"] = 0;
  EXPECT_THROW(trial_request_from_json(bad), Error);
}

TEST(WorkerProtocol, ATrialResponseReadsBackWithItsAccuracy) {
  TrialResponse r;
  r.status = TrialStatus::inaccurate;
  r.reason = "error ratio 2.4 on stress case underflow 256x128x1024 TN exceeds 1.05";
  r.verify_error = 3e-6;
  r.error_ratio = 1.01;
  r.stress_ratio = 2.4;
  r.stress_case = "underflow 256x128x1024 TN";
  r.checksum = "feed";
  auto j = nlohmann::json::parse(trial_response_json(r).dump());
  EXPECT_EQ(j.at("ok"), true);
  EXPECT_EQ(j.at("status"), "inaccurate");
  auto back = trial_response_from_json(j);
  EXPECT_EQ(back.status, TrialStatus::inaccurate);
  EXPECT_EQ(back.reason, r.reason);
  EXPECT_EQ(back.verify_error, r.verify_error);
  EXPECT_EQ(back.error_ratio, 1.01);
  EXPECT_EQ(back.stress_ratio, 2.4);
  EXPECT_EQ(back.stress_case, r.stress_case);
  EXPECT_EQ(back.checksum, "feed");

  // Not measured: -1, as a response without the keys (a worker not asked) reads.
  const TrialResponse none;
  back = trial_response_from_json(trial_response_json(none));
  EXPECT_EQ(back.error_ratio, -1);
  EXPECT_EQ(back.stress_ratio, -1);
  EXPECT_EQ(back.stress_case, "");
  j.erase("error_ratio");
  j.erase("stress_ratio");
  j.erase("stress_case");
  back = trial_response_from_json(j);
  EXPECT_EQ(back.error_ratio, -1);
  EXPECT_EQ(back.stress_ratio, -1);

  // A result with NaN or Inf: JSON has neither, so the ratio goes as 1e300, above every bound.
  r.error_ratio = std::numeric_limits<double>::infinity();
  r.verify_error = std::nan("");
  back = trial_response_from_json(nlohmann::json::parse(trial_response_json(r).dump()));
  EXPECT_EQ(back.error_ratio, 1e300);
  EXPECT_EQ(back.verify_error, 1e300);

  j["status"] = "lost";
  EXPECT_THROW(trial_response_from_json(j), Error);
}

}  // namespace
}  // namespace sgt::eval
