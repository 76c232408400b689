// Maintenance settings editing (shared by a table's Maintenance tab and the warehouse defaults on
// the Maintenance page), a table's job history, and Run now with the job watched to its end.

import { useEffect, useState } from 'preact/hooks';
import {
  COMPACTION_STRATEGIES,
  deleteTableMaintenance,
  getMaintenanceStatus,
  getTableMaintenance,
  innerSettings,
  MAINTENANCE_FIELDS,
  MAINTENANCE_TITLES,
  MAINTENANCE_TYPES,
  makeMaintenanceValue,
  putTableMaintenance,
  runMaintenance,
  type MaintenanceJob,
  type MaintenanceType,
  type MaintenanceValue,
} from '../catalog';
import { messageOf } from '../api';
import { ErrorBanner, Loading, useAction, useAsync } from '../components/ui';
import { formatTime } from '../format';
import type { TableRef } from './table';

export interface JobProgress {
  state: 'starting' | 'running' | 'succeeded' | 'failed';
  jobId?: string;
  message?: string;
}

const JOB_POLL_MS = 1500;
const JOB_WATCH_MS_MAX = 60 * 60 * 1000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Polls a job's status until it is no longer running.
export async function watchJob(
  table: TableRef,
  type: MaintenanceType,
  jobId: string,
  onProgress: (p: JobProgress) => void,
): Promise<JobProgress> {
  const deadline = Date.now() + JOB_WATCH_MS_MAX;
  while (Date.now() < deadline) {
    const status = await getMaintenanceStatus(table.warehouse, table.namespace, table.table, type);
    const job = status.jobs.find((j) => j.jobId === jobId);
    if (job && job.status !== 'running') {
      return job.status === 'succeeded'
        ? { state: 'succeeded', jobId }
        : { state: 'failed', jobId, message: job.error ?? `the job ended ${job.status}` };
    }
    onProgress({ state: 'running', jobId });
    await sleep(JOB_POLL_MS);
  }
  return { state: 'failed', jobId, message: 'still running after an hour; look at its history later' };
}

