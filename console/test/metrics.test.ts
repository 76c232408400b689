import { describe, expect, it } from 'vitest';
import { computeRates, counterDelta, frontEndOf, histogramQuantile, parsePrometheus, summarize } from '../src/metrics';

// Two scrapes of the server's HTTP metrics, 10 s apart (the shape http/metrics.cc writes).
function scrape(opts: { getOk: number; putOk: number; loadTable: number; admin403: number; get500: number; buckets: number[]; sum: number }) {
  const bounds = ['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10'];
  const count = opts.buckets[opts.buckets.length - 1];
  const lines = [
    '# HELP serac_http_requests_total HTTP requests by operation and status.',
    '# TYPE serac_http_requests_total counter',
    `serac_http_requests_total{operation="GetObject",status="200"} ${opts.getOk}`,
    `serac_http_requests_total{operation="GetObject",status="500"} ${opts.get500}`,
    `serac_http_requests_total{operation="PutObject",status="200"} ${opts.putOk}`,
    `serac_http_requests_total{operation="LoadTable",status="200"} ${opts.loadTable}`,
    `serac_http_requests_total{operation="AdminListUsers",status="403"} ${opts.admin403}`,
    '# TYPE serac_http_request_duration_seconds histogram',
    ...bounds.map((b, i) => `serac_http_request_duration_seconds_bucket{operation="GetObject",le="${b}"} ${opts.buckets[i]}`),
    `serac_http_request_duration_seconds_bucket{operation="GetObject",le="+Inf"} ${count}`,
    `serac_http_request_duration_seconds_sum{operation="GetObject"} ${opts.sum}`,
    `serac_http_request_duration_seconds_count{operation="GetObject"} ${count}`,
    'serac_http_open_connections 3',
  ];
  return lines.join('\n') + '\n';
}

describe('Prometheus text', () => {
  it('parses names, labels with escapes, values and infinities; skips comments', () => {
    const samples = parsePrometheus(
      [
        '# HELP x y',
        'serac_http_requests_total{operation="Get\\"Quoted\\\\",status="200"} 42',
        'serac_http_open_connections 7',
        'x_bucket{le="+Inf"} 12',
        'x_sum 1.5e-3',
        'broken{oops} 1',
        '',
      ].join('\n'),
    );
    expect(samples).toEqual([
      { name: 'serac_http_requests_total', labels: { operation: 'Get"Quoted\\', status: '200' }, value: 42 },
      { name: 'serac_http_open_connections', labels: {}, value: 7 },
      { name: 'x_bucket', labels: { le: '+Inf' }, value: 12 },
      { name: 'x_sum', labels: {}, value: 0.0015 },
    ]);
  });

  it('tells the front ends apart by operation name', () => {
    expect(frontEndOf('GetObject')).toBe('s3');
    expect(frontEndOf('ListBuckets')).toBe('s3');
    expect(frontEndOf('LoadTable')).toBe('iceberg');
    expect(frontEndOf('GetTableMaintenanceJobStatus')).toBe('iceberg');
    expect(frontEndOf('ListNamespaces')).toBe('iceberg');
    expect(frontEndOf('AdminCreateUser')).toBe('admin');
    expect(frontEndOf('ConsoleSignIn')).toBe('console');
  });

  it('sums requests, errors and the histogram across operations', () => {
    const snap = summarize(
      parsePrometheus(scrape({ getOk: 10, putOk: 5, loadTable: 4, admin403: 2, get500: 1, buckets: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10], sum: 2 })),
      1000,
    );
    expect(snap.requests).toEqual({ s3: 16, iceberg: 4, admin: 2, console: 0 });
    expect(snap.clientErrors).toBe(2);
    expect(snap.serverErrors).toBe(1);
    expect(snap.durationCount).toBe(10);
    expect(snap.buckets[0]).toEqual([0.001, 1]);
    expect(snap.buckets[snap.buckets.length - 1]).toEqual([Infinity, 10]);
  });

  it('computes rates and latency from two samples', () => {
    const before = summarize(
      parsePrometheus(scrape({ getOk: 100, putOk: 50, loadTable: 0, admin403: 0, get500: 0, buckets: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], sum: 0 })),
      0,
    );
    // In 10 s: 100 requests, all between 10 and 25 ms except one between 0.5 and 1 s.
    const after = summarize(
      parsePrometheus(
        scrape({
          getOk: 180,
          putOk: 60,
          loadTable: 5,
          admin403: 4,
          get500: 1,
          buckets: [0, 0, 0, 0, 99, 99, 99, 99, 99, 100, 100, 100, 100],
          sum: 99 * 0.02 + 0.8,
        }),
      ),
      10000,
    );
    const r = computeRates(before, after)!;
    expect(r.requestsPerSecond.s3).toBeCloseTo(9.1); // 80 + 10 + 1 GetObject/PutObject in 10 s
    expect(r.requestsPerSecond.iceberg).toBeCloseTo(0.5);
    expect(r.requestsPerSecond.admin).toBeCloseTo(0.4);
    expect(r.totalPerSecond).toBeCloseTo(10);
    expect(r.clientErrorsPerSecond).toBeCloseTo(0.4);
    expect(r.serverErrorsPerSecond).toBeCloseTo(0.1);
    // rank 50 of 100 falls in (0.01, 0.025]: 0.01 + 0.015 * 50/99
    expect(r.p50Ms!).toBeCloseTo((0.01 + (0.015 * 50) / 99) * 1000, 6);
    // rank 99 is the last of that bucket
    expect(r.p99Ms!).toBeCloseTo(25, 6);
    expect(r.meanMs!).toBeCloseTo(((99 * 0.02 + 0.8) / 100) * 1000, 6);
  });

  it('treats a counter that went down as a restart', () => {
    expect(counterDelta(100, 130)).toBe(30);
    expect(counterDelta(100, 7)).toBe(7);
    const before = summarize(parsePrometheus(scrape({ getOk: 1000, putOk: 0, loadTable: 0, admin403: 0, get500: 0, buckets: Array(13).fill(1000), sum: 10 })), 0);
    const after = summarize(parsePrometheus(scrape({ getOk: 20, putOk: 0, loadTable: 0, admin403: 0, get500: 0, buckets: Array(13).fill(20), sum: 0.02 })), 2000);
    const r = computeRates(before, after)!;
    expect(r.requestsPerSecond.s3).toBe(10);
    expect(r.meanMs).toBeCloseTo(1, 6);
    expect(computeRates(after, after)).toBeNull();
  });

  it('answers quantiles like histogram_quantile', () => {
    expect(histogramQuantile(0.5, [])).toBeNull();
    expect(histogramQuantile(0.5, [[1, 0], [Infinity, 0]])).toBeNull();
    expect(histogramQuantile(0.5, [[1, 10], [2, 20], [Infinity, 20]])).toBeCloseTo(1);
    expect(histogramQuantile(0.75, [[1, 10], [2, 20], [Infinity, 20]])).toBeCloseTo(1.5);
    // everything past the last finite bound: the largest finite bound
    expect(histogramQuantile(0.99, [[1, 0], [2, 0], [Infinity, 5]])).toBe(2);
  });
});
