// Fuzzes the Parquet reading paths serac runs through Apache Arrow on files it did not write: the
// footer statistics of a data file (MetricsOfParquetFile), a load's input file read whole and
// conformed to a table (DataFileWriter::AppendFile, written to memory), and the key columns of a
// table's data file read with ranged reads through FileIO (RowKeys::FindIn). Beyond crashes and
// unbounded allocation (reads are capped by SetReadMemoryLimit under libFuzzer's malloc limit):
// every failure is an error, and rows that read are written again.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

#include "parquet/parquet_files.h"
#include "parquet/row_deletes.h"

namespace {

namespace ice = serac::iceberg;
namespace pq = serac::parquet;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz oracle: %s\n", what);
  std::abort();
}

// Files in memory: the input under one name, what the writer writes discarded.
class MemoryFileIO final : public ice::FileIO {
 public:
  std::string input;

  class Discard final : public ice::OutputFile {
   public:
    serac::Status Write(std::string_view bytes) override {
      written_ += bytes.size();
      return serac::Status::Ok();
    }
    serac::Result<uint64_t> Close() override { return written_; }
    void Abort() override {}
    uint64_t bytes_written() const override { return written_; }

   private:
    uint64_t written_ = 0;
  };

  serac::Result<std::unique_ptr<ice::OutputFile>> Create(const std::string&) override {
    return std::unique_ptr<ice::OutputFile>(new Discard());
  }
  serac::Result<std::string> ReadAll(const std::string&, uint64_t, std::string_view) override {
    return input;
  }
  serac::Result<uint64_t> Size(const std::string&) override { return input.size(); }
  serac::Result<std::string> ReadRange(const std::string&, uint64_t offset, uint64_t length) override {
    if (offset > input.size() || length > input.size() - offset) {
      return serac::Error(serac::ErrorCode::kInvalidArgument, "past the end");
    }
    return input.substr(offset, length);
  }
  serac::Status Delete(const std::string&) override { return serac::Status::Ok(); }
};

ice::Schema TableSchema() {
  ice::Schema schema;
  schema.fields.push_back(ice::NestedField{1, "id", false, ice::Type{ice::TypeId::kLong}, "", "", ""});
  schema.fields.push_back(ice::NestedField{2, "name", false, ice::Type{ice::TypeId::kString}, "", "", ""});
  schema.fields.push_back(ice::NestedField{3, "value", false, ice::Type{ice::TypeId::kDouble}, "", "", ""});
  return schema;
}

struct Setup {
  std::string directory;
  std::string keys_path;
  std::string input_path;
  ice::Schema schema = TableSchema();
  std::unique_ptr<pq::RowKeys> keys;

  Setup() {
    pq::SetReadMemoryLimit(256ULL << 20);  // under -malloc_limit_mb=512
    char pattern[] = "/tmp/parquet_fuzzer_XXXXXX";
    if (::mkdtemp(pattern) == nullptr) Fail("mkdtemp");
    directory = pattern;
    keys_path = directory + "/keys.csv";
    input_path = directory + "/input.parquet";
    std::ofstream(keys_path) << "id\n1\n2\n";
    auto read = pq::RowKeys::Read(keys_path, pq::InputFormat::kCsv, schema);
    if (!read.ok()) Fail("the key file does not read");
    keys = std::make_unique<pq::RowKeys>(std::move(read).value());
  }
  // libFuzzer ends its runs with exit(), which destroys this static: the
  // scratch directory goes with it instead of piling up in /tmp.
  ~Setup() {
    std::error_code ignored;
    std::filesystem::remove_all(directory, ignored);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Setup setup;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  pq::WriteOptions options;
  (void)pq::MetricsOfParquetFile(input, setup.schema, options);

  MemoryFileIO io;
  io.input.assign(input);
  ice::DataFile file;
  file.file_path = "memory://input.parquet";
  file.file_size_in_bytes = static_cast<int64_t>(size);
  auto positions = setup.keys->FindIn(io, file);
  if (positions.ok()) {
    for (size_t i = 1; i < positions->size(); ++i) {
      if ((*positions)[i] <= (*positions)[i - 1]) Fail("row positions out of order");
    }
  }

  std::ofstream(setup.input_path, std::ios::binary | std::ios::trunc)
      .write(input.data(), static_cast<std::streamsize>(size));
  auto writer =
      pq::DataFileWriter::Make(setup.schema, ice::PartitionSpec{}, options, io, "memory://table/data");
  if (!writer.ok()) Fail("no writer");
  const serac::Status appended = writer->AppendFile(setup.input_path, pq::InputFormat::kParquet);
  if (appended.ok()) {
    auto written = writer->Finish();
    if (!written.ok()) Fail("rows that read could not be written");
  } else {
    writer->AbortAndDelete();
  }
  return 0;
}
