// S3 through the console's proxy (api/s3/...): path-style requests, XML answers parsed with
// DOMParser, uploads (one PUT or multipart with progress) and downloads into a Blob.

import { ApiError, apiFetch, apiText, xhrRequest } from './api';
import { childElement, childElements, childText, escapeXml, parseXml, rootNamed } from './xml';

// ---- addressing ----

// An object key as a URL path: each segment percent-encoded, "/" kept. A key with a "." or ".."
// segment would be rewritten by the browser's URL parser (which also treats "%2E" as a dot), so
// such a key is sent with its slashes encoded too; the server decodes "%2F" back to "/".
export function encodeKey(key: string): string {
  const segments = key.split('/');
  const dotted = segments.some((s) => s === '.' || s === '..');
  if (dotted) return encodeSegment(key);
  return segments.map(encodeSegment).join('/');
}

// encodeURIComponent leaves !'()* alone; S3 signs and compares them encoded, so encode them too.
export function encodeSegment(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

export function bucketPath(bucket: string): string {
  return `s3/${encodeSegment(bucket)}`;
}

export function objectPath(bucket: string, key: string): string {
  return `${bucketPath(bucket)}/${encodeKey(key)}`;
}

// ---- XML documents ----

export interface BucketEntry {
  name: string;
  creationDate: string;
}

export function parseListBuckets(text: string): BucketEntry[] {
  const root = rootNamed(parseXml(text), 'ListAllMyBucketsResult');
  if (!root) throw new Error('not a ListAllMyBucketsResult');
  const buckets = childElement(root, 'Buckets');
  if (!buckets) return [];
  return childElements(buckets, 'Bucket').map((b) => ({
    name: childText(b, 'Name') ?? '',
    creationDate: childText(b, 'CreationDate') ?? '',
  }));
}

export interface ObjectEntry {
  key: string;
  size: number;
  lastModified: string;
  etag: string;
}

export interface ListPage {
  prefix: string;
  objects: ObjectEntry[];
  prefixes: string[];
  isTruncated: boolean;
  nextToken: string | null;
}

export function parseListObjects(text: string): ListPage {
  const root = rootNamed(parseXml(text), 'ListBucketResult');
  if (!root) throw new Error('not a ListBucketResult');
  const objects = childElements(root, 'Contents').map((c) => ({
    key: childText(c, 'Key') ?? '',
    size: Number(childText(c, 'Size') ?? '0'),
    lastModified: childText(c, 'LastModified') ?? '',
    etag: childText(c, 'ETag') ?? '',
  }));
  const prefixes = childElements(root, 'CommonPrefixes').map((p) => childText(p, 'Prefix') ?? '');
  const truncated = (childText(root, 'IsTruncated') ?? 'false').trim() === 'true';
  const next = childText(root, 'NextContinuationToken');
  return {
    prefix: childText(root, 'Prefix') ?? '',
    objects,
    prefixes,
    isTruncated: truncated,
    nextToken: truncated && next ? next : null,
  };
}

export interface Tag {
  key: string;
  value: string;
}

export function parseTagging(text: string): Tag[] {
  const root = rootNamed(parseXml(text), 'Tagging');
  if (!root) throw new Error('not a Tagging document');
  const set = childElement(root, 'TagSet');
  if (!set) return [];
  return childElements(set, 'Tag').map((t) => ({ key: childText(t, 'Key') ?? '', value: childText(t, 'Value') ?? '' }));
}

export function buildTagging(tags: Tag[]): string {
  const items = tags
    .map((t) => `<Tag><Key>${escapeXml(t.key)}</Key><Value>${escapeXml(t.value)}</Value></Tag>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><Tagging><TagSet>${items}</TagSet></Tagging>`;
}

export function parseInitiateMultipart(text: string): string {
  const root = rootNamed(parseXml(text), 'InitiateMultipartUploadResult');
  const id = root ? childText(root, 'UploadId') : null;
  if (!id) throw new Error('the server did not start the upload (no UploadId)');
  return id;
}

export interface CompletedPart {
  partNumber: number;
  etag: string;
}

export function buildCompleteMultipart(parts: CompletedPart[]): string {
  const items = [...parts]
    .sort((a, b) => a.partNumber - b.partNumber)
    .map((p) => `<Part><PartNumber>${p.partNumber}</PartNumber><ETag>${escapeXml(p.etag)}</ETag></Part>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUpload>${items}</CompleteMultipartUpload>`;
}

// ---- multipart planning ----

const MiB = 1024 * 1024;
export const SINGLE_PUT_BYTES_MAX = 8 * MiB; // larger files go multipart
export const PART_BYTES_DEFAULT = 8 * MiB;
export const PART_BYTES_MIN = 5 * MiB; // S3's minimum for every part but the last
export const PART_BYTES_MAX = 5 * 1024 * MiB;
export const PARTS_PER_UPLOAD_MAX = 10000;
export const OBJECT_BYTES_MAX = 5 * 1024 * 1024 * MiB; // 5 TiB

export interface PartPlan {
  number: number; // 1-based
  start: number; // byte offset, inclusive
  end: number; // byte offset, exclusive
}

export interface UploadPlan {
  multipart: boolean;
  partBytes: number;
  parts: PartPlan[];
}

// How a file of `size` bytes is sent: one PUT up to SINGLE_PUT_BYTES_MAX, else parts of
// `preferredPartBytes` (8 MiB), grown in whole MiB when the file would need more than 10,000.
export function planUpload(size: number, preferredPartBytes = PART_BYTES_DEFAULT): UploadPlan {
  if (!Number.isFinite(size) || size < 0) throw new Error('invalid file size');
  if (size > OBJECT_BYTES_MAX) throw new Error('the file is larger than the 5 TiB an object may hold');
  if (size <= SINGLE_PUT_BYTES_MAX) {
    return { multipart: false, partBytes: size, parts: [{ number: 1, start: 0, end: size }] };
  }
  let partBytes = Math.max(preferredPartBytes, PART_BYTES_MIN);
  if (Math.ceil(size / partBytes) > PARTS_PER_UPLOAD_MAX) {
    partBytes = Math.ceil(size / PARTS_PER_UPLOAD_MAX / MiB) * MiB;
  }
  if (partBytes > PART_BYTES_MAX) throw new Error('the file needs parts larger than 5 GiB');
  const parts: PartPlan[] = [];
  for (let start = 0, n = 1; start < size; start += partBytes, n++) {
    parts.push({ number: n, start, end: Math.min(start + partBytes, size) });
  }
  return { multipart: true, partBytes, parts };
}

// ---- requests ----

export async function listBuckets(): Promise<BucketEntry[]> {
  return parseListBuckets(await apiText('s3/'));
}

export async function createBucket(bucket: string): Promise<void> {
  await apiFetch(bucketPath(bucket), { method: 'PUT' });
}

export async function deleteBucket(bucket: string): Promise<void> {
  await apiFetch(bucketPath(bucket), { method: 'DELETE' });
}

export const LIST_PAGE_KEYS = 200;

export async function listObjects(bucket: string, prefix: string, token: string | null): Promise<ListPage> {
  const text = await apiText(bucketPath(bucket), {
    query: {
      'list-type': 2,
      prefix,
      delimiter: '/',
      'max-keys': LIST_PAGE_KEYS,
      'continuation-token': token ?? undefined,
    },
  });
  return parseListObjects(text);
}

export interface ObjectInfo {
  size: number;
  etag: string;
  contentType: string;
  lastModified: string;
  metadata: Array<[string, string]>; // x-amz-meta-* without the prefix
}

export function objectInfoFromHeaders(headers: Headers): ObjectInfo {
  const metadata: Array<[string, string]> = [];
  headers.forEach((value, name) => {
    const lower = name.toLowerCase();
    if (lower.startsWith('x-amz-meta-')) metadata.push([lower.slice('x-amz-meta-'.length), value]);
  });
  metadata.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return {
    size: Number(headers.get('Content-Length') ?? '0'),
    etag: headers.get('ETag') ?? '',
    contentType: headers.get('Content-Type') ?? '',
    lastModified: headers.get('Last-Modified') ?? '',
    metadata,
  };
}

export async function headObject(bucket: string, key: string): Promise<ObjectInfo> {
  const response = await apiFetch(objectPath(bucket, key), { method: 'HEAD' });
  return objectInfoFromHeaders(response.headers);
}

export async function getTags(bucket: string, key: string): Promise<Tag[]> {
  return parseTagging(await apiText(objectPath(bucket, key), { query: { tagging: true } }));
}

export async function putTags(bucket: string, key: string, tags: Tag[]): Promise<void> {
  await apiFetch(objectPath(bucket, key), {
    method: 'PUT',
    query: { tagging: true },
    headers: { 'Content-Type': 'application/xml' },
    body: buildTagging(tags),
  });
}

export async function deleteObject(bucket: string, key: string): Promise<void> {
  await apiFetch(objectPath(bucket, key), { method: 'DELETE' });
}

// The object's bytes as the server sent them.
export async function fetchObject(bucket: string, key: string): Promise<Blob> {
  const response = await apiFetch(objectPath(bucket, key));
  return response.blob();
}

// Saves the object as a file through an object URL and an <a download>.
export async function downloadObject(bucket: string, key: string): Promise<void> {
  const blob = await fetchObject(bucket, key);
  const url = URL.createObjectURL(blob);
  try {
    const link = document.createElement('a');
    link.href = url;
    link.download = key.split('/').filter(Boolean).pop() || 'download';
    link.rel = 'noopener';
    document.body.appendChild(link);
    link.click();
    link.remove();
  } finally {
    // Give the browser a moment to start the save before the URL goes away.
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }
}

// ---- uploads ----

export interface UploadHandle {
  promise: Promise<void>;
  cancel(): void;
}

const PART_UPLOADS_AT_ONCE = 3;

// Uploads `file` as bucket/key; `onProgress` receives the bytes sent so far. cancel() aborts the
// requests under way and, for a multipart upload, aborts the upload on the server.
export function uploadFile(
  bucket: string,
  key: string,
  file: Blob,
  onProgress: (sentBytes: number) => void,
): UploadHandle {
  const plan = planUpload(file.size);
  const contentType = file.type || 'application/octet-stream';
  const path = objectPath(bucket, key);
  const running = new Set<{ abort(): void }>();
  let cancelled = false;
  let uploadId: string | null = null;

  const cancelledError = () => new ApiError('cancelled', 0, 'Cancelled');

  async function single(): Promise<void> {
    const request = xhrRequest('PUT', path, file, { headers: { 'Content-Type': contentType }, onProgress });
    running.add(request);
    try {
      await request.promise;
      onProgress(file.size);
    } finally {
      running.delete(request);
    }
  }

  async function multipart(): Promise<void> {
    const started = await apiText(path, {
      method: 'POST',
      query: { uploads: true },
      headers: { 'Content-Type': contentType },
    });
    uploadId = parseInitiateMultipart(started);
    if (cancelled) throw cancelledError();
    const sent = new Map<number, number>();
    const report = () => {
      let total = 0;
      sent.forEach((n) => (total += n));
      onProgress(total);
    };
    const done: CompletedPart[] = [];
    let next = 0;
    const worker = async () => {
      while (next < plan.parts.length) {
        if (cancelled) throw cancelledError();
        const part = plan.parts[next++];
        const request = xhrRequest('PUT', path, file.slice(part.start, part.end), {
          query: { partNumber: part.number, uploadId: uploadId! },
          onProgress: (loaded) => {
            sent.set(part.number, loaded);
            report();
          },
        });
        running.add(request);
        try {
          const result = await request.promise;
          const etag = result.header('ETag');
          if (!etag) throw new Error(`part ${part.number}: the server sent no ETag`);
          done.push({ partNumber: part.number, etag });
          sent.set(part.number, part.end - part.start);
          report();
        } finally {
          running.delete(request);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PART_UPLOADS_AT_ONCE, plan.parts.length) }, worker));
    if (cancelled) throw cancelledError();
    const completed = await apiText(path, {
      method: 'POST',
      query: { uploadId },
      headers: { 'Content-Type': 'application/xml' },
      body: buildCompleteMultipart(done),
    });
    // CompleteMultipartUpload can fail after a 200 with an <Error> body.
    if (/<Error[\s>]/.test(completed)) {
      const doc = parseXml(completed);
      const message = doc.documentElement ? (childText(doc.documentElement, 'Message') ?? '') : '';
      throw new ApiError(message || 'the upload could not be completed', 200, 'InternalError');
    }
  }

  const abortOnServer = async () => {
    if (uploadId === null) return;
    try {
      await apiFetch(path, { method: 'DELETE', query: { uploadId } });
    } catch {
      // best effort: the server also ages out abandoned uploads
    }
  };

  const promise = (plan.multipart ? multipart() : single()).catch(async (error) => {
    cancelled = true;
    running.forEach((r) => r.abort());
    await abortOnServer();
    throw error;
  });

  return {
    promise,
    cancel() {
      if (cancelled) return;
      cancelled = true;
      running.forEach((r) => r.abort());
    },
  };
}
