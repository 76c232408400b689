#include "common/hash.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <zlib.h>

#include <array>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "common/encoding.h"
#include "common/hash_crc_clmul_internal.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace serac {

// ---------------------------------------------------------------------------------------------
// Digests (OpenSSL EVP).

namespace {

// OpenSSL only fails these calls on allocation failure or a broken build; neither is recoverable
// and a silently wrong digest would be worse than stopping.
void CheckOpenSsl(int result) {
  if (result != 1) std::abort();
}

// EVP_sha256() and its siblings make OpenSSL 3 look the implementation up again on every use,
// which costs more than hashing a SigV4 canonical request; each is fetched once instead.
const EVP_MD* FetchDigest(const char* name) {
  EVP_MD* md = EVP_MD_fetch(nullptr, name, nullptr);
  if (md == nullptr) std::abort();
  return md;  // kept for the life of the process
}
const EVP_MD* Md5Evp() {
  static const EVP_MD* md = FetchDigest("MD5");
  return md;
}
const EVP_MD* Sha1Evp() {
  static const EVP_MD* md = FetchDigest("SHA1");
  return md;
}
const EVP_MD* Sha256Evp() {
  static const EVP_MD* md = FetchDigest("SHA256");
  return md;
}

const EVP_MD* EvpForAlgorithm(Digest::Algorithm algorithm) {
  switch (algorithm) {
    case Digest::Algorithm::kMd5:
      return Md5Evp();
    case Digest::Algorithm::kSha1:
      return Sha1Evp();
    case Digest::Algorithm::kSha256:
      return Sha256Evp();
  }
  return Sha256Evp();
}

}  // namespace

struct Digest::Impl {
  const EVP_MD* md = nullptr;
  EVP_MD_CTX* ctx = nullptr;

  explicit Impl(const EVP_MD* chosen) : md(chosen), ctx(EVP_MD_CTX_new()) {
    if (ctx == nullptr) std::abort();
    CheckOpenSsl(EVP_DigestInit_ex(ctx, md, nullptr));
  }
  ~Impl() { EVP_MD_CTX_free(ctx); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
};

Digest::Digest(Algorithm algorithm) : impl_(std::make_unique<Impl>(EvpForAlgorithm(algorithm))) {}
Digest::~Digest() = default;
Digest::Digest(Digest&&) noexcept = default;
Digest& Digest::operator=(Digest&&) noexcept = default;

void Digest::Update(const void* data, size_t size) {
  if (size == 0) return;
  CheckOpenSsl(EVP_DigestUpdate(impl_->ctx, data, size));
}

std::string Digest::Finish() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  CheckOpenSsl(EVP_DigestFinal_ex(impl_->ctx, out, &length));
  CheckOpenSsl(EVP_DigestInit_ex(impl_->ctx, impl_->md, nullptr));
  return std::string(reinterpret_cast<const char*>(out), length);
}

