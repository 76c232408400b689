// The Snapshots tab: a timeline of what each commit added and removed (rows, files or bytes,
// from the snapshot summaries) drawn as SVG, and the list of snapshots.

import { useState } from 'preact/hooks';
import { snapshotStats, type SnapshotId, type SnapshotStats, type TableMetadata } from '../catalog';
import { formatBytes, formatCount, formatTime } from '../format';

type Measure = 'rows' | 'files' | 'bytes';

const MEASURES: Array<[Measure, string]> = [
  ['rows', 'Rows'],
  ['files', 'Data files'],
  ['bytes', 'Bytes'],
];

export function addedRemoved(s: SnapshotStats, measure: Measure): [number, number] {
  switch (measure) {
    case 'rows':
      return [s.addedRecords, s.deletedRecords];
    case 'files':
      return [s.addedDataFiles, s.deletedDataFiles];
    case 'bytes':
      return [s.addedBytes, s.removedBytes];
  }
}

const CHART_SNAPSHOTS_MAX = 400;
const W = 800;
const H = 220;
const PAD_LEFT = 8;
const PAD_RIGHT = 8;
const MID = H / 2;

function Timeline({ stats, measure }: { stats: SnapshotStats[]; measure: Measure }) {
  const shown = stats.slice(-CHART_SNAPSHOTS_MAX);
  if (shown.length === 0) return <p class="muted">No snapshots.</p>;
  const values = shown.map((s) => addedRemoved(s, measure));
  const peak = Math.max(1, ...values.map(([a, r]) => Math.max(a, r)));
  const step = (W - PAD_LEFT - PAD_RIGHT) / shown.length;
  const barWidth = Math.max(1, Math.min(24, step * 0.7));
  const fmt = measure === 'bytes' ? formatBytes : formatCount;
  const scale = (v: number) => (v / peak) * (MID - 14);
  return (
    <figure class="timeline" data-testid="snapshot-timeline">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label="Snapshot timeline">
        <line x1={0} x2={W} y1={MID} y2={MID} class="axis" />
        {shown.map((s, i) => {
          const [added, removed] = values[i];
          const x = PAD_LEFT + i * step + (step - barWidth) / 2;
          const up = scale(added);
          const down = scale(removed);
          return (
            <g key={s.id} data-testid="timeline-bar">
              <title>
                {`${formatTime(s.timestampMs)} · ${s.operation || 'snapshot'} ${s.id}\n+${fmt(added)} / −${fmt(removed)}`}
              </title>
              <rect class="bar-added" x={x} width={barWidth} y={MID - up} height={Math.max(up, added > 0 ? 1 : 0)} />
              <rect class="bar-removed" x={x} width={barWidth} y={MID} height={Math.max(down, removed > 0 ? 1 : 0)} />
              <rect class="bar-hit" x={PAD_LEFT + i * step} width={step} y={0} height={H} />
            </g>
          );
        })}
        <text x={PAD_LEFT} y={12} class="chart-label">
          +{fmt(peak)}
        </text>
        <text x={PAD_LEFT} y={H - 4} class="chart-label">
          −{fmt(peak)}
        </text>
      </svg>
      <figcaption class="muted">
        {formatTime(shown[0].timestampMs)} → {formatTime(shown[shown.length - 1].timestampMs)}
        {stats.length > shown.length ? ` (newest ${shown.length} of ${stats.length})` : ''} · added above the line,
        removed below
      </figcaption>
    </figure>
  );
}

export function SnapshotsTab({ metadata }: { metadata: TableMetadata }) {
  const [measure, setMeasure] = useState<Measure>('rows');
  const stats = snapshotStats(metadata);
  const refsBySnapshot = new Map<SnapshotId, string[]>();
  for (const [name, ref] of Object.entries(metadata.refs ?? {})) {
    refsBySnapshot.set(ref['snapshot-id'], [...(refsBySnapshot.get(ref['snapshot-id']) ?? []), name]);
  }
  const newestFirst = [...stats].reverse();
  return (
    <div data-testid="snapshots">
      <div class="segmented" role="group" aria-label="Measure">
        {MEASURES.map(([m, label]) => (
          <button
            type="button"
            key={m}
            class={m === measure ? 'active' : ''}
            data-testid={`snapshot-measure-${m}`}
            onClick={() => setMeasure(m)}
          >
            {label}
          </button>
        ))}
      </div>
      <Timeline stats={stats} measure={measure} />
      <table class="list" data-testid="snapshot-list">
        <thead>
          <tr>
            <th>Snapshot</th>
            <th>Committed</th>
            <th>Operation</th>
            <th class="num">+rows</th>
            <th class="num">−rows</th>
            <th class="num">+files</th>
            <th class="num">−files</th>
            <th class="num">+bytes</th>
            <th class="num">−bytes</th>
            <th class="num">Total rows</th>
          </tr>
        </thead>
        <tbody>
          {newestFirst.map((s) => (
            <tr key={s.id} data-testid="snapshot-row">
              <td>
                <code>{String(s.id)}</code>
                {(refsBySnapshot.get(s.id) ?? []).map((r) => (
                  <span class="badge" key={r}>
                    {r}
                  </span>
                ))}
              </td>
              <td>{formatTime(s.timestampMs)}</td>
              <td>{s.operation}</td>
              <td class="num">{formatCount(s.addedRecords)}</td>
              <td class="num">{formatCount(s.deletedRecords)}</td>
              <td class="num">{formatCount(s.addedDataFiles)}</td>
              <td class="num">{formatCount(s.deletedDataFiles)}</td>
              <td class="num">{formatBytes(s.addedBytes)}</td>
              <td class="num">{formatBytes(s.removedBytes)}</td>
              <td class="num">{formatCount(s.totalRecords)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
