// The Iceberg REST catalog through the console's proxy (api/iceberg/v1/...), the maintenance API,
// serac's preview/files/health extensions, and the pure helpers the table pages draw from.

import { apiFetch, apiJson } from './api';

// A snapshot id: a 64-bit integer, so beyond 2^53 it arrives as its decimal text (api.ts,
// parseJsonKeepingLargeIntegers) and is compared and sent back as such.
export type SnapshotId = number | string;

// ---- addressing ----

export const NAMESPACE_SEPARATOR = '\u001f';

// A namespace as one path segment: its levels percent-encoded and joined by %1F.
export function encodeNamespace(levels: string[]): string {
  return levels.map((l) => encodeURIComponent(l)).join('%1F');
}

export function displayNamespace(levels: string[]): string {
  return levels.join('.');
}

const enc = encodeURIComponent;

export function tablePath(prefix: string, namespace: string[], table: string): string {
  return `iceberg/v1/${enc(prefix)}/namespaces/${encodeNamespace(namespace)}/tables/${enc(table)}`;
}

export function viewPath(prefix: string, namespace: string[], view: string): string {
  return `iceberg/v1/${enc(prefix)}/namespaces/${encodeNamespace(namespace)}/views/${enc(view)}`;
}

// The maintenance API names the warehouse itself, not the config's prefix.
export function tableMaintenancePath(warehouse: string, namespace: string[], table: string): string {
  return `iceberg/v1/warehouses/${enc(warehouse)}/namespaces/${encodeNamespace(namespace)}/tables/${enc(table)}/maintenance`;
}

// ---- Iceberg metadata types (only what the console reads) ----

export type IcebergType = string | StructType | ListType | MapType;

export interface NestedField {
  id: number;
  name: string;
  required: boolean;
  type: IcebergType;
  doc?: string;
}

export interface StructType {
  type: 'struct';
  fields: NestedField[];
}

export interface ListType {
  type: 'list';
  'element-id': number;
  element: IcebergType;
  'element-required': boolean;
}

export interface MapType {
  type: 'map';
  'key-id': number;
  key: IcebergType;
  'value-id': number;
  value: IcebergType;
  'value-required': boolean;
}

export interface Schema extends StructType {
  'schema-id': number;
  'identifier-field-ids'?: number[];
}

export interface PartitionField {
  name: string;
  transform: string;
  'source-id': number;
  'field-id'?: number;
}

export interface SortField {
  transform: string;
  'source-id': number;
  direction: string;
  'null-order': string;
}

export interface Snapshot {
  'snapshot-id': SnapshotId;
  'parent-snapshot-id'?: SnapshotId;
  'sequence-number'?: number;
  'timestamp-ms': number;
  'manifest-list'?: string;
  summary?: Record<string, string>;
  'schema-id'?: number;
}

export interface SnapshotRef {
  'snapshot-id': SnapshotId;
  type: 'branch' | 'tag';
  'max-ref-age-ms'?: number;
  'max-snapshot-age-ms'?: number;
  'min-snapshots-to-keep'?: number;
}

export interface TableMetadata {
  'format-version': number;
  'table-uuid': string;
  location: string;
  'last-updated-ms'?: number;
  'current-schema-id'?: number;
  schemas?: Schema[];
  schema?: Schema;
  'default-spec-id'?: number;
  'partition-specs'?: Array<{ 'spec-id': number; fields: PartitionField[] }>;
  'default-sort-order-id'?: number;
  'sort-orders'?: Array<{ 'order-id': number; fields: SortField[] }>;
  properties?: Record<string, string>;
  'current-snapshot-id'?: SnapshotId | null;
  snapshots?: Snapshot[];
  refs?: Record<string, SnapshotRef>;
}

export interface LoadTableResult {
  'metadata-location'?: string;
  metadata: TableMetadata;
  config?: Record<string, string>;
}

export interface ViewRepresentation {
  type: string;
  sql?: string;
  dialect?: string;
}

export interface ViewVersion {
  'version-id': number;
  'timestamp-ms': number;
  'schema-id': number;
  summary?: Record<string, string>;
  representations: ViewRepresentation[];
  'default-namespace'?: string[];
  'default-catalog'?: string;
}

