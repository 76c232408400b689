// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  apiFetch,
  apiUrl,
  loadSession,
  onSignedOut,
  parseJsonKeepingLargeIntegers,
  setCsrfToken,
  signIn,
  signOut,
} from '../src/api';
import { listObjects, uploadFile } from '../src/s3';

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
  credentials?: string;
}

let calls: Call[] = [];
let answer: (call: Call) => Response;

function headersOf(init: RequestInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init?.headers).forEach((v, k) => (out[k.toLowerCase()] = v));
  return out;
}

beforeEach(() => {
  calls = [];
  setCsrfToken(null);
  vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
    const call = { url, method: init?.method ?? 'GET', headers: headersOf(init), body: init?.body, credentials: init?.credentials };
    calls.push(call);
    return answer(call);
  });
});

afterEach(() => {
  vi.unstubAllGlobals();
  onSignedOut(null);
});

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });

const SESSION = { user: 'alice', 'access-key': 'AK', root: false, csrf: 'csrf-123', 'expires-ms': 1 };

describe('requests and the session', () => {
  it('builds URLs under the API base with S3 flags', () => {
    expect(apiUrl('s3/b/k', { tagging: true })).toBe('/_serac/console/api/s3/b/k?tagging');
    expect(apiUrl('s3/b', { 'list-type': 2, prefix: 'a b/', token: undefined, off: false })).toBe(
      '/_serac/console/api/s3/b?list-type=2&prefix=a%20b%2F',
    );
    expect(apiUrl('s3/b/k', { partNumber: 3, uploadId: 'u+1' })).toBe('/_serac/console/api/s3/b/k?partNumber=3&uploadId=u%2B1');
  });

  it('signs in without the anti-forgery header, then sends it with every request', async () => {
    answer = (c) => (c.url.endsWith('/session') ? json(200, SESSION) : new Response('<ListAllMyBucketsResult/>', { status: 200 }));
    const s = await signIn('AK', 'secret');
    expect(s.user).toBe('alice');
    expect(calls[0].method).toBe('POST');
    expect(calls[0].url).toBe('/_serac/console/api/session');
    expect(calls[0].headers['x-serac-csrf']).toBeUndefined();
    expect(JSON.parse(String(calls[0].body))).toEqual({ 'access-key': 'AK', 'secret-key': 'secret' });
    await apiFetch('s3/');
    expect(calls[1].headers['x-serac-csrf']).toBe('csrf-123');
    expect(calls[1].credentials).toBe('same-origin');
  });

  it('reads the session again after a reload, and forgets the token on sign-out', async () => {
    answer = (c) => (c.method === 'DELETE' ? new Response(null, { status: 204 }) : json(200, SESSION));
    expect(await loadSession()).toEqual(SESSION);
    await signOut();
    expect(calls[1].headers['x-serac-csrf']).toBe('csrf-123');
    await apiFetch('overview').catch(() => {});
    expect(calls[2].headers['x-serac-csrf']).toBeUndefined();
    answer = () => json(401, { error: { code: 'NotSignedIn', message: 'sign in' } });
    expect(await loadSession()).toBeNull();
  });

  it('goes back to sign-in when a session is gone, but not on other refusals', async () => {
    const handler = vi.fn();
    onSignedOut(handler);
    answer = () =>
      new Response('<Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>', {
        status: 403,
        headers: { 'Content-Type': 'application/xml' },
      });
    await expect(apiFetch('s3/b')).rejects.toMatchObject({ status: 403, code: 'AccessDenied', message: 'Access Denied.' });
    expect(handler).not.toHaveBeenCalled();
    answer = () => json(401, { error: { code: 'SessionExpired', message: 'expired' } });
    await expect(apiFetch('overview')).rejects.toBeInstanceOf(ApiError);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('reports Retry-After on a slow-down', async () => {
    answer = () => json(429, { error: { code: 'SlowDown', message: 'too many sign-ins' } }, { 'Retry-After': '30' });
    const error = await signIn('AK', 'bad').catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('SlowDown');
    expect(error.retryAfterSeconds).toBe(30);
  });

  it('lists a page with the continuation token', async () => {
    answer = () => new Response('<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>', { status: 200 });
    await listObjects('b', 'x/', 'tok/+=');
    expect(calls[0].url).toBe('/_serac/console/api/s3/b?list-type=2&prefix=x%2F&delimiter=%2F&max-keys=200&continuation-token=tok%2F%2B%3D');
  });
});

// ---- uploads, with a stand-in XMLHttpRequest ----

class FakeXhr {
  static sent: FakeXhr[] = [];
  static onSend: (x: FakeXhr) => void = () => {};
  method = '';
  url = '';
  headers: Record<string, string> = {};
  body: Blob | null = null;
  status = 0;
  statusText = '';
  responseText = '';
  responseHeaders: Record<string, string> = {};
  aborted = false;
  upload: { onprogress: ((e: { loaded: number }) => void) | null } = { onprogress: null };
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onabort: (() => void) | null = null;
  open(method: string, url: string) {
    this.method = method;
    this.url = url;
  }
  setRequestHeader(name: string, value: string) {
    this.headers[name.toLowerCase()] = value;
  }
  getResponseHeader(name: string) {
    return this.responseHeaders[name.toLowerCase()] ?? null;
  }
  send(body: Blob | null) {
    this.body = body;
    FakeXhr.sent.push(this);
    FakeXhr.onSend(this);
  }
  abort() {
    this.aborted = true;
    this.onabort?.();
  }
  respond(status: number, headers: Record<string, string> = {}, text = '') {
    this.status = status;
    this.responseHeaders = headers;
    this.responseText = text;
    this.onload?.();
  }
}

describe('uploads', () => {
  const MiB = 1024 * 1024;
  beforeEach(() => {
    FakeXhr.sent = [];
    vi.stubGlobal('XMLHttpRequest', FakeXhr);
    setCsrfToken('csrf-9');
  });

  it('sends a small file with one PUT and reports progress', async () => {
    FakeXhr.onSend = (x) =>
      queueMicrotask(() => {
        x.upload.onprogress?.({ loaded: 3 });
        x.respond(200, { etag: '"abc"' });
      });
    const progress: number[] = [];
    const file = new Blob(['hello'], { type: 'text/plain' });
    await uploadFile('b', 'dir/a b.txt', file, (n) => progress.push(n)).promise;
    expect(FakeXhr.sent).toHaveLength(1);
    expect(FakeXhr.sent[0].method).toBe('PUT');
    expect(FakeXhr.sent[0].url).toBe('/_serac/console/api/s3/b/dir/a%20b.txt');
    expect(FakeXhr.sent[0].headers['content-type']).toBe('text/plain');
    expect(FakeXhr.sent[0].headers['x-serac-csrf']).toBe('csrf-9');
    expect(progress).toEqual([3, 5]);
    expect(calls).toHaveLength(0);
  });

  it('sends a large file in 8 MiB parts and completes with their ETags', async () => {
    answer = (c) =>
      c.url.includes('?uploads')
        ? new Response('<InitiateMultipartUploadResult><UploadId>up-1</UploadId></InitiateMultipartUploadResult>', { status: 200 })
        : new Response('<CompleteMultipartUploadResult><ETag>"x-3"</ETag></CompleteMultipartUploadResult>', { status: 200 });
    FakeXhr.onSend = (x) =>
      queueMicrotask(() => {
        const n = /partNumber=(\d+)/.exec(x.url)![1];
        x.upload.onprogress?.({ loaded: x.body!.size });
        x.respond(200, { etag: `"etag-${n}"` });
      });
    const file = new Blob([new Uint8Array(20 * MiB)]);
    let last = 0;
    await uploadFile('b', 'big.bin', file, (n) => (last = n)).promise;
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      'POST /_serac/console/api/s3/b/big.bin?uploads',
      'POST /_serac/console/api/s3/b/big.bin?uploadId=up-1',
    ]);
    const parts = FakeXhr.sent.map((x) => [x.url, x.body!.size]).sort();
    expect(parts).toEqual([
      ['/_serac/console/api/s3/b/big.bin?partNumber=1&uploadId=up-1', 8 * MiB],
      ['/_serac/console/api/s3/b/big.bin?partNumber=2&uploadId=up-1', 8 * MiB],
      ['/_serac/console/api/s3/b/big.bin?partNumber=3&uploadId=up-1', 4 * MiB],
    ]);
    const complete = String(calls[1].body);
    expect(complete).toContain('<Part><PartNumber>1</PartNumber><ETag>&quot;etag-1&quot;</ETag></Part>');
    expect(complete.indexOf('<PartNumber>2</PartNumber>')).toBeLessThan(complete.indexOf('<PartNumber>3</PartNumber>'));
    expect(last).toBe(20 * MiB);
  });

  it('cancels: aborts the part uploads and the multipart upload on the server', async () => {
    answer = (c) =>
      c.url.includes('?uploads')
        ? new Response('<InitiateMultipartUploadResult><UploadId>up-2</UploadId></InitiateMultipartUploadResult>', { status: 200 })
        : new Response(null, { status: 204 });
    let started!: () => void;
    const partsStarted = new Promise<void>((r) => (started = r));
    FakeXhr.onSend = () => started(); // parts never finish by themselves
    const handle = uploadFile('b', 'big.bin', new Blob([new Uint8Array(20 * MiB)]), () => {});
    await partsStarted;
    handle.cancel();
    await expect(handle.promise).rejects.toMatchObject({ code: 'Cancelled' });
    expect(FakeXhr.sent.length).toBeGreaterThan(0);
    expect(FakeXhr.sent.every((x) => x.aborted)).toBe(true);
    expect(calls.map((c) => `${c.method} ${c.url}`)).toContain('DELETE /_serac/console/api/s3/b/big.bin?uploadId=up-2');
  });

  it('aborts the multipart upload when a part fails, and shows the server message', async () => {
    answer = (c) =>
      c.url.includes('?uploads')
        ? new Response('<InitiateMultipartUploadResult><UploadId>up-3</UploadId></InitiateMultipartUploadResult>', { status: 200 })
        : new Response(null, { status: 204 });
    FakeXhr.onSend = (x) =>
      queueMicrotask(() => {
        x.responseHeaders = { 'content-type': 'application/xml' };
        x.status = 403;
        x.responseText = '<Error><Code>AccessDenied</Code><Message>not allowed: s3:PutObject</Message></Error>';
        x.onload?.();
      });
    const handle = uploadFile('b', 'big.bin', new Blob([new Uint8Array(9 * MiB)]), () => {});
    await expect(handle.promise).rejects.toMatchObject({ code: 'AccessDenied', message: 'not allowed: s3:PutObject' });
    expect(calls.map((c) => `${c.method} ${c.url}`)).toContain('DELETE /_serac/console/api/s3/b/big.bin?uploadId=up-3');
  });
});

