// Warehouses, their namespaces (nested), and the tables and views in a namespace.

import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import {
  createWarehouse,
  displayNamespace,
  listNamespaces,
  listTables,
  listViews,
  listWarehouses,
  NAMESPACE_SEPARATOR,
} from '../catalog';
import { buildHash } from '../router';
import { ErrorBanner, Loading, useAction, useAsync } from '../components/ui';

export const joinNamespace = (levels: string[]) => levels.join(NAMESPACE_SEPARATOR);
export const splitNamespace = (joined: string | undefined) => (joined ? joined.split(NAMESPACE_SEPARATOR) : []);

export function namespaceHash(warehouse: string, levels: string[]): string {
  return buildHash(['warehouses', warehouse], { ns: levels.length ? joinNamespace(levels) : undefined });
}

export function CatalogCrumbs({ warehouse, namespace, leaf }: { warehouse: string; namespace: string[]; leaf?: string }) {
  return (
    <nav class="breadcrumbs" data-testid="breadcrumbs" aria-label="Location">
      <a href={buildHash(['warehouses'])}>Warehouses</a>
      <span class="sep">/</span>
      <a href={namespaceHash(warehouse, [])} data-testid="breadcrumb">
        {warehouse}
      </a>
      {namespace.map((level, i) => (
        <Fragment key={i}>
          <span class="sep">/</span>
          <a href={namespaceHash(warehouse, namespace.slice(0, i + 1))} data-testid="breadcrumb">
            {level}
          </a>
        </Fragment>
      ))}
      {leaf !== undefined && (
        <>
          <span class="sep">/</span>
          <span>{leaf}</span>
        </>
      )}
    </nav>
  );
}

export function WarehousesPage() {
  const warehouses = useAsync(listWarehouses, []);
  const [name, setName] = useState('');
  const [create, creating, createError] = useAction();
  return (
    <section data-testid="page-warehouses">
      <h1>Warehouses</h1>
      <form
        class="inline-form"
        data-testid="warehouse-create-form"
        onSubmit={async (e) => {
          e.preventDefault();
          const w = name.trim();
          if (w && (await create(() => createWarehouse(w)))) {
            setName('');
            warehouses.reload();
          }
        }}
      >
        <input
          placeholder="new-warehouse"
          value={name}
          spellcheck={false}
          data-testid="warehouse-name-input"
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={creating || !name.trim()} data-testid="warehouse-create">
          Create warehouse
        </button>
      </form>
      <ErrorBanner error={createError} />
      <ErrorBanner error={warehouses.error} />
      {warehouses.loading && !warehouses.data && <Loading />}
      {warehouses.data && (
        <ul class="entity-list" data-testid="warehouse-list">
          {warehouses.data.length === 0 && <li class="muted">No warehouses.</li>}
          {warehouses.data.map((w) => (
            <li key={w} data-testid="warehouse-row" data-warehouse={w}>
              <a href={namespaceHash(w, [])}>{w}</a>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function NamespacePage({ warehouse, namespace }: { warehouse: string; namespace: string[] }) {
  const key = joinNamespace(namespace);
  const children = useAsync(() => listNamespaces(warehouse, namespace.length ? namespace : null), [warehouse, key]);
  const tables = useAsync(
    () => (namespace.length ? listTables(warehouse, namespace) : Promise.resolve([])),
    [warehouse, key],
  );
  const views = useAsync(() => (namespace.length ? listViews(warehouse, namespace) : Promise.resolve([])), [warehouse, key]);
  return (
    <section data-testid="page-namespace">
      <CatalogCrumbs warehouse={warehouse} namespace={namespace} />
      <h1>{namespace.length ? displayNamespace(namespace) : warehouse}</h1>
      <p>
        <a href={buildHash(['maintenance'], { warehouse })}>Maintenance of this warehouse</a>
      </p>
      <h2>Namespaces</h2>
      <ErrorBanner error={children.error} />
      {children.loading && !children.data && <Loading />}
      {children.data && (
        <ul class="entity-list" data-testid="namespace-list">
          {children.data.length === 0 && <li class="muted">None.</li>}
          {children.data.map((ns) => (
            <li key={joinNamespace(ns)} data-testid="namespace-row">
              <a href={namespaceHash(warehouse, ns)}>{displayNamespace(ns)}</a>
            </li>
          ))}
        </ul>
      )}
      {namespace.length > 0 && (
        <>
          <h2>Tables</h2>
          <ErrorBanner error={tables.error} />
          {tables.loading && !tables.data && <Loading />}
          {tables.data && (
            <ul class="entity-list" data-testid="table-list">
              {tables.data.length === 0 && <li class="muted">None.</li>}
              {tables.data.map((t) => (
                <li key={t.name} data-testid="table-row" data-table={t.name}>
                  <a href={buildHash(['warehouses', warehouse, 'tables', key, t.name])}>{t.name}</a>
                </li>
              ))}
            </ul>
          )}
          <h2>Views</h2>
          <ErrorBanner error={views.error} />
          {views.data && (
            <ul class="entity-list" data-testid="view-list">
              {views.data.length === 0 && <li class="muted">None.</li>}
              {views.data.map((v) => (
                <li key={v.name} data-testid="view-row" data-view={v.name}>
                  <a href={buildHash(['warehouses', warehouse, 'views', key, v.name])}>{v.name}</a>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
