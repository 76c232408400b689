// Hashes, HMAC and checksums used on the data path. Streaming classes hash in one pass while a
// body is received (never re-read a file). OpenSSL stays inside hash.cc.
// Instances are not thread-safe; use one per request.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace serac {

using Md5Digest = std::array<uint8_t, 16>;
using Sha1Digest = std::array<uint8_t, 20>;
using Sha256Digest = std::array<uint8_t, 32>;

// Streaming digest over OpenSSL EVP. Algorithm chosen at construction.
class Digest {
 public:
  enum class Algorithm { kMd5, kSha1, kSha256 };
  explicit Digest(Algorithm algorithm);
  ~Digest();
  Digest(Digest&&) noexcept;
  Digest& operator=(Digest&&) noexcept;
  Digest(const Digest&) = delete;
  Digest& operator=(const Digest&) = delete;

  void Update(const void* data, size_t size);
  void Update(std::string_view data) { Update(data.data(), data.size()); }
  // Returns the raw digest (16, 20 or 32 bytes) and resets for reuse.
  std::string Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

Md5Digest Md5(std::string_view data);
Sha256Digest Sha256(std::string_view data);
std::string Sha256Hex(std::string_view data);
Sha256Digest HmacSha256(std::string_view key, std::string_view data);
std::string HmacSha1(std::string_view key, std::string_view data);  // raw 20 bytes

// Fast non-cryptographic hashing whose values are fixed by this header (they may be stored):
// FNV-1a of bytes, and a 64-bit finaliser with full avalanche (splitmix64's).
inline uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001B3ull;
  }
  return hash;
}
inline uint64_t MixBits64(uint64_t value) {
  value ^= value >> 30;
  value *= 0xBF58476D1CE4E5B9ull;
  value ^= value >> 27;
  value *= 0x94D049BB133111EBull;
  return value ^ (value >> 31);
}

// CRCs. `Update` functions take the running value (start with 0) and return the new one.
uint32_t Crc32Update(uint32_t crc, const void* data, size_t size);      // IEEE / zlib
uint32_t Crc32cUpdate(uint32_t crc, const void* data, size_t size);     // Castagnoli (SSE4.2 when present)
uint64_t Crc64NvmeUpdate(uint64_t crc, const void* data, size_t size);  // poly 0xAD93D23594C93659 reflected
// CRC of A||B from crc(A), crc(B) and len(B): lets multipart full-object checksums skip a re-read.
uint32_t Crc32Combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);
uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);
uint64_t Crc64NvmeCombine(uint64_t crc_a, uint64_t crc_b, uint64_t length_b);

// The whole-object checksum algorithms (the protocols' header and element names for them live with
// the protocols).
enum class ChecksumAlgorithm : uint8_t { kCrc32, kCrc32c, kCrc64Nvme, kSha1, kSha256 };
std::string_view ChecksumAlgorithmName(ChecksumAlgorithm algorithm);  // "CRC32", "CRC32C", ...
// Parses "crc32", "CRC32C", "sha256", ... (case-insensitive).
std::optional<ChecksumAlgorithm> ParseChecksumAlgorithm(std::string_view name);

// Streaming checksum computation for one algorithm; Finish() returns the raw big-endian digest.
class Checksummer {
 public:
  explicit Checksummer(ChecksumAlgorithm algorithm);
  ~Checksummer();
  Checksummer(Checksummer&&) noexcept;
  Checksummer& operator=(Checksummer&&) noexcept;
  void Update(const void* data, size_t size);
  std::string Finish();  // raw digest bytes (4, 8, 20 or 32)
  ChecksumAlgorithm algorithm() const { return algorithm_; }

 private:
  ChecksumAlgorithm algorithm_;
  uint64_t crc_ = 0;
  std::unique_ptr<Digest> digest_;  // for SHA algorithms
};

// Compares two byte strings in time independent of where they differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace serac
