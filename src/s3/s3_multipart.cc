// Multipart uploads except completion (s3_complete.cc): CreateMultipartUpload, UploadPart,
// UploadPartCopy, AbortMultipartUpload, ListParts, ListMultipartUploads.
#include <algorithm>

#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/limits.h"
#include "common/random.h"
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
    return Error(ErrorCode::kInvalidArgument, "Part number must be an integer between 1 and 10000, inclusive");
  }
  return static_cast<uint32_t>(*number);
}

HandlerResult LoadUpload(RequestContext& ctx, meta::UploadRecord& upload) {
  auto found = ctx.meta().GetUpload(ctx.bucket, ctx.key, std::string(ctx.query.Get("uploadId")));
  if (!found.ok()) return ErrorFromStatus(found.status(), Missing::kUpload);
  upload = std::move(found).value();
  return kHandled;
}

// Records a part whose blob is committed; removes the blob if the upload vanished meanwhile.
HandlerResult StorePart(RequestContext& ctx, const std::string& upload_id, const meta::PartRecord& part) {
  Status stored = ctx.meta().PutPart(upload_id, part);
  if (stored.ok()) return kHandled;
  RemoveBlobsQuietly(ctx, {{part.blob_id, part.size}});
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
  options.default_checksum = ParseOptionalAlgorithm(upload.checksum_algorithm);
  ReceivedBody body;
  if (auto error = ReceiveBody(ctx, options, false, body)) return error;

  meta::PartRecord part;
  part.part_number = *part_number;
  part.size = body.size;
  part.etag = body.md5_hex;
  part.mtime_ms = ToUnixMillis(Now());
  part.blob_id = body.segments.front().blob_id;
  // Only a checksum of the upload's own algorithm can take part in the object's checksum.
  if (body.checksum && options.default_checksum && body.checksum->first == *options.default_checksum) {
    part.checksum_value = body.checksum->second;
  }
  if (auto error = StorePart(ctx, upload.upload_id, part)) return error;
  ctx.response.SetStatus(200);
  ctx.response.AddHeader("ETag", QuoteEtag(part.etag));
  if (body.checksum) {
    ctx.response.AddHeader(ChecksumHeaderName(body.checksum->first), body.checksum->second);
  }
  (void)ctx.response.Send("");
  return kHandled;
}

namespace {

// Streams a byte range of an object into a new blob, hashing it for the part's ETag.
struct CopiedPart {
  std::string blob_id;
  std::string md5_hex;
  std::string checksum_value;
};

Status AppendRange(RequestContext& ctx, const meta::ObjectRecord& source, ByteRange range,
                   const std::function<Status(std::string_view)>& sink) {
  if (source.segments.empty()) {
    return sink(std::string_view(source.inline_data).substr(range.first, range.length));
  }
  std::string buffer(limits::kIoBufferBytes, '\0');
  uint64_t segment_start = 0;
  uint64_t range_end = range.first + range.length;
  for (const meta::Segment& segment : source.segments) {
    uint64_t segment_end = segment_start + segment.size;
    uint64_t from = std::max(range.first, segment_start);
    uint64_t to = std::min(range_end, segment_end);
    uint64_t base = segment_start;
    segment_start = segment_end;
    if (from >= to) continue;
    SERAC_ASSIGN_OR_RETURN(std::unique_ptr<blob::BlobReader> reader, ctx.blobs().Open(segment.blob_id));
    for (uint64_t at = from; at < to;) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), to - at));
      SERAC_ASSIGN_OR_RETURN(size_t got, reader->ReadAt(at - base, buffer.data(), want));
      if (got == 0) return Error(ErrorCode::kIoError, "blob shorter than recorded");
      SERAC_RETURN_IF_ERROR(sink(std::string_view(buffer.data(), got)));
      at += got;
    }
  }
  return Status::Ok();
}

