// CRC32 (zlib) and CRC64NVME by carry-less multiplication (PCLMULQDQ): the input is folded 128 bits
// per lane, several lanes at a time, then the one remaining 128-bit lane is reduced to the CRC by
// Barrett reduction. Both CRCs are reflected, so one template serves both widths.
//
// Notation. Polynomials over GF(2); P is the CRC polynomial of degree W (32 or 64). A message block
// of 16 bytes loaded little-endian into a 128-bit lane has message bit j (byte j/8, bit j%8) at
// lane bit j; the first bit of the message is the highest power, so lane bit j is the coefficient
// of x^(127-j): the lane holds the block's polynomial bit-reflected ("reflected"). Likewise a
// 64-bit reflected value has x^i at bit 63-i. Multiplying two reflected 64-bit values with
// PCLMULQDQ yields the reflected 128-bit product times x (the product has degree <= 126 and lands
// one bit short of the top), which is why every multiplier below is x^(k-1) rather than x^k.
//
// A CRC register after a message M (with the initial register XORed into M's first W bits) is
// M * x^W mod P, reflected. Folding replaces a 128-bit lane X = H*x^64 + L that lies D bits before
// the data it is added to by H*(x^(D+64) mod P) + L*(x^D mod P), which is congruent to X*x^D
// modulo P and again fits in 128 bits, so the final CRC is unchanged.

#include "common/hash_crc_clmul_internal.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include <array>

