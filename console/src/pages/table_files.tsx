// The Files tab: the current snapshot's files (serac's files endpoint) as file-size histograms,
// one for the whole table and one per partition, with a marker at the small-file threshold so a
// small-file problem shows at a glance; then the files themselves.

import { useState } from 'preact/hooks';
import {
  binExponent,
  groupByPartition,
  sizeHistogram,
  sizeRange,
  tableFiles,
  tableHealth,
  type DataFile,
  type TableMetadata,
} from '../catalog';
import { ErrorBanner, Loading, useAsync } from '../components/ui';
import { formatBytes, formatCount } from '../format';
import type { TableRef } from './table';

const PARTITIONS_SHOWN = 12;
const FILES_LISTED = 200;
const DEFAULT_TARGET_BYTES = 512 * 1024 * 1024;

// The table's own idea of "small" when the health endpoint does not answer: three quarters of
// the compaction target (the server's auto-compaction rule).
export function fallbackSmallFileBytes(metadata: TableMetadata): number {
  const target = Number(metadata.properties?.['write.target-file-size-bytes']);
  return Math.floor((Number.isFinite(target) && target > 0 ? target : DEFAULT_TARGET_BYTES) * 0.75);
}

const HW = 360;
const HH = 120;
const BASE = HH - 18;

