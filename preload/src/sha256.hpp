// SHA-256 of a byte string through OpenSSL's EVP digest API (libcrypto): the serve library checks
// each kernel binary against the digest the kernel cache recorded before loading it.
#pragma once

#include <string>
#include <string_view>

namespace sgt::preload {

// Lower-case hex digest; throws std::runtime_error when OpenSSL fails.
std::string sha256_hex(std::string_view data);

}  // namespace sgt::preload
