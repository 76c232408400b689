// The console's one way to talk to the server: every request goes to /_serac/console/api/ with
// the session cookie (same origin) and the anti-forgery header; failures become ApiError with the
// server's own message, whichever protocol answered (console or admin JSON, Iceberg JSON, S3 XML).

import { parseS3Error } from './xml';

export const API_BASE = '/_serac/console/api/';
export const CSRF_HEADER = 'X-Serac-Csrf';

// The anti-forgery token lives in memory only; after a reload it is read again from GET session.
let csrfToken: string | null = null;
let signedOutHandler: (() => void) | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export function csrfHeaders(): Record<string, string> {
  return csrfToken ? { [CSRF_HEADER]: csrfToken } : {};
}

// Called when any request finds the session gone (401 NotSignedIn / SessionExpired).
export function onSignedOut(handler: (() => void) | null): void {
  signedOutHandler = handler;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryAfterSeconds: number | null;
  constructor(message: string, status: number, code: string, retryAfterSeconds: number | null = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export const SESSION_GONE_CODES = ['NotSignedIn', 'SessionExpired'];

const MESSAGE_CHARS_MAX = 500;

// Builds the error for a failed response from its parts (no I/O, so it can be tested).
export function errorFromBody(
  status: number,
  statusText: string,
  contentType: string,
  body: string,
  retryAfter: string | null = null,
): ApiError {
  const retry = retryAfter !== null && /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter.trim()) : null;
  const fallback = `${status}${statusText ? ' ' + statusText : ''}`;
  const trimmed = body.trim();
  if (trimmed.startsWith('{') || contentType.includes('json')) {
    try {
      const parsed = JSON.parse(trimmed) as { error?: { code?: unknown; message?: unknown; type?: unknown } };
      const error = parsed && typeof parsed === 'object' ? parsed.error : undefined;
      if (error && typeof error === 'object') {
        const code =
          typeof error.code === 'string' ? error.code : typeof error.type === 'string' ? error.type : String(status);
        const message = typeof error.message === 'string' && error.message ? error.message : fallback;
        return new ApiError(clip(message), status, code, retry);
      }
    } catch {
      // not JSON after all: fall through to the text forms
    }
  }
  const s3 = parseS3Error(trimmed);
  if (s3) return new ApiError(clip(s3.message || s3.code || fallback), status, s3.code || String(status), retry);
  if (trimmed && !trimmed.startsWith('<')) return new ApiError(clip(trimmed), status, String(status), retry);
  return new ApiError(fallback, status, String(status), retry);
}

function clip(text: string): string {
  return text.length > MESSAGE_CHARS_MAX ? text.slice(0, MESSAGE_CHARS_MAX) + '…' : text;
}

// Values: text or numbers as `name=value`; `true` as a bare `name`; null/undefined/false left out.
export type Query = Record<string, string | number | boolean | null | undefined>;

// The URL of an API path (already percent-encoded) with an optional query.
export function apiUrl(path: string, query?: Query): string {
  let url = API_BASE + path.replace(/^\/+/, '');
  if (query) {
    const parts: string[] = [];
    for (const [name, value] of Object.entries(query)) {
      if (value === null || value === undefined || value === false) continue;
      // `true` is a bare flag, as S3's sub-resources are written (`?tagging`, `?uploads`).
      parts.push(
        value === true ? encodeURIComponent(name) : `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`,
      );
    }
    if (parts.length > 0) url += (url.includes('?') ? '&' : '?') + parts.join('&');
  }
  return url;
}

export interface RequestOptions {
  method?: string;
  query?: Query;
  headers?: Record<string, string>;
  body?: BodyInit | null;
  json?: unknown;
  signal?: AbortSignal;
  // The sign-in request alone goes without the anti-forgery header.
  noCsrf?: boolean;
}

function noteSessionGone(error: ApiError): void {
  if (error.status === 401 && SESSION_GONE_CODES.includes(error.code) && signedOutHandler) signedOutHandler();
}

// Sends a request; resolves with the response when it is 2xx, else throws ApiError.
export async function apiFetch(path: string, options: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...(options.noCsrf ? {} : csrfHeaders()), ...options.headers };
  let body = options.body ?? null;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['Content-Type'] = 'application/json';
  }
  let response: Response;
  try {
    response = await fetch(apiUrl(path, options.query), {
      method: options.method ?? 'GET',
      headers,
      body,
      credentials: 'same-origin',
      cache: 'no-store',
      signal: options.signal,
    });
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === 'AbortError') throw cause;
    throw new ApiError('the server could not be reached', 0, 'NetworkError');
  }
  if (response.ok) return response;
  const text = options.method === 'HEAD' ? '' : await response.text().catch(() => '');
  const error = errorFromBody(
    response.status,
    response.statusText,
    response.headers.get('Content-Type') ?? '',
    text,
    response.headers.get('Retry-After'),
  );
  // The session endpoint's own 401 means "not signed in yet", which the caller handles.
  if (path !== 'session') noteSessionGone(error);
  throw error;
}

