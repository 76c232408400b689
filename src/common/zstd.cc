#include "common/zstd.h"

#include <zstd.h>

#include <memory>

namespace serac::zstd {
namespace {

struct FreeContext {
  void operator()(ZSTD_CCtx* context) const { ZSTD_freeCCtx(context); }
};

// One context per thread, kept: making one for each call costs more than compressing a few KiB.
ZSTD_CCtx* ThreadContext() {
  thread_local std::unique_ptr<ZSTD_CCtx, FreeContext> context(ZSTD_createCCtx());
  return context.get();
}

}  // namespace

std::string Compress(std::string_view input, int level) {
  std::string frame(ZSTD_compressBound(input.size()), '\0');
  size_t written =
      ZSTD_compressCCtx(ThreadContext(), frame.data(), frame.size(), input.data(), input.size(), level);
  // The destination is as large as the bound zstd gives, so only a missing context fails.
  frame.resize(ZSTD_isError(written) ? 0 : written);
  return frame;
}

Result<std::string> Decompress(std::string_view frame, size_t size) {
  unsigned long long content = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (content != size) {
    return Error(ErrorCode::kInternal,
                 "compressed text does not hold the size it should (" + std::to_string(size) + " bytes)");
  }
  std::string bytes(size, '\0');
  size_t read = ZSTD_decompress(bytes.data(), bytes.size(), frame.data(), frame.size());
  if (ZSTD_isError(read)) {
    return Error(ErrorCode::kInternal, std::string("compressed text is damaged: ") + ZSTD_getErrorName(read));
  }
  if (read != size) return Error(ErrorCode::kInternal, "compressed text is shorter than it should be");
  return bytes;
}

}  // namespace serac::zstd
