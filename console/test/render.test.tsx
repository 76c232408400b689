// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest';
import { render } from 'preact';
import { Breadcrumbs, ObjectRow } from '../src/pages/objects';
import { ErrorBanner, KeyValues } from '../src/components/ui';
import { SchemaTree } from '../src/components/schema';
import { FilesView } from '../src/pages/table_files';
import { sortByUrgency, urgency, type TableRow } from '../src/pages/maintenance';

const HOSTILE = '<img src=x onerror=alert(1)>';

let container: HTMLElement;
function mount(node: preact.ComponentChild): HTMLElement {
  container = document.createElement('div');
  document.body.appendChild(container);
  render(node, container);
  return container;
}

afterEach(() => {
  if (container) {
    render(null, container);
    container.remove();
  }
});

describe('server data is rendered as text', () => {
  it('shows a hostile object key as literal text, not an element', () => {
    const el = mount(
      <table>
        <tbody>
          <ObjectRow
            bucket="b"
            prefix="dir/"
            object={{ key: `dir/${HOSTILE}`, size: 12, lastModified: '2024-05-01T00:00:00Z', etag: '"x"' }}
            onDelete={() => {}}
            onError={() => {}}
          />
        </tbody>
      </table>,
    );
    expect(el.querySelector('img')).toBeNull();
    const link = el.querySelector('[data-testid="object-link"]')!;
    expect(link.textContent).toBe(HOSTILE);
    expect(el.querySelector('[data-testid="object-row"]')!.getAttribute('data-key')).toBe(`dir/${HOSTILE}`);
    // the link's target carries the key encoded, never as markup
    expect(link.getAttribute('href')).toContain('%3Cimg');
  });

  it('shows hostile prefixes in breadcrumbs as text', () => {
    const el = mount(<Breadcrumbs bucket="b" prefix={`${HOSTILE}/sub/`} />);
    expect(el.querySelector('img')).toBeNull();
    const crumbs = Array.from(el.querySelectorAll('[data-testid="breadcrumb"]')).map((a) => a.textContent);
    expect(crumbs).toEqual(['b', HOSTILE, 'sub']);
  });

  it('shows error messages and metadata as text', () => {
    const el = mount(
      <div>
        <ErrorBanner error={new Error(`<script>alert(1)</script>${HOSTILE}`)} />
        <KeyValues rows={[[HOSTILE, HOSTILE]]} />
      </div>,
    );
    expect(el.querySelector('script')).toBeNull();
    expect(el.querySelector('img')).toBeNull();
    expect(el.querySelector('[data-testid="error-banner"]')!.textContent).toBe(`<script>alert(1)</script>${HOSTILE}`);
    expect(el.querySelector('th')!.textContent).toBe(HOSTILE);
  });

  it('renders a nested schema as an indented tree', () => {
    const el = mount(
      <SchemaTree
        schema={{
          type: 'struct',
          fields: [
            { id: 1, name: HOSTILE, required: true, type: 'string', doc: HOSTILE },
            { id: 2, name: 'point', required: false, type: { type: 'struct', fields: [{ id: 3, name: 'x', required: true, type: 'double' }] } },
          ],
        }}
      />,
    );
    const rows = Array.from(el.querySelectorAll('[data-testid="schema-row"]'));
    expect(rows.map((r) => r.getAttribute('data-depth'))).toEqual(['0', '0', '1']);
    expect(rows[0].querySelector('td')!.textContent).toBe(HOSTILE);
    expect(el.querySelector('img')).toBeNull();
  });

  it('draws a histogram per partition with the small-file marker', () => {
    const MiB = 1024 * 1024;
    const el = mount(
      <FilesView
        threshold={64 * MiB}
        truncated={false}
        files={[
          { path: 'a', content: 'data', partition: HOSTILE, records: 1, bytes: 1 * MiB },
          { path: 'b', content: 'data', partition: HOSTILE, records: 1, bytes: 2 * MiB },
          { path: 'c', content: 'data', partition: 'day=2', records: 1, bytes: 256 * MiB },
          { path: 'd', content: 'equality-deletes', partition: 'day=2', records: 1, bytes: 1000 },
        ]}
      />,
    );
    expect(el.querySelectorAll('[data-testid="histogram-partition"]')).toHaveLength(2);
    expect(el.querySelectorAll('[data-testid="small-file-marker"]')).toHaveLength(3);
    expect(el.querySelector('[data-testid="files-summary"]')!.textContent).toContain('3 data files');
    expect(el.querySelector('[data-testid="histogram-all"] figcaption')!.textContent).toContain('2 small');
    expect(el.querySelectorAll('[data-testid="file-row"]')).toHaveLength(4);
    expect(el.querySelector('img')).toBeNull();
  });
});

describe('maintenance ordering', () => {
  const now = Date.parse('2024-05-10T00:00:00Z');
  const row = (name: string, statuses: Array<[string, number | null]>): TableRow => ({
    id: { namespace: ['ns'], name },
    types: {
      icebergCompaction: { status: statuses[0][0], lastRunMs: statuses[0][1] },
      icebergSnapshotManagement: { status: statuses[1][0], lastRunMs: statuses[1][1] },
      icebergUnreferencedFileRemoval: { status: statuses[2][0], lastRunMs: statuses[2][1] },
    },
  });
  it('puts failed tables first, then overdue ones', () => {
    const fresh = now - 3600_000;
    const stale = now - 3 * 86400_000;
    const ok = row('a_ok', [['Successful', fresh], ['Successful', fresh], ['Disabled', null]]);
    const overdue = row('b_overdue', [['Successful', stale], ['Successful', fresh], ['Successful', fresh]]);
    const failed = row('c_failed', [['Successful', fresh], ['Failed', fresh], ['Successful', fresh]]);
    const never = row('d_never', [['Not_Yet_Run', null], ['Disabled', null], ['Disabled', null]]);
    expect(urgency(ok, now)).toBe(0);
    expect(urgency(overdue, now)).toBe(1);
    expect(urgency(failed, now)).toBe(2);
    expect(sortByUrgency([ok, overdue, failed, never], now).map((r) => r.id.name)).toEqual(['c_failed', 'b_overdue', 'd_never', 'a_ok']);
  });
});
