// Overview: what this server is and holds, and live charts of its HTTP edge drawn from the
// metrics endpoint, sampled every 2 s over the last 5 minutes.

import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { getMetricsText, getOverview } from '../api';
import { LineChart } from '../components/chart';
import { ErrorBanner, KeyValues, Loading, useAsync } from '../components/ui';
import { formatBytes, formatCount, formatDuration, formatMillis, formatRate } from '../format';
import { computeRates, FRONT_ENDS, parsePrometheus, summarize, type FrontEnd, type Snapshot } from '../metrics';

const POLL_MS = 2000;
const WINDOW_POINTS = 150; // 5 minutes at 2 s

const FRONT_END_COLORS: Record<FrontEnd, string> = {
  s3: '#2f6fd6',
  iceberg: '#1b9e77',
  admin: '#d95f02',
  console: '#7570b3',
};
const FRONT_END_LABELS: Record<FrontEnd, string> = { s3: 'S3', iceberg: 'Iceberg', admin: 'Admin', console: 'Console' };

interface Series {
  times: number[];
  perFrontEnd: Record<FrontEnd, number[]>;
  clientErrors: number[];
  serverErrors: number[];
  p50: Array<number | null>;
  p99: Array<number | null>;
  mean: Array<number | null>;
}

function emptySeries(): Series {
  return {
    times: [],
    perFrontEnd: { s3: [], iceberg: [], admin: [], console: [] },
    clientErrors: [],
    serverErrors: [],
    p50: [],
    p99: [],
    mean: [],
  };
}

function useLiveMetrics(): { series: Series; error: unknown } {
  const [series, setSeries] = useState<Series>(emptySeries);
  const [error, setError] = useState<unknown>(null);
  const last = useRef<Snapshot | null>(null);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const text = await getMetricsText();
        const snap = summarize(parsePrometheus(text), Date.now());
        const before = last.current;
        last.current = snap;
        setError(null);
        const rates = before ? computeRates(before, snap) : null;
        if (rates && !stopped) {
          setSeries((s) => {
            const keep = <T,>(arr: T[], v: T) => [...arr, v].slice(-WINDOW_POINTS);
            const perFrontEnd = { ...s.perFrontEnd };
            for (const f of FRONT_ENDS) perFrontEnd[f] = keep(s.perFrontEnd[f], rates.requestsPerSecond[f]);
            return {
              times: keep(s.times, snap.timeMs / 1000),
              perFrontEnd,
              clientErrors: keep(s.clientErrors, rates.clientErrorsPerSecond),
              serverErrors: keep(s.serverErrors, rates.serverErrorsPerSecond),
              p50: keep(s.p50, rates.p50Ms),
              p99: keep(s.p99, rates.p99Ms),
              mean: keep(s.mean, rates.meanMs),
            };
          });
        }
      } catch (e) {
        if (!stopped) setError(e);
      }
      if (!stopped) timer = setTimeout(poll, POLL_MS);
    };
    poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);
  return { series, error };
}

export function OverviewPage() {
  const overview = useAsync(getOverview, []);
  const { series, error } = useLiveMetrics();
  const o = overview.data;
  const latest = (arr: Array<number | null>) => (arr.length ? arr[arr.length - 1] : null);
  const totalNow = FRONT_ENDS.reduce((sum, f) => sum + (latest(series.perFrontEnd[f]) ?? 0), 0);

  return (
    <section data-testid="page-overview">
      <h1>Overview</h1>
      <ErrorBanner error={overview.error} />
      {!o && overview.loading && <Loading />}
      {o && (
        <div class="cards" data-testid="overview-counts">
          <div class="card">
            <KeyValues
              rows={[
                ['Version', o.version],
                ['Node', o.node],
                ['Up for', formatDuration(o['uptime-seconds'])],
              ]}
            />
          </div>
          <div class="card">
            <KeyValues
              rows={[
                ['Buckets', formatCount(o.buckets)],
                ['Objects', formatCount(o.objects)],
                ['Stored', formatBytes(o.bytes)],
              ]}
            />
          </div>
          <div class="card">
            <KeyValues
              rows={[
                ['Warehouses', formatCount(o.warehouses)],
                ['Tables', formatCount(o.tables)],
                ['Views', formatCount(o.views)],
              ]}
            />
          </div>
        </div>
      )}
      <h2>Live</h2>
      <ErrorBanner error={error} testid="metrics-error" />
      <p class="muted" data-testid="metrics-now">
        Now: {formatRate(totalNow)} requests, {formatRate(latest(series.serverErrors))} server errors, p99{' '}
        {formatMillis(latest(series.p99))}
      </p>
      <div class="charts">
        <LineChart
          title="Requests per second"
          testid="chart-requests"
          series={FRONT_ENDS.map((f) => ({ label: FRONT_END_LABELS[f], color: FRONT_END_COLORS[f] }))}
          data={[series.times, ...FRONT_ENDS.map((f) => series.perFrontEnd[f])] as uPlot.AlignedData}
          formatValue={(v) => (v === null ? '–' : formatRate(v))}
        />
        <LineChart
          title="Errors per second"
          testid="chart-errors"
          series={[
            { label: '4xx', color: '#e6a700' },
            { label: '5xx', color: '#c62828' },
          ]}
          data={[series.times, series.clientErrors, series.serverErrors] as uPlot.AlignedData}
          formatValue={(v) => (v === null ? '–' : formatRate(v))}
        />
        <LineChart
          title="Latency"
          testid="chart-latency"
          series={[
            { label: 'p50', color: '#2f6fd6' },
            { label: 'p99', color: '#c62828' },
            { label: 'mean', color: '#1b9e77' },
          ]}
          data={[series.times, series.p50, series.p99, series.mean] as uPlot.AlignedData}
          formatValue={(v) => formatMillis(v)}
        />
      </div>
    </section>
  );
}
