// Multipart uploads except completion (s3_complete.cc): CreateMultipartUpload, UploadPart,
// UploadPartCopy, AbortMultipartUpload, ListParts, ListMultipartUploads.
#include <algorithm>

#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/limits.h"
#include "common/random.h"
#include "objects/object_io.h"
#include "s3/s3_internal.h"
#include "s3/s3_xml.h"

namespace serac::s3 {

namespace {

// x-amz-checksum-algorithm / x-amz-checksum-type of CreateMultipartUpload, with AWS's pairing
// rules: CRC64NVME is full-object only, SHA-1/SHA-256 composite only.
HandlerResult ReadUploadChecksum(RequestContext& ctx, meta::UploadRecord& upload) {
  std::string_view algorithm_text = TrimWhitespace(ctx.header("x-amz-checksum-algorithm"));
  std::string type(TrimWhitespace(ctx.header("x-amz-checksum-type")));
  std::transform(type.begin(), type.end(), type.begin(),
                 [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; });
  if (algorithm_text.empty()) {
    if (!type.empty()) return InvalidRequest("x-amz-checksum-type requires x-amz-checksum-algorithm");
    return kHandled;
  }
  auto algorithm = ParseChecksumAlgorithm(algorithm_text);
  if (!algorithm) return InvalidArgument("Checksum algorithm provided is unsupported.");
  bool full_object_only = *algorithm == ChecksumAlgorithm::kCrc64Nvme;
  bool composite_only = *algorithm == ChecksumAlgorithm::kSha1 || *algorithm == ChecksumAlgorithm::kSha256;
  if (type.empty()) type = full_object_only ? "FULL_OBJECT" : "COMPOSITE";
  if (type != "FULL_OBJECT" && type != "COMPOSITE") return InvalidArgument("Invalid x-amz-checksum-type");
  if ((full_object_only && type != "FULL_OBJECT") || (composite_only && type != "COMPOSITE")) {
    return InvalidRequest("The " + std::string(ChecksumAlgorithmName(*algorithm)) +
                          " checksum algorithm does not support the " + type + " checksum type");
  }
  upload.checksum_algorithm = std::string(ChecksumAlgorithmName(*algorithm));
  upload.checksum_type = type;
  return kHandled;
}

Result<uint32_t> ReadPartNumber(const RequestContext& ctx) {
  auto number = ParseUint64(ctx.query.Get("partNumber"));
  if (!number || *number < 1 || *number > limits::kPartNumberMax) {
    return Error(ErrorCode::kInvalidArgument,
                 "Part number must be an integer between 1 and 10000, inclusive");
  }
  return static_cast<uint32_t>(*number);
}

// The checksum every part gets: the upload's algorithm, else CRC64NVME, which Complete combines
// into the full-object checksum AWS stores by default.
ChecksumAlgorithm PartChecksumAlgorithm(const meta::UploadRecord& upload) {
  return ParseOptionalAlgorithm(upload.checksum_algorithm).value_or(ChecksumAlgorithm::kCrc64Nvme);
}

HandlerResult LoadUpload(RequestContext& ctx, meta::UploadRecord& upload) {
  auto found = ctx.meta().GetUpload(ctx.bucket, ctx.key, std::string(ctx.query.Get("uploadId")));
  if (!found.ok()) return ErrorFromStatus(found.status(), Missing::kUpload);
  upload = std::move(found).value();
  return kHandled;
}

// Records a part whose blob is committed; its blob goes again if the upload vanished meanwhile.
HandlerResult StorePart(RequestContext& ctx, const std::string& upload_id, const meta::PartRecord& part) {
  Status stored = objects::CommitPart(ctx.meta(), ctx.blobs(), upload_id, part);
  if (stored.ok()) return kHandled;
  return ErrorFromStatus(stored, Missing::kUpload);
}

}  // namespace

HandlerResult CreateMultipartUpload(RequestContext& ctx) {
  if (auto problem = KeyProblem(ctx.key)) return problem;
  if (auto error = RequireBucket(ctx)) return error;
  meta::UploadRecord upload;
  if (auto error = HeadersFromRequest(ctx, upload.headers)) return error;
  if (auto error = ReadUploadChecksum(ctx, upload)) return error;
  upload.upload_id = RandomHexId(24);
  upload.bucket = ctx.bucket;
  upload.key = ctx.key;
  upload.initiated_ms = ToUnixMillis(Now());
  if (Status created = ctx.meta().CreateUpload(upload); !created.ok()) {
    return ErrorFromStatus(created, Missing::kBucket);
  }
  if (!upload.checksum_algorithm.empty()) {
    ctx.response.AddHeader("x-amz-checksum-algorithm", upload.checksum_algorithm);
    ctx.response.AddHeader("x-amz-checksum-type", upload.checksum_type);
  }
  XmlWriter xml;
  xml.Open("InitiateMultipartUploadResult", kS3Namespace);
  xml.Element("Bucket", ctx.bucket);
  xml.Element("Key", ctx.key);
  xml.Element("UploadId", upload.upload_id);
  return SendXml(ctx, xml.Finish());
}

HandlerResult UploadPart(RequestContext& ctx) {
  auto part_number = ReadPartNumber(ctx);
  if (!part_number.ok()) return ErrorFromStatus(part_number.status());
  meta::UploadRecord upload;
  if (auto error = LoadUpload(ctx, upload)) return error;

  auth::PayloadOptions options;
  options.default_checksum = PartChecksumAlgorithm(upload);
  ReceivedBody body;
  if (auto error = ReceiveBody(ctx, options, false, body)) return error;

  meta::PartRecord part;
  part.part_number = *part_number;
  part.size = body.size;
  part.etag = body.md5_hex;
  part.mtime_ms = ToUnixMillis(Now());
  part.blob_id = body.segments.front().blob_id;
  // Only a checksum of the part algorithm can take part in the object's checksum.
  if (body.checksum && body.checksum->first == *options.default_checksum) {
    part.checksum_value = body.checksum->second;
  }
  if (auto error = StorePart(ctx, upload.upload_id, part)) return error;
  ctx.response.SetStatus(200);
  ctx.response.AddHeader("ETag", QuoteEtag(part.etag));
  if (body.checksum) {
    ctx.response.AddHeader(auth::ChecksumHeaderName(body.checksum->first), body.checksum->second);
  }
  (void)ctx.response.Send("");
  return kHandled;
}

namespace {

// A byte range of an object copied into a new blob, hashed for the part's ETag and checksum.
struct CopiedPart {
  std::string blob_id;
  std::string md5_hex;
  std::string checksum_value;
};

// Receives the copied bytes: hashes them and writes them to the part's blob.
class PartCopySink final : public objects::ObjectByteSink {
 public:
  PartCopySink(objects::ObjectBodyWriter& writer, ChecksumAlgorithm algorithm)
      : writer_(writer), checksummer_(algorithm) {}

