#include "s3/s3_xml.h"

#include <pugixml.hpp>

#include "common/encoding.h"
#include "common/limits.h"

namespace serac::s3 {

XmlWriter::XmlWriter() : out_("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n") {}

void XmlWriter::Open(std::string_view name, std::string_view xmlns) {
  out_ += '<';
  out_ += name;
  if (!xmlns.empty()) {
    out_ += " xmlns=\"";
    out_ += XmlEscape(xmlns);
    out_ += '"';
  }
  out_ += '>';
  open_.emplace_back(name);
}

void XmlWriter::Close() {
  if (open_.empty()) return;
  out_ += "</";
  out_ += open_.back();
  out_ += '>';
  open_.pop_back();
}

void XmlWriter::Element(std::string_view name, std::string_view text) {
  out_ += '<';
  out_ += name;
  out_ += '>';
  out_ += XmlEscape(text);
  out_ += "</";
  out_ += name;
  out_ += '>';
}

void XmlWriter::Element(std::string_view name, uint64_t number) { Element(name, std::to_string(number)); }

std::string XmlWriter::Finish() {
  while (!open_.empty()) Close();
  return std::move(out_);
}

namespace {

Status Malformed(std::string message) { return Error(ErrorCode::kMalformedXml, std::move(message)); }

// Parses `xml` and returns its root element if it is named `root_name`.
Result<pugi::xml_node> ParseRoot(pugi::xml_document& doc, std::string_view xml, const char* root_name) {
  // Keep key text byte for byte: no end-of-line normalisation, whitespace-only keys preserved.
  constexpr unsigned kFlags = (pugi::parse_default | pugi::parse_ws_pcdata_single) & ~pugi::parse_eol;
  pugi::xml_parse_result parsed = doc.load_buffer(xml.data(), xml.size(), kFlags, pugi::encoding_utf8);
  if (!parsed) return Malformed(std::string("XML parse error: ") + parsed.description());
  pugi::xml_node root = doc.document_element();
  if (std::string_view(root.name()) != root_name) {
    return Malformed(std::string("expected root element ") + root_name);
  }
  return root;
}

std::string StripQuotes(std::string_view etag) {
  etag = TrimWhitespace(etag);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return std::string(etag);
}

// Reads the <ChecksumXXX> children of a <Part>.
Status ReadPartChecksums(const pugi::xml_node& part, CompletedPart& out) {
  for (pugi::xml_node child : part.children()) {
    std::string_view name = child.name();
    if (name.substr(0, 8) != "Checksum") continue;
    auto algorithm = ParseChecksumAlgorithm(name.substr(8));
    if (!algorithm) continue;  // ChecksumType and unknown algorithms carry nothing to verify
    out.checksums[*algorithm] = std::string(TrimWhitespace(child.text().get()));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<CompletedPart>> ParseCompleteMultipartUpload(std::string_view xml) {
  pugi::xml_document doc;
  SERAC_ASSIGN_OR_RETURN(pugi::xml_node root, ParseRoot(doc, xml, "CompleteMultipartUpload"));
  std::vector<CompletedPart> parts;
  for (pugi::xml_node node : root.children("Part")) {
    if (parts.size() >= limits::kPartsPerUploadMax) return Malformed("too many parts");
    CompletedPart part;
    auto number = ParseUint64(TrimWhitespace(node.child("PartNumber").text().get()));
    if (!number || *number < 1 || *number > limits::kPartNumberMax) return Malformed("invalid PartNumber");
    part.part_number = static_cast<uint32_t>(*number);
    pugi::xml_node etag = node.child("ETag");
    if (!etag) return Malformed("part without ETag");
    part.etag = StripQuotes(etag.text().get());
    SERAC_RETURN_IF_ERROR(ReadPartChecksums(node, part));
    parts.push_back(std::move(part));
  }
  if (parts.empty()) return Malformed("CompleteMultipartUpload lists no parts");
  return parts;
}

Result<DeleteRequest> ParseDeleteObjects(std::string_view xml) {
  pugi::xml_document doc;
  SERAC_ASSIGN_OR_RETURN(pugi::xml_node root, ParseRoot(doc, xml, "Delete"));
  DeleteRequest request;
  std::string_view quiet = TrimWhitespace(root.child("Quiet").text().get());
  request.quiet = AsciiEqualsIgnoreCase(quiet, "true");
  for (pugi::xml_node node : root.children("Object")) {
    if (request.keys.size() >= limits::kKeysPerDeleteMax) {
      return Malformed("at most " + std::to_string(limits::kKeysPerDeleteMax) +
                       " keys per DeleteObjects request (limits::kKeysPerDeleteMax)");
    }
    pugi::xml_node key = node.child("Key");
    if (!key) return Malformed("Object without Key");
    request.keys.emplace_back(key.text().get());
  }
  if (request.keys.empty()) return Malformed("Delete lists no objects");
  return request;
}

Result<TagSet> ParseTagging(std::string_view xml) {
  pugi::xml_document doc;
  SERAC_ASSIGN_OR_RETURN(pugi::xml_node root, ParseRoot(doc, xml, "Tagging"));
  pugi::xml_node tag_set = root.child("TagSet");
  if (!tag_set) return Malformed("Tagging without TagSet");
  TagSet tags;
  for (pugi::xml_node tag : tag_set.children("Tag")) {
    pugi::xml_node key = tag.child("Key");
    if (!key) return Malformed("Tag without Key");
    tags.emplace_back(key.text().get(), tag.child("Value").text().get());
  }
  return tags;
}

}  // namespace serac::s3