describe('the session probe', () => {
  it('does not announce an ended session when nobody was signed in', async () => {
    const handler = vi.fn();
    onSignedOut(handler);
    answer = () => json(401, { error: { code: 'NotSignedIn', message: 'sign in' } });
    expect(await loadSession()).toBeNull();
    expect(handler).not.toHaveBeenCalled();
  });
});

describe('parseJsonKeepingLargeIntegers', () => {
  it('keeps 64-bit snapshot ids exactly, as text, and leaves everything else as JSON.parse reads it', () => {
    const text =
      '{"current-snapshot-id":2812605345692443317,"snapshots":[{"snapshot-id":-9223372036854775808,' +
      '"timestamp-ms":1767225600000,"summary":{"note":"id 2812605345692443317 in a string","x":"\\"9007199254740993"}}],' +
      '"small":42,"float":1.5e300,"neg":-7,"safe":9007199254740991,"list":[9007199254740993,1]}';
    const parsed = parseJsonKeepingLargeIntegers(text) as Record<string, any>;
    expect(parsed['current-snapshot-id']).toBe('2812605345692443317');
    expect(parsed.snapshots[0]['snapshot-id']).toBe('-9223372036854775808');
    expect(parsed.snapshots[0]['timestamp-ms']).toBe(1767225600000);
    expect(parsed.snapshots[0].summary.note).toBe('id 2812605345692443317 in a string');
    expect(parsed.snapshots[0].summary.x).toBe('"9007199254740993');
    expect(parsed.small).toBe(42);
    expect(parsed.float).toBe(1.5e300);
    expect(parsed.neg).toBe(-7);
    expect(parsed.safe).toBe(9007199254740991);
    expect(parsed.list).toEqual(['9007199254740993', 1]);
  });

  it('still refuses what is not JSON', () => {
    expect(() => parseJsonKeepingLargeIntegers('{"a":')).toThrow();
  });
});