namespace serac::hash_internal {
namespace {

// ---- Compile-time constants, from the polynomial alone ------------------------------------------

// Polynomials in "normal" form below: bit i is the coefficient of x^i, the x^W term left implicit.

constexpr uint64_t LowBits(int width) { return width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

// Reverses the low `width` bits of v.
constexpr uint64_t ReflectBits(uint64_t v, int width) {
  uint64_t out = 0;
  for (int i = 0; i < width; ++i) {
    if ((v >> i) & 1) out |= uint64_t{1} << (width - 1 - i);
  }
  return out;
}

// x^n mod P in normal form (degree < W).
constexpr uint64_t XPowModP(uint64_t poly, int width, int n) {
  uint64_t r = 1;  // x^0
  for (int i = 0; i < n; ++i) {
    const bool carry = (r >> (width - 1)) & 1;
    r = (r << 1) & LowBits(width);
    if (carry) r ^= poly;
  }
  return r;
}

// floor(x^(64+W) / P) minus its leading x^64 term, in normal form: the Barrett quotient
// estimator. Long division of x^(64+W) by P: after the leading 1 the working remainder is P's
// lower terms, and each further step emits one quotient bit, from x^63 down to x^0.
constexpr uint64_t BarrettQuotientLow(uint64_t poly, int width) {
  uint64_t r = poly;
  uint64_t quotient = 0;
  for (int bit = 63; bit >= 0; --bit) {
    const bool carry = (r >> (width - 1)) & 1;
    r = (r << 1) & LowBits(width);
    if (carry) {
      r ^= poly;
      quotient |= uint64_t{1} << bit;
    }
  }
  return quotient;
}

// The pair of multipliers that moves a lane D bits towards the end of the message. The lane's low
// quadword holds H (the earlier 8 bytes, weight x^64) and is multiplied by x^(D+63) mod P; its high
// quadword holds L and is multiplied by x^(D-1) mod P. Both reflected to 64 bits.
struct FoldKeys {
  uint64_t low_quadword;
  uint64_t high_quadword;
};

constexpr FoldKeys MakeFoldKeys(uint64_t poly, int width, int distance_bits) {
  return {ReflectBits(XPowModP(poly, width, distance_bits + 63), 64),
          ReflectBits(XPowModP(poly, width, distance_bits - 1), 64)};
}

constexpr int kLanes = 4;  // 128-bit lanes folded in parallel
constexpr int kLaneBytes = 16;
constexpr int kStrideBytes = kLanes * kLaneBytes;
static_assert(kStrideBytes == kClmulMinBytes, "the kernel needs one full stride to start");

struct ClmulConstants {
  // Moves each lane over one full stride of the main loop (kLanes * 128 bits).
  FoldKeys stride;
  // tail[d] moves a lane over (d + 1) * 128 bits: it folds the lane that lies d + 1 lanes before
  // the last one onto it. tail[0] also folds the lone 16-byte blocks after the main loop.
  std::array<FoldKeys, kLanes - 1> tail;
  // Reflected x^(63+W) mod P: takes the high-weight quadword H of the last lane to a value
  // congruent to H*x^(64+W), the first step of reducing lane*x^W to the register.
  uint64_t final_high;
  // Reflected floor(x^(64+W) / P) - x^64 (Barrett).
  uint64_t barrett_quotient;
  // Reflected P - x^W, to 64 bits.
  uint64_t poly;
};

// `poly_reflected` is the usual reflected (LSB-first) constant of a W-bit CRC.
constexpr ClmulConstants MakeClmulConstants(uint64_t poly_reflected, int width) {
  const uint64_t poly = ReflectBits(poly_reflected, width);
  ClmulConstants c{};
  c.stride = MakeFoldKeys(poly, width, kLanes * 128);
  for (int d = 0; d < kLanes - 1; ++d) c.tail[d] = MakeFoldKeys(poly, width, (d + 1) * 128);
  c.final_high = ReflectBits(XPowModP(poly, width, 63 + width), 64);
  c.barrett_quotient = ReflectBits(BarrettQuotientLow(poly, width), 64);
  c.poly = ReflectBits(poly, 64);
  return c;
}

constexpr ClmulConstants kCrc32Constants = MakeClmulConstants(0xEDB88320u, 32);
constexpr ClmulConstants kCrc64NvmeConstants = MakeClmulConstants(0x9A6C9329AC4BC9B5ull, 64);

// ---- Kernel ------------------------------------------------------------------------------------

#define SERAC_CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

SERAC_CLMUL_TARGET inline __m128i Keys(const FoldKeys& k) {
  return _mm_set_epi64x(static_cast<long long>(k.high_quadword), static_cast<long long>(k.low_quadword));
}

SERAC_CLMUL_TARGET inline __m128i Fold(__m128i lane, __m128i keys) {
  return _mm_xor_si128(_mm_clmulepi64_si128(lane, keys, 0x00), _mm_clmulepi64_si128(lane, keys, 0x11));
}

SERAC_CLMUL_TARGET inline __m128i Load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// Carry-less product of two 64-bit values, as (low, high) quadwords.
SERAC_CLMUL_TARGET inline std::array<uint64_t, 2> ClmulScalar(uint64_t a, uint64_t b) {
  const __m128i product = _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(a)),
                                               _mm_cvtsi64_si128(static_cast<long long>(b)), 0x00);
  return {static_cast<uint64_t>(_mm_cvtsi128_si64(product)),
          static_cast<uint64_t>(_mm_extract_epi64(product, 1))};
}

template <int kWidth>
SERAC_CLMUL_TARGET uint64_t ClmulBlocks(const ClmulConstants& c, uint64_t state, const uint8_t* p,
                                        size_t size) {
  // The first stride, with the incoming register XORed into the message's first W bits. Four
  // named lanes rather than an array: at -O2 an array stays in memory, in the dependency chain.
  static_assert(kLanes == 4);
  __m128i x0 = _mm_xor_si128(Load(p), _mm_cvtsi64_si128(static_cast<long long>(state)));
  __m128i x1 = Load(p + 16);
  __m128i x2 = Load(p + 32);
  __m128i x3 = Load(p + 48);
  p += kStrideBytes;
  size -= kStrideBytes;

  const __m128i stride = Keys(c.stride);
  while (size >= kStrideBytes) {
    x0 = _mm_xor_si128(Fold(x0, stride), Load(p));
    x1 = _mm_xor_si128(Fold(x1, stride), Load(p + 16));
    x2 = _mm_xor_si128(Fold(x2, stride), Load(p + 32));
    x3 = _mm_xor_si128(Fold(x3, stride), Load(p + 48));
    p += kStrideBytes;
    size -= kStrideBytes;
  }

  // Fold every lane onto the last one: x0 lies 3 lanes before x3's end, x1 two, x2 one.
  __m128i acc = _mm_xor_si128(_mm_xor_si128(x3, Fold(x2, Keys(c.tail[0]))),
                              _mm_xor_si128(Fold(x1, Keys(c.tail[1])), Fold(x0, Keys(c.tail[2]))));

  // Whole 16-byte blocks left over.
  const __m128i one_lane = Keys(c.tail[0]);
  while (size >= kLaneBytes) {
    acc = _mm_xor_si128(Fold(acc, one_lane), Load(p));
    p += kLaneBytes;
    size -= kLaneBytes;
  }

  // acc = H*x^64 + L; the register is acc*x^W mod P. First S = H*(x^(64+W) mod P) + L*x^W, a
  // polynomial of degree < 64+W that is congruent to it (reflected in 128 bits, top bits first).
  __m128i s = _mm_clmulepi64_si128(acc, _mm_cvtsi64_si128(static_cast<long long>(c.final_high)), 0x00);
  // L*x^W: the high quadword moved W bits towards the top (lower bit indices).
  s = _mm_xor_si128(s, _mm_slli_si128(_mm_srli_si128(acc, 8), 8 - kWidth / 8));
  const uint64_t s0 = static_cast<uint64_t>(_mm_cvtsi128_si64(s));
  const uint64_t s1 = static_cast<uint64_t>(_mm_extract_epi64(s, 1));

  // Barrett: S = S_hi*x^W + S_lo with deg S_lo < W. The quotient q = floor(S/P) is
  // S_hi + floor(S_hi * mu_low / x^64), and S mod P = S_lo + (q * (P - x^W) mod x^W).
  uint64_t s_high;  // S_hi reflected to 64 bits
  if constexpr (kWidth == 64) {
    s_high = s0;
  } else {
    s_high = (s0 >> (64 - kWidth)) | (s1 << kWidth);
  }
  const uint64_t s_low = s1 >> (64 - kWidth);  // S_lo as a reflected W-bit register
  // The product's x^64..x^126 sit at bits 62..0 of its low quadword (one short: see the top).
  const std::array<uint64_t, 2> t = ClmulScalar(s_high, c.barrett_quotient);
  const uint64_t quotient = (t[0] << 1) ^ s_high;
  // q*(P - x^W): its x^0..x^(W-1) end at bit 126 of the product; shift the 128 bits up by one and
  // take the top W.
  const std::array<uint64_t, 2> u = ClmulScalar(quotient, c.poly);
  const uint64_t low_terms = ((u[1] << 1) | (u[0] >> 63)) >> (64 - kWidth);
  return s_low ^ low_terms;
}

#undef SERAC_CLMUL_TARGET

}  // namespace

uint32_t Crc32ClmulBlocks(uint32_t state, const uint8_t* data, size_t size) {
  return static_cast<uint32_t>(ClmulBlocks<32>(kCrc32Constants, state, data, size));
}

uint64_t Crc64NvmeClmulBlocks(uint64_t state, const uint8_t* data, size_t size) {
  return ClmulBlocks<64>(kCrc64NvmeConstants, state, data, size);
}

}  // namespace serac::hash_internal

#endif  // defined(__x86_64__)
