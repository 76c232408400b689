// A table: its metadata in tabs (schema, partitioning and sort order, properties, branches and
// tags, snapshots, files, rows, maintenance, health, replication, engines).

import type { ComponentChildren } from 'preact';
import { getEngineConfig } from '../api';
import {
  currentSchema,
  fieldNames,
  loadTable,
  replicationInfo,
  replicationLagMs,
  type TableMetadata,
} from '../catalog';
import { buildHash, navigate } from '../router';
import { SchemaTree } from '../components/schema';
import { CopyButton, ErrorBanner, KeyValues, Loading, Tabs, useAsync, useNow, type TabSpec } from '../components/ui';
import { formatCount, formatMillis, formatTime } from '../format';
import { CatalogCrumbs, joinNamespace } from './warehouses';
import { SnapshotsTab } from './table_snapshots';
import { FilesTab } from './table_files';
import { HealthTab, RowsTab } from './table_data';
import { MaintenanceTab } from './table_maintenance';
import { useState } from 'preact/hooks';

export interface TableRef {
  warehouse: string;
  namespace: string[];
  table: string;
}

function SchemaTab({ metadata }: { metadata: TableMetadata }) {
  const current = currentSchema(metadata);
  const [chosen, setChosen] = useState<number | null>(null);
  const schemas = metadata.schemas ?? (current ? [current] : []);
  const shown = schemas.find((s) => s['schema-id'] === chosen) ?? current;
  if (!shown) return <p class="muted">The table has no schema.</p>;
  return (
    <div>
      {schemas.length > 1 && (
        <label class="inline">
          Schema{' '}
          <select
            data-testid="schema-select"
            value={String(shown['schema-id'])}
            onChange={(e) => setChosen(Number((e.target as HTMLSelectElement).value))}
          >
            {schemas.map((s) => (
              <option key={s['schema-id']} value={String(s['schema-id'])}>
                {s['schema-id']}
                {s['schema-id'] === current?.['schema-id'] ? ' (current)' : ''}
              </option>
            ))}
          </select>
        </label>
      )}
      <SchemaTree schema={shown} />
      {shown['identifier-field-ids'] && shown['identifier-field-ids'].length > 0 && (
        <p class="muted">Identifier fields: {shown['identifier-field-ids'].join(', ')}</p>
      )}
    </div>
  );
}

