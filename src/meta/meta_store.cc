#include "meta/meta_store.h"

namespace serac::meta {

Result<BucketUsage> MetaStore::GetBucketUsage(const std::string& bucket) {
  SERAC_RETURN_IF_ERROR(GetBucket(bucket).status());
  BucketUsage usage;
  ListObjectsQuery query;
  query.bucket = bucket;
  query.with_details = false;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(std::vector<ObjectRecord> page, ListObjects(query));
    for (const ObjectRecord& object : page) {
      ++usage.objects;
      usage.bytes += object.size;
    }
    if (page.size() < query.limit) return usage;
    query.start_after = page.back().key;
  }
}

}  // namespace serac::meta
