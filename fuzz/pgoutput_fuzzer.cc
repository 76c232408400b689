// Fuzzes the logical replication decoders: CopyBoth frames and pgoutput messages of protocol
// versions 1 to 4 (the first byte picks it), fed as a sequence of length-prefixed messages (two
// bytes, big-endian) to one Decoder, so stream blocks open and close across messages. No crash,
// no read past a message, no allocation beyond what a message holds; an LSN written reads back.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "sync/pgoutput.h"

namespace {

namespace pg = serac::sync::pgoutput;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz oracle: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.empty()) return 0;
  pg::Decoder decoder(1 + static_cast<uint8_t>(input[0]) % 4);
  input.remove_prefix(1);
  while (input.size() >= 2) {
    const size_t length = (static_cast<uint8_t>(input[0]) << 8) | static_cast<uint8_t>(input[1]);
    input.remove_prefix(2);
    const std::string_view message = input.substr(0, length);
    input.remove_prefix(message.size());
    auto frame = pg::DecodeCopyData(message);
    if (frame.ok() && std::holds_alternative<pg::XLogData>(*frame)) {
      (void)decoder.Decode(std::get<pg::XLogData>(*frame).payload);
    } else {
      (void)decoder.Decode(message);
    }
    if (message.size() >= 8) {
      pg::Lsn lsn = 0;
      for (size_t i = 0; i < 8; ++i) lsn = (lsn << 8) | static_cast<uint8_t>(message[i]);
      auto again = pg::ParseLsn(pg::LsnToText(lsn));
      if (!again.ok() || *again != lsn) Fail("an LSN does not read back from its text");
    }
  }
  return 0;
}
