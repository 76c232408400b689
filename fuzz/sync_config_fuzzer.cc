// Fuzzes the readers of `serac sync`'s configuration files, OLake's source.json ('s'),
// destination.json ('d') and streams.json (anything else): no crash, a clear error. Beyond that:
// a streams.json serac reads, it writes and reads back to the same text.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sync/config.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz oracle: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const char kind = input.empty() ? 'x' : input[0];
  if (!input.empty()) input.remove_prefix(1);
  std::vector<serac::sync::ConfigNotice> notices;
  if (kind == 's') {
    (void)serac::sync::ParseSourceConfig(input, "source.json", notices);
    return 0;
  }
  if (kind == 'd') {
    (void)serac::sync::ParseDestinationConfig(input, "destination.json", notices);
    return 0;
  }
  auto streams = serac::sync::ParseStreams(input, "streams.json", notices);
  if (!streams.ok()) return 0;
  const std::string written = serac::sync::StreamsToJson(*streams);
  auto again = serac::sync::ParseStreams(written, "streams.json", notices);
  if (!again.ok()) Fail("a streams.json serac wrote does not read back");
  if (serac::sync::StreamsToJson(*again) != written) Fail("a streams.json changed on a round trip");
  return 0;
}
