#include "client/s3_file_io.h"

namespace serac::client {

namespace {

class S3OutputFile final : public iceberg::OutputFile {
 public:
  explicit S3OutputFile(S3Upload upload) : upload_(std::move(upload)) {}
  Status Write(std::string_view bytes) override { return upload_.Write(bytes); }
  Result<uint64_t> Close() override {
    const uint64_t size = upload_.bytes_written();
    SERAC_RETURN_IF_ERROR(upload_.Close().status());
    return size;
  }
  void Abort() override { upload_.Abort(); }
  uint64_t bytes_written() const override { return upload_.bytes_written(); }

 private:
  S3Upload upload_;
};

class S3FileIO final : public iceberg::FileIO {
 public:
  explicit S3FileIO(S3Client client) : client_(std::move(client)) {}

  Result<std::unique_ptr<iceberg::OutputFile>> Create(const std::string& location) override {
    SERAC_ASSIGN_OR_RETURN(S3Location where, ParseS3Location(location));
    return std::unique_ptr<iceberg::OutputFile>(
        new S3OutputFile(S3Upload(client_, where.bucket, where.key, /*if_none_match_star=*/true)));
  }

  Result<std::string> ReadAll(const std::string& location, uint64_t bytes_max,
                              std::string_view limit_name) override {
    SERAC_ASSIGN_OR_RETURN(S3Location where, ParseS3Location(location));
    SERAC_ASSIGN_OR_RETURN(ObjectInfo info, client_.HeadObject(where.bucket, where.key));
    if (info.size > bytes_max) {
      return Error(ErrorCode::kInvalidArgument, location + " is larger than " + std::string(limit_name) +
                                                    " (" + std::to_string(bytes_max) + " bytes)");
    }
    return client_.GetObject(where.bucket, where.key);
  }

  Result<uint64_t> Size(const std::string& location) override {
    SERAC_ASSIGN_OR_RETURN(S3Location where, ParseS3Location(location));
    SERAC_ASSIGN_OR_RETURN(ObjectInfo info, client_.HeadObject(where.bucket, where.key));
    return info.size;
  }

  Result<std::string> ReadRange(const std::string& location, uint64_t offset, uint64_t length) override {
    if (length == 0) return std::string();
    SERAC_ASSIGN_OR_RETURN(S3Location where, ParseS3Location(location));
    SERAC_ASSIGN_OR_RETURN(std::string bytes, client_.GetObject(where.bucket, where.key,
                                                                std::make_pair(offset, offset + length - 1)));
    if (bytes.size() != length) {
      return Error(ErrorCode::kInvalidArgument,
                   location + " ends before byte " + std::to_string(offset + length));
    }
    return bytes;
  }

  Status Delete(const std::string& location) override {
    SERAC_ASSIGN_OR_RETURN(S3Location where, ParseS3Location(location));
    return client_.DeleteObject(where.bucket, where.key);
  }

 private:
  S3Client client_;
};

}  // namespace

std::unique_ptr<iceberg::FileIO> MakeS3FileIO(S3Client client) {
  return std::make_unique<S3FileIO>(std::move(client));
}

}  // namespace serac::client
