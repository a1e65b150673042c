// A tune on several GPUs, on the CPU: replay evaluators stand for the devices. Every candidate is
// measured exactly once, on one of them; the winner is the one a single device finds; a device
// that is lost mid-tune hands its candidate on; GPUs of different models refuse to share a tune.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "dataset.hpp"
#include "error.hpp"
#include "replay_evaluator.hpp"
#include "space.hpp"
#include "test_support.hpp"
#include "replay_support.hpp"
#include "tune.hpp"

namespace sgt {
namespace {

using eval::Recording;
using eval::ReplayEvaluator;

using test::load;
using test::MemoryStore;
using test::shipped;
using test::survivors;

// Holds each device at its first measurement until every device has reached one (or 30 s have
// passed), so that devices measuring at once on threads all take part however the threads are
// scheduled: a replay answers at once, and one thread could otherwise take every candidate.
struct Gate {
  explicit Gate(int n) : n(n) {}
  void arrive() {
    std::unique_lock lock(mu);
    ++arrived;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(30), [&] { return arrived >= n; });
  }
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  const int n;
};

// A device in front of a replay: the same answers, but it may be lost after `lose_after`
// measurements (its worker could not be replaced), and it may claim to be a real GPU, so that the
// session measures on all devices at once, one thread each.
class Device final : public eval::Evaluator {
 public:
  Device(const Recording& rec, int index, std::string kind = "replay", int lose_after = -1)
      : replay_(rec, 2), kind_(std::move(kind)), lose_after_(lose_after) {
    info_ = replay_.info();
    info_.device = index;
    info_.why = fmt::format("device {} of the test", index);
  }
  const eval::WorkerInfo& info() const override { return info_; }
  eval::Compiled build(const WarpTileConfig& c, const Problem& p) override {
    return replay_.build(c, p);
  }
  TimeStats set_problem(const eval::ProblemSetup& s) override { return replay_.set_problem(s); }
  TimeStats baseline(int reps) override { return replay_.baseline(reps); }
  eval::TrialResponse run_trial(const eval::TrialRequest& req,
                                std::chrono::milliseconds t) override {
    if (gate && trials_ == 0) gate->arrive();
    if (lose_after_ >= 0 && trials_ >= lose_after_)
      throw Error(fmt::format("GPU worker on device {} could not be restarted", info_.device));
    ++trials_;
    return replay_.run_trial(req, t);
  }
  std::vector<EdgeCheck> verify_cases(const eval::TrialRequest& req,
                                      const std::vector<EdgeCheck>& c, std::uint64_t seed,
                                      std::chrono::milliseconds t) override {
    return replay_.verify_cases(req, c, seed, t);
  }
  int restarts() const override { return 0; }
  double elapsed_s() const override { return replay_.elapsed_s(); }
  eval::EvaluatorTraits traits() const override {
    return {kind_, kind_ == "replay", kind_ == "replay"};
  }
  int trials() const { return trials_; }
  Gate* gate = nullptr;

 private:
  ReplayEvaluator replay_;
  eval::WorkerInfo info_;
  std::string kind_;
  int lose_after_;
  int trials_ = 0;
};

tune::TuneOptions options(const Recording& r, std::vector<WarpTileConfig> candidates) {
  tune::TuneOptions o;
  o.problem = r.problem;
  o.candidates = std::move(candidates);
  o.top_k = 3;
  o.seed = 11;
  o.compile_threads = 2;
  return o;
}

struct Run {
  tune::TuneReport report;
  std::vector<std::string> screened;  // in the order stored
};

Run tune_on(const Recording& rec, const tune::TuneOptions& o,
            std::vector<std::unique_ptr<Device>>& devices) {
  ReplayEvaluator builder(rec, 2);
  eval::Devices d;
  for (auto& dev : devices) d.lanes.push_back(dev.get());
  d.builder = &builder;
  MemoryStore store;
  auto r = tune::run_tune(o, d, store);
  return {std::move(r), store.screened()};
}

std::vector<std::unique_ptr<Device>> devices(const Recording& rec, int n,
                                             std::string kind = "replay") {
  std::vector<std::unique_ptr<Device>> out;
  for (int i = 0; i < n; ++i) out.push_back(std::make_unique<Device>(rec, i, kind));
  return out;
}

void expect_each_once(const std::vector<std::string>& screened, size_t candidates) {
  std::set<std::string> names(screened.begin(), screened.end());
  EXPECT_EQ(names.size(), screened.size()) << "a candidate was measured twice";
  EXPECT_EQ(names.size(), candidates) << "a candidate was lost";
}

TEST(MultiDeviceTune, FourReplayDevicesMeasureEveryCandidateOnceAndPickTheSameWinner) {
  const auto rec = load(shipped("1024x1024x1024-NN"));
  auto o = options(rec, survivors(rec.space, rec.problem));
  const size_t n = o.candidates.size();
  ASSERT_GT(n, 1000u);

  ReplayEvaluator one(rec, 2);
  MemoryStore store;
  const auto single = tune::run_tune(o, one, store);
  ASSERT_FALSE(single.finalists.empty());

  auto four = devices(rec, 4);
  const auto a = tune_on(rec, o, four);
  EXPECT_EQ(a.report.measured, static_cast<int>(n));
  expect_each_once(a.screened, n);
  ASSERT_EQ(a.report.devices.size(), 4u);
  int sum = 0;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a.report.devices[i].info.device, static_cast<int>(i));
    // What failed to build is recorded without running: a device runs at most what it took.
    EXPECT_LE(four[i]->trials(), a.report.devices[i].measured);
    EXPECT_GT(a.report.devices[i].measured, static_cast<int>(n / 8)) << "device " << i << " idled";
    EXPECT_TRUE(a.report.devices[i].lost.empty());
    sum += a.report.devices[i].measured;
  }
  EXPECT_EQ(sum, static_cast<int>(n));
  ASSERT_FALSE(a.report.finalists.empty());
  EXPECT_EQ(a.report.finalists.front().trial.config_name,
            single.finalists.front().trial.config_name);
  EXPECT_EQ(a.report.worker.device, 0);  // the finalists are re-timed on one GPU: the first
  // The devices measure side by side, each about a quarter of the recorded measuring time; the
  // tune's clock is the furthest along of them and the compiler (here the compiler: 2 threads).
  double lanes = 0, longest = 0;
  for (const auto& d : four) lanes += d->elapsed_s(), longest = std::max(longest, d->elapsed_s());
  EXPECT_GT(lanes, 0);
  EXPECT_LT(longest, 0.3 * lanes);
  EXPECT_LE(a.report.evaluator_s, single.evaluator_s);

  // Deterministic: the same devices take the same candidates in the same order.
  auto again = devices(rec, 4);
  const auto b = tune_on(rec, o, again);
  EXPECT_EQ(b.screened, a.screened);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(again[i]->trials(), four[i]->trials());
}

