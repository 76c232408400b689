// Fuzzes the Puffin footer reader and the deletion-vector reader (lengths, CRC-32, the portable
// 64-bit Roaring form, keys, footer JSON). Beyond crashes and unbounded allocation: a deletion
// vector serac reads it writes again and reads back to the same positions.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "iceberg/puffin/puffin.h"

namespace {

namespace ice = serac::iceberg;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz oracle: %s\n", what);
  std::abort();
}

void CheckVector(std::string_view blob) {
  auto dv = ice::DeletionVector::Deserialize(blob);
  if (!dv.ok()) return;
  auto again = ice::DeletionVector::Deserialize(dv->Serialize());
  if (!again.ok()) Fail("a deletion vector serac wrote does not read back");
  if (again->Positions() != dv->Positions()) Fail("a deletion vector changed on a round trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckVector(input);
  auto blobs = ice::ReadPuffinFooter(input);
  if (blobs.ok()) {
    for (const ice::PuffinBlob& blob : *blobs) {
      CheckVector(input.substr(static_cast<size_t>(blob.offset), static_cast<size_t>(blob.length)));
    }
  }
  return 0;
}