Result<CopiedPart> CopyRangeToBlob(RequestContext& ctx, const meta::ObjectRecord& source, ByteRange range,
                                   std::optional<ChecksumAlgorithm> algorithm) {
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<blob::BlobWriter> writer, ctx.blobs().Create());
  Digest md5(Digest::Algorithm::kMd5);
  std::optional<Checksummer> checksummer;
  if (algorithm) checksummer.emplace(*algorithm);
  SERAC_RETURN_IF_ERROR(AppendRange(ctx, source, range, [&](std::string_view bytes) {
    md5.Update(bytes);
    if (checksummer) checksummer->Update(bytes.data(), bytes.size());
    return bytes.empty() ? Status::Ok() : writer->Append(bytes.data(), bytes.size());
  }));
  SERAC_RETURN_IF_ERROR(writer->Commit());
  CopiedPart part;
  part.blob_id = writer->id();
  part.md5_hex = HexEncode(md5.Finish());
  if (checksummer) part.checksum_value = Base64Encode(checksummer->Finish());
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
    return InvalidRequest("The specified copy source is larger than the maximum allowable size for a copy source: 5368709120");
  }
  std::optional<ChecksumAlgorithm> algorithm = ParseOptionalAlgorithm(upload.checksum_algorithm);
  auto copied = CopyRangeToBlob(ctx, source, range, algorithm);
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
  if (algorithm) xml.Element("Checksum" + std::string(ChecksumAlgorithmName(*algorithm)), part.checksum_value);
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
  if (!value) return Error(ErrorCode::kInvalidArgument, std::string(name) + " must be a non-negative integer");
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
    if (!part.checksum_value.empty()) xml.Element("Checksum" + upload.checksum_algorithm, part.checksum_value);
    xml.Close();
  }
  return SendXml(ctx, xml.Finish());
}

HandlerResult ListMultipartUploads(RequestContext& ctx) {
  if (auto error = RequireBucket(ctx)) return error;
  auto max_uploads = ReadPageSize(ctx, "max-uploads");
  if (!max_uploads.ok()) return ErrorFromStatus(max_uploads.status());
  meta::ListUploadsQuery query;
  query.bucket = ctx.bucket;
  query.prefix = ctx.query.Get("prefix");
  query.key_marker = ctx.query.Get("key-marker");
  query.upload_id_marker = ctx.query.Get("upload-id-marker");
  query.limit = *max_uploads + 1;
  auto uploads = ctx.meta().ListUploads(query);
  if (!uploads.ok()) return ErrorFromStatus(uploads.status(), Missing::kBucket);
  bool truncated = uploads->size() > *max_uploads;
  if (truncated) uploads->resize(*max_uploads);

  XmlWriter xml;
  xml.Open("ListMultipartUploadsResult", kS3Namespace);
  xml.Element("Bucket", ctx.bucket);
  xml.Element("KeyMarker", query.key_marker);
  xml.Element("UploadIdMarker", query.upload_id_marker);
  if (truncated && !uploads->empty()) {
    xml.Element("NextKeyMarker", uploads->back().key);
    xml.Element("NextUploadIdMarker", uploads->back().upload_id);
  }
  xml.Element("Prefix", query.prefix);
  xml.Element("MaxUploads", *max_uploads);
  xml.Bool("IsTruncated", truncated);
  for (const meta::UploadRecord& upload : *uploads) {
    xml.Open("Upload");
    xml.Element("Key", upload.key);
    xml.Element("UploadId", upload.upload_id);
    WriteOwnerAndInitiator(xml, ctx.verified.access_key);
    xml.Element("StorageClass", "STANDARD");
    xml.Element("Initiated", FormatIso8601(FromUnixMillis(upload.initiated_ms)));
    if (!upload.checksum_algorithm.empty()) xml.Element("ChecksumAlgorithm", upload.checksum_algorithm);
    xml.Close();
  }
  return SendXml(ctx, xml.Finish());
}

}  // namespace serac::s3
