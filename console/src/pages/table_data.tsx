// The Rows tab (serac's preview endpoint, at the current snapshot, a branch or tag, or any
// snapshot) and the Health tab (serac's health endpoint, with a Fix-now button per finding).

import { useState } from 'preact/hooks';
import {
  MAINTENANCE_TITLES,
  runMaintenance,
  tableHealth,
  tablePreview,
  type MaintenanceType,
  type SnapshotId,
  type TableMetadata,
} from '../catalog';
import { ErrorBanner, KeyValues, Loading, useAsync } from '../components/ui';
import { formatBytes, formatCount, formatTime } from '../format';
import { messageOf } from '../api';
import type { TableRef } from './table';
import { JobLine, watchJob, type JobProgress } from './table_maintenance';

// "" = current; "ref:NAME"; "snap:ID".
export function parseAt(choice: string): { snapshotId?: SnapshotId; ref?: string } {
  if (choice.startsWith('ref:')) return { ref: choice.slice(4) };
  if (choice.startsWith('snap:')) return { snapshotId: choice.slice(5) };
  return {};
}

export function RowsTab({ table, metadata }: { table: TableRef; metadata: TableMetadata }) {
  const [at, setAt] = useState('');
  const preview = useAsync(
    () => tablePreview(table.warehouse, table.namespace, table.table, parseAt(at)),
    [table.warehouse, table.namespace.join('\u001f'), table.table, at],
  );
  const refs = Object.keys(metadata.refs ?? {}).sort();
  const snapshots = [...(metadata.snapshots ?? [])].sort((a, b) => b['timestamp-ms'] - a['timestamp-ms']);
  const p = preview.data;
  return (
    <div data-testid="rows">
      <label class="inline">
        Read at{' '}
        <select data-testid="preview-at" value={at} onChange={(e) => setAt((e.target as HTMLSelectElement).value)}>
          <option value="">current snapshot</option>
          {refs.length > 0 && (
            <optgroup label="Branches and tags">
              {refs.map((r) => (
                <option key={r} value={`ref:${r}`}>
                  {r}
                </option>
              ))}
            </optgroup>
          )}
          {snapshots.length > 0 && (
            <optgroup label="Snapshots">
              {snapshots.map((s) => (
                <option key={s['snapshot-id']} value={`snap:${s['snapshot-id']}`}>
                  {`${s['snapshot-id']} (${formatTime(s['timestamp-ms'])})`}
                </option>
              ))}
            </optgroup>
          )}
        </select>
      </label>
      <ErrorBanner error={preview.error} />
      {preview.loading && <Loading label="Reading rows…" />}
      {p && (
        <>
          <p class="muted" data-testid="preview-summary">
            {p['snapshot-id'] === null ? 'The table has no data yet.' : `Snapshot ${p['snapshot-id']}: `}
            {p['snapshot-id'] !== null &&
              `${formatCount(p.rows.length)} ${p.rows.length === 1 ? 'row' : 'rows'}${p.truncated ? ' (first rows only)' : ''}${
                p['delete-files-applied']
                  ? `, ${formatCount(p['delete-files-applied'])} ${p['delete-files-applied'] === 1 ? 'delete file' : 'delete files'} applied`
                  : ''
              }.`}
          </p>
          <div class="scroll-x">
            <table class="list preview" data-testid="preview-table">
              <thead>
                <tr>
                  {p.columns.map((c, i) => (
                    <th key={i}>
                      {c.name}
                      <div class="col-type">{c.type}</div>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {p.rows.map((row, i) => (
                  <tr key={i} data-testid="preview-row">
                    {row.map((cell, j) => (
                      <td key={j} class={cell === null ? 'null' : ''}>
                        {cell === null ? 'null' : cell}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}

export function HealthTab({ table, onFixed }: { table: TableRef; onFixed: () => void }) {
  const health = useAsync(
    () => tableHealth(table.warehouse, table.namespace, table.table),
    [table.warehouse, table.namespace.join('\u001f'), table.table],
  );
  const [jobs, setJobs] = useState<Record<string, JobProgress>>({});
  const fix = async (type: MaintenanceType) => {
    setJobs((j) => ({ ...j, [type]: { state: 'starting' } }));
    try {
      const started = await runMaintenance(table.warehouse, table.namespace, table.table, type);
      setJobs((j) => ({ ...j, [type]: { state: 'running', jobId: started.jobId } }));
      const final = await watchJob(table, type, started.jobId, (p) => setJobs((j) => ({ ...j, [type]: p })));
      setJobs((j) => ({ ...j, [type]: final }));
      health.reload();
      onFixed();
    } catch (e) {
      setJobs((j) => ({ ...j, [type]: { state: 'failed', message: messageOf(e) } }));
    }
  };
  const h = health.data;
  return (
    <div data-testid="health">
      <ErrorBanner error={health.error} />
      {health.loading && !h && <Loading />}
      {h && (
        <>
          <KeyValues
            testid="health-numbers"
            rows={[
              ['Data files', `${formatCount(h['data-files'])} (${formatBytes(h['data-bytes'])})`],
              ['Small files', `${formatCount(h['small-files'])} (under ${formatBytes(h['small-file-bytes-threshold'])})`],
              ['Delete files', `${formatCount(h['delete-files'])} (${formatCount(h['delete-records'])} deletes)`],
              ['Snapshots', `${formatCount(h.snapshots)} (${formatCount(h['snapshots-beyond-expiry'])} past expiry)`],
              ['Reclaimable', formatBytes(h['bytes-reclaimable'])],
            ]}
          />
          <h3>Findings</h3>
          {h.findings.length === 0 && (
            <p class="ok" data-testid="health-ok">
              Nothing to fix.
            </p>
          )}
          <ul class="findings" data-testid="health-findings">
            {h.findings.map((f, i) => {
              const job = f.fix ? jobs[f.fix] : undefined;
              return (
                <li key={i} data-testid="health-finding" data-kind={f.kind}>
                  <span class="finding-kind">{f.kind}</span> {f.message}
                  {f.fix && (
                    <>
                      {' '}
                      <button
                        type="button"
                        class="small primary"
                        data-testid="health-fix"
                        disabled={job?.state === 'starting' || job?.state === 'running'}
                        onClick={() => fix(f.fix!)}
                      >
                        Fix now ({MAINTENANCE_TITLES[f.fix] ?? f.fix})
                      </button>
                    </>
                  )}
                  {job && <JobLine job={job} />}
                </li>
              );
            })}
          </ul>
        </>
      )}
    </div>
  );
}
