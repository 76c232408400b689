// A live line chart: a thin wrapper over uPlot that creates the plot once and feeds it new data.

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface LineSeries {
  label: string;
  color: string;
}

const CHART_HEIGHT = 180;
const WINDOW_SECONDS = 300;

export function LineChart({
  title,
  series,
  data,
  formatValue,
  testid,
}: {
  title: string;
  series: LineSeries[];
  data: uPlot.AlignedData; // [times in seconds, ...one array per series]
  formatValue: (v: number | null) => string;
  testid?: string;
}) {
  const holder = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const format = useRef(formatValue);
  format.current = formatValue;

  useEffect(() => {
    const el = holder.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth || 400),
      height: CHART_HEIGHT,
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
      // The x axis always spans the last five minutes, so the first samples sit at its right end
      // (a range of one sample would otherwise be stretched over years).
      scales: {
        x: { time: true, range: (_u, _min, max) => [max - WINDOW_SECONDS, max] },
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [
        { stroke: '#667' },
        { stroke: '#667', size: 70, values: (_u, ticks) => ticks.map((t) => format.current(t)) },
      ],
      series: [
        {},
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          value: (_u: uPlot, v: number | null) => format.current(v),
        })),
      ],
    };
    const created = new uPlot(opts, data, el);
    plot.current = created;
    const observer = typeof ResizeObserver !== 'undefined'
      ? new ResizeObserver(() => created.setSize({ width: Math.max(200, el.clientWidth), height: CHART_HEIGHT }))
      : null;
    observer?.observe(el);
    return () => {
      observer?.disconnect();
      created.destroy();
      plot.current = null;
    };
    // the series are fixed for a chart's life
  }, []);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return (
    <figure class="chart" data-testid={testid}>
      <figcaption>{title}</figcaption>
      <div ref={holder} />
    </figure>
  );
}