TEST(MultiDeviceTune, DevicesMeasuringAtOnceOnThreadsMeasureEachCandidateOnce) {
  const auto rec = load(shipped("512x2048x512-NT"));
  auto o = options(rec, survivors("quick+tma", rec.problem));
  ReplayEvaluator one(rec, 2);
  MemoryStore store;
  const auto single = tune::run_tune(o, one, store);
  auto three = devices(rec, 3, "test-gpu");  // not a replay: one thread per device
  Gate gate(3);
  for (auto& d : three) d->gate = &gate;
  const auto r = tune_on(rec, o, three);
  expect_each_once(r.screened, o.candidates.size());
  EXPECT_EQ(r.report.measured, static_cast<int>(o.candidates.size()));
  ASSERT_FALSE(r.report.finalists.empty());
  EXPECT_EQ(r.report.finalists.front().trial.config_name,
            single.finalists.front().trial.config_name);
  for (const auto& d : three) EXPECT_GT(d->trials(), 0);
}

TEST(MultiDeviceTune, ALostDeviceHandsItsCandidateOnAndNothingIsMeasuredTwice) {
  const auto rec = load(shipped("512x2048x512-NT"));
  auto o = options(rec, survivors("quick+tma", rec.problem));
  // Replays take turns, so the lost device measures exactly seven first. Devices on threads may
  // be scheduled in any order; the gate makes each take a candidate, and the lost one is lost at
  // that first candidate, so the count it measured is known however the threads run.
  for (const std::string kind : {"replay", "test-gpu"}) {
    SCOPED_TRACE(kind);
    const bool threads = kind != "replay";
    const int lose_after = threads ? 0 : 7;
    std::vector<std::unique_ptr<Device>> devs;
    devs.push_back(std::make_unique<Device>(rec, 0, kind));
    devs.push_back(std::make_unique<Device>(rec, 1, kind, lose_after));
    devs.push_back(std::make_unique<Device>(rec, 2, kind));
    Gate gate(3);
    if (threads)
      for (auto& d : devs) d->gate = &gate;
    const auto r = tune_on(rec, o, devs);
    expect_each_once(r.screened, o.candidates.size());
    ASSERT_EQ(r.report.devices.size(), 3u);
    EXPECT_EQ(r.report.devices[1].measured, lose_after);
    EXPECT_NE(r.report.devices[1].lost.find("could not be restarted"), std::string::npos);
    EXPECT_TRUE(r.report.devices[0].lost.empty());
    EXPECT_FALSE(r.report.finalists.empty());
  }
  // The first device lost: the finalists go to the next one still there.
  std::vector<std::unique_ptr<Device>> devs;
  devs.push_back(std::make_unique<Device>(rec, 0, "replay", 3));
  devs.push_back(std::make_unique<Device>(rec, 1, "replay"));
  const auto r = tune_on(rec, o, devs);
  expect_each_once(r.screened, o.candidates.size());
  EXPECT_EQ(r.report.worker.device, 1);
  // Every device lost: the tune fails, naming each.
  std::vector<std::unique_ptr<Device>> gone;
  gone.push_back(std::make_unique<Device>(rec, 0, "replay", 2));
  gone.push_back(std::make_unique<Device>(rec, 1, "replay", 2));
  try {
    tune_on(rec, o, gone);
    ADD_FAILURE() << "a tune with every device lost succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("every GPU of the tune was lost"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("GPU 1"), std::string::npos);
  }
}

TEST(MultiDeviceTune, GpusOfDifferentModelsRefuseToShareATune) {
  const auto rec = load(shipped("512x2048x512-NT"));
  auto other = rec;
  other.gpu.sm_count = 114;
  std::vector<std::unique_ptr<Device>> devs;
  devs.push_back(std::make_unique<Device>(rec, 0));
  devs.push_back(std::make_unique<Device>(other, 1));
  auto o = options(rec, survivors("quick", rec.problem));
  MemoryStore store;
  try {
    tune_on(rec, o, devs);
    ADD_FAILURE() << "a tune over two GPU models ran";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("GPU 1 cannot share a tune with GPU 0: 132 SMs against 114"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sgt
