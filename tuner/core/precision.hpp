// Precision classes: what a caller accepts of a kernel's numerics. The class of a kernel is its
// family's (KernelFamily::precision()); a request names the class it admits.
//
//  - fp32 (the default, "strict"): numerically what cuBLAS FP32 computes with pedantic math: one
//    FP32 FFMA per k term. The FFMA families (warptile, ws_tma) are in it; nothing else is ever
//    tuned, stored as a winner of, exported for or served to a strict request.
//  - fp32-accurate (opt-in): any kernel whose error against an FP64 reference is no worse than
//    cuBLAS FP32's on the same inputs (error ratio <= kAccurateErrorRatioMax), measured on the
//    trial's problem and on inputs that stress an operand split. The strict families are in it
//    too (they are what the bound is measured against), so its winner is never slower than the
//    strict one. A candidate of a non-strict family above the bound is recorded `inaccurate`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sgt {

enum class Precision { fp32, fp32_accurate };

inline std::string_view to_string(Precision p) {
  return p == Precision::fp32_accurate ? "fp32-accurate" : "fp32";
}
inline std::optional<Precision> parse_precision(std::string_view s) {
  if (s == "fp32" || s == "strict") return Precision::fp32;
  if (s == "fp32-accurate") return Precision::fp32_accurate;
  return std::nullopt;
}
// Whether a request of class `requested` may be given a kernel of class `kernel`.
inline bool admits(Precision requested, Precision kernel) {
  return kernel == Precision::fp32 || requested == Precision::fp32_accurate;
}

// The bound on a non-strict kernel's error ratio (its relative L2 error against FP64 over cuBLAS
// FP32's on the same inputs). Slightly above 1: both errors are estimates from one draw of the
// inputs, and an FP32 GEMM that sums the same products in another order than cuBLAS does lands a
// little above or below cuBLAS's error by chance of the draw; a bound of exactly 1 would refuse
// kernels as accurate as cuBLAS by that chance (the FFMA families' own ratios are measured in
// docs/experiments/2026-12-04-fp32-accurate.md).
inline constexpr double kAccurateErrorRatioMax = 1.05;

}  // namespace sgt