function PartitioningTab({ metadata }: { metadata: TableMetadata }) {
  const names = fieldNames(currentSchema(metadata));
  const spec = metadata['partition-specs']?.find((s) => s['spec-id'] === metadata['default-spec-id']);
  const order = metadata['sort-orders']?.find((o) => o['order-id'] === metadata['default-sort-order-id']);
  const column = (id: number) => names.get(id) ?? `field ${id}`;
  return (
    <div data-testid="partitioning">
      <h3>Partition spec {spec ? spec['spec-id'] : ''}</h3>
      {!spec || spec.fields.length === 0 ? (
        <p class="muted">Unpartitioned.</p>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th>Name</th>
              <th>Source column</th>
              <th>Transform</th>
              <th class="num">Field id</th>
            </tr>
          </thead>
          <tbody>
            {spec.fields.map((f) => (
              <tr key={f.name}>
                <td>{f.name}</td>
                <td>{column(f['source-id'])}</td>
                <td>
                  <code>{f.transform}</code>
                </td>
                <td class="num">{f['field-id'] ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>Sort order {order ? order['order-id'] : ''}</h3>
      {!order || order.fields.length === 0 ? (
        <p class="muted">Unsorted.</p>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th>Column</th>
              <th>Transform</th>
              <th>Direction</th>
              <th>Nulls</th>
            </tr>
          </thead>
          <tbody>
            {order.fields.map((f, i) => (
              <tr key={i}>
                <td>{column(f['source-id'])}</td>
                <td>
                  <code>{f.transform}</code>
                </td>
                <td>{f.direction}</td>
                <td>{f['null-order']}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function PropertiesTab({ metadata, location }: { metadata: TableMetadata; location?: string }) {
  const props = Object.entries(metadata.properties ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  return (
    <div data-testid="properties">
      <KeyValues
        rows={[
          ['Table UUID', <code>{metadata['table-uuid']}</code>],
          ['Format version', String(metadata['format-version'])],
          ['Location', <code class="break">{metadata.location}</code>],
          ['Metadata file', <code class="break">{location ?? ''}</code>],
          ['Last updated', formatTime(metadata['last-updated-ms'] ?? null)],
        ]}
      />
      <h3>Properties</h3>
      {props.length === 0 ? <p class="muted">None.</p> : <KeyValues testid="property-list" rows={props.map(([k, v]) => [k, v])} />}
    </div>
  );
}

function RefsTab({ metadata }: { metadata: TableMetadata }) {
  const refs = Object.entries(metadata.refs ?? {}).sort(([a], [b]) => (a === 'main' ? -1 : b === 'main' ? 1 : a < b ? -1 : 1));
  const snapshots = new Map((metadata.snapshots ?? []).map((s) => [s['snapshot-id'], s]));
  if (refs.length === 0) return <p class="muted">No branches or tags.</p>;
  return (
    <table class="list" data-testid="refs">
      <thead>
        <tr>
          <th>Name</th>
          <th>Kind</th>
          <th>Snapshot</th>
          <th>Committed</th>
          <th>Retention</th>
        </tr>
      </thead>
      <tbody>
        {refs.map(([name, ref]) => {
          const retention: string[] = [];
          if (ref['min-snapshots-to-keep'] !== undefined) retention.push(`keep ≥ ${ref['min-snapshots-to-keep']} snapshots`);
          if (ref['max-snapshot-age-ms'] !== undefined) retention.push(`snapshots ≤ ${formatMillis(ref['max-snapshot-age-ms'])}`);
          if (ref['max-ref-age-ms'] !== undefined) retention.push(`ref ≤ ${formatMillis(ref['max-ref-age-ms'])}`);
          return (
            <tr key={name} data-testid="ref-row">
              <td>{name}</td>
              <td>{ref.type}</td>
              <td>
                <code>{String(ref['snapshot-id'])}</code>
              </td>
              <td>{formatTime(snapshots.get(ref['snapshot-id'])?.['timestamp-ms'] ?? null)}</td>
              <td>{retention.join(', ') || '–'}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function ReplicationTab({ metadata }: { metadata: TableMetadata }) {
  const now = useNow(1000);
  const info = replicationInfo(metadata);
  if (!info) return <p class="muted">This table is not replicated.</p>;
  return (
    <KeyValues
      testid="replication"
      rows={[
        ['Source position (LSN)', <code>{info.lsn}</code>],
        ['Source commit', info.sourceCommitMs !== null ? formatTime(info.sourceCommitMs) : 'not recorded'],
        ['Snapshot commit', formatTime(info.snapshotCommitMs)],
        ['Snapshot', <code>{String(info.snapshotId)}</code>],
        ['Lag behind now', <span data-testid="replication-lag">{formatMillis(replicationLagMs(info, now))}</span>],
      ]}
    />
  );
}

export function EnginesPanel({ warehouse }: { warehouse: string }) {
  const config = useAsync(() => getEngineConfig(warehouse), [warehouse]);
  if (config.error) return <ErrorBanner error={config.error} />;
  if (!config.data) return <Loading />;
  return (
    <div data-testid="engines">
      {config.data.engines.map((e) => (
        <div class="engine" key={e.name} data-testid="engine" data-engine={e.name}>
          <div class="engine-head">
            <h3>{e.title}</h3>
            <CopyButton text={e.text} testid={`engine-copy-${e.name}`} />
          </div>
          <pre>{e.text}</pre>
        </div>
      ))}
    </div>
  );
}

export function TablePage({ warehouse, namespace, table, tab }: TableRef & { tab: string }) {
  const loaded = useAsync(() => loadTable(warehouse, namespace, table), [warehouse, joinNamespace(namespace), table]);
  const metadata = loaded.data?.metadata;
  const replicated = metadata ? replicationInfo(metadata) !== null : false;
  const tabs: TabSpec[] = [
    { id: 'schema', label: 'Schema' },
    { id: 'partitioning', label: 'Partitioning' },
    { id: 'properties', label: 'Properties' },
    { id: 'refs', label: 'Branches and tags' },
    { id: 'snapshots', label: 'Snapshots' },
    { id: 'files', label: 'Files' },
    { id: 'rows', label: 'Rows' },
    { id: 'maintenance', label: 'Maintenance' },
    { id: 'health', label: 'Health' },
    ...(replicated ? [{ id: 'replication', label: 'Replication' }] : []),
    { id: 'engines', label: 'Engines' },
  ];
  const active = tabs.some((t) => t.id === tab) ? tab : 'schema';
  const ref: TableRef = { warehouse, namespace, table };
  const select = (id: string) =>
    navigate(buildHash(['warehouses', warehouse, 'tables', joinNamespace(namespace), table], { tab: id }));

  let body: ComponentChildren = null;
  if (metadata) {
    switch (active) {
      case 'schema':
        body = <SchemaTab metadata={metadata} />;
        break;
      case 'partitioning':
        body = <PartitioningTab metadata={metadata} />;
        break;
      case 'properties':
        body = <PropertiesTab metadata={metadata} location={loaded.data?.['metadata-location']} />;
        break;
      case 'refs':
        body = <RefsTab metadata={metadata} />;
        break;
      case 'snapshots':
        body = <SnapshotsTab metadata={metadata} />;
        break;
      case 'files':
        body = <FilesTab table={ref} metadata={metadata} />;
        break;
      case 'rows':
        body = <RowsTab table={ref} metadata={metadata} />;
        break;
      case 'maintenance':
        body = <MaintenanceTab table={ref} />;
        break;
      case 'health':
        body = <HealthTab table={ref} onFixed={loaded.reload} />;
        break;
      case 'replication':
        body = <ReplicationTab metadata={metadata} />;
        break;
      case 'engines':
        body = <EnginesPanel warehouse={warehouse} />;
        break;
    }
  }

  return (
    <section data-testid="page-table">
      <CatalogCrumbs warehouse={warehouse} namespace={namespace} leaf={table} />
      <div class="title-row">
        <h1>{table}</h1>
        <button type="button" class="small" onClick={loaded.reload} data-testid="table-reload">
          Reload
        </button>
      </div>
      {metadata && (
        <p class="muted">
          {formatCount(metadata.snapshots?.length ?? 0)} snapshots · last updated {formatTime(metadata['last-updated-ms'] ?? null)}
        </p>
      )}
      <ErrorBanner error={loaded.error} />
      {loaded.loading && !metadata && <Loading />}
      {metadata && (
        <>
          <Tabs tabs={tabs} active={active} onSelect={select} />
          <div class="tab-body" data-testid={`tab-body-${active}`}>
            {body}
          </div>
        </>
      )}
    </section>
  );
}
