// Recorded trials for replays and for learning strategies (see history.hpp).
#include "history.hpp"

#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "dataset.hpp"
#include "error.hpp"
#include "store.hpp"

namespace sgt::tune {

using eval::Recording;

// The recordings a replay answers from: each dataset file is one problem; a tuning database gives
// one recording per problem of its (single) GPU.
std::vector<Recording> load_recordings(const std::vector<std::string>& files) {
  std::vector<Recording> out;
  for (const auto& f : files) {
    std::error_code ec;
    if (!std::filesystem::exists(f, ec)) {
      throw InputError(fmt::format("--replay '{}': no such file", f));
    }
    if (db::is_json_recording(f)) {
      auto ds = db::read_dataset(f);
      Recording r{f,  ds.gpu.fingerprint, ds.header.problem,
                  {}, ds.header.space,    ds.header.precision};
      for (auto& st : ds.trials) r.trials.push_back(std::move(st.trial));
      out.push_back(std::move(r));
      continue;
    }
    auto store = db::SqliteStore::open(f, db::OpenMode::read_only);
    const auto gpus = store.gpus();
    if (gpus.size() != 1) {
      throw InputError(
          fmt::format("--replay '{}' holds {} GPUs; a replay needs one (write a "
                      "dataset of the one you want with `sgemm-tune dataset write`):{}",
                      f, gpus.size(), db::describe_gpus(gpus)));
    }
    std::map<std::string, size_t> by_problem;
    for (auto& st : store.trials()) {
      const auto key = st.trial.problem.shape() + " " + st.trial.problem.layout;
      auto [it, added] = by_problem.emplace(key, out.size());
      if (added) out.push_back({f, gpus.front().fingerprint, st.trial.problem, {}});
      out[it->second].trials.push_back(std::move(st.trial));
    }
  }
  return out;
}

std::vector<Trial> History::trials_for(const GpuFingerprint& gpu, const db::SqliteStore* store,
                                       const Problem& tuned) {
  const auto id = db::GpuIdentity::of(gpu);
  // The datasets are read once per run; the database again for each problem, since the problems
  // tuned before this one in the same run are history too.
  if (!read_) {
    for (const auto& f : files_) {
      auto ds = db::read_dataset(f);
      ++datasets_[ds.gpu.identity().key()];
      auto& into = by_gpu_[ds.gpu.identity().key()];
      for (auto& st : ds.trials) into.push_back(std::move(st.trial));
    }
    read_ = true;
  }
  std::vector<Trial> out;
  size_t own = 0;
  auto take = [&](const Trial& t) {
    if (t.problem == tuned) {
      ++own;
    } else {
      out.push_back(t);
    }
  };
  if (store) {
    for (auto& st : store->trials()) {
      if (st.gpu == id) take(st.trial);
    }
  }
  for (const auto& t : by_gpu_[id.key()]) take(t);
  spdlog::info(
      "history: {} trials of {} ({} datasets{}){}", out.size(), id.label(), datasets_[id.key()],
      store ? ", and the database" : "",
      own ? fmt::format("; {} of {} {} itself left out", own, tuned.shape(), tuned.layout) : "");
  return out;
}

}  // namespace sgt::tune
