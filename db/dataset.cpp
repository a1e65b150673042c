// Replay datasets (see dataset.hpp).
#include "dataset.hpp"

#include <algorithm>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "error.hpp"
#include "file_util.hpp"
#include "store_internal.hpp"

namespace sgt::db {

void to_json(nlohmann::json& j, const DatasetHeader& h) {
  j = {{"format", kDatasetFormat},
       {"version", kDatasetVersion},
       {"problem", h.problem},
       {"space", h.space},
       {"precision", std::string(to_string(h.precision))},
       {"candidates", h.candidates},
       {"measured", h.measured},
       {"complete", h.complete},
       {"created", h.created},
       {"written", h.written},
       {"command", h.command},
       {"notes", h.notes},
       {"cublas_median_ms", h.cublas_median_ms},
       {"kernel_hashes", h.kernel_hashes}};
}

void from_json(const nlohmann::json& j, DatasetHeader& h) {
  if (j.value("format", "") != kDatasetFormat) {
    throw InputError(fmt::format("\"dataset.format\" must be \"{}\"", kDatasetFormat));
  }
  const int v = j.at("version").get<int>();
  if (v < 1 || v > kDatasetVersion) {
    throw InputError(fmt::format(
        "dataset version {} is not one this sgemm-tune reads (1 .. {}); a newer sgemm-tune "
        "wrote it?",
        v, kDatasetVersion));
  }
  j.at("problem").get_to(h.problem);
  j.at("space").get_to(h.space);
  h.precision = Precision::fp32;
  if (j.contains("precision")) {
    const auto text = j.at("precision").get<std::string>();
    const auto p = parse_precision(text);
    if (!p)
      throw InputError(fmt::format("\"dataset.precision\" '{}' is not a precision class", text));
    h.precision = *p;
  }
  j.at("candidates").get_to(h.candidates);
  j.at("measured").get_to(h.measured);
  j.at("complete").get_to(h.complete);
  j.at("created").get_to(h.created);
  j.at("written").get_to(h.written);
  j.at("command").get_to(h.command);
  h.notes = j.value("notes", "");
  j.at("cublas_median_ms").get_to(h.cublas_median_ms);
  j.at("kernel_hashes").get_to(h.kernel_hashes);
}

DatasetHeader write_dataset(const SqliteStore& store, const DatasetSpec& spec,
                            const std::filesystem::path& file) {
  StoreDump d;
  for (const auto& g : store.gpus()) {
    if (g.identity() == spec.gpu) d.gpus.push_back(g);
  }
  if (d.gpus.empty()) {
    throw InputError(fmt::format("'{}' holds no trial of GPU {}; known GPUs:{}",
                                 store.path().string(), spec.gpu.label(),
                                 describe_gpus(store.gpus())));
  }
  for (auto& t : store.trials()) {
    if (t.gpu == spec.gpu && t.trial.problem == spec.problem) d.trials.push_back(std::move(t));
  }
  if (d.trials.empty()) {
    throw InputError(fmt::format("'{}' holds no trial of {} {} on {}", store.path().string(),
                                 spec.problem.shape(), spec.problem.layout, spec.gpu.label()));
  }
  DatasetHeader h;
  h.problem = spec.problem;
  h.space = spec.space;
  h.precision = spec.precision;
  h.candidates = static_cast<long long>(spec.candidates.size());
  h.command = spec.command;
  h.notes = spec.notes;
  h.written = utc_timestamp();
  h.created = d.trials.front().trial.timestamp;
  std::set<std::string> screened;
  std::map<std::string, std::set<std::string>> hashes;
  for (const auto& st : d.trials) {
    const auto& t = st.trial;
    h.created = std::min(h.created, t.timestamp);
    hashes[t.kernel_template].insert(t.kernel_hash);
    if (t.phase != TrialPhase::final) {
      screened.insert(t.config_name);
      if (h.cublas_median_ms == 0 && t.cublas_median_ms > 0)
        h.cublas_median_ms = t.cublas_median_ms;
    }
  }
  for (const auto& [name, set] : hashes) h.kernel_hashes[name] = {set.begin(), set.end()};
  h.measured = static_cast<long long>(
      std::count_if(spec.candidates.begin(), spec.candidates.end(),
                    [&](const std::string& c) { return screened.count(c) > 0; }));
  h.complete = h.candidates > 0 && h.measured == h.candidates;

  auto j = export_dump_json(d, store.info().schema_version);
  j["dataset"] = h;
  // One line per trial keeps the file diffable before compression and small after it.
  std::string text = "{";
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    text += fmt::format("{}\n\"{}\": ", first ? "" : ",", it.key());
    first = false;
    if (it.key() == "trials") {
      text += "[";
      for (size_t i = 0; i < it->size(); ++i) text += (i ? ",\n" : "\n") + (*it)[i].dump();
      text += "\n]";
    } else {
      text += it->dump();
    }
  }
  text += "\n}\n";
  write_file_atomically_maybe_gzip(file, text);
  return h;
}

Dataset read_dataset(const std::filesystem::path& file) {
  const auto j = read_json_file(file, "dataset");
  Dataset ds;
  ds.path = file;
  if (!j.is_object() || !j.contains("dataset")) {
    throw InputError(fmt::format(
        "'{}' is not a dataset: it has no \"dataset\" object (a plain export? `db import` it "
        "into a database and replay that)",
        file.string()));
  }
  try {
    j.at("dataset").get_to(ds.header);
  } catch (const std::exception& e) {
    throw InputError(
        fmt::format("dataset '{}': bad \"dataset\" header: {}", file.string(), e.what()));
  }
  auto dump = parse_export(j, file.string());
  if (dump.gpus.size() != 1) {
    throw InputError(fmt::format("dataset '{}' must hold exactly one GPU, not {}", file.string(),
                                 dump.gpus.size()));
  }
  ds.gpu = dump.gpus.front();
  for (auto& st : dump.trials) {
    if (!(st.trial.problem == ds.header.problem)) {
      throw InputError(fmt::format("dataset '{}' is of {} {}, but holds a trial of {} {}",
                                   file.string(), ds.header.problem.shape(),
                                   ds.header.problem.layout, st.trial.problem.shape(),
                                   st.trial.problem.layout));
    }
  }
  ds.trials = std::move(dump.trials);
  return ds;
}

bool is_json_recording(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(64, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (is_gzip(head)) return true;
  const auto pos = head.find_first_not_of(" \t\r\n");
  return pos != std::string::npos && head[pos] == '{';
}

}  // namespace sgt::db
