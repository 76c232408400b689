// Maintenance across a warehouse: its default settings per type, and every table's last job per
// type, failed or overdue first.

import { useEffect, useState } from 'preact/hooks';
import {
  deleteWarehouseMaintenance,
  getMaintenanceStatus,
  getWarehouseMaintenance,
  listAllTables,
  listWarehouses,
  MAINTENANCE_TITLES,
  MAINTENANCE_TYPES,
  putWarehouseMaintenance,
  type Identifier,
  type MaintenanceType,
} from '../catalog';
import { messageOf } from '../api';
import { buildHash, navigate } from '../router';
import { ErrorBanner, Loading, useAsync } from '../components/ui';
import { formatAgo, formatCount } from '../format';
import { SettingsEditor } from './table_maintenance';
import { joinNamespace } from './warehouses';

const OVERDUE_MS = 24 * 3600 * 1000;
const TABLES_MAX = 200;
const REQUESTS_AT_ONCE = 4;

export interface TypeStatus {
  status: string; // Successful, Failed, Running, Not_Yet_Run, Disabled, or "error"
  lastRunMs: number | null;
  message?: string;
}

export interface TableRow {
  id: Identifier;
  types: Partial<Record<MaintenanceType, TypeStatus>>;
}

export function isOverdue(s: TypeStatus | undefined, nowMs: number): boolean {
  if (!s || s.status === 'Disabled' || s.status === 'Running' || s.status === 'error') return false;
  if (s.status === 'Not_Yet_Run') return true;
  return s.lastRunMs !== null && nowMs - s.lastRunMs > OVERDUE_MS;
}

// 2 for a table with a failed type, 1 for one overdue, 0 otherwise.
export function urgency(row: TableRow, nowMs: number): number {
  const statuses = MAINTENANCE_TYPES.map((t) => row.types[t]);
  if (statuses.some((s) => s?.status === 'Failed' || s?.status === 'error')) return 2;
  if (statuses.some((s) => isOverdue(s, nowMs))) return 1;
  return 0;
}

export function sortByUrgency(rows: TableRow[], nowMs: number): TableRow[] {
  const name = (r: TableRow) => `${r.id.namespace.join('.')}.${r.id.name}`;
  return [...rows].sort((a, b) => urgency(b, nowMs) - urgency(a, nowMs) || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0));
}

async function forEachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function WarehouseDefaults({ warehouse }: { warehouse: string }) {
  const defaults = useAsync(() => getWarehouseMaintenance(warehouse), [warehouse]);
  if (defaults.error) return <ErrorBanner error={defaults.error} />;
  if (!defaults.data) return <Loading />;
  return (
    <div class="maintenance" data-testid="warehouse-defaults">
      {MAINTENANCE_TYPES.map((type) => {
        const value = defaults.data!.configuration?.[type];
        return (
          <div class="card" key={type}>
            <h3>{MAINTENANCE_TITLES[type]}</h3>
            <SettingsEditor
              type={type}
              value={value}
              note={value ? 'Set for this warehouse.' : 'Not set: tables use the built-in defaults.'}
              onSave={async (v) => {
                await putWarehouseMaintenance(warehouse, type, v);
                defaults.reload();
              }}
              onReset={
                value
                  ? async () => {
                      await deleteWarehouseMaintenance(warehouse, type);
                      defaults.reload();
                    }
                  : undefined
              }
              resetLabel="Remove the warehouse setting"
            />
          </div>
        );
      })}
    </div>
  );
}

