import { describe, expect, it } from 'vitest';
import {
  binExponent,
  encodeNamespace,
  fieldNames,
  flattenSchema,
  groupByPartition,
  replicationInfo,
  replicationLagMs,
  sizeHistogram,
  sizeRange,
  snapshotStats,
  tableMaintenancePath,
  tablePath,
  typeToString,
  type DataFile,
  type Schema,
  type TableMetadata,
} from '../src/catalog';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 1,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long', doc: 'the row id' },
    {
      id: 2,
      name: 'location',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 5, name: 'lat', required: true, type: 'double' },
          { id: 6, name: 'lon', required: true, type: 'double' },
        ],
      },
    },
    { id: 3, name: 'tags', required: false, type: { type: 'list', 'element-id': 7, element: 'string', 'element-required': false } },
    {
      id: 4,
      name: 'scores',
      required: false,
      type: {
        type: 'map',
        'key-id': 8,
        key: 'string',
        'value-id': 9,
        value: { type: 'struct', fields: [{ id: 10, name: 'value', required: false, type: 'decimal(9,2)' }] },
        'value-required': true,
      },
    },
    {
      id: 11,
      name: 'matrix',
      required: false,
      type: {
        type: 'list',
        'element-id': 12,
        element: { type: 'list', 'element-id': 13, element: 'int', 'element-required': true },
        'element-required': true,
      },
    },
  ],
};

describe('paths', () => {
  it('joins namespace levels with %1F, each level encoded', () => {
    expect(encodeNamespace(['sales'])).toBe('sales');
    expect(encodeNamespace(['a', 'b', 'c'])).toBe('a%1Fb%1Fc');
    expect(encodeNamespace(['with space', 'x/y', '%'])).toBe('with%20space%1Fx%2Fy%1F%25');
  });

  it('builds table and maintenance paths', () => {
    expect(tablePath('wh', ['a', 'b'], 'my table')).toBe('iceberg/v1/wh/namespaces/a%1Fb/tables/my%20table');
    expect(tableMaintenancePath('wh', ['a'], 't')).toBe('iceberg/v1/warehouses/wh/namespaces/a/tables/t/maintenance');
  });
});

describe('schema rendering', () => {
  it('writes nested types on one line', () => {
    expect(typeToString('long')).toBe('long');
    expect(typeToString(SCHEMA.fields[1].type)).toBe('struct<lat: double, lon: double>');
    expect(typeToString(SCHEMA.fields[2].type)).toBe('list<string>');
    expect(typeToString(SCHEMA.fields[3].type)).toBe('map<string, struct<value: decimal(9,2)>>');
    expect(typeToString(SCHEMA.fields[4].type)).toBe('list<list<int>>');
  });

  it('flattens a schema into an indented tree with ids', () => {
    const rows = flattenSchema(SCHEMA).map((r) => [r.depth, r.name, r.type, r.id, r.required]);
    expect(rows).toEqual([
      [0, 'id', 'long', 1, true],
      [0, 'location', 'struct', 2, false],
      [1, 'lat', 'double', 5, true],
      [1, 'lon', 'double', 6, true],
      [0, 'tags', 'list<string>', 3, false],
      [0, 'scores', 'map', 4, false],
      [1, 'key', 'string', 8, true],
      [1, 'value', 'struct', 9, true],
      [2, 'value', 'decimal(9,2)', 10, false],
      [0, 'matrix', 'list', 11, false],
      [1, 'element', 'list<int>', 12, true],
    ]);
    expect(flattenSchema(SCHEMA)[0].doc).toBe('the row id');
  });

  it('names fields by id for partition and sort fields', () => {
    const names = fieldNames(SCHEMA);
    expect(names.get(1)).toBe('id');
    expect(names.get(6)).toBe('location.lon');
    expect(names.get(10)).toBe('scores.value.value');
  });
});

function metadata(snapshots: TableMetadata['snapshots'], current: number | null): TableMetadata {
  return { 'format-version': 2, 'table-uuid': 'u', location: 's3://wh/t', snapshots, 'current-snapshot-id': current };
}

