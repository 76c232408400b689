// Private to common/: the two implementations behind Crc32Update and Crc64NvmeUpdate, exposed so
// that tests can hold them against each other. Everything else uses common/hash.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace serac::hash_internal {

// Portable paths, correct on every CPU: zlib's crc32 for CRC32, slice-by-8 tables for CRC64NVME.
// Same semantics as the public Update functions: start with 0, pass the previous result on.
uint32_t Crc32Portable(uint32_t crc, const void* data, size_t size);
uint64_t Crc64NvmePortable(uint64_t crc, const void* data, size_t size);

// True when the CPU has PCLMULQDQ and SSE4.1, i.e. the carry-less multiply path may run.
bool CpuHasClmul();

// Carry-less multiply folding for inputs of kClmulMinBytes or more; slice-by-8 tables for shorter
// inputs and for the last (size % 16) bytes.
// Same semantics as the portable functions. Call only when CpuHasClmul().
uint32_t Crc32Clmul(uint32_t crc, const void* data, size_t size);
uint64_t Crc64NvmeClmul(uint64_t crc, const void* data, size_t size);

// Below this many bytes the table path is as fast and the folding kernel cannot start.
inline constexpr size_t kClmulMinBytes = 64;

// The folding kernels (hash_crc_clmul.cc). `state` is the raw CRC register (the public value
// complemented); `size` is a multiple of 16 and at least kClmulMinBytes. Returns the register after
// `size` bytes. Only defined on x86-64; call only when CpuHasClmul().
uint32_t Crc32ClmulBlocks(uint32_t state, const uint8_t* data, size_t size);
uint64_t Crc64NvmeClmulBlocks(uint64_t state, const uint8_t* data, size_t size);

}  // namespace serac::hash_internal
