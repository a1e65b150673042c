// Work items spread over devices (see shape_spread.hpp).
#include "shape_spread.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

namespace sgt {

std::string exception_text(const std::exception_ptr& e) {
  if (!e) return {};
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown error";
  }
}

unsigned threads_per_device(unsigned jobs, size_t devices) {
  if (devices <= 1) return jobs;
  const unsigned all = jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
  return std::max(1u, static_cast<unsigned>(all / devices));
}

bool is_run_failure(const std::exception_ptr& e) {
  if (!e) return false;
  try {
    std::rethrow_exception(e);
  } catch (const InputError&) {
    return false;
  } catch (const Error&) {
    return true;
  } catch (...) {
    return false;
  }
}

size_t SpreadReport::not_run() const {
  size_t n = 0;
  for (const auto& i : items) n += i.state == SpreadItem::State::not_run;
  return n;
}

std::string SpreadReport::lost_summary() const {
  std::string out;
  for (size_t d = 0; d < lost.size(); ++d) {
    if (!lost[d].empty())
      out += fmt::format("{}device {}: {}", out.empty() ? "" : "; ", d, lost[d]);
  }
  return out;
}

namespace {

SpreadFault default_classify(const std::exception_ptr& e, size_t) {
  try {
    std::rethrow_exception(e);
  } catch (const DeviceLost&) {
    return SpreadFault::device;
  } catch (...) {
    return SpreadFault::item;
  }
}

class Spread {
 public:
  Spread(size_t items, size_t devices, const std::function<void(size_t, size_t)>& work,
         const SpreadOptions& o)
      : n_(items), devices_(devices), work_(work), o_(o) {
    rep_.items.resize(items);
    rep_.taken.assign(devices, 0);
    rep_.lost.assign(devices, "");
  }

  SpreadReport run() {
    if (o_.clock || devices_ == 1) {
      in_turn();
    } else {
      at_once();
    }
    if (done_error_) std::rethrow_exception(done_error_);
    return std::move(rep_);
  }

 private:
  bool lost(size_t d) const { return !rep_.lost[d].empty(); }

  // The next item for an idle device: a lost device's first, then the next not taken; nullopt
  // when the spread stopped or nothing is left. The caller holds mu_.
  std::optional<size_t> take() {
    if (stop_) return std::nullopt;
    if (!returned_.empty()) {
      const size_t i = returned_.front();
      returned_.pop_front();
      return i;
    }
    if (next_ < n_) return next_++;
    return std::nullopt;
  }

  // Runs item i on device d and records how it ended. The caller does not hold mu_.
  void run_one(size_t i, size_t d) {
    std::exception_ptr error;
    SpreadFault fault = SpreadFault::item;
    try {
      work_(i, d);
    } catch (...) {
      error = std::current_exception();
      try {
        fault = o_.classify ? o_.classify(error, d) : default_classify(error, d);
      } catch (...) {
        error = std::current_exception();
        fault = SpreadFault::all;
      }
    }
    std::lock_guard lock(mu_);
    --busy_;
    auto& item = rep_.items[i];
    item.error = error;
    if (error && fault == SpreadFault::device) {
      rep_.lost[d] = exception_text(error);
      if (rep_.lost[d].empty()) rep_.lost[d] = "lost";
      returned_.push_front(i);
      cv_.notify_all();
      return;
    }
    item.state = error ? SpreadItem::State::failed : SpreadItem::State::done;
    item.device = static_cast<int>(d);
    ++rep_.taken[d];
    if (error && fault == SpreadFault::all) stop_ = rep_.stopped = true;
    if (o_.done && !done_error_) {
      try {
        o_.done(i, item);
      } catch (...) {
        done_error_ = std::current_exception();
        stop_ = true;
      }
    }
    cv_.notify_all();
  }

  // One thread: the device whose clock is least (ties: the lowest index) takes the next item.
  void in_turn() {
    while (true) {
      std::optional<size_t> d;
      double least = std::numeric_limits<double>::infinity();
      for (size_t k = 0; k < devices_; ++k) {
        if (lost(k)) continue;
        const double c = o_.clock ? o_.clock(k) : 0;
        if (!d || c < least) d = k, least = c;
      }
      if (!d) return;
      std::optional<size_t> i;
      {
        std::lock_guard lock(mu_);
        i = take();
        if (i) ++busy_;
      }
      if (!i) return;
      run_one(*i, *d);
    }
  }

  // A thread per device, each taking the next item whenever it is idle. One with nothing to take
  // waits while another runs an item, since that device may be lost and hand its item back.
  void at_once() {
    std::vector<std::thread> pool;
    for (size_t d = 0; d < devices_; ++d) {
      pool.emplace_back([this, d] {
        while (true) {
          std::optional<size_t> i;
          {
            std::unique_lock lock(mu_);
            if (lost(d)) return;
            cv_.wait(lock, [&] { return stop_ || !returned_.empty() || next_ < n_ || busy_ == 0; });
            i = take();
            if (!i) return;
            ++busy_;
          }
          run_one(*i, d);
        }
      });
    }
    for (auto& t : pool) t.join();
  }

  const size_t n_, devices_;
  const std::function<void(size_t, size_t)>& work_;
  const SpreadOptions& o_;
  SpreadReport rep_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<size_t> returned_;  // items of lost devices, to be taken first
  size_t next_ = 0;              // the first item not yet taken
  size_t busy_ = 0;              // devices running an item
  bool stop_ = false;
  std::exception_ptr done_error_;
};

}  // namespace

SpreadReport spread_items(size_t items, size_t devices,
                          const std::function<void(size_t item, size_t device)>& work,
                          const SpreadOptions& options) {
  if (devices == 0) throw Error("spreading work needs at least one device");
  return Spread(items, devices, work, options).run();
}

}  // namespace sgt
