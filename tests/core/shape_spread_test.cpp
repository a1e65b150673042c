// Whole items spread over devices (shape_spread.hpp), and the store tunes running at once share
// (shared_store.hpp). No wall time is asserted: where a test needs every device to take part, a
// latch holds the first items until each device holds one.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "error.hpp"
#include "problem.hpp"
#include "shape_spread.hpp"
#include "shared_store.hpp"

namespace sgt {
namespace {

using State = SpreadItem::State;

TEST(Spread, OneDeviceRunsTheItemsInOrderOnTheCallingThread) {
  std::vector<size_t> order, done;
  const auto caller = std::this_thread::get_id();
  SpreadOptions o;
  o.done = [&](size_t i, const SpreadItem& how) {
    EXPECT_EQ(how.state, State::done);
    done.push_back(i);
  };
  const auto r = spread_items(
      5, 1,
      [&](size_t i, size_t d) {
        EXPECT_EQ(d, 0u);
        EXPECT_EQ(std::this_thread::get_id(), caller);
        order.push_back(i);
      },
      o);
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(done, order);
  ASSERT_EQ(r.items.size(), 5u);
  for (const auto& it : r.items) {
    EXPECT_EQ(it.state, State::done);
    EXPECT_EQ(it.device, 0);
    EXPECT_FALSE(it.error);
  }
  EXPECT_EQ(r.taken, (std::vector<size_t>{5}));
  EXPECT_EQ(r.not_run(), 0u);
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.lost_summary(), "");
}

TEST(Spread, EveryDeviceTakesPartAndEveryItemRunsOnce) {
  constexpr size_t kDevices = 4, kItems = 11;
  // The first kDevices items wait until each is held: each device holds one of them, however the
  // threads are scheduled (a device runs one item at a time).
  std::latch all_hold(kDevices);
  std::vector<std::atomic<int>> runs(kItems);
  std::vector<int> ran_on(kItems, -1);
  std::mutex mu;
  std::vector<size_t> done_order;
  SpreadOptions o;
  o.done = [&](size_t i, const SpreadItem& how) {
    // One call at a time, after the item's result was written.
    std::unique_lock lock(mu, std::try_to_lock);
    EXPECT_TRUE(lock.owns_lock());
    EXPECT_EQ(how.device, ran_on[i]);
    done_order.push_back(i);
  };
  const auto r = spread_items(
      kItems, kDevices,
      [&](size_t i, size_t d) {
        if (i < kDevices) all_hold.arrive_and_wait();
        ++runs[i];
        ran_on[i] = static_cast<int>(d);  // each item's own slot: results kept by item
      },
      o);
  std::set<int> first_devices;
  for (size_t i = 0; i < kItems; ++i) {
    EXPECT_EQ(runs[i].load(), 1) << i;
    EXPECT_EQ(r.items[i].state, State::done) << i;
    EXPECT_EQ(r.items[i].device, ran_on[i]) << i;
    if (i < kDevices) first_devices.insert(ran_on[i]);
  }
  EXPECT_EQ(first_devices.size(), kDevices);
  size_t taken = 0;
  for (size_t d = 0; d < kDevices; ++d) {
    EXPECT_GE(r.taken[d], 1u) << d;
    taken += r.taken[d];
  }
  EXPECT_EQ(taken, kItems);
  EXPECT_EQ(done_order.size(), kItems);
}

TEST(Spread, AnItemsFailureIsItsResultAndTheDeviceGoesOn) {
  SpreadOptions o;
  std::vector<size_t> done;
  o.done = [&](size_t i, const SpreadItem&) { done.push_back(i); };
  const auto r = spread_items(
      4, 1,
      [&](size_t i, size_t) {
        if (i == 1) throw Error("shape 1 failed");
      },
      o);
  EXPECT_EQ(r.items[1].state, State::failed);
  EXPECT_EQ(exception_text(r.items[1].error), "shape 1 failed");
  EXPECT_TRUE(is_run_failure(r.items[1].error));
  EXPECT_EQ(r.items[1].device, 0);
  for (size_t i : {0, 2, 3}) EXPECT_EQ(r.items[i].state, State::done) << i;
  EXPECT_EQ(done, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(r.taken[0], 4u);
  EXPECT_FALSE(r.stopped);
}

TEST(Spread, ALostDevicesItemGoesToAnotherAndItTakesNoMore) {
  constexpr size_t kDevices = 3, kItems = 8;
  // Every device holds one of the first items; then device 1 is lost on its own.
  std::latch all_hold(kDevices);
  std::vector<std::atomic<int>> started(kItems), finished(kItems);
  std::atomic<int> lost_on{-1};
  const auto r = spread_items(kItems, kDevices, [&](size_t i, size_t d) {
    // Held at its first start only: the lost device's item starts again elsewhere.
    if (started[i]++ == 0 && i < kDevices) all_hold.arrive_and_wait();
    if (d == 1) {
      lost_on = static_cast<int>(i);
      throw DeviceLost("GPU 1 fell off the bus");
    }
    ++finished[i];
  });
  ASSERT_GE(lost_on.load(), 0);
  ASSERT_LT(lost_on.load(), static_cast<int>(kDevices));
  EXPECT_EQ(started[lost_on].load(), 2);  // once on device 1, once where it finished
  for (size_t i = 0; i < kItems; ++i) {
    EXPECT_EQ(finished[i].load(), 1) << i;
    EXPECT_EQ(r.items[i].state, State::done) << i;
    EXPECT_NE(r.items[i].device, 1) << i;
  }
  EXPECT_EQ(r.taken[1], 0u);
  EXPECT_EQ(r.taken[0] + r.taken[2], kItems);
  EXPECT_EQ(r.lost[1], "GPU 1 fell off the bus");
  EXPECT_EQ(r.lost[0], "");
  EXPECT_EQ(r.lost_summary(), "device 1: GPU 1 fell off the bus");
}

TEST(Spread, WhenEveryDeviceIsLostTheRestIsNotRun) {
  for (size_t devices : {1, 3}) {
    SpreadOptions o;
    // The caller decides what loses a device: here any Error.
    o.classify = [](const std::exception_ptr& e, size_t) {
      return is_run_failure(e) ? SpreadFault::device : SpreadFault::all;
    };
    std::atomic<int> calls{0};
    const auto r = spread_items(
        5, devices,
        [&](size_t, size_t d) {
          ++calls;
          throw Error(fmt::format("device {} gone", d));
        },
        o);
    EXPECT_EQ(calls.load(), static_cast<int>(devices));  // each lost on its first item
    EXPECT_EQ(r.not_run(), 5u) << devices;
    for (const auto& it : r.items) EXPECT_EQ(it.device, -1);
    // The item in hand keeps what lost its device.
    EXPECT_TRUE(r.items[0].error);
    for (size_t d = 0; d < devices; ++d) EXPECT_EQ(r.lost[d], fmt::format("device {} gone", d));
    EXPECT_FALSE(r.stopped);
  }
}

TEST(Spread, AStopFinishesNothingMore) {
  SpreadOptions o;
  o.classify = [](const std::exception_ptr& e, size_t) {
    return is_run_failure(e) ? SpreadFault::item : SpreadFault::all;
  };
  std::vector<size_t> ran;
  const auto r = spread_items(
      6, 1,
      [&](size_t i, size_t) {
        ran.push_back(i);
        if (i == 2) throw InputError("bad input on item 2");
      },
      o);
  EXPECT_EQ(ran, (std::vector<size_t>{0, 1, 2}));
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.items[2].state, State::failed);
  EXPECT_FALSE(is_run_failure(r.items[2].error));
  EXPECT_EQ(r.not_run(), 3u);
}

TEST(Spread, ClockedDevicesTakeTurnsInTheOrderOfTheirClocks) {
  // Item i costs cost[i] on any device; the device whose clock is least takes the next item
  // (ties: the lowest index), as the first idle device would.
  const std::vector<double> cost = {5, 1, 1, 1, 3, 1, 1};
  std::vector<double> clock(3, 0);
  std::vector<std::pair<size_t, size_t>> turns;
  SpreadOptions o;
  o.clock = [&](size_t d) { return clock[d]; };
  const auto caller = std::this_thread::get_id();
  const auto r = spread_items(
      cost.size(), 3,
      [&](size_t i, size_t d) {
        EXPECT_EQ(std::this_thread::get_id(), caller);
        turns.emplace_back(i, d);
        clock[d] += cost[i];
      },
      o);
  // 0->d0 (clocks 0,0,0), 1->d1, 2->d2, 3->d1 (5,1,1), 4->d2 (5,2,1), 5->d1 (5,2,4),
  // 6->d1 (5,3,4).
  const std::vector<std::pair<size_t, size_t>> expected = {{0, 0}, {1, 1}, {2, 2}, {3, 1},
                                                           {4, 2}, {5, 1}, {6, 1}};
  EXPECT_EQ(turns, expected);
  EXPECT_EQ(r.taken, (std::vector<size_t>{1, 4, 2}));
  // The same again: deterministic.
  clock.assign(3, 0);
  turns.clear();
  spread_items(
      cost.size(), 3,
      [&](size_t i, size_t d) {
        turns.emplace_back(i, d);
        clock[d] += cost[i];
      },
      o);
  EXPECT_EQ(turns, expected);
}

TEST(Spread, AClockedDeviceLostHandsItsItemToTheNext) {
  std::vector<double> clock(2, 0);
  std::vector<std::pair<size_t, size_t>> turns;
  SpreadOptions o;
  o.clock = [&](size_t d) { return clock[d]; };
  const auto r = spread_items(
      4, 2,
      [&](size_t i, size_t d) {
        if (d == 0 && i == 2) throw DeviceLost("lost");
        turns.emplace_back(i, d);
        clock[d] += 1;
      },
      o);
  // 0->d0, 1->d1, 2->d0 (lost; back to the front), 2->d1, 3->d1.
  const std::vector<std::pair<size_t, size_t>> expected = {{0, 0}, {1, 1}, {2, 1}, {3, 1}};
  EXPECT_EQ(turns, expected);
  EXPECT_EQ(r.items[2].device, 1);
  EXPECT_EQ(r.items[2].state, State::done);
  EXPECT_FALSE(r.items[2].error);
  EXPECT_EQ(r.lost[0], "lost");
}

TEST(Spread, WhatDoneThrowsStopsTheSpreadAndIsRethrown) {
  SpreadOptions o;
  o.done = [](size_t i, const SpreadItem&) {
    if (i == 1) throw Error("disk full");
  };
  std::vector<size_t> ran;
  EXPECT_THROW(spread_items(
                   4, 1, [&](size_t i, size_t) { ran.push_back(i); }, o),
               Error);
  EXPECT_EQ(ran, (std::vector<size_t>{0, 1}));
  EXPECT_THROW(spread_items(1, 0, [](size_t, size_t) {}), Error);  // no device
}

TEST(Spread, CompileThreadsAreSharedAmongTheDevices) {
  EXPECT_EQ(threads_per_device(0, 1), 0u);  // one device: every core, as before
  EXPECT_EQ(threads_per_device(6, 1), 6u);
  EXPECT_EQ(threads_per_device(8, 3), 2u);
  EXPECT_EQ(threads_per_device(2, 4), 1u);  // at least one each
  EXPECT_GE(threads_per_device(0, 4), 1u);
}

// Records what the one store underneath sees: which problem it was begun with when each trial
// arrived.
class BeginLog final : public TrialStore {
 public:
  void begin(const GpuFingerprint&, const Problem& p) override {
    current = p.shape();
    ++begins;
  }
  std::optional<Trial> finished(const std::string& name, const std::string&) override {
    for (const auto& [shape, t] : trials) {
      if (shape == current && t.config_name == name) return t;
    }
    return std::nullopt;
  }
  void record(const Trial& t) override {
    EXPECT_EQ(t.problem.shape(), current) << "recorded under another tune's begin()";
    trials.emplace_back(current, t);
  }
  std::string current;
  int begins = 0;
  std::vector<std::pair<std::string, Trial>> trials;
};

Trial trial_of(const Problem& p, const std::string& name) {
  Trial t;
  t.problem = p;
  t.config_name = name;
  return t;
}

TEST(SharedStore, EachViewWritesUnderItsOwnBegin) {
  BeginLog log;
  SharedStore shared(log);
  const Problem a = parse_shape("64x64x64"), b = parse_shape("128x128x128");
  SharedStore::View va(shared), vb(shared);
  EXPECT_THROW(va.record(trial_of(a, "x")), Error);  // before begin()
  va.begin({}, a);
  vb.begin({}, b);
  va.record(trial_of(a, "a1"));  // the store is begun with a again first
  vb.record(trial_of(b, "b1"));
  vb.record(trial_of(b, "b2"));  // still b's: no begin
  EXPECT_EQ(log.begins, 4);
  EXPECT_TRUE(va.finished("a1", ""));
  EXPECT_FALSE(va.finished("b1", ""));
  EXPECT_TRUE(vb.finished("b1", ""));
  EXPECT_EQ(shared.locked([&] { return log.trials.size(); }), 3u);
}

TEST(SharedStore, ViewsOnThreadsNeverMixTheirTrials) {
  BeginLog log;
  SharedStore shared(log);
  constexpr int kThreads = 4, kTrials = 200;
  std::vector<std::thread> pool;
  for (int k = 0; k < kThreads; ++k) {
    pool.emplace_back([&, k] {
      const Problem p = parse_shape(fmt::format("{}x64x64", 64 * (k + 1)));
      SharedStore::View v(shared);
      v.begin({}, p);
      for (int i = 0; i < kTrials; ++i) v.record(trial_of(p, fmt::format("c{}", i)));
    });
  }
  for (auto& t : pool) t.join();
  EXPECT_EQ(log.trials.size(), static_cast<size_t>(kThreads * kTrials));
  std::map<std::string, int> per;
  for (const auto& [shape, t] : log.trials) ++per[shape];
  EXPECT_EQ(per.size(), static_cast<size_t>(kThreads));
  for (const auto& [shape, n] : per) EXPECT_EQ(n, kTrials) << shape;
}

}  // namespace
}  // namespace sgt
