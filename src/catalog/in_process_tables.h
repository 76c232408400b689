// The table writers' two seams inside the server (iceberg/io/file_io.h, iceberg/write/table_catalog.h):
// files on serac's own object path and commits on the catalog's own commit path, so that the
// snapshot producers `serac table load` and `serac sync` drive over S3 and REST run unchanged
// inside the server (table maintenance). Both act with the server's own authority: no principal,
// no policy; whoever hands them out has decided the work may be done.
// Thread-safety: both may be shared by threads; an OutputFile is used by one.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "blob/blob_store.h"
#include "iceberg/io/file_io.h"
#include "meta/meta_store.h"

namespace serac::catalog {

// iceberg::FileIO over the object index and the blob store. Locations are "s3://bucket/key" (also
// s3a:// and s3n://) in the server's own buckets, and what is written is an object like any PUT's:
// inline in the index row up to limits::kInlineObjectBytesMax, else one blob, with the MD5 ETag and
// the full-object CRC64NVME a PUT without a checksum of its own gets. A file becomes visible (and
// durable) on Close, and never replaces an object: kAlreadyExists when the key is taken by then.
std::unique_ptr<iceberg::FileIO> MakeObjectFileIO(meta::MetaStore& meta, blob::BlobStore& blobs);

// The same, confined to what one table owns: objects below `owned_key` in bucket `warehouse`
// (meta/catalog_locations.h). Any other location is refused (kAccessDenied, naming it), so that no
// read, write or delete the server makes for one table reaches another's files.
std::unique_ptr<iceberg::FileIO> MakeTableFileIO(meta::MetaStore& meta, blob::BlobStore& blobs,
                                                 std::string warehouse, std::string owned_key);

// kAccessDenied unless `location` is an object below `owned_key` in bucket `warehouse`.
Status RequireOwnedFile(std::string_view warehouse, std::string_view owned_key, const std::string& location);

}  // namespace serac::catalog
