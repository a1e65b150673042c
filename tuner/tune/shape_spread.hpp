// Whole work items (the shapes of a suite) spread over several devices: each device takes the
// next item no device has taken, in suite order, and runs it to the end; the results are kept by
// item, so whatever reads them reads them in suite order, however the devices ran. `tune --shapes`
// and `bench` on a GPU set run this way, each shape on one GPU.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "error.hpp"

namespace sgt {

// What a failed item means for the spread (SpreadOptions::classify).
enum class SpreadFault {
  item,    // the item's own failure: it is the item's result; the device goes on
  device,  // the device cannot go on: it takes no more items, and the item goes to another
  all,     // stop: the item failed, and no device takes another (those running finish theirs)
};

// What a work function may throw to say its device cannot go on (the default classify makes it
// SpreadFault::device).
class DeviceLost : public Error {
 public:
  using Error::Error;
};

struct SpreadItem {
  enum class State { not_run, done, failed };
  State state = State::not_run;
  int device = -1;           // the device that ran it to its end (done or failed); -1: none did
  std::exception_ptr error;  // failed: why; not_run: what lost the last device that held it
};

struct SpreadOptions {
  // Whose failure an exception of work(item, device) is. Called on the device's thread, outside
  // the spread's lock (it may take its time, e.g. to try a new worker). Unset: DeviceLost is the
  // device's, anything else the item's.
  std::function<SpreadFault(const std::exception_ptr&, size_t device)> classify;
  // Set: the devices take turns on the calling thread, the one whose clock is least taking the
  // next item (ties: the lowest index), as the first idle device would; deterministic, for devices
  // that keep a simulated clock (replays). Unset: one thread per device, all at once (one device:
  // the calling thread, the items in order).
  std::function<double(size_t device)> clock;
  // Called after each item finished or failed (not when its device was lost), one call at a time,
  // under the spread's lock: every item it has been called for is complete, e.g. for rewriting a
  // file with the items finished so far. An exception it throws stops the spread and is rethrown.
  std::function<void(size_t item, const SpreadItem& how)> done;
};

struct SpreadReport {
  std::vector<SpreadItem> items;  // by item
  std::vector<size_t> taken;      // by device: the items it ran to their end
  std::vector<std::string> lost;  // by device: why it stopped taking items; empty if it stayed
  bool stopped = false;           // a SpreadFault::all stopped it: items not yet taken are left
  // Items not run: every device was lost, or the spread stopped.
  size_t not_run() const;
  // "device 1: why; device 3: why" of the lost devices ("" when none was lost).
  std::string lost_summary() const;
};

// Runs work(item, device) for every item in [0, items) over `devices` devices (at least one);
// see SpreadOptions. A device runs one item at a time; an item runs on one device at a time and
// to its end on one device. A lost device's item goes to the next idle device before any item not
// yet taken. Returns when every item has run or none can: items left when every device was lost
// or the spread stopped are not_run. The exception `done` threw, if any, is rethrown after every
// device has stopped.
SpreadReport spread_items(size_t items, size_t devices,
                          const std::function<void(size_t item, size_t device)>& work,
                          const SpreadOptions& options = {});

// The compile threads (-j) of each of `devices` devices running at once, sharing `jobs` (0: every
// core): at least one each. One device keeps `jobs` as given (0 stays "every core").
unsigned threads_per_device(unsigned jobs, size_t devices);

// Whether e is an sgt::Error other than an InputError: the run failed on that item (a GPU, its
// worker, the store), rather than its input being wrong or the program being at fault.
bool is_run_failure(const std::exception_ptr& e);

// e.what() of an exception_ptr ("unknown error" for what is no std::exception).
std::string exception_text(const std::exception_ptr& e);

}  // namespace sgt
