// Prometheus text from GET metrics: parsing, and what the Overview charts draw from two samples
// taken a few seconds apart: request rate by front end, error rates, and latency quantiles and
// mean from the duration histogram.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

// Parses the text exposition format (comments and blank lines skipped; label values unescaped).
// Lines that do not parse are skipped rather than failing the whole scrape.
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const sample = parseLine(line);
    if (sample) samples.push(sample);
  }
  return samples;
}

function parseLine(line: string): Sample | null {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) return null;
  const name = nameMatch[0];
  let i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    while (i < line.length && line[i] !== '}') {
      while (line[i] === ' ' || line[i] === ',') i++;
      if (line[i] === '}') break;
      const labelMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
      if (!labelMatch) return null;
      const label = labelMatch[0];
      i += label.length;
      if (line[i] !== '=' || line[i + 1] !== '"') return null;
      i += 2;
      let value = '';
      while (i < line.length && line[i] !== '"') {
        if (line[i] === '\\' && i + 1 < line.length) {
          const next = line[i + 1];
          value += next === 'n' ? '\n' : next;
          i += 2;
        } else {
          value += line[i++];
        }
      }
      if (line[i] !== '"') return null;
      i++;
      labels[label] = value;
    }
    if (line[i] !== '}') return null;
    i++;
  }
  const rest = line.slice(i).trim().split(/\s+/);
  if (rest.length === 0 || rest[0] === '') return null;
  const value = parseValue(rest[0]);
  if (value === null) return null;
  return { name, labels, value };
}

function parseValue(text: string): number | null {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const n = Number(text);
  return Number.isNaN(n) ? null : n;
}

// ---- the HTTP edge's counters ----

export type FrontEnd = 's3' | 'iceberg' | 'admin' | 'console';
export const FRONT_ENDS: FrontEnd[] = ['s3', 'iceberg', 'admin', 'console'];

const CATALOG_OPERATION =
  /Warehouse|Namespace|Table|View|Maintenance|ScanPlanning|^GetConfig$|^OAuthTokens$|^FetchPlanningResult$|^CancelPlanning$|^ReportMetrics$|^LoadCredentials$|^CommitTransaction$|^Catalog$/;

// The front end an operation name belongs to (metrics are labelled by operation).
export function frontEndOf(operation: string): FrontEnd {
  if (operation.startsWith('Admin')) return 'admin';
  if (operation.startsWith('Console')) return 'console';
  if (CATALOG_OPERATION.test(operation)) return 'iceberg';
  return 's3';
}

// The totals of one scrape that the charts need.
export interface Snapshot {
  timeMs: number;
  requests: Record<FrontEnd, number>;
  clientErrors: number; // 4xx
  serverErrors: number; // 5xx
  durationCount: number;
  durationSum: number; // seconds
  buckets: Array<[number, number]>; // [upper bound in seconds, cumulative count], ascending, +Inf last
}

export function summarize(samples: Sample[], timeMs: number): Snapshot {
  const requests: Record<FrontEnd, number> = { s3: 0, iceberg: 0, admin: 0, console: 0 };
  let clientErrors = 0;
  let serverErrors = 0;
  let durationCount = 0;
  let durationSum = 0;
  const buckets = new Map<number, number>();
  for (const s of samples) {
    switch (s.name) {
      case 'serac_http_requests_total': {
        requests[frontEndOf(s.labels.operation ?? '')] += s.value;
        const status = Number(s.labels.status);
        if (status >= 400 && status < 500) clientErrors += s.value;
        else if (status >= 500) serverErrors += s.value;
        break;
      }
      case 'serac_http_request_duration_seconds_bucket': {
        const le = parseValue(s.labels.le ?? '');
        if (le !== null && !Number.isNaN(le)) buckets.set(le, (buckets.get(le) ?? 0) + s.value);
        break;
      }
      case 'serac_http_request_duration_seconds_count':
        durationCount += s.value;
        break;
      case 'serac_http_request_duration_seconds_sum':
        durationSum += s.value;
        break;
    }
  }
  return {
    timeMs,
    requests,
    clientErrors,
    serverErrors,
    durationCount,
    durationSum,
    buckets: [...buckets.entries()].sort((a, b) => a[0] - b[0]),
  };
}

// A counter's increase; a decrease means the server restarted, so the new value is all increase.
export function counterDelta(before: number, after: number): number {
  return after >= before ? after - before : after;
}

export interface Rates {
  requestsPerSecond: Record<FrontEnd, number>;
  totalPerSecond: number;
  clientErrorsPerSecond: number;
  serverErrorsPerSecond: number;
  p50Ms: number | null;
  p99Ms: number | null;
  meanMs: number | null;
}

// What happened between two scrapes.
export function computeRates(before: Snapshot, after: Snapshot): Rates | null {
  const seconds = (after.timeMs - before.timeMs) / 1000;
  if (!(seconds > 0)) return null;
  const restarted = after.durationCount < before.durationCount;
  const d = (a: number, b: number) => (restarted ? b : counterDelta(a, b));
  const requestsPerSecond = { s3: 0, iceberg: 0, admin: 0, console: 0 } as Record<FrontEnd, number>;
  let total = 0;
  for (const f of FRONT_ENDS) {
    requestsPerSecond[f] = d(before.requests[f], after.requests[f]) / seconds;
    total += requestsPerSecond[f];
  }
  const count = d(before.durationCount, after.durationCount);
  const sum = restarted ? after.durationSum : Math.max(0, after.durationSum - before.durationSum);
  const beforeBuckets = new Map(before.buckets);
  const deltaBuckets: Array<[number, number]> = after.buckets.map(([le, c]) => [
    le,
    d(beforeBuckets.get(le) ?? 0, c),
  ]);
  const p50 = histogramQuantile(0.5, deltaBuckets);
  const p99 = histogramQuantile(0.99, deltaBuckets);
  return {
    requestsPerSecond,
    totalPerSecond: total,
    clientErrorsPerSecond: d(before.clientErrors, after.clientErrors) / seconds,
    serverErrorsPerSecond: d(before.serverErrors, after.serverErrors) / seconds,
    p50Ms: p50 === null ? null : p50 * 1000,
    p99Ms: p99 === null ? null : p99 * 1000,
    meanMs: count > 0 ? (sum / count) * 1000 : null,
  };
}

// The q-quantile of a cumulative histogram ([upper bound, cumulative count], ascending), with
// linear interpolation inside the bucket it falls in, as Prometheus' histogram_quantile does.
// In the +Inf bucket it answers the largest finite bound. Null when the histogram is empty.
export function histogramQuantile(q: number, buckets: Array<[number, number]>): number | null {
  if (buckets.length === 0) return null;
  const total = buckets[buckets.length - 1][1];
  if (!(total > 0)) return null;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [bound, count] of buckets) {
    if (count >= rank) {
      if (bound === Infinity) return lowerBound;
      if (count === lowerCount) return bound;
      return lowerBound + ((bound - lowerBound) * (rank - lowerCount)) / (count - lowerCount);
    }
    lowerBound = bound;
    lowerCount = count;
  }
  return lowerBound;
}
