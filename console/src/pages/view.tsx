// A view: its schema and its SQL per dialect, for the current version or any earlier one.

import { useState } from 'preact/hooks';
import { loadView } from '../catalog';
import { SchemaTree } from '../components/schema';
import { CopyButton, ErrorBanner, KeyValues, Loading, useAsync } from '../components/ui';
import { formatTime } from '../format';
import { CatalogCrumbs, joinNamespace } from './warehouses';

export function ViewPage({ warehouse, namespace, view }: { warehouse: string; namespace: string[]; view: string }) {
  const loaded = useAsync(() => loadView(warehouse, namespace, view), [warehouse, joinNamespace(namespace), view]);
  const [versionId, setVersionId] = useState<number | null>(null);
  const m = loaded.data?.metadata;
  const versions = m ? [...m.versions].sort((a, b) => b['version-id'] - a['version-id']) : [];
  const version = m ? (versions.find((v) => v['version-id'] === (versionId ?? m['current-version-id'])) ?? versions[0]) : undefined;
  const schema = m && version ? m.schemas.find((s) => s['schema-id'] === version['schema-id']) : undefined;
  return (
    <section data-testid="page-view">
      <CatalogCrumbs warehouse={warehouse} namespace={namespace} leaf={view} />
      <h1>{view}</h1>
      <ErrorBanner error={loaded.error} />
      {loaded.loading && !m && <Loading />}
      {m && version && (
        <>
          <KeyValues
            rows={[
              ['View UUID', <code>{m['view-uuid']}</code>],
              ['Location', <code class="break">{m.location}</code>],
              [
                'Version',
                <select
                  data-testid="view-version"
                  value={String(version['version-id'])}
                  onChange={(e) => setVersionId(Number((e.target as HTMLSelectElement).value))}
                >
                  {versions.map((v) => (
                    <option key={v['version-id']} value={String(v['version-id'])}>
                      {`${v['version-id']}${v['version-id'] === m['current-version-id'] ? ' (current)' : ''} · ${formatTime(v['timestamp-ms'])}`}
                    </option>
                  ))}
                </select>,
              ],
              ['Default namespace', (version['default-namespace'] ?? []).join('.')],
            ]}
          />
          <h2>SQL</h2>
          <div data-testid="view-sql">
            {version.representations
              .filter((r) => r.type === 'sql')
              .map((r, i) => (
                <div class="engine" key={i} data-testid="view-sql-dialect" data-dialect={r.dialect ?? ''}>
                  <div class="engine-head">
                    <h3>{r.dialect ?? 'sql'}</h3>
                    <CopyButton text={r.sql ?? ''} testid="view-sql-copy" />
                  </div>
                  <pre>{r.sql ?? ''}</pre>
                </div>
              ))}
          </div>
          <h2>Schema</h2>
          {schema ? <SchemaTree schema={schema} /> : <p class="muted">No schema for this version.</p>}
          {m.properties && Object.keys(m.properties).length > 0 && (
            <>
              <h2>Properties</h2>
              <KeyValues rows={Object.entries(m.properties).sort(([a], [b]) => (a < b ? -1 : 1))} />
            </>
          )}
        </>
      )}
    </section>
  );
}
