// The JSON of the worker protocol's trial request and response (see worker_protocol.hpp).
#include "worker_protocol.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "family.hpp"

namespace sgt::eval {

using nlohmann::json;

namespace {

// JSON has no NaN or infinity: an error or ratio that is not a number goes as 1e300, which every
// comparison with a bound refuses.
double finite_or_huge(double v) {
  return std::isfinite(v) ? v : 1e300;
}

}  // namespace

json candidate_request_json(const char* op, const TrialRequest& t) {
  return {{"op", op},
          {"name", t.name},
          {"family", t.family},
          {"launch", t.launch},
          {"cubin", t.cubin_path},
          {"sha256", t.cubin_sha256},
          {"kernel", t.kernel},
          {"reduce_kernel", t.reduce_kernel},
          {"pack_kernel", t.pack_kernel},
          {"tile",
           {{"BM", t.tile.BM},
            {"BN", t.tile.BN},
            {"BK", t.tile.BK},
            {"split_k", t.tile.split_k},
            {"pad_a", t.tile.pad_a},
            {"pad_b", t.tile.pad_b},
            {"smem", t.tile.smem_bytes},
            {"tail", t.tile.tail},
            {"group_m", t.tile.group_m}}},
          {"block", t.block},
          {"tolerance", t.tolerance}};
}

json trial_request_json(const TrialRequest& t) {
  json req = candidate_request_json("trial", t);
  req["warmup"] = t.warmup;
  req["reps"] = t.repetitions;
  req["cut_after"] = t.cut_after;
  req["cut_ratio"] = t.cut_ratio;
  req["best_ms"] = t.best_ms;
  req["checksum"] = t.checksum;
  req["l2"] = to_string(t.l2);
  if (t.accuracy) {
    req["accuracy"] = true;
    req["stress"] = t.stress;
  }
  return req;
}

LaunchTile launch_tile_from_json(const json& req) {
  // The tile step of the launch plan is the one the family's launch ABI names: pointers, or
  // tensor maps with dynamic shared memory. An ABI with no step here is a failed request, never
  // another launch.
  const std::string launch = req.at("launch");
  const auto abi = parse_launch_abi(launch);
  if (!abi)
    throw Error(fmt::format("launch '{}' of kernel family '{}' has no tile step in this worker",
                            launch, req.at("family").get<std::string>()));
  const json& j = req.at("tile");
  LaunchTile t;
  t.BM = j.at("BM");
  t.BN = j.at("BN");
  t.BK = j.at("BK");
  t.split_k = j.value("split_k", 1);
  t.tma = *abi == LaunchAbi::tensor_maps ? 1 : 0;
  t.split_maps = *abi == LaunchAbi::split_maps ? 1 : 0;
  t.pad_a = j.value("pad_a", 0);
  t.pad_b = j.value("pad_b", 0);
  t.smem_bytes = j.value("smem", 0);
  t.tail = j.value("tail", 0);
  t.group_m = j.value("group_m", 1);
  // Every launch ABI takes the wave-aware tail: tf32x3_wg's split maps, and the FFMA families'
  // pointers and tensor maps.
  if (t.BM <= 0 || t.BN <= 0 || t.BK <= 0 || t.split_k <= 0 || t.pad_a < 0 || t.pad_b < 0 ||
      t.smem_bytes < 0 || (t.tail != 0 && t.tail != 1) || t.group_m <= 0)
    throw Error("bad launch tile");
  return t;
}

namespace {

L2Mode l2_from_json(const json& req) {
  const std::string l2 = req.value("l2", std::string("flush"));
  const auto mode = parse_l2_mode(l2);
  if (!mode) throw Error(fmt::format("unknown l2 mode '{}' (flush or rotate)", l2));
  return *mode;
}

}  // namespace

TrialRequest trial_request_from_json(const json& req) {
  TrialRequest t;
  t.name = req.at("name");
  t.family = req.at("family").get<std::string>();
  t.launch = req.at("launch").get<std::string>();
  t.cubin_path = req.at("cubin");
  t.cubin_sha256 = req.at("sha256");
  t.kernel = req.at("kernel");
  t.reduce_kernel = req.value("reduce_kernel", "");
  t.pack_kernel = req.value("pack_kernel", "");
  t.tile = launch_tile_from_json(req);
  t.block = req.at("block");
  t.warmup = req.at("warmup");
  t.repetitions = req.at("reps");
  t.cut_after = req.at("cut_after");
  t.cut_ratio = req.at("cut_ratio");
  t.best_ms = req.at("best_ms");
  t.tolerance = req.at("tolerance");
  t.checksum = req.value("checksum", false);
  t.l2 = l2_from_json(req);
  t.accuracy = req.value("accuracy", false);
  if (t.accuracy) {
    if (const auto it = req.find("stress"); it != req.end()) it->get_to(t.stress);
  }
  return t;
}

json tf32_request_json(const Tf32Request& r) {
  return {{"op", "cublas_tf32"},
          {"warmup", r.warmup},
          {"reps", r.repetitions},
          {"tolerance", r.tolerance},
          {"l2", to_string(r.l2)}};
}

Tf32Request tf32_request_from_json(const json& req) {
  Tf32Request r;
  r.warmup = req.value("warmup", 2);
  r.repetitions = req.at("reps").get<int>();
  r.tolerance = req.at("tolerance").get<double>();
  r.l2 = l2_from_json(req);
  if (r.repetitions < 1 || r.warmup < 0)
    throw Error(fmt::format("cublas_tf32: reps {} and warmup {}: expected at least 1 and 0",
                            r.repetitions, r.warmup));
  if (!(r.tolerance > 0))
    throw Error(fmt::format("cublas_tf32: tolerance {} is not positive", r.tolerance));
  return r;
}

json trial_response_json(const TrialResponse& r) {
  json j = {{"ok", true},
            {"status", to_string(r.status)},
            {"reason", r.reason},
            {"verify_error", finite_or_huge(r.verify_error)},
            {"time", r.time},
            {"cut", r.cut},
            {"error_ratio", finite_or_huge(r.error_ratio)},
            {"stress_ratio", finite_or_huge(r.stress_ratio)},
            {"stress_case", r.stress_case}};
  if (!r.checksum.empty()) j["checksum"] = r.checksum;
  return j;
}

TrialResponse trial_response_from_json(const json& j) {
  TrialResponse r;
  const auto status = j.at("status").get<std::string>();
  const auto s = status_from_string(status);
  if (!s) throw Error(fmt::format("GPU worker answered an unknown trial status '{}'", status));
  r.status = *s;
  r.reason = j.value("reason", "");
  r.verify_error = j.value("verify_error", -1.0);
  if (j.contains("time")) r.time = j.at("time").get<TimeStats>();
  r.cut = j.value("cut", false);
  r.checksum = j.value("checksum", "");
  r.error_ratio = j.value("error_ratio", -1.0);
  r.stress_ratio = j.value("stress_ratio", -1.0);
  r.stress_case = j.value("stress_case", "");
  return r;
}

}  // namespace sgt::eval
