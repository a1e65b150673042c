// SHA-256 through OpenSSL's EVP digest API (libcrypto): the compile cache's keys and the check of a
// cached binary before it is loaded rest on it, so it is the maintained implementation, not ours.
#include <openssl/evp.h>

#include <array>
#include <memory>

#include <fmt/format.h>

#include "error.hpp"
#include "sha256.hpp"

namespace sgt {

std::string sha256_hex(std::string_view data) {
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                    &EVP_MD_CTX_free);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest.data(), &size) != 1 || size != 32) {
    throw Error("SHA-256: OpenSSL's EVP digest failed");
  }
  std::string hex;
  hex.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

}  // namespace sgt