namespace {

// One context per thread for the one-shot digests, instead of a new one per call (what
// EVP_Digest does): for the short texts SigV4 hashes, allocating and freeing the context is a
// good part of the cost.
EVP_MD_CTX* ThreadDigestContext() {
  struct Holder {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Holder() { EVP_MD_CTX_free(ctx); }
  };
  thread_local Holder holder;
  if (holder.ctx == nullptr) std::abort();
  return holder.ctx;
}

// Digest of the concatenated `parts` into `out` (EVP_MAX_MD_SIZE bytes); returns its length.
unsigned int DigestOf(const EVP_MD* md, std::initializer_list<std::string_view> parts, unsigned char* out) {
  EVP_MD_CTX* ctx = ThreadDigestContext();
  CheckOpenSsl(EVP_DigestInit_ex(ctx, md, nullptr));
  for (std::string_view part : parts) CheckOpenSsl(EVP_DigestUpdate(ctx, part.data(), part.size()));
  unsigned int length = 0;
  CheckOpenSsl(EVP_DigestFinal_ex(ctx, out, &length));
  return length;
}

template <size_t N>
std::array<uint8_t, N> OneShotDigest(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  if (DigestOf(md, {data}, out) != N) std::abort();
  std::array<uint8_t, N> digest{};
  std::memcpy(digest.data(), out, N);
  return digest;
}

// HMAC (RFC 2104) over a fetched digest. OpenSSL 3's one-shot HMAC() fetches the MAC and the
// digest by name on every call, and SigV4 computes one per request.
std::string Hmac(const EVP_MD* md, std::string_view key, std::string_view data) {
  constexpr size_t kBlockBytesMax = 128;
  const size_t block = static_cast<size_t>(EVP_MD_get_block_size(md));
  if (block == 0 || block > kBlockBytesMax) std::abort();
  unsigned char key_block[kBlockBytesMax] = {};
  if (key.size() > block) {
    DigestOf(md, {key}, key_block);
  } else {
    std::memcpy(key_block, key.data(), key.size());
  }
  char pad[kBlockBytesMax];
  unsigned char inner[EVP_MAX_MD_SIZE];
  unsigned char out[EVP_MAX_MD_SIZE];
  for (size_t i = 0; i < block; ++i) pad[i] = static_cast<char>(key_block[i] ^ 0x36);
  const unsigned int inner_length = DigestOf(md, {std::string_view(pad, block), data}, inner);
  for (size_t i = 0; i < block; ++i) pad[i] = static_cast<char>(key_block[i] ^ 0x5c);
  const unsigned int length = DigestOf(
      md, {std::string_view(pad, block), std::string_view(reinterpret_cast<char*>(inner), inner_length)},
      out);
  return std::string(reinterpret_cast<const char*>(out), length);
}

}  // namespace

Md5Digest Md5(std::string_view data) { return OneShotDigest<16>(Md5Evp(), data); }

Sha256Digest Sha256(std::string_view data) { return OneShotDigest<32>(Sha256Evp(), data); }

std::string Sha256Hex(std::string_view data) {
  Sha256Digest digest = Sha256(data);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

Sha256Digest HmacSha256(std::string_view key, std::string_view data) {
  std::string mac = Hmac(Sha256Evp(), key, data);
  Sha256Digest out{};
  std::memcpy(out.data(), mac.data(), out.size());
  return out;
}

std::string HmacSha1(std::string_view key, std::string_view data) { return Hmac(Sha1Evp(), key, data); }

// ---------------------------------------------------------------------------------------------
// CRCs. All three are reflected CRCs with init and xorout all ones, so one generic table engine
// and one combine routine serve them. CRC32C uses the SSE4.2 crc32 instruction when present; CRC32
// and CRC64NVME use carry-less multiply folding (hash_crc_clmul.cc) when the CPU has PCLMULQDQ.

namespace {

constexpr uint32_t kCrc32cPolyReflected = 0x82F63B78u;
constexpr uint32_t kCrc32PolyReflected = 0xEDB88320u;
constexpr uint64_t kCrc64NvmePolyReflected = 0x9A6C9329AC4BC9B5ull;  // bit-reverse of 0xAD93D23594C93659

// Eight 256-entry tables: table[0] is the classic byte-at-a-time table, table[k] advances a
// byte that sits k bytes further from the end of an 8-byte block.
template <typename T>
using SliceTables = std::array<std::array<T, 256>, 8>;

template <typename T>
constexpr SliceTables<T> MakeSliceTables(T poly) {
  SliceTables<T> tables{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    T crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ poly : crc >> 1;
    tables[0][byte] = crc;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t byte = 0; byte < 256; ++byte) {
      T previous = tables[k - 1][byte];
      tables[k][byte] = (previous >> 8) ^ tables[0][previous & 0xFF];
    }
  }
  return tables;
}

constexpr SliceTables<uint32_t> kCrc32cTables = MakeSliceTables<uint32_t>(kCrc32cPolyReflected);
constexpr SliceTables<uint32_t> kCrc32Tables = MakeSliceTables<uint32_t>(kCrc32PolyReflected);
constexpr SliceTables<uint64_t> kCrc64NvmeTables = MakeSliceTables<uint64_t>(kCrc64NvmePolyReflected);

uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof(word));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  word = __builtin_bswap64(word);
#endif
  return word;
}

