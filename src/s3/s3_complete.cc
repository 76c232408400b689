// CompleteMultipartUpload: checks the client's part list against the stored parts, derives the
// multipart ETag and checksum, and swaps the object in with one MetaStore transaction.
#include <map>

#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/limits.h"
#include "s3/s3_internal.h"
#include "s3/s3_multipart_checksum.h"
#include "s3/s3_xml.h"

namespace serac::s3 {

namespace {

Result<std::map<uint32_t, meta::PartRecord>> LoadAllParts(meta::MetaStore& meta,
                                                          const std::string& upload_id) {
  std::map<uint32_t, meta::PartRecord> parts;
  uint32_t marker = 0;
  while (true) {
    SERAC_ASSIGN_OR_RETURN(std::vector<meta::PartRecord> page,
                           meta.ListParts(upload_id, marker, limits::kKeysPerListMax));
    for (meta::PartRecord& part : page) {
      marker = part.part_number;
      parts.emplace(part.part_number, std::move(part));
    }
    if (page.size() < limits::kKeysPerListMax) return parts;
  }
}

S3Error InvalidPart(uint32_t number) {
  return MakeError(400, "InvalidPart",
                   "One or more of the specified parts could not be found. The part may not have been "
                   "uploaded, or the specified entity tag may not match the part's entity tag. (part " +
                       std::to_string(number) + ")");
}

// Matches the client's list against stored parts; returns the chosen parts in order.
HandlerResult ChooseParts(const std::vector<CompletedPart>& requested,
                          const std::map<uint32_t, meta::PartRecord>& stored,
                          const meta::UploadRecord& upload, std::vector<meta::PartRecord>& chosen) {
  auto algorithm = ParseOptionalAlgorithm(upload.checksum_algorithm);
  for (size_t i = 0; i < requested.size(); ++i) {
    const CompletedPart& want = requested[i];
    if (i > 0 && want.part_number <= requested[i - 1].part_number) {
      return MakeError(400, "InvalidPartOrder",
                       "The list of parts was not in ascending order. Parts must be ordered by part number.");
    }
    auto found = stored.find(want.part_number);
    if (found == stored.end() || found->second.etag != want.etag) return InvalidPart(want.part_number);
    if (algorithm) {
      auto listed = want.checksums.find(*algorithm);
      // Lenient when the client lists no checksum; strict when it lists a different one.
      if (listed != want.checksums.end() && !found->second.checksum_value.empty() &&
          listed->second != found->second.checksum_value) {
        return InvalidPart(want.part_number);
      }
    }
    chosen.push_back(found->second);
  }
  for (size_t i = 0; i + 1 < chosen.size(); ++i) {
    if (chosen[i].size < limits::kPartBytesMin) {
      return MakeError(400, "EntityTooSmall",
                       "Your proposed upload is smaller than the minimum allowed object size: every part but "
                       "the last must be at least 5 MiB (limits::kPartBytesMin); part " +
                           std::to_string(chosen[i].part_number) + " is " + std::to_string(chosen[i].size) +
                           " bytes");
    }
  }
  return kHandled;
}

std::string MultipartEtag(const std::vector<meta::PartRecord>& parts) {
  Digest md5(Digest::Algorithm::kMd5);
  for (const meta::PartRecord& part : parts) {
    auto raw = HexDecode(part.etag);
    if (raw) md5.Update(*raw);
  }
  return HexEncode(md5.Finish()) + "-" + std::to_string(parts.size());
}

std::string ObjectLocation(const RequestContext& ctx) {
  std::string location = ctx.request.tls ? "https://" : "http://";
  location += ctx.request.HeaderOr("host");
  // Appended piece by piece: `"/" + std::string` trips GCC 12's -Wrestrict false positive at -O3.
  location += '/';
  location += UriEncode(ctx.bucket, true);
  location += '/';
  location += UriEncode(ctx.key, false);
  return location;
}

HandlerResult BuildObject(RequestContext& ctx, const meta::UploadRecord& upload,
                          const std::vector<meta::PartRecord>& parts, meta::ObjectRecord& object) {
  object.bucket = ctx.bucket;
  object.key = ctx.key;
  object.headers = upload.headers;
  object.etag = MultipartEtag(parts);
  object.mtime_ms = ToUnixMillis(Now());
  object.part_count = static_cast<uint32_t>(parts.size());
  for (const meta::PartRecord& part : parts) {
    object.size += part.size;
    object.segments.push_back({part.blob_id, part.size});
  }
  if (object.size > limits::kObjectBytesMax) {
    return MakeError(
        400, "EntityTooLarge",
        "Your proposed upload exceeds the maximum allowed object size (limits::kObjectBytesMax)");
  }
  if (upload.checksum_algorithm.empty()) {
    // Every part then carries a CRC64NVME (when the client sent none of its own): combined, they
    // give the full-object checksum AWS stores by default. Any part without one: no checksum.
    object.checksum = MultipartChecksum(std::string(ChecksumAlgorithmName(ChecksumAlgorithm::kCrc64Nvme)),
                                        "FULL_OBJECT", parts);
  } else {
    object.checksum = MultipartChecksum(upload.checksum_algorithm, upload.checksum_type, parts);
  }
  return kHandled;
}

}  // namespace

HandlerResult CompleteMultipartUpload(RequestContext& ctx) {
  auto body = ReadXmlBody(ctx);
  if (!body.ok()) return BodyOpenError(ctx, body.status());
  auto requested = ParseCompleteMultipartUpload(*body);
  if (!requested.ok()) return ErrorFromStatus(requested.status());
  auto upload = ctx.meta().GetUpload(ctx.bucket, ctx.key, std::string(ctx.query.Get("uploadId")));
  if (!upload.ok()) return ErrorFromStatus(upload.status(), Missing::kUpload);
  meta::WriteCondition condition;
  if (auto error = ReadWriteCondition(ctx, condition)) return error;

  auto stored = LoadAllParts(ctx.meta(), upload->upload_id);
  if (!stored.ok()) return ErrorFromStatus(stored.status(), Missing::kUpload);
  std::vector<meta::PartRecord> chosen;
  if (auto error = ChooseParts(*requested, *stored, *upload, chosen)) return error;
  meta::ObjectRecord object;
  if (auto error = BuildObject(ctx, *upload, chosen, object)) return error;
  if (Status completed = ctx.meta().CompleteUpload(upload->upload_id, object, condition); !completed.ok()) {
    return WriteError(completed, condition, Missing::kUpload);
  }

  XmlWriter xml;
  xml.Open("CompleteMultipartUploadResult", kS3Namespace);
  xml.Element("Location", ObjectLocation(ctx));
  xml.Element("Bucket", ctx.bucket);
  xml.Element("Key", ctx.key);
  xml.Element("ETag", QuoteEtag(object.etag));
  if (object.checksum) WriteChecksumElements(xml, *object.checksum);
  return SendXml(ctx, xml.Finish());
}

}  // namespace serac::s3
