// Routing by the URL's hash ("#/buckets/photos?prefix=2024/"), so the server serves one page.
// Path segments and query values are percent-encoded; "+" is a plus sign, never a space.

import { useEffect, useState } from 'preact/hooks';

export interface Route {
  segments: string[];
  query: Record<string, string>;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export function parseHash(hash: string): Route {
  let text = hash.startsWith('#') ? hash.slice(1) : hash;
  const q = text.indexOf('?');
  const queryText = q >= 0 ? text.slice(q + 1) : '';
  text = q >= 0 ? text.slice(0, q) : text;
  const segments = text
    .split('/')
    .filter((s) => s !== '')
    .map(decode);
  const query: Record<string, string> = {};
  for (const pair of queryText.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const name = decode(eq >= 0 ? pair.slice(0, eq) : pair);
    query[name] = eq >= 0 ? decode(pair.slice(eq + 1)) : '';
  }
  return { segments, query };
}

// Encodes a query value, keeping "/" readable (it needs no escape in a fragment).
function encodeValue(text: string): string {
  return encodeURIComponent(text).replace(/%2F/g, '/');
}

export function buildHash(segments: string[], query: Record<string, string | number | null | undefined> = {}): string {
  let hash = '#/' + segments.map((s) => encodeURIComponent(s)).join('/');
  const parts = Object.entries(query)
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeValue(String(v))}`);
  if (parts.length) hash += '?' + parts.join('&');
  return hash;
}

export function navigate(hash: string): void {
  if (window.location.hash !== hash) window.location.hash = hash;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const update = () => setRoute(parseHash(window.location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}