  Status Begin(uint64_t) override { return Status::Ok(); }
  Status Write(std::string_view bytes) override {
    md5_.Update(bytes);
    checksummer_.Update(bytes.data(), bytes.size());
    return writer_.Append(bytes);
  }

  std::string md5_hex() { return HexEncode(md5_.Finish()); }
  std::string checksum_value() { return Base64Encode(checksummer_.Finish()); }

 private:
  objects::ObjectBodyWriter& writer_;
  Digest md5_{Digest::Algorithm::kMd5};
  Checksummer checksummer_;
};

Result<CopiedPart> CopyRangeToBlob(RequestContext& ctx, const meta::ObjectRecord& source, ByteRange range,
                                   ChecksumAlgorithm algorithm) {
  // A part always lives in a blob of its own, however small: CompleteMultipartUpload strings the
  // parts' blobs together as the object's segments.
  objects::ObjectBodyWriter writer(ctx.blobs(), /*inline_bytes_max=*/0);
  SERAC_RETURN_IF_ERROR(writer.StartBlob());
  PartCopySink sink(writer, algorithm);
  SERAC_RETURN_IF_ERROR(objects::ReadObjectRange(ctx.blobs(), source, range.first, range.length, sink));
  meta::ObjectRecord written;
  SERAC_RETURN_IF_ERROR(writer.Finish(written));
  CopiedPart part;
  part.blob_id = written.segments.front().blob_id;
  part.md5_hex = sink.md5_hex();
  part.checksum_value = sink.checksum_value();
  return part;
}

}  // namespace

HandlerResult UploadPartCopy(RequestContext& ctx) {
  auto part_number = ReadPartNumber(ctx);
  if (!part_number.ok()) return ErrorFromStatus(part_number.status());
  meta::UploadRecord upload;
  if (auto error = LoadUpload(ctx, upload)) return error;
  meta::ObjectRecord source;
  if (auto error = LoadCopySource(ctx, source)) return error;
  ByteRange range{0, source.size};
  if (const std::string* range_header = ctx.request.FindHeader("x-amz-copy-source-range")) {
    auto parsed = ParseCopySourceRange(*range_header, source.size);
    if (!parsed.ok()) return ErrorFromStatus(parsed.status());
    range = *parsed;
  }
  if (range.length > limits::kSinglePutBytesMax) {
    return InvalidRequest(
        "The specified copy source is larger than the maximum allowable size for a copy source: 5368709120");
  }
  std::optional<ChecksumAlgorithm> algorithm = ParseOptionalAlgorithm(upload.checksum_algorithm);
  auto copied = CopyRangeToBlob(ctx, source, range, PartChecksumAlgorithm(upload));
  if (!copied.ok()) return ErrorFromStatus(copied.status());

  meta::PartRecord part;
  part.part_number = *part_number;
  part.size = range.length;
  part.etag = copied->md5_hex;
  part.mtime_ms = ToUnixMillis(Now());
  part.blob_id = copied->blob_id;
  part.checksum_value = copied->checksum_value;
  if (auto error = StorePart(ctx, upload.upload_id, part)) return error;

  XmlWriter xml;
  xml.Open("CopyPartResult", kS3Namespace);
  xml.Element("ETag", QuoteEtag(part.etag));
  xml.Element("LastModified", FormatIso8601(FromUnixMillis(part.mtime_ms)));
  if (algorithm)
    xml.Element("Checksum" + std::string(ChecksumAlgorithmName(*algorithm)), part.checksum_value);
  return SendXml(ctx, xml.Finish());
}

HandlerResult AbortMultipartUpload(RequestContext& ctx) {
  Status aborted = ctx.meta().AbortUpload(ctx.bucket, ctx.key, std::string(ctx.query.Get("uploadId")));
  if (!aborted.ok()) return ErrorFromStatus(aborted, Missing::kUpload);
  ctx.response.SetStatus(204);
  (void)ctx.response.Send("");
  return kHandled;
}

namespace {

Result<uint32_t> ReadPageSize(const RequestContext& ctx, std::string_view name) {
  const std::string* text = ctx.query.Find(name);
  if (!text) return limits::kKeysPerListMax;
  auto value = ParseUint64(*text);
  if (!value)
    return Error(ErrorCode::kInvalidArgument, std::string(name) + " must be a non-negative integer");
  return static_cast<uint32_t>(std::min<uint64_t>(*value, limits::kKeysPerListMax));
}

void WriteOwnerAndInitiator(XmlWriter& xml, std::string_view owner) {
  for (const char* element : {"Initiator", "Owner"}) {
    xml.Open(element);
    xml.Element("ID", owner);
    xml.Element("DisplayName", owner);
    xml.Close();
  }
}

}  // namespace

HandlerResult ListParts(RequestContext& ctx) {
  meta::UploadRecord upload;
  if (auto error = LoadUpload(ctx, upload)) return error;
  auto max_parts = ReadPageSize(ctx, "max-parts");
  if (!max_parts.ok()) return ErrorFromStatus(max_parts.status());
  auto marker = ParseUint64(ctx.query.Get("part-number-marker", "0"));
  if (!marker || *marker > limits::kPartNumberMax) return InvalidArgument("Invalid part-number-marker");
  auto parts = ctx.meta().ListParts(upload.upload_id, static_cast<uint32_t>(*marker), *max_parts + 1);
  if (!parts.ok()) return ErrorFromStatus(parts.status(), Missing::kUpload);
  bool truncated = parts->size() > *max_parts;
  if (truncated) parts->resize(*max_parts);

  XmlWriter xml;
  xml.Open("ListPartsResult", kS3Namespace);
  xml.Element("Bucket", ctx.bucket);
  xml.Element("Key", ctx.key);
  xml.Element("UploadId", upload.upload_id);
  WriteOwnerAndInitiator(xml, ctx.verified.access_key);
  xml.Element("StorageClass", "STANDARD");
  xml.Element("PartNumberMarker", *marker);
  if (!parts->empty()) xml.Element("NextPartNumberMarker", parts->back().part_number);
  xml.Element("MaxParts", *max_parts);
  xml.Bool("IsTruncated", truncated);
  if (!upload.checksum_algorithm.empty()) {
    xml.Element("ChecksumAlgorithm", upload.checksum_algorithm);
    xml.Element("ChecksumType", upload.checksum_type);
  }
  for (const meta::PartRecord& part : *parts) {
    xml.Open("Part");
    xml.Element("PartNumber", part.part_number);
    xml.Element("LastModified", FormatIso8601(FromUnixMillis(part.mtime_ms)));
    xml.Element("ETag", QuoteEtag(part.etag));
    xml.Element("Size", part.size);
    // Parts of an upload without an algorithm carry the default CRC64NVME, which AWS does not list.
    if (!part.checksum_value.empty() && !upload.checksum_algorithm.empty()) {
      xml.Element("Checksum" + upload.checksum_algorithm, part.checksum_value);
    }
    xml.Close();
  }
  return SendXml(ctx, xml.Finish());
}

namespace {

struct UploadListing {
  std::string prefix;
  std::string delimiter;
  std::string key_marker;  // scan position: uploads after (key_marker, upload_id_marker)
  std::string upload_id_marker;
  uint32_t max_uploads = limits::kKeysPerListMax;
};

struct UploadPage {
  std::vector<meta::UploadRecord> uploads;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_key_marker;        // last key or common prefix returned
  std::string next_upload_id_marker;  // empty when the page ended on a common prefix
};

// Where a page starts. A key marker inside a rolled-up prefix resumes after that prefix, which
// the previous page already reported as one CommonPrefixes entry.
UploadListing ResumeListing(UploadListing listing) {
  std::string_view common = CommonPrefixOf(listing.key_marker, listing.prefix, listing.delimiter);
  if (!common.empty()) {
    listing.key_marker = AfterCommonPrefix(common);
    listing.upload_id_marker.clear();
  }
  return listing;
}

// Uploads and common prefixes both count toward max-uploads. On a roll-up the scan jumps past
// the whole prefix, so a prefix with many uploads costs one row.
Result<UploadPage> CollectUploadPage(meta::MetaStore& meta, const std::string& bucket,
                                     const UploadListing& listing) {
  UploadPage page;
  meta::ListUploadsQuery query;
  query.bucket = bucket;
  query.prefix = listing.prefix;
  query.key_marker = listing.key_marker;
  query.upload_id_marker = listing.upload_id_marker;
  uint32_t count = 0;
  while (count < listing.max_uploads) {
    query.limit = std::min(listing.max_uploads - count, limits::kKeysPerListMax);
    SERAC_ASSIGN_OR_RETURN(std::vector<meta::UploadRecord> batch, meta.ListUploads(query));
    bool jumped = false;
    for (meta::UploadRecord& upload : batch) {
      ++count;
      std::string_view common = CommonPrefixOf(upload.key, listing.prefix, listing.delimiter);
      if (!common.empty()) {
        page.common_prefixes.emplace_back(common);
        page.next_key_marker = std::string(common);
        page.next_upload_id_marker.clear();
        query.key_marker = AfterCommonPrefix(common);
        query.upload_id_marker.clear();
        jumped = true;
        break;
      }
      page.next_key_marker = upload.key;
      page.next_upload_id_marker = upload.upload_id;
      query.key_marker = upload.key;
      query.upload_id_marker = upload.upload_id;
      page.uploads.push_back(std::move(upload));
    }
    if (!jumped && batch.size() < query.limit) return page;  // the scan reached the end
  }
  if (listing.max_uploads == 0) return page;
  query.limit = 1;
  SERAC_ASSIGN_OR_RETURN(std::vector<meta::UploadRecord> next, meta.ListUploads(query));
  page.truncated = !next.empty();
  return page;
}

void WriteUpload(XmlWriter& xml, const meta::UploadRecord& upload, std::string_view owner) {
  xml.Open("Upload");
  xml.Element("Key", upload.key);
  xml.Element("UploadId", upload.upload_id);
  WriteOwnerAndInitiator(xml, owner);
  xml.Element("StorageClass", "STANDARD");
  xml.Element("Initiated", FormatIso8601(FromUnixMillis(upload.initiated_ms)));
  if (!upload.checksum_algorithm.empty()) xml.Element("ChecksumAlgorithm", upload.checksum_algorithm);
  xml.Close();
}

}  // namespace

HandlerResult ListMultipartUploads(RequestContext& ctx) {
  if (auto error = RequireBucket(ctx)) return error;
  auto max_uploads = ReadPageSize(ctx, "max-uploads");
  if (!max_uploads.ok()) return ErrorFromStatus(max_uploads.status());
  UploadListing listing;
  listing.prefix = ctx.query.Get("prefix");
  listing.delimiter = ctx.query.Get("delimiter");
  listing.key_marker = ctx.query.Get("key-marker");
  // An upload-id-marker means nothing without a key-marker (AWS ignores it then).
  if (!listing.key_marker.empty()) listing.upload_id_marker = ctx.query.Get("upload-id-marker");
  listing.max_uploads = *max_uploads;
  auto page = CollectUploadPage(ctx.meta(), ctx.bucket, ResumeListing(listing));
  if (!page.ok()) return ErrorFromStatus(page.status(), Missing::kBucket);

  XmlWriter xml;
  xml.Open("ListMultipartUploadsResult", kS3Namespace);
  xml.Element("Bucket", ctx.bucket);
  xml.Element("KeyMarker", listing.key_marker);
  xml.Element("UploadIdMarker", listing.upload_id_marker);
  if (page->truncated) {
    xml.Element("NextKeyMarker", page->next_key_marker);
    xml.Element("NextUploadIdMarker", page->next_upload_id_marker);
  }
  xml.Element("Prefix", listing.prefix);
  if (!listing.delimiter.empty()) xml.Element("Delimiter", listing.delimiter);
  xml.Element("MaxUploads", *max_uploads);
  xml.Bool("IsTruncated", page->truncated);
  for (const meta::UploadRecord& upload : page->uploads) WriteUpload(xml, upload, ctx.verified.access_key);
  for (const std::string& common : page->common_prefixes) {
    xml.Open("CommonPrefixes");
    xml.Element("Prefix", common);
    xml.Close();
  }
  return SendXml(ctx, xml.Finish());
}

}  // namespace serac::s3