export interface ViewMetadata {
  'view-uuid': string;
  'format-version': number;
  location: string;
  'current-version-id': number;
  versions: ViewVersion[];
  schemas: Schema[];
  properties?: Record<string, string>;
}

export interface LoadViewResult {
  'metadata-location'?: string;
  metadata: ViewMetadata;
}

// ---- schema rendering ----

export function isStruct(t: IcebergType): t is StructType {
  return typeof t === 'object' && t !== null && t.type === 'struct';
}
export function isList(t: IcebergType): t is ListType {
  return typeof t === 'object' && t !== null && t.type === 'list';
}
export function isMap(t: IcebergType): t is MapType {
  return typeof t === 'object' && t !== null && t.type === 'map';
}

// A type on one line: "long", "list<string>", "map<string, struct<a: int, b: double>>".
export function typeToString(t: IcebergType): string {
  if (typeof t === 'string') return t;
  if (isStruct(t)) return `struct<${t.fields.map((f) => `${f.name}: ${typeToString(f.type)}`).join(', ')}>`;
  if (isList(t)) return `list<${typeToString(t.element)}>`;
  if (isMap(t)) return `map<${typeToString(t.key)}, ${typeToString(t.value)}>`;
  return JSON.stringify(t);
}

// A type's label in the tree, where nested fields show as child rows.
export function typeLabel(t: IcebergType): string {
  if (typeof t === 'string') return t;
  if (isStruct(t)) return 'struct';
  if (isList(t)) return typeof t.element === 'string' ? `list<${t.element}>` : 'list';
  if (isMap(t)) {
    const simple = typeof t.key === 'string' && typeof t.value === 'string';
    return simple ? `map<${t.key}, ${t.value}>` : 'map';
  }
  return typeToString(t);
}

export interface SchemaRow {
  depth: number;
  path: string; // dotted path from the top, for keys
  name: string;
  type: string;
  id: number;
  required: boolean;
  doc: string;
}

// The schema as indented rows: every field, list element and map key/value with its id.
export function flattenSchema(schema: StructType): SchemaRow[] {
  const rows: SchemaRow[] = [];
  const visit = (t: IcebergType, depth: number, path: string) => {
    if (isStruct(t)) {
      for (const f of t.fields) {
        const p = path ? `${path}.${f.name}` : f.name;
        rows.push({ depth, path: p, name: f.name, type: typeLabel(f.type), id: f.id, required: f.required, doc: f.doc ?? '' });
        visit(f.type, depth + 1, p);
      }
    } else if (isList(t)) {
      if (typeof t.element !== 'string') {
        const p = `${path}.element`;
        rows.push({ depth, path: p, name: 'element', type: typeLabel(t.element), id: t['element-id'], required: t['element-required'], doc: '' });
        visit(t.element, depth + 1, p);
      }
    } else if (isMap(t)) {
      if (typeof t.key !== 'string' || typeof t.value !== 'string') {
        rows.push({ depth, path: `${path}.key`, name: 'key', type: typeLabel(t.key), id: t['key-id'], required: true, doc: '' });
        visit(t.key, depth + 1, `${path}.key`);
        rows.push({ depth, path: `${path}.value`, name: 'value', type: typeLabel(t.value), id: t['value-id'], required: t['value-required'], doc: '' });
        visit(t.value, depth + 1, `${path}.value`);
      }
    }
  };
  visit(schema, 0, '');
  return rows;
}

// Every field id of a schema to its dotted name (for partition and sort fields' source ids).
export function fieldNames(schema: StructType | undefined): Map<number, string> {
  const names = new Map<number, string>();
  if (schema) for (const row of flattenSchema(schema)) names.set(row.id, row.path);
  return names;
}

export function currentSchema(metadata: TableMetadata): Schema | undefined {
  const id = metadata['current-schema-id'];
  return metadata.schemas?.find((s) => s['schema-id'] === id) ?? metadata.schemas?.[0] ?? metadata.schema;
}

export function currentSnapshot(metadata: TableMetadata): Snapshot | undefined {
  const id = metadata['current-snapshot-id'];
  if (id === null || id === undefined || id === -1) return undefined;
  return metadata.snapshots?.find((s) => s['snapshot-id'] === id);
}

