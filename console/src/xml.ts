// Small helpers over DOMParser for the S3 protocol's XML. Elements are matched by local name, so
// documents with or without the S3 namespace read the same. Text is read with textContent only.

export function parseXml(text: string): Document {
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  if (doc.getElementsByTagName('parsererror').length > 0 || !doc.documentElement) {
    throw new Error('the server sent XML that does not parse');
  }
  return doc;
}

function localName(node: Element): string {
  const name = node.localName || node.nodeName;
  const colon = name.indexOf(':');
  return colon >= 0 ? name.slice(colon + 1) : name;
}

// The direct element children of `parent` named `name`.
export function childElements(parent: Element, name: string): Element[] {
  const found: Element[] = [];
  for (let node = parent.firstElementChild; node; node = node.nextElementSibling) {
    if (localName(node) === name) found.push(node);
  }
  return found;
}

export function childElement(parent: Element, name: string): Element | null {
  for (let node = parent.firstElementChild; node; node = node.nextElementSibling) {
    if (localName(node) === name) return node;
  }
  return null;
}

// The text of the first child named `name`, or null when there is none.
export function childText(parent: Element, name: string): string | null {
  const child = childElement(parent, name);
  return child ? (child.textContent ?? '') : null;
}

export function rootNamed(doc: Document, name: string): Element | null {
  const root = doc.documentElement;
  return root && localName(root) === name ? root : null;
}

// Escapes text for an XML element's content.
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

// An S3 error document's code and message, or null if `text` is not one.
export function parseS3Error(text: string): { code: string; message: string } | null {
  if (!text.trimStart().startsWith('<')) return null;
  let doc: Document;
  try {
    doc = parseXml(text);
  } catch {
    return null;
  }
  const root = rootNamed(doc, 'Error');
  if (!root) return null;
  return { code: childText(root, 'Code') ?? '', message: childText(root, 'Message') ?? '' };
}
