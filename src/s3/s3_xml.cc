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

Status Malformed(std::string message) { return Error(ErrorCode::kMalformedDocument, std::move(message)); }

// Length of the entity reference at the start of `text` ("&amp;", "&#38;", "&#x26;"), or 0 when it
// is not one XML predefines: with DOCTYPE refused, any other name is an undeclared entity.
size_t PredefinedReferenceLength(std::string_view text) {
  size_t semicolon = text.find(';');
  if (semicolon == std::string_view::npos) return 0;
  std::string_view name = text.substr(1, semicolon - 1);
  for (std::string_view known : {"amp", "lt", "gt", "quot", "apos"}) {
    if (name == known) return semicolon + 1;
  }
  if (name.size() < 2 || name.front() != '#') return 0;
  bool hex = name[1] == 'x';
  std::string_view digits = name.substr(hex ? 2 : 1);
  if (digits.empty()) return 0;
  for (char c : digits) {
    bool digit = c >= '0' && c <= '9';
    bool hex_letter = (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!digit && !(hex && hex_letter)) return 0;
  }
  return semicolon + 1;
}

// pugixml keeps unknown entity references as literal text; S3 refuses them, so scan the markup
// (outside comments and CDATA, where '&' is plain text) for references XML does not predefine.
Status CheckEntityReferences(std::string_view xml) {
  size_t at = 0;
  while ((at = xml.find_first_of("&<", at)) != std::string_view::npos) {
    std::string_view rest = xml.substr(at);
    if (rest.substr(0, 4) == "<!--" || rest.substr(0, 9) == "<![CDATA[") {
      size_t end = xml.find(rest[3] == '-' ? "-->" : "]]>", at + 4);
      if (end == std::string_view::npos) return Malformed("unterminated comment or CDATA section");
      at = end + 3;
      continue;
    }
    if (rest.front() == '<') {
      ++at;
      continue;
    }
    size_t length = PredefinedReferenceLength(rest);
    if (length == 0) return Malformed("entity references other than XML's predefined ones are not allowed");
    at += length;
  }
  return Status::Ok();
}

bool IsXmlWhitespace(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// Parses `xml` strictly and returns its root element: exactly one top-level element, named
// `root_name`; nothing but whitespace, comments and processing instructions around it; no
// DOCTYPE (so no entity declarations) and no undeclared entity references.
Result<pugi::xml_node> ParseRoot(pugi::xml_document& doc, std::string_view xml, const char* root_name) {
  SERAC_RETURN_IF_ERROR(CheckEntityReferences(xml));
  // Keep key text byte for byte: no end-of-line normalisation, whitespace-only keys preserved.
  // parse_fragment keeps top-level text and extra elements (which pugixml would otherwise skip)
  // so they can be refused below; parse_doctype makes a DOCTYPE visible for the same reason.
  constexpr unsigned kFlags =
      (pugi::parse_default | pugi::parse_ws_pcdata_single | pugi::parse_fragment | pugi::parse_doctype) &
      ~pugi::parse_eol;
  pugi::xml_parse_result parsed = doc.load_buffer(xml.data(), xml.size(), kFlags, pugi::encoding_utf8);
  if (!parsed) return Malformed(std::string("XML parse error: ") + parsed.description());
  pugi::xml_node root;
  for (pugi::xml_node node : doc.children()) {
    switch (node.type()) {
      case pugi::node_element:
        if (root) return Malformed("the document has more than one root element");
        root = node;
        break;
      case pugi::node_pcdata:
      case pugi::node_cdata:
        if (!IsXmlWhitespace(node.value())) return Malformed("text outside the root element");
        break;
      case pugi::node_doctype:
        return Malformed("DOCTYPE declarations are not allowed");
      default:
        break;  // comments, processing instructions, the XML declaration
    }
  }
  if (!root) return Malformed("the document has no root element");
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
    if (request.objects.size() >= limits::kKeysPerDeleteMax) {
      return Malformed("at most " + std::to_string(limits::kKeysPerDeleteMax) +
                       " keys per DeleteObjects request (limits::kKeysPerDeleteMax)");
    }
    pugi::xml_node key = node.child("Key");
    if (!key) return Malformed("Object without Key");
    request.objects.push_back(
        {key.text().get(), std::string(TrimWhitespace(node.child("VersionId").text().get()))});
  }
  if (request.objects.empty()) return Malformed("Delete lists no objects");
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

Result<std::string> ParseCreateBucketConfiguration(std::string_view xml) {
  if (IsXmlWhitespace(xml)) return std::string();  // the body is optional
  pugi::xml_document doc;
  SERAC_ASSIGN_OR_RETURN(pugi::xml_node root, ParseRoot(doc, xml, "CreateBucketConfiguration"));
  return std::string(TrimWhitespace(root.child("LocationConstraint").text().get()));
}

}  // namespace serac::s3
