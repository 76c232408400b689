// What a commit costs inside one process, with no HTTP and no disk: append commits (one data file
// each) through iceberg::CommitSnapshot into a table kept in memory (MemoryTableCatalog, which
// applies each commit as the catalog applies it) with the table's files in memory too. It prints
// the commits per second and the microseconds per commit of the whole loop (load, prepare, the
// catalog seam, apply), and of preparing alone, so that the difference is the seam and the apply.
//
//   commit_path_bench [--commits N] [--history H]
//
// --history H commits first (untimed), so the timed commits apply to a table with H snapshots.
// Not a test: it prints a table and exits 0 unless it could not run. See bench/README.md.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "iceberg/iceberg.h"
#include "iceberg/write/memory_table_catalog.h"
#include "iceberg/write/snapshot_producer.h"
#include "iceberg/write/table_catalog.h"

namespace {

using namespace serac;
using namespace serac::iceberg;

// Files kept in a map: the manifests and lists the producers write and read back.
class MemoryFileIO final : public FileIO {
 public:
  class File final : public OutputFile {
   public:
    File(MemoryFileIO& io, std::string location) : io_(io), location_(std::move(location)) {}
    Status Write(std::string_view bytes) override {
      bytes_.append(bytes);
      return Status::Ok();
    }
    Result<uint64_t> Close() override {
      const uint64_t size = bytes_.size();
      std::lock_guard lock(io_.mutex_);
      io_.files_[location_] = std::move(bytes_);
      return size;
    }
    void Abort() override { bytes_.clear(); }
    uint64_t bytes_written() const override { return bytes_.size(); }

   private:
    MemoryFileIO& io_;
    std::string location_;
    std::string bytes_;
  };

  Result<std::unique_ptr<OutputFile>> Create(const std::string& location) override {
    return std::unique_ptr<OutputFile>(new File(*this, location));
  }
  Result<std::string> ReadAll(const std::string& location, uint64_t, std::string_view) override {
    std::lock_guard lock(mutex_);
    auto found = files_.find(location);
    if (found == files_.end()) return Error(ErrorCode::kNotFound, location);
    return found->second;
  }
  Result<uint64_t> Size(const std::string& location) override {
    SERAC_ASSIGN_OR_RETURN(std::string bytes, ReadAll(location, 0, ""));
    return bytes.size();
  }
  Result<std::string> ReadRange(const std::string& location, uint64_t offset, uint64_t length) override {
    SERAC_ASSIGN_OR_RETURN(std::string bytes, ReadAll(location, 0, ""));
    if (offset + length > bytes.size()) return Error(ErrorCode::kInvalidArgument, "short file " + location);
    return bytes.substr(offset, length);
  }
  Status Delete(const std::string& location) override {
    std::lock_guard lock(mutex_);
    files_.erase(location);
    return Status::Ok();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::string> files_;
};

DataFile OneFile(int64_t n) {
  DataFile file;
  file.file_path = "s3://bench/t/data/" + std::to_string(n) + ".parquet";
  file.record_count = 1000;
  file.file_size_in_bytes = 100'000;
  return file;
}

int Fail(const Status& status) {
  std::fprintf(stderr, "commit_path_bench: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t commits = 2000;
  int64_t history = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--commits") {
      commits = std::atoll(argv[i + 1]);
    } else if (flag == "--history") {
      history = std::atoll(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: commit_path_bench [--commits N] [--history H]\n");
      return 2;
    }
  }

  auto creation = TableCreation::Parse(R"({"name": "t", "schema": {"type": "struct", "schema-id": 0,
      "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]},
      "properties": {"format-version": "2", "commit.manifest.min-count-to-merge": "50"}})");
  if (!creation.ok()) return Fail(creation.status());
  auto metadata = creation->NewMetadata("s3://bench/t", "6f0b6c8c-0000-4000-8000-000000000001",
                                        ToUnixMillis(Now()) - 1000);
  if (!metadata.ok()) return Fail(metadata.status());
  MemoryTableCatalog catalog(std::move(metadata).value());
  MemoryFileIO io;
  const TableRef ref{{"ns"}, "t"};

  int64_t file = 0;
  auto commit_one = [&]() -> Status {
    SnapshotProducer producer(io, ProducerKind::kAppend);
    producer.AddDataFile(OneFile(file++));
    return CommitSnapshot(catalog, ref, producer).status();
  };
  for (int64_t i = 0; i < history; ++i) {
    if (Status done = commit_one(); !done.ok()) return Fail(done);
  }

  using Clock = std::chrono::steady_clock;
  const auto whole_start = Clock::now();
  for (int64_t i = 0; i < commits; ++i) {
    if (Status done = commit_one(); !done.ok()) return Fail(done);
  }
  const double whole_s = std::chrono::duration<double>(Clock::now() - whole_start).count();

  // Preparing alone, on the table as it now is (nothing committed, files cleaned up).
  const TableMetadata base = catalog.metadata();
  const auto prepare_start = Clock::now();
  for (int64_t i = 0; i < commits; ++i) {
    SnapshotProducer producer(io, ProducerKind::kAppend);
    producer.AddDataFile(OneFile(file++));
    auto prepared = producer.Prepare(base, ToUnixMillis(Now()));
    if (!prepared.ok()) return Fail(prepared.status());
    producer.CleanUp("");
  }
  const double prepare_s = std::chrono::duration<double>(Clock::now() - prepare_start).count();

  const double per_commit_us = whole_s * 1e6 / static_cast<double>(commits);
  const double per_prepare_us = prepare_s * 1e6 / static_cast<double>(commits);
  std::printf("in-process commit path (%lld commits on a table of %lld+ snapshots)\n",
              static_cast<long long>(commits), static_cast<long long>(history));
  std::printf("%-34s %12s %12s\n", "phase", "commits/s", "us/commit");
  std::printf("%-34s %12.0f %12.1f\n", "whole loop (load..apply)", commits / whole_s, per_commit_us);
  std::printf("%-34s %12.0f %12.1f\n", "prepare alone", commits / prepare_s, per_prepare_us);
  std::printf("%-34s %12s %12.1f\n", "seam, apply and load (difference)", "", per_commit_us - per_prepare_us);
  return 0;
}
