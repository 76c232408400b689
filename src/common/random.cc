#include "common/random.h"

#include <openssl/rand.h>
#include <sys/random.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <random>

#include "common/encoding.h"

namespace serac {

namespace {

// Fills `out` from getrandom(2), falling back to OpenSSL's DRBG where the syscall is missing.
// Without randomness no id or secret would be safe, so running on is not an option.
void FillRandom(char* out, size_t count) {
  size_t filled = 0;
  while (filled < count) {
    ssize_t got = getrandom(out + filled, count - filled, 0);
    if (got > 0) {
      filled += static_cast<size_t>(got);
    } else if (got < 0 && errno != EINTR) {
      break;
    }
  }
  while (filled < count) {
    size_t step = count - filled > INT_MAX ? INT_MAX : count - filled;
    if (RAND_bytes(reinterpret_cast<unsigned char*>(out + filled), static_cast<int>(step)) != 1) {
      std::abort();
    }
    filled += step;
  }
}

}  // namespace

std::string RandomBytes(size_t count) {
  std::string out(count, '\0');
  FillRandom(out.data(), count);
  return out;
}

std::string RandomHexId(size_t bytes) { return HexEncode(RandomBytes(bytes)); }

std::string RandomRequestId() {
  // Request ids need to be unique, not secret: each thread draws from its own generator, seeded
  // once from the system, instead of making a system call per request.
  thread_local std::mt19937_64 generator = [] {
    const std::string seed = RandomBytes(16);
    std::seed_seq sequence(seed.begin(), seed.end());
    return std::mt19937_64(sequence);
  }();
  static constexpr char kDigits[] = "0123456789ABCDEF";
  uint64_t value = generator();
  std::string id(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) id[static_cast<size_t>(i)] = kDigits[value & 0xF];
  return id;
}

std::string RandomAlphanumeric(size_t length) {
  constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  // Bytes >= 248 (the largest multiple of 62 that fits) are rejected so every symbol is equally likely.
  constexpr unsigned kAcceptBelow = 256 - 256 % kAlphabet.size();
  std::string out;
  out.reserve(length);
  while (out.size() < length) {
    std::string batch = RandomBytes(length - out.size() + 8);
    for (unsigned char byte : batch) {
      if (byte >= kAcceptBelow || out.size() == length) continue;
      out.push_back(kAlphabet[byte % kAlphabet.size()]);
    }
  }
  return out;
}

std::string RandomUuid() {
  std::string bytes = RandomBytes(16);
  bytes[6] = static_cast<char>((bytes[6] & 0x0F) | 0x40);  // version 4
  bytes[8] = static_cast<char>((bytes[8] & 0x3F) | 0x80);  // RFC 4122 variant
  std::string hex = HexEncode(bytes);
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) + "-" +
         hex.substr(20);
}

}  // namespace serac