function Histogram({
  title,
  sizes,
  minExp,
  maxExp,
  threshold,
  testid,
}: {
  title: string;
  sizes: number[];
  minExp: number;
  maxExp: number;
  threshold: number;
  testid?: string;
}) {
  const bins = sizeHistogram(sizes, minExp, maxExp);
  const peak = Math.max(1, ...bins.map((b) => b.count));
  const bw = HW / bins.length;
  const markerX = ((Math.log2(Math.max(1, threshold)) - minExp) / (maxExp + 1 - minExp)) * HW;
  const small = sizes.filter((s) => s < threshold).length;
  return (
    <figure class="histogram" data-testid={testid}>
      <figcaption>
        <span class="break">{title}</span>{' '}
        <span class={small > 0 ? 'warn' : 'muted'}>
          {formatCount(sizes.length)} {sizes.length === 1 ? 'file' : 'files'}, {formatCount(small)} small
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${HW} ${HH}`} role="img" aria-label={`File sizes: ${title}`}>
        {bins.map((b, i) => {
          const h = (b.count / peak) * (BASE - 4);
          return (
            <g key={i}>
              <title>{`${formatBytes(b.lo)} – ${formatBytes(b.hi)}: ${formatCount(b.count)} files`}</title>
              <rect
                class={b.hi <= threshold ? 'bar-small' : 'bar-ok'}
                x={i * bw + 1}
                width={Math.max(1, bw - 2)}
                y={BASE - h}
                height={h}
              />
            </g>
          );
        })}
        <line x1={0} x2={HW} y1={BASE} y2={BASE} class="axis" />
        <line x1={markerX} x2={markerX} y1={0} y2={BASE} class="threshold" data-testid="small-file-marker" />
        <text x={2} y={HH - 4} class="chart-label">
          {formatBytes(2 ** minExp)}
        </text>
        <text x={HW - 2} y={HH - 4} class="chart-label end">
          {formatBytes(2 ** (maxExp + 1))}
        </text>
        <text
          x={markerX > HW / 2 ? markerX - 3 : markerX + 3}
          y={10}
          class={markerX > HW / 2 ? 'chart-label end' : 'chart-label'}
        >
          small &lt; {formatBytes(threshold)}
        </text>
      </svg>
    </figure>
  );
}

export function FilesTab({ table, metadata }: { table: TableRef; metadata: TableMetadata }) {
  const [snapshot, setSnapshot] = useState<number | undefined>(undefined);
  const files = useAsync(
    () => tableFiles(table.warehouse, table.namespace, table.table, snapshot),
    [table.warehouse, table.namespace.join('\u001f'), table.table, snapshot],
  );
  const health = useAsync(
    () => tableHealth(table.warehouse, table.namespace, table.table).catch(() => null),
    [table.warehouse, table.namespace.join('\u001f'), table.table],
  );
  const threshold = health.data?.['small-file-bytes-threshold'] ?? fallbackSmallFileBytes(metadata);
  const snapshots = [...(metadata.snapshots ?? [])].sort((a, b) => b['timestamp-ms'] - a['timestamp-ms']);

  return (
    <div data-testid="files">
      <label class="inline">
        Snapshot{' '}
        <select
          data-testid="files-snapshot"
          value={snapshot === undefined ? '' : String(snapshot)}
          onChange={(e) => {
            const v = (e.target as HTMLSelectElement).value;
            setSnapshot(v === '' ? undefined : Number(v));
          }}
        >
          <option value="">current</option>
          {snapshots.map((s) => (
            <option key={s['snapshot-id']} value={String(s['snapshot-id'])}>
              {s['snapshot-id']}
            </option>
          ))}
        </select>
      </label>
      <ErrorBanner error={files.error} />
      {files.loading && !files.data && <Loading />}
      {files.data && <FilesView files={files.data.files} truncated={files.data.truncated} threshold={threshold} />}
    </div>
  );
}

export function FilesView({ files, truncated, threshold }: { files: DataFile[]; truncated: boolean; threshold: number }) {
  const data = files.filter((f) => f.content === 'data');
  const deletes = files.length - data.length;
  const sizes = data.map((f) => f.bytes);
  const range = sizeRange(sizes);
  const t = binExponent(Math.max(1, threshold));
  const minExp = Math.min(range.minExp, t);
  const maxExp = Math.max(range.maxExp, t);
  const groups = groupByPartition(files, threshold);
  const partitioned = groups.length > 1 || (groups.length === 1 && groups[0].partition !== '');
  return (
    <>
      <p data-testid="files-summary">
        {formatCount(data.length)} {data.length === 1 ? 'data file' : 'data files'} ({formatBytes(sizes.reduce((a, b) => a + b, 0))}),{' '}
        {formatCount(deletes)} {deletes === 1 ? 'delete file' : 'delete files'}
        {truncated ? ' — the list was cut short by the server' : ''}.
      </p>
      <div class="histograms">
        <Histogram title="All files" sizes={sizes} minExp={minExp} maxExp={maxExp} threshold={threshold} testid="histogram-all" />
        {partitioned &&
          groups
            .slice(0, PARTITIONS_SHOWN)
            .map((g) => (
              <Histogram
                key={g.partition}
                title={g.partition || '(no partition)'}
                sizes={g.sizes}
                minExp={minExp}
                maxExp={maxExp}
                threshold={threshold}
                testid="histogram-partition"
              />
            ))}
      </div>
      {partitioned && groups.length > PARTITIONS_SHOWN && (
        <p class="muted">
          Showing the {PARTITIONS_SHOWN} partitions with the most files of {formatCount(groups.length)}.
        </p>
      )}
      <table class="list" data-testid="file-list">
        <thead>
          <tr>
            <th>Path</th>
            <th>Content</th>
            <th>Partition</th>
            <th class="num">Records</th>
            <th class="num">Size</th>
          </tr>
        </thead>
        <tbody>
          {files.slice(0, FILES_LISTED).map((f) => (
            <tr key={f.path} data-testid="file-row">
              <td>
                <code class="break">{f.path}</code>
              </td>
              <td>{f.content}</td>
              <td>{f.partition}</td>
              <td class="num">{formatCount(f.records)}</td>
              <td class={f.content === 'data' && f.bytes < threshold ? 'num warn' : 'num'}>{formatBytes(f.bytes)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {files.length > FILES_LISTED && <p class="muted">First {FILES_LISTED} of {formatCount(files.length)} files.</p>}
    </>
  );
}
