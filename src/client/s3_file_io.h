// iceberg::FileIO over S3 (serac's or anyone's): "s3://bucket/key" locations, files streamed up as
// they are written (S3Upload: at most parts_in_flight parts in memory, each uploading), created only where
// nothing is yet (If-None-Match: *), read whole with a size check first. Thread-safety: as S3Client; each
// OutputFile is used by one thread.
#pragma once

#include <memory>

#include "client/s3_client.h"
#include "iceberg/io/file_io.h"

namespace serac::client {

std::unique_ptr<iceberg::FileIO> MakeS3FileIO(S3Client client);

}  // namespace serac::client