// ---- snapshot summaries ----

export interface SnapshotStats {
  id: SnapshotId;
  parentId: SnapshotId | null;
  timestampMs: number;
  operation: string;
  addedRecords: number;
  deletedRecords: number;
  addedDataFiles: number;
  deletedDataFiles: number;
  addedDeleteFiles: number;
  removedDeleteFiles: number;
  addedBytes: number;
  removedBytes: number;
  totalRecords: number | null;
  totalDataFiles: number | null;
  totalBytes: number | null;
}

// Orders snapshot ids as the integers they are, whether they arrived as numbers or as text.
export function compareSnapshotIds(a: SnapshotId, b: SnapshotId): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function summaryNumber(summary: Record<string, string> | undefined, key: string): number | null {
  const raw = summary?.[key];
  if (raw === undefined || raw === null || raw === '') return null;
  const n = Number(raw);
  return Number.isFinite(n) ? n : null;
}

// The numbers of every snapshot, oldest first.
export function snapshotStats(metadata: TableMetadata): SnapshotStats[] {
  return (metadata.snapshots ?? [])
    .map((s) => {
      const sum = s.summary;
      const n = (key: string) => summaryNumber(sum, key) ?? 0;
      return {
        id: s['snapshot-id'],
        parentId: s['parent-snapshot-id'] ?? null,
        timestampMs: s['timestamp-ms'],
        operation: sum?.operation ?? '',
        addedRecords: n('added-records'),
        deletedRecords: n('deleted-records'),
        addedDataFiles: n('added-data-files'),
        deletedDataFiles: n('deleted-data-files'),
        addedDeleteFiles: n('added-delete-files'),
        removedDeleteFiles: n('removed-delete-files'),
        addedBytes: n('added-files-size'),
        removedBytes: n('removed-files-size'),
        totalRecords: summaryNumber(sum, 'total-records'),
        totalDataFiles: summaryNumber(sum, 'total-data-files'),
        totalBytes: summaryNumber(sum, 'total-files-size'),
      };
    })
    .sort((a, b) => a.timestampMs - b.timestampMs || compareSnapshotIds(a.id, b.id));
}

export interface ReplicationInfo {
  lsn: string;
  sourceCommitMs: number | null;
  snapshotCommitMs: number;
  snapshotId: SnapshotId;
}

// A table kept in step with a source by serac's sync records the source position in its current
// snapshot's summary; null for any other table.
export function replicationInfo(metadata: TableMetadata): ReplicationInfo | null {
  const snapshot = currentSnapshot(metadata);
  const lsn = snapshot?.summary?.['serac.sync.lsn'];
  if (!snapshot || lsn === undefined) return null;
  return {
    lsn,
    sourceCommitMs: summaryNumber(snapshot.summary, 'serac.sync.source-commit-ms'),
    snapshotCommitMs: snapshot['timestamp-ms'],
    snapshotId: snapshot['snapshot-id'],
  };
}

// How far the table is behind the source now: from the source's commit time when known, else
// from the snapshot's commit.
export function replicationLagMs(info: ReplicationInfo, nowMs: number): number {
  return Math.max(0, nowMs - (info.sourceCommitMs ?? info.snapshotCommitMs));
}

// ---- file-size histograms ----

export interface DataFile {
  path: string;
  content: 'data' | 'position-deletes' | 'equality-deletes';
  partition: string;
  records: number;
  bytes: number;
}

export interface SizeBin {
  lo: number; // bytes, inclusive
  hi: number; // bytes, exclusive
  count: number;
}

// The power-of-two exponents that cover `sizes` (files of 0 or 1 byte land in the first bin).
export function sizeRange(sizes: number[]): { minExp: number; maxExp: number } {
  let minExp = Infinity;
  let maxExp = -Infinity;
  for (const s of sizes) {
    const e = binExponent(s);
    minExp = Math.min(minExp, e);
    maxExp = Math.max(maxExp, e);
  }
  if (!Number.isFinite(minExp)) return { minExp: 10, maxExp: 20 };
  return { minExp, maxExp };
}