// Processes raw (already pre-conditioned) CRC state `crc` over data, eight bytes per step.
template <typename T>
T SliceBy8(const SliceTables<T>& t, T crc, const uint8_t* p, size_t size) {
  while (size >= 8) {
    uint64_t word = LoadLittleEndian64(p) ^ static_cast<uint64_t>(crc);
    crc = t[7][word & 0xFF] ^ t[6][(word >> 8) & 0xFF] ^ t[5][(word >> 16) & 0xFF] ^
          t[4][(word >> 24) & 0xFF] ^ t[3][(word >> 32) & 0xFF] ^ t[2][(word >> 40) & 0xFF] ^
          t[1][(word >> 48) & 0xFF] ^ t[0][word >> 56];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFF];
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t Crc32cHardware(uint32_t crc, const uint8_t* p, size_t size) {
  uint64_t wide = crc;
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    wide = _mm_crc32_u64(wide, word);
    p += 8;
    size -= 8;
  }
  uint32_t narrow = static_cast<uint32_t>(wide);
  while (size-- > 0) narrow = _mm_crc32_u8(narrow, *p++);
  return narrow;
}

bool CpuHasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

// Multiplies a and b modulo the CRC polynomial, both in reflected form (x^0 is the top bit).
template <typename T>
T MultiplyModPoly(T a, T b, T poly) {
  constexpr T kTopBit = T{1} << (sizeof(T) * 8 - 1);
  T product = 0;
  for (T mask = kTopBit; mask != 0; mask >>= 1) {
    if (a & mask) product ^= b;
    b = (b & 1) ? (b >> 1) ^ poly : b >> 1;  // b *= x
  }
  return product;
}

// x^(8 * length) modulo the polynomial: the factor that shifts a CRC past `length` zero bytes.
template <typename T>
T XPowerOfBytes(uint64_t length, T poly) {
  constexpr T kTopBit = T{1} << (sizeof(T) * 8 - 1);
  T result = kTopBit;       // x^0
  T square = kTopBit >> 8;  // x^8: one byte
  while (length != 0) {
    if (length & 1) result = MultiplyModPoly<T>(result, square, poly);
    square = MultiplyModPoly<T>(square, square, poly);
    length >>= 1;
  }
  return result;
}

// With init == xorout == all ones, crc(A||B) = crc(A) * x^(8*len(B)) xor crc(B).
template <typename T>
T CombineReflected(T crc_a, T crc_b, uint64_t length_b, T poly) {
  return MultiplyModPoly<T>(XPowerOfBytes<T>(length_b, poly), crc_a, poly) ^ crc_b;
}

}  // namespace

namespace hash_internal {

// zlib's crc32 outruns slice-by-8 for CRC32, so it stays the portable path; the table below only
// serves short inputs and tails next to the carry-less multiply kernel.
uint32_t Crc32Portable(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const Bytef*>(data);
  uLong value = crc;
  while (size > 0) {
    uInt step = size > UINT_MAX ? UINT_MAX : static_cast<uInt>(size);
    value = crc32(value, p, step);
    p += step;
    size -= step;
  }
  return static_cast<uint32_t>(value);
}

uint64_t Crc64NvmePortable(uint64_t crc, const void* data, size_t size) {
  return ~SliceBy8<uint64_t>(kCrc64NvmeTables, ~crc, static_cast<const uint8_t*>(data), size);
}

bool CpuHasClmul() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return has;
#else
  return false;
#endif
}

// The kernels take whole 16-byte blocks; the table path takes the rest (and short inputs).
uint32_t Crc32Clmul(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t state = ~crc;
#if defined(__x86_64__)
  if (size >= kClmulMinBytes) {
    const size_t blocks = size & ~size_t{15};
    state = Crc32ClmulBlocks(state, p, blocks);
    p += blocks;
    size -= blocks;
  }
#endif
  return ~SliceBy8<uint32_t>(kCrc32Tables, state, p, size);
}

uint64_t Crc64NvmeClmul(uint64_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t state = ~crc;
#if defined(__x86_64__)
  if (size >= kClmulMinBytes) {
    const size_t blocks = size & ~size_t{15};
    state = Crc64NvmeClmulBlocks(state, p, blocks);
    p += blocks;
    size -= blocks;
  }
#endif
  return ~SliceBy8<uint64_t>(kCrc64NvmeTables, state, p, size);
}

}  // namespace hash_internal

