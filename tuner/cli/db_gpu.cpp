#include "db_gpu.hpp"

#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "error.hpp"
#include "gpu_select.hpp"
#include "plot_util.hpp"
#include "worker_client.hpp"

namespace sgt::cli {

namespace {

// This machine's device as a worker picks it; nullopt with the reason when there is none.
std::optional<db::GpuIdentity> local_gpu(const GpuSelector& sel, std::string* why_not) {
  try {
    eval::WorkerClient probe(self_exe(), sel);
    return db::GpuIdentity::of(probe.info().fingerprint);
  } catch (const Error& e) {
    *why_not = e.what();
    return std::nullopt;
  }
}

}  // namespace

DbGpus resolve_db_gpus(const db::SqliteStore& store, const std::string& text) {
  const GpuSelector sel = parse_gpu_selector(text);
  const auto all = store.gpus();
  const std::string path = store.path().string();
  DbGpus out;
  if (sel.kind == GpuSelector::Kind::name) {
    const auto found = store.find_gpus(sel.name);
    if (found.empty()) {
      throw InputError(fmt::format("unknown GPU '{}' in '{}'; known GPUs:{}", sel.name, path,
                                   db::describe_gpus(all)));
    }
    std::set<std::string> names;
    for (const auto& g : found) names.insert(g.fingerprint.name);
    if (names.size() > 1) {
      throw InputError(fmt::format("--gpu '{}' is part of {} GPU names in '{}'; name one:{}",
                                   sel.name, names.size(), path, db::describe_gpus(found)));
    }
    for (const auto& g : found) out.gpus.push_back(g.identity());
    if (found.front().fingerprint.name != sel.name && found.front().identity().key() != sel.name)
      out.note = fmt::format("--gpu '{}' means {}", sel.name, found.front().identity().label());
    return out;
  }
  if (all.empty() && sel.kind == GpuSelector::Kind::automatic) return out;
  std::string why_not;
  const auto here = local_gpu(sel, &why_not);
  if (here) {
    // This machine's GPU, whether or not the database knows it (a query then serves the default).
    out.gpus.push_back(*here);
    out.note = fmt::format("--gpu {} means this machine's {}", sel.text(), here->label());
    return out;
  }
  if (sel.kind == GpuSelector::Kind::index) {
    throw InputError(fmt::format("--gpu {}: no such GPU here ({}); name one of '{}':{}", sel.index,
                                 why_not, path, db::describe_gpus(all)));
  }
  if (all.size() != 1) {
    throw InputError(fmt::format(
        "--gpu auto: no usable GPU here ({}), and '{}' holds results for {} GPUs; name one "
        "with --gpu:{}",
        why_not, path, all.size(), db::describe_gpus(all)));
  }
  out.gpus.push_back(all.front().identity());
  out.note = fmt::format("no usable GPU here; answering for the only GPU on record, {}",
                         out.gpus.front().label());
  return out;
}

}  // namespace sgt::cli