export function binExponent(size: number): number {
  return size < 2 ? 0 : Math.floor(Math.log2(size));
}

// Counts of `sizes` in bins [2^e, 2^(e+1)) for e from minExp to maxExp; sizes outside go to the
// end bins.
export function sizeHistogram(sizes: number[], minExp: number, maxExp: number): SizeBin[] {
  const bins: SizeBin[] = [];
  for (let e = minExp; e <= maxExp; e++) bins.push({ lo: e === 0 ? 0 : 2 ** e, hi: 2 ** (e + 1), count: 0 });
  for (const s of sizes) {
    const e = Math.min(maxExp, Math.max(minExp, binExponent(s)));
    bins[e - minExp].count++;
  }
  return bins;
}

export interface PartitionFiles {
  partition: string;
  dataFiles: number;
  dataBytes: number;
  deleteFiles: number;
  smallFiles: number;
  sizes: number[];
}

// Data files grouped by partition, most files first; delete files are counted beside them.
export function groupByPartition(files: DataFile[], smallFileBytes: number): PartitionFiles[] {
  const groups = new Map<string, PartitionFiles>();
  for (const f of files) {
    let g = groups.get(f.partition);
    if (!g) {
      g = { partition: f.partition, dataFiles: 0, dataBytes: 0, deleteFiles: 0, smallFiles: 0, sizes: [] };
      groups.set(f.partition, g);
    }
    if (f.content === 'data') {
      g.dataFiles++;
      g.dataBytes += f.bytes;
      g.sizes.push(f.bytes);
      if (f.bytes < smallFileBytes) g.smallFiles++;
    } else {
      g.deleteFiles++;
    }
  }
  return [...groups.values()].sort((a, b) => b.dataFiles - a.dataFiles || (a.partition < b.partition ? -1 : 1));
}

// ---- requests ----

export interface Warehouses {
  warehouses: string[];
  'next-page-token'?: string | null;
}

const LIST_PAGES_MAX = 50;

async function allPages<T>(fetchPage: (token: string | null) => Promise<{ items: T[]; next: string | null | undefined }>): Promise<T[]> {
  const items: T[] = [];
  let token: string | null = null;
  for (let page = 0; page < LIST_PAGES_MAX; page++) {
    const got = await fetchPage(token);
    items.push(...got.items);
    if (!got.next) break;
    token = got.next;
  }
  return items;
}

export function listWarehouses(): Promise<string[]> {
  return allPages(async (token) => {
    const r = await apiJson<Warehouses>('iceberg/v1/warehouses', { query: { pageToken: token ?? undefined } });
    return { items: r.warehouses ?? [], next: r['next-page-token'] };
  });
}

export async function createWarehouse(name: string): Promise<void> {
  await apiJson('iceberg/v1/warehouses', { method: 'POST', json: { name } });
}

const prefixes = new Map<string, string>();

// The path prefix of a warehouse, from its config (cached).
export async function warehousePrefix(warehouse: string): Promise<string> {
  const known = prefixes.get(warehouse);
  if (known !== undefined) return known;
  const config = await apiJson<{ overrides?: Record<string, string>; defaults?: Record<string, string> }>(
    'iceberg/v1/config',
    { query: { warehouse } },
  );
  const prefix = config.overrides?.prefix ?? config.defaults?.prefix ?? warehouse;
  prefixes.set(warehouse, prefix);
  return prefix;
}

export async function listNamespaces(warehouse: string, parent: string[] | null): Promise<string[][]> {
  const prefix = await warehousePrefix(warehouse);
  return allPages(async (token) => {
    const r = await apiJson<{ namespaces: string[][]; 'next-page-token'?: string | null }>(
      `iceberg/v1/${enc(prefix)}/namespaces`,
      { query: { parent: parent && parent.length ? parent.join(NAMESPACE_SEPARATOR) : undefined, pageToken: token ?? undefined } },
    );
    return { items: r.namespaces ?? [], next: r['next-page-token'] };
  });
}

export interface Identifier {
  namespace: string[];
  name: string;
}