function TablesOverview({ warehouse }: { warehouse: string }) {
  const [rows, setRows] = useState<TableRow[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [done, setDone] = useState(0);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let stopped = false;
    setRows([]);
    setTotal(null);
    setDone(0);
    setError(null);
    (async () => {
      const tables = await listAllTables(warehouse, TABLES_MAX);
      if (stopped) return;
      setTotal(tables.length);
      await forEachLimited(tables, REQUESTS_AT_ONCE, async (id) => {
        if (stopped) return;
        const row: TableRow = { id, types: {} };
        for (const type of MAINTENANCE_TYPES) {
          try {
            const st = await getMaintenanceStatus(warehouse, id.namespace, id.name, type);
            const s = st.status?.[type];
            const last = s?.lastRunTimestamp ? Date.parse(s.lastRunTimestamp) : NaN;
            row.types[type] = {
              status: s?.status ?? 'unknown',
              lastRunMs: Number.isNaN(last) ? null : last,
              message: s?.failureMessage,
            };
          } catch (e) {
            row.types[type] = { status: 'error', lastRunMs: null, message: messageOf(e) };
          }
        }
        if (stopped) return;
        setRows((r) => [...r, row]);
        setDone((d) => d + 1);
      });
    })().catch((e) => !stopped && setError(e));
    return () => {
      stopped = true;
    };
  }, [warehouse]);

  const now = Date.now();
  const sorted = sortByUrgency(rows, now);
  return (
    <div>
      <ErrorBanner error={error} />
      {total === null && !error && <Loading label="Finding tables…" />}
      {total !== null && (
        <p class="muted" data-testid="maintenance-progress">
          {done < total ? `Reading job status: ${formatCount(done)} of ${formatCount(total)} tables…` : `${formatCount(total)} ${total === 1 ? 'table' : 'tables'}`}
          {total >= TABLES_MAX ? ` (the first ${TABLES_MAX})` : ''}. Overdue: enabled and not run in the last 24 hours.
        </p>
      )}
      {sorted.length > 0 && (
        <table class="list" data-testid="maintenance-tables">
          <thead>
            <tr>
              <th>Table</th>
              {MAINTENANCE_TYPES.map((t) => (
                <th key={t}>{MAINTENANCE_TITLES[t]}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {sorted.map((row) => {
              const u = urgency(row, now);
              return (
                <tr key={`${joinNamespace(row.id.namespace)}/${row.id.name}`} data-testid="maintenance-table-row" data-urgency={u}>
                  <td>
                    <a
                      href={buildHash(['warehouses', warehouse, 'tables', joinNamespace(row.id.namespace), row.id.name], {
                        tab: 'maintenance',
                      })}
                    >
                      {`${row.id.namespace.join('.')}.${row.id.name}`}
                    </a>
                    {u === 2 && <span class="badge bad">failed</span>}
                    {u === 1 && <span class="badge warn">overdue</span>}
                  </td>
                  {MAINTENANCE_TYPES.map((t) => {
                    const s = row.types[t];
                    return (
                      <td key={t} class={s?.status === 'Failed' || s?.status === 'error' ? 'error-text' : isOverdue(s, now) ? 'warn' : ''}>
                        {s ? (s.status === 'error' ? 'unreadable' : s.status.replace(/_/g, ' ')) : '…'}
                        {s?.lastRunMs ? <div class="muted small">{formatAgo(s.lastRunMs, now)}</div> : null}
                        {s?.message ? <div class="small">{s.message}</div> : null}
                      </td>
                    );
                  })}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}

export function MaintenancePage({ warehouse }: { warehouse: string | undefined }) {
  const warehouses = useAsync(listWarehouses, []);
  const chosen = warehouse ?? warehouses.data?.[0];
  return (
    <section data-testid="page-maintenance">
      <h1>Maintenance</h1>
      <ErrorBanner error={warehouses.error} />
      {warehouses.data && (
        <label class="inline">
          Warehouse{' '}
          <select
            data-testid="maintenance-warehouse"
            value={chosen ?? ''}
            onChange={(e) => navigate(buildHash(['maintenance'], { warehouse: (e.target as HTMLSelectElement).value }))}
          >
            {warehouses.data.map((w) => (
              <option key={w} value={w}>
                {w}
              </option>
            ))}
          </select>
        </label>
      )}
      {warehouses.data && warehouses.data.length === 0 && <p class="muted">No warehouses.</p>}
      {chosen && (
        <>
          <h2>Defaults for {chosen}</h2>
          <WarehouseDefaults warehouse={chosen} />
          <h2>Tables</h2>
          <TablesOverview warehouse={chosen} />
        </>
      )}
    </section>
  );
}