// The form for one type's value.
export function SettingsEditor({
  type,
  value,
  onSave,
  onReset,
  resetLabel,
  note,
}: {
  type: MaintenanceType;
  value: MaintenanceValue | undefined;
  onSave: (value: MaintenanceValue) => Promise<void>;
  onReset?: () => Promise<void>;
  resetLabel?: string;
  note?: string;
}) {
  const [enabled, setEnabled] = useState(value?.status !== 'disabled');
  const [fields, setFields] = useState<Record<string, string>>({});
  const [run, busy, error, setError] = useAction();
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    setEnabled(value?.status !== 'disabled');
    const inner = innerSettings(type, value);
    const text: Record<string, string> = {};
    for (const [k, v] of Object.entries(inner)) text[k] = String(v);
    setFields(text);
  }, [type, JSON.stringify(value)]);

  const id = (field: string) => `maintenance-${type}-${field}`;
  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    const settings: Record<string, number | string> = {};
    for (const spec of MAINTENANCE_FIELDS[type]) {
      const raw = (fields[spec.name] ?? '').trim();
      if (raw === '') continue;
      const n = Number(raw);
      if (!Number.isInteger(n) || n < spec.min || n > spec.max) {
        setError(new Error(`${spec.label}: a whole number from ${spec.min} to ${spec.max}`));
        return;
      }
      settings[spec.name] = n;
    }
    if (type === 'icebergCompaction' && fields.strategy) settings.strategy = fields.strategy;
    if (await run(() => onSave(makeMaintenanceValue(type, enabled, settings)))) setSaved(true);
  };

  return (
    <form class="settings" data-testid={`maintenance-form-${type}`} onSubmit={submit}>
      <label class="check">
        <input
          type="checkbox"
          checked={enabled}
          data-testid={id('enabled')}
          onChange={(e) => setEnabled((e.target as HTMLInputElement).checked)}
        />{' '}
        Enabled
      </label>
      {MAINTENANCE_FIELDS[type].map((spec) => (
        <label key={spec.name}>
          {spec.label}
          <input
            type="number"
            min={spec.min}
            max={spec.max}
            step={1}
            value={fields[spec.name] ?? ''}
            data-testid={id(spec.name)}
            onInput={(e) => setFields({ ...fields, [spec.name]: (e.target as HTMLInputElement).value })}
          />
        </label>
      ))}
      {type === 'icebergCompaction' && (
        <label>
          Strategy
          <select
            value={fields.strategy ?? ''}
            data-testid={id('strategy')}
            onChange={(e) => setFields({ ...fields, strategy: (e.target as HTMLSelectElement).value })}
          >
            <option value="">(default)</option>
            {COMPACTION_STRATEGIES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      )}
      {note && <p class="muted">{note}</p>}
      <div class="buttons">
        <button type="submit" class="small primary" disabled={busy} data-testid={id('save')}>
          Save
        </button>
        {onReset && (
          <button
            type="button"
            class="small"
            disabled={busy}
            data-testid={id('reset')}
            onClick={async () => {
              setSaved(false);
              if (await run(onReset)) setSaved(true);
            }}
          >
            {resetLabel ?? 'Reset'}
          </button>
        )}
        {saved && (
          <span class="ok" data-testid={id('saved')}>
            Saved.
          </span>
        )}
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}

function extraFields(job: MaintenanceJob): string {
  const skip = new Set(['jobId', 'type', 'status', 'startedAt', 'endedAt', 'error', 'node']);
  return Object.entries(job)
    .filter(([k, v]) => !skip.has(k) && (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean'))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ');
}

function TypePanel({ table, type, value, overridden, onChanged }: {
  table: TableRef;
  type: MaintenanceType;
  value: MaintenanceValue | undefined;
  overridden: boolean;
  onChanged: () => void;
}) {
  const status = useAsync(
    () => getMaintenanceStatus(table.warehouse, table.namespace, table.table, type),
    [table.warehouse, table.namespace.join('\u001f'), table.table, type],
  );
  const [job, setJob] = useState<JobProgress | null>(null);
  const runNow = async () => {
    setJob({ state: 'starting' });
    try {
      const started = await runMaintenance(table.warehouse, table.namespace, table.table, type);
      setJob({ state: 'running', jobId: started.jobId });
      status.reload();
      const final = await watchJob(table, type, started.jobId, setJob);
      setJob(final);
    } catch (e) {
      setJob({ state: 'failed', message: messageOf(e) });
    }
    status.reload();
  };
  const s = status.data?.status?.[type];
  return (
    <div class="card maintenance-type" data-testid={`maintenance-${type}`}>
      <h3>{MAINTENANCE_TITLES[type]}</h3>
      <p class="muted">{overridden ? 'Set for this table.' : 'Inherited (warehouse default, table properties or built-in default).'}</p>
      <SettingsEditor
        type={type}
        value={value}
        onSave={async (v) => {
          await putTableMaintenance(table.warehouse, table.namespace, table.table, type, v);
          onChanged();
        }}
        onReset={
          overridden
            ? async () => {
                await deleteTableMaintenance(table.warehouse, table.namespace, table.table, type);
                onChanged();
              }
            : undefined
        }
        resetLabel="Use the warehouse default"
      />
      <div class="run-row">
        <button
          type="button"
          class="small"
          data-testid={`maintenance-${type}-run`}
          disabled={job?.state === 'starting' || job?.state === 'running'}
          onClick={runNow}
        >
          Run now
        </button>
        {s && (
          <span data-testid={`maintenance-${type}-status`} class={s.status === 'Failed' ? 'error-text' : 'muted'}>
            {s.status}
            {s.lastRunTimestamp ? ` · last run ${formatTime(s.lastRunTimestamp)}` : ''}
            {s.failureMessage ? ` · ${s.failureMessage}` : ''}
          </span>
        )}
      </div>
      {job && <JobLine job={job} />}
      <ErrorBanner error={status.error} />
      {status.data && status.data.jobs.length > 0 && (
        <details>
          <summary>History ({status.data.jobs.length})</summary>
          <table class="list" data-testid={`maintenance-${type}-history`}>
            <thead>
              <tr>
                <th>Job</th>
                <th>Status</th>
                <th>Started</th>
                <th>Ended</th>
                <th>Details</th>
              </tr>
            </thead>
            <tbody>
              {status.data.jobs.map((j) => (
                <tr key={j.jobId} data-testid="maintenance-job">
                  <td>
                    <code>{j.jobId}</code>
                  </td>
                  <td class={j.status === 'failed' ? 'error-text' : ''}>{j.status}</td>
                  <td>{formatTime(j.startedAt)}</td>
                  <td>{formatTime(j.endedAt ?? null)}</td>
                  <td class="break">{j.error ? j.error : extraFields(j)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </div>
  );
}

export function MaintenanceTab({ table }: { table: TableRef }) {
  const settings = useAsync(
    () => getTableMaintenance(table.warehouse, table.namespace, table.table),
    [table.warehouse, table.namespace.join('\u001f'), table.table],
  );
  if (settings.error) return <ErrorBanner error={settings.error} />;
  if (!settings.data) return <Loading />;
  return (
    <div class="maintenance" data-testid="maintenance">
      {MAINTENANCE_TYPES.map((type) => (
        <TypePanel
          key={type}
          table={table}
          type={type}
          value={settings.data!.configuration[type]}
          overridden={settings.data!.overrides?.[type] !== undefined}
          onChanged={settings.reload}
        />
      ))}
    </div>
  );
}

export function JobLine({ job }: { job: JobProgress }) {
  return (
    <div class={job.state === 'failed' ? 'error-text' : 'muted'} data-testid="job-state" data-state={job.state}>
      {job.state === 'starting' && 'Starting…'}
      {job.state === 'running' && `Job ${job.jobId ?? ''} running…`}
      {job.state === 'succeeded' && `Job ${job.jobId ?? ''} finished.`}
      {job.state === 'failed' && `Failed: ${job.message ?? 'the job failed'}`}
    </div>
  );
}