async function listEntities(warehouse: string, namespace: string[], kind: 'tables' | 'views'): Promise<Identifier[]> {
  const prefix = await warehousePrefix(warehouse);
  return allPages(async (token) => {
    const r = await apiJson<{ identifiers: Identifier[]; 'next-page-token'?: string | null }>(
      `iceberg/v1/${enc(prefix)}/namespaces/${encodeNamespace(namespace)}/${kind}`,
      { query: { pageToken: token ?? undefined } },
    );
    return { items: r.identifiers ?? [], next: r['next-page-token'] };
  });
}

export const listTables = (w: string, ns: string[]) => listEntities(w, ns, 'tables');
export const listViews = (w: string, ns: string[]) => listEntities(w, ns, 'views');

export async function loadTable(warehouse: string, namespace: string[], table: string): Promise<LoadTableResult> {
  return apiJson<LoadTableResult>(tablePath(await warehousePrefix(warehouse), namespace, table));
}

export async function loadView(warehouse: string, namespace: string[], view: string): Promise<LoadViewResult> {
  return apiJson<LoadViewResult>(viewPath(await warehousePrefix(warehouse), namespace, view));
}

export interface Preview {
  'snapshot-id': SnapshotId | null;
  columns: Array<{ name: string; type: string }>;
  rows: Array<Array<string | null>>;
  truncated: boolean;
  'delete-files-applied': number;
}

export async function tablePreview(
  warehouse: string,
  namespace: string[],
  table: string,
  at: { snapshotId?: SnapshotId; ref?: string },
): Promise<Preview> {
  const path = tablePath(await warehousePrefix(warehouse), namespace, table) + '/preview';
  return apiJson<Preview>(path, { query: { limit: 100, 'snapshot-id': at.snapshotId, ref: at.ref } });
}

export interface FilesAnswer {
  'snapshot-id': SnapshotId | null;
  files: DataFile[];
  truncated: boolean;
}

export async function tableFiles(warehouse: string, namespace: string[], table: string, snapshotId?: SnapshotId): Promise<FilesAnswer> {
  const path = tablePath(await warehousePrefix(warehouse), namespace, table) + '/files';
  return apiJson<FilesAnswer>(path, { query: { 'snapshot-id': snapshotId } });
}

export interface Health {
  'data-files': number;
  'data-bytes': number;
  'small-files': number;
  'small-file-bytes-threshold': number;
  'delete-files': number;
  'delete-records': number;
  snapshots: number;
  'snapshots-beyond-expiry': number;
  'bytes-reclaimable': number;
  findings: Array<{ kind: string; message: string; fix: MaintenanceType | null }>;
}

export async function tableHealth(warehouse: string, namespace: string[], table: string): Promise<Health> {
  return apiJson<Health>(tablePath(await warehousePrefix(warehouse), namespace, table) + '/health');
}

// ---- maintenance ----

export type MaintenanceType = 'icebergCompaction' | 'icebergSnapshotManagement' | 'icebergUnreferencedFileRemoval';
export const MAINTENANCE_TYPES: MaintenanceType[] = [
  'icebergCompaction',
  'icebergSnapshotManagement',
  'icebergUnreferencedFileRemoval',
];
export const MAINTENANCE_TITLES: Record<MaintenanceType, string> = {
  icebergCompaction: 'Compaction',
  icebergSnapshotManagement: 'Snapshot expiry',
  icebergUnreferencedFileRemoval: 'Unreferenced file removal',
};

// The numeric settings of each type, with the server's bounds (catalog/maintenance_settings.cc).
export interface SettingField {
  name: string;
  label: string;
  min: number;
  max: number;
}
export const MAINTENANCE_FIELDS: Record<MaintenanceType, SettingField[]> = {
  icebergCompaction: [{ name: 'targetFileSizeMB', label: 'Target file size (MB)', min: 1, max: 4096 }],
  icebergSnapshotManagement: [
    { name: 'minSnapshotsToKeep', label: 'Snapshots kept at least', min: 1, max: 1000000 },
    { name: 'maxSnapshotAgeHours', label: 'Snapshot age limit (hours)', min: 1, max: 1000000 },
  ],
  icebergUnreferencedFileRemoval: [
    { name: 'unreferencedDays', label: 'Unreferenced for (days)', min: 1, max: 36500 },
    { name: 'nonCurrentDays', label: 'Non-current for (days)', min: 1, max: 36500 },
  ],
};
export const COMPACTION_STRATEGIES = ['auto', 'binpack', 'sort'];