// JSON.parse reads every number as a double, which cannot hold an Iceberg snapshot id (a random
// 64-bit integer): 2812605345692443317 would come back as ...443000 and name no snapshot. Integers
// beyond 2^53 are read as their decimal text instead, so they survive to be shown and sent back.
export function parseJsonKeepingLargeIntegers(text: string): unknown {
  let out = '';
  let copiedTo = 0;
  for (let i = 0; i < text.length; ) {
    const c = text[i];
    if (c === '"') {
      // Skip the string, escapes included: digits inside it are not numbers.
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      continue;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      let end = i + 1;
      while (end < text.length && /[0-9.eE+-]/.test(text[end])) end++;
      const token = text.slice(i, end);
      if (/^-?[0-9]+$/.test(token) && !Number.isSafeInteger(Number(token))) {
        out += text.slice(copiedTo, i) + '"' + token + '"';
        copiedTo = end;
      }
      i = end;
      continue;
    }
    i++;
  }
  return JSON.parse(out + text.slice(copiedTo));
}

export async function apiJson<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const response = await apiFetch(path, options);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  if (!text) return undefined as T;
  try {
    return parseJsonKeepingLargeIntegers(text) as T;
  } catch {
    throw new ApiError('the server sent an answer that is not JSON', response.status, 'BadResponse');
  }
}

export async function apiText(path: string, options: RequestOptions = {}): Promise<string> {
  const response = await apiFetch(path, options);
  return response.text();
}

// ---- XMLHttpRequest, for uploads with progress ----

export interface XhrResult {
  status: number;
  text: string;
  header(name: string): string | null;
}

export interface XhrHandle {
  promise: Promise<XhrResult>;
  abort(): void;
}

export function xhrRequest(
  method: string,
  path: string,
  body: Blob | string | null,
  options: { query?: Query; headers?: Record<string, string>; onProgress?: (loaded: number) => void } = {},
): XhrHandle {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<XhrResult>((resolve, reject) => {
    xhr.open(method, apiUrl(path, options.query));
    const headers = { ...csrfHeaders(), ...options.headers };
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    if (options.onProgress) {
      const report = options.onProgress;
      xhr.upload.onprogress = (event) => report(event.loaded);
    }
    xhr.onload = () => {
      const result: XhrResult = { status: xhr.status, text: xhr.responseText, header: (n) => xhr.getResponseHeader(n) };
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(result);
        return;
      }
      const error = errorFromBody(
        xhr.status,
        xhr.statusText,
        xhr.getResponseHeader('Content-Type') ?? '',
        xhr.responseText,
        xhr.getResponseHeader('Retry-After'),
      );
      noteSessionGone(error);
      reject(error);
    };
    xhr.onerror = () => reject(new ApiError('the upload failed: the connection broke', 0, 'NetworkError'));
    xhr.onabort = () => reject(new ApiError('cancelled', 0, 'Cancelled'));
    xhr.send(body);
  });
  return { promise, abort: () => xhr.abort() };
}

// ---- the session ----

export interface Session {
  user: string;
  'access-key': string;
  root: boolean;
  csrf: string;
  'expires-ms': number;
}

export async function signIn(accessKey: string, secretKey: string): Promise<Session> {
  const session = await apiJson<Session>('session', {
    method: 'POST',
    json: { 'access-key': accessKey, 'secret-key': secretKey },
    noCsrf: true,
  });
  setCsrfToken(session.csrf);
  return session;
}

// The current session, or null when nobody is signed in.
export async function loadSession(): Promise<Session | null> {
  try {
    const session = await apiJson<Session>('session');
    setCsrfToken(session.csrf);
    return session;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

export async function signOut(): Promise<void> {
  try {
    await apiFetch('session', { method: 'DELETE' });
  } finally {
    setCsrfToken(null);
  }
}

// ---- serac's console-only endpoints ----

export interface Overview {
  version: string;
  node: string;
  'uptime-seconds': number;
  buckets: number;
  objects: number;
  bytes: number;
  warehouses: number;
  tables: number;
  views: number;
}

export const getOverview = () => apiJson<Overview>('overview');
export const getMetricsText = () => apiText('metrics');

export interface Presigned {
  url: string;
  'expires-ms': number;
}

export const presign = (bucket: string, key: string, expiresSeconds: number) =>
  apiJson<Presigned>('presign', { method: 'POST', json: { bucket, key, 'expires-seconds': expiresSeconds } });

export interface EngineConfig {
  engines: Array<{ name: string; title: string; text: string }>;
}

export const getEngineConfig = (warehouse: string) =>
  apiJson<EngineConfig>('engine-config', { query: { warehouse } });

// A readable message for anything thrown.
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