uint32_t Crc32Update(uint32_t crc, const void* data, size_t size) {
  if (hash_internal::CpuHasClmul()) return hash_internal::Crc32Clmul(crc, data, size);
  return hash_internal::Crc32Portable(crc, data, size);
}

uint32_t Crc32cUpdate(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
#if defined(__x86_64__)
  if (CpuHasSse42()) return ~Crc32cHardware(~crc, p, size);
#endif
  return ~SliceBy8<uint32_t>(kCrc32cTables, ~crc, p, size);
}

uint64_t Crc64NvmeUpdate(uint64_t crc, const void* data, size_t size) {
  if (hash_internal::CpuHasClmul()) return hash_internal::Crc64NvmeClmul(crc, data, size);
  return hash_internal::Crc64NvmePortable(crc, data, size);
}

uint32_t Crc32Combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
  return CombineReflected<uint32_t>(crc_a, crc_b, length_b, kCrc32PolyReflected);
}

uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
  return CombineReflected<uint32_t>(crc_a, crc_b, length_b, kCrc32cPolyReflected);
}

uint64_t Crc64NvmeCombine(uint64_t crc_a, uint64_t crc_b, uint64_t length_b) {
  return CombineReflected<uint64_t>(crc_a, crc_b, length_b, kCrc64NvmePolyReflected);
}

// ---------------------------------------------------------------------------------------------
// Whole-object checksum algorithms.

std::string_view ChecksumAlgorithmName(ChecksumAlgorithm algorithm) {
  switch (algorithm) {
    case ChecksumAlgorithm::kCrc32:
      return "CRC32";
    case ChecksumAlgorithm::kCrc32c:
      return "CRC32C";
    case ChecksumAlgorithm::kCrc64Nvme:
      return "CRC64NVME";
    case ChecksumAlgorithm::kSha1:
      return "SHA1";
    case ChecksumAlgorithm::kSha256:
      return "SHA256";
  }
  return "";
}

std::optional<ChecksumAlgorithm> ParseChecksumAlgorithm(std::string_view name) {
  for (ChecksumAlgorithm algorithm :
       {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kCrc64Nvme,
        ChecksumAlgorithm::kSha1, ChecksumAlgorithm::kSha256}) {
    if (AsciiEqualsIgnoreCase(name, ChecksumAlgorithmName(algorithm))) return algorithm;
  }
  return std::nullopt;
}

Checksummer::Checksummer(ChecksumAlgorithm algorithm) : algorithm_(algorithm) {
  if (algorithm == ChecksumAlgorithm::kSha1) {
    digest_ = std::make_unique<Digest>(Digest::Algorithm::kSha1);
  } else if (algorithm == ChecksumAlgorithm::kSha256) {
    digest_ = std::make_unique<Digest>(Digest::Algorithm::kSha256);
  }
}

Checksummer::~Checksummer() = default;
Checksummer::Checksummer(Checksummer&&) noexcept = default;
Checksummer& Checksummer::operator=(Checksummer&&) noexcept = default;

void Checksummer::Update(const void* data, size_t size) {
  switch (algorithm_) {
    case ChecksumAlgorithm::kCrc32:
      crc_ = Crc32Update(static_cast<uint32_t>(crc_), data, size);
      break;
    case ChecksumAlgorithm::kCrc32c:
      crc_ = Crc32cUpdate(static_cast<uint32_t>(crc_), data, size);
      break;
    case ChecksumAlgorithm::kCrc64Nvme:
      crc_ = Crc64NvmeUpdate(crc_, data, size);
      break;
    case ChecksumAlgorithm::kSha1:
    case ChecksumAlgorithm::kSha256:
      digest_->Update(data, size);
      break;
  }
}

std::string Checksummer::Finish() {
  if (digest_ != nullptr) return digest_->Finish();
  size_t width = algorithm_ == ChecksumAlgorithm::kCrc64Nvme ? 8 : 4;
  std::string out(width, '\0');
  for (size_t i = 0; i < width; ++i) {
    out[i] = static_cast<char>((crc_ >> (8 * (width - 1 - i))) & 0xFF);
  }
  crc_ = 0;
  return out;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Lengths are not secret (digests and signatures have fixed sizes); contents are.
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace serac