// One type's value: {"status":"enabled"|"disabled","settings":{"<type>":{...}}}.
export interface MaintenanceValue {
  status?: 'enabled' | 'disabled';
  settings?: Record<string, Record<string, number | string>>;
}

export interface TableMaintenance {
  tableARN: string;
  configuration: Partial<Record<MaintenanceType, MaintenanceValue>>;
  overrides: Partial<Record<MaintenanceType, MaintenanceValue>>;
}

export interface MaintenanceJob {
  jobId: string;
  type: string;
  status: string; // running, succeeded, failed
  startedAt: string;
  endedAt?: string;
  error?: string;
  [field: string]: unknown;
}

export interface MaintenanceStatus {
  tableARN: string;
  status: Record<string, { status: string; lastRunTimestamp?: string; failureMessage?: string }>;
  jobs: MaintenanceJob[];
}

export function getWarehouseMaintenance(warehouse: string) {
  return apiJson<{ warehouse: string; configuration: Partial<Record<MaintenanceType, MaintenanceValue>> }>(
    `iceberg/v1/warehouses/${enc(warehouse)}/maintenance`,
  );
}

export async function putWarehouseMaintenance(warehouse: string, type: MaintenanceType, value: MaintenanceValue) {
  await apiFetch(`iceberg/v1/warehouses/${enc(warehouse)}/maintenance/${type}`, { method: 'PUT', json: value });
}

export async function deleteWarehouseMaintenance(warehouse: string, type: MaintenanceType) {
  await apiFetch(`iceberg/v1/warehouses/${enc(warehouse)}/maintenance/${type}`, { method: 'DELETE' });
}

export function getTableMaintenance(warehouse: string, namespace: string[], table: string) {
  return apiJson<TableMaintenance>(tableMaintenancePath(warehouse, namespace, table));
}

export async function putTableMaintenance(w: string, ns: string[], t: string, type: MaintenanceType, value: MaintenanceValue) {
  await apiFetch(`${tableMaintenancePath(w, ns, t)}/${type}`, { method: 'PUT', json: value });
}

export async function deleteTableMaintenance(w: string, ns: string[], t: string, type: MaintenanceType) {
  await apiFetch(`${tableMaintenancePath(w, ns, t)}/${type}`, { method: 'DELETE' });
}

export function getMaintenanceStatus(w: string, ns: string[], t: string, type: MaintenanceType) {
  return apiJson<MaintenanceStatus>(`${tableMaintenancePath(w, ns, t)}/${type}/status`);
}

export function runMaintenance(w: string, ns: string[], t: string, type: MaintenanceType) {
  return apiJson<{ jobId: string; type: string; status: string }>(`${tableMaintenancePath(w, ns, t)}/${type}/run`, {
    method: 'POST',
  });
}

// The settings object inside a value, for editing.
export function innerSettings(type: MaintenanceType, value: MaintenanceValue | undefined): Record<string, number | string> {
  return { ...(value?.settings?.[type] ?? {}) };
}

export function makeMaintenanceValue(
  type: MaintenanceType,
  enabled: boolean,
  settings: Record<string, number | string>,
): MaintenanceValue {
  return { status: enabled ? 'enabled' : 'disabled', settings: { [type]: settings } };
}

// Every table of a warehouse, walking nested namespaces (bounded, for the Maintenance page).
export async function listAllTables(warehouse: string, tablesMax = 500): Promise<Identifier[]> {
  const found: Identifier[] = [];
  const queue: string[][] = await listNamespaces(warehouse, null);
  const seen = new Set<string>();
  while (queue.length > 0 && found.length < tablesMax) {
    const ns = queue.shift()!;
    const key = ns.join(NAMESPACE_SEPARATOR);
    if (seen.has(key)) continue;
    seen.add(key);
    found.push(...(await listTables(warehouse, ns)));
    queue.push(...(await listNamespaces(warehouse, ns)));
  }
  return found.slice(0, tablesMax);
}
