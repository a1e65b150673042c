// Exceptions that stop a run. main translates them once into a message and an exit code;
// a failing candidate is never an exception but a recorded trial status.
#pragma once

#include <stdexcept>
#include <string>

namespace sgt {

// The run cannot go on (GPU missing, I/O failure, database trouble): exit code 1.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The user's input is wrong (bad file, field, value, shape, expression): exit code 2.
class InputError : public Error {
 public:
  using Error::Error;
};

}  // namespace sgt