describe('snapshots', () => {
  it('extracts the numbers of each snapshot summary, oldest first', () => {
    const stats = snapshotStats(
      metadata(
        [
          {
            'snapshot-id': 2,
            'parent-snapshot-id': 1,
            'timestamp-ms': 2000,
            summary: { operation: 'overwrite', 'added-records': '10', 'deleted-records': '4', 'added-data-files': '1', 'deleted-data-files': '2', 'added-files-size': '1000', 'removed-files-size': '800', 'total-records': '106' },
          },
          { 'snapshot-id': 1, 'timestamp-ms': 1000, summary: { operation: 'append', 'added-records': '100', 'added-data-files': '3', 'added-files-size': 'oops' } },
          { 'snapshot-id': 3, 'timestamp-ms': 3000 },
        ],
        3,
      ),
    );
    expect(stats.map((s) => s.id)).toEqual([1, 2, 3]);
    expect(stats[0]).toMatchObject({ operation: 'append', addedRecords: 100, addedDataFiles: 3, addedBytes: 0, parentId: null, totalRecords: null });
    expect(stats[1]).toMatchObject({ addedRecords: 10, deletedRecords: 4, deletedDataFiles: 2, addedBytes: 1000, removedBytes: 800, totalRecords: 106, parentId: 1 });
    expect(stats[2]).toMatchObject({ operation: '', addedRecords: 0 });
  });

  it('finds replication facts in the current snapshot only', () => {
    const m = metadata(
      [
        { 'snapshot-id': 1, 'timestamp-ms': 1000, summary: { 'serac.sync.lsn': '0/AAA' } },
        { 'snapshot-id': 2, 'timestamp-ms': 5000, summary: { 'serac.sync.lsn': '0/16B3748', 'serac.sync.source-commit-ms': '4000' } },
      ],
      2,
    );
    const info = replicationInfo(m)!;
    expect(info).toEqual({ lsn: '0/16B3748', sourceCommitMs: 4000, snapshotCommitMs: 5000, snapshotId: 2 });
    expect(replicationLagMs(info, 10000)).toBe(6000);
    const noSource = replicationInfo(metadata([{ 'snapshot-id': 1, 'timestamp-ms': 1000, summary: { 'serac.sync.lsn': '7' } }], 1))!;
    expect(noSource.sourceCommitMs).toBeNull();
    expect(replicationLagMs(noSource, 4000)).toBe(3000);
    expect(replicationInfo(metadata([{ 'snapshot-id': 1, 'timestamp-ms': 1, summary: { operation: 'append' } }], 1))).toBeNull();
    expect(replicationInfo(metadata([], null))).toBeNull();
  });
});

describe('file-size histograms', () => {
  const KiB = 1024;
  const MiB = 1024 * KiB;

  it('bins sizes into power-of-two ranges', () => {
    expect(binExponent(0)).toBe(0);
    expect(binExponent(1)).toBe(0);
    expect(binExponent(1024)).toBe(10);
    expect(binExponent(2047)).toBe(10);
    expect(binExponent(2048)).toBe(11);
    const sizes = [1 * KiB, 1.5 * KiB, 3 * KiB, 1 * MiB, 1 * MiB + 5];
    expect(sizeRange(sizes)).toEqual({ minExp: 10, maxExp: 20 });
    const bins = sizeHistogram(sizes, 10, 20);
    expect(bins).toHaveLength(11);
    expect(bins[0]).toEqual({ lo: 1024, hi: 2048, count: 2 });
    expect(bins[1]).toEqual({ lo: 2048, hi: 4096, count: 1 });
    expect(bins[10]).toEqual({ lo: MiB, hi: 2 * MiB, count: 2 });
    expect(bins.reduce((n, b) => n + b.count, 0)).toBe(sizes.length);
  });

  it('puts sizes outside the range into the end bins', () => {
    const bins = sizeHistogram([10, 10 * MiB], 12, 14);
    expect(bins.map((b) => b.count)).toEqual([1, 0, 1]);
  });

  it('groups data files by partition and counts the small ones', () => {
    const files: DataFile[] = [
      { path: 'a', content: 'data', partition: 'day=1', records: 1, bytes: 100 },
      { path: 'b', content: 'data', partition: 'day=1', records: 1, bytes: 10 * MiB },
      { path: 'c', content: 'data', partition: 'day=2', records: 1, bytes: 200 },
      { path: 'd', content: 'position-deletes', partition: 'day=2', records: 1, bytes: 50 },
      { path: 'e', content: 'data', partition: 'day=1', records: 1, bytes: 300 },
    ];
    const groups = groupByPartition(files, 1 * MiB);
    expect(groups.map((g) => [g.partition, g.dataFiles, g.smallFiles, g.deleteFiles, g.dataBytes])).toEqual([
      ['day=1', 3, 2, 0, 100 + 10 * MiB + 300],
      ['day=2', 1, 1, 1, 200],
    ]);
  });
});
