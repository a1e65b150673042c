// How a timed repetition finds the L2, in words every side of the worker protocol shares: the
// parent asks for a mode and a rotation, the worker (bench.hpp) carries them out. No CUDA here.
#pragma once

#include <optional>
#include <string_view>

namespace sgt::eval {

// How each timed repetition is kept from finding its operands in the L2.
//  flush:  a buffer twice the L2 is overwritten before each repetition (untimed); the operands are
//          the same every time.
//  rotate: each launch (warm-up included) takes the next of several copies of A, B and C, so many
//          that the copies used in between hold at least twice the L2 (the rotating buffer of
//          PyTorch's TunableOp); nothing is written between repetitions.
enum class L2Mode { flush, rotate };

std::string_view to_string(L2Mode m);
std::optional<L2Mode> parse_l2_mode(std::string_view s);

// The L2 a rotation must outgrow, as a multiple of the L2's size.
inline constexpr int kRotationL2Factor = 2;

// How many copies of one operand set (A, B and C of `set_bytes`, as allocated) a rotation needs
// on a GPU with `l2_bytes` of L2: enough that the other copies, used between two uses of any one,
// hold at least kRotationL2Factor x the L2. At least 2 (a set larger than the L2 still leaves its
// tail there for the next launch); 1 when there is nothing to rotate (no bytes, or no L2 known).
int rotation_copies(long long l2_bytes, long long set_bytes);

}  // namespace sgt::eval
