// Fuzzes the Avro reader with whole object container files (the form manifests and manifest lists
// take): the header and its schema, every codec, blocks, and the values of any schema. Beyond
// crashes and unbounded allocation: whatever serac reads, it writes again and reads back to the
// same values, and a file's schema resolves against itself by name to the same values too.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "iceberg/avro/avro.h"

namespace {

namespace avro = serac::iceberg::avro;

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz oracle: %s\n%s\n", what, detail.substr(0, 4096).c_str());
  std::abort();
}

void CheckRoundTrip(const avro::SchemaPtr& schema, const std::vector<avro::Value>& values) {
  avro::FileWriterOptions options;
  options.codec = avro::Codec::kNull;
  auto writer = avro::FileWriter::Make(schema, options);
  if (!writer.ok()) Fail("cannot write a file with a schema serac read", writer.status().message());
  for (const avro::Value& value : values) {
    serac::Status appended = writer->Append(value);
    if (!appended.ok()) Fail("cannot write a value serac read", appended.message());
  }
  auto file = writer->Finish();
  if (!file.ok()) Fail("cannot finish a file", file.status().message());
  auto reader = avro::FileReader::Open(*file);
  if (!reader.ok()) Fail("cannot open a file serac wrote", reader.status().message());
  auto reread = reader->ReadAll();
  if (!reread.ok()) Fail("cannot read a file serac wrote", reread.status().message());
  if (*reread != values) Fail("values changed on a round trip", avro::SchemaToJson(*schema));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto reader = avro::FileReader::Open(input);
  if (!reader.ok()) return 0;
  const avro::SchemaPtr schema = reader->schema();
  auto values = reader->ReadAll();
  if (!values.ok()) return 0;
  CheckRoundTrip(schema, *values);

  // By name, a schema resolves against itself to the same values (names are unique in a record).
  auto by_name = avro::Resolver::Make(schema, schema, avro::FieldMatch::kByName);
  if (!by_name.ok()) Fail("a schema does not resolve against itself", by_name.status().message());
  auto again = avro::FileReader::Open(input);
  if (!again.ok()) Fail("a file opened once does not open again", again.status().message());
  auto resolved = again->ReadAll(&*by_name);
  if (!resolved.ok()) Fail("a file does not resolve against its own schema", resolved.status().message());
  if (*resolved != *values)
    Fail("resolving against the file's own schema changed values", avro::SchemaToJson(*schema));

  // By field id, ids may repeat in a hostile file: only that it neither crashes nor runs away.
  auto by_id = avro::Resolver::Make(schema, schema, avro::FieldMatch::kByFieldId);
  if (by_id.ok()) {
    auto third = avro::FileReader::Open(input);
    if (third.ok()) (void)third->ReadAll(&*by_id);
  }
  return 0;
}
