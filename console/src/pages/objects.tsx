// A bucket's objects: browsing by prefix ("folders" from CommonPrefixes), 200 keys a page with a
// stack of continuation tokens, uploads with progress and cancel, downloads, deletes, and an
// object's details (metadata, tags, share link).

import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf, presign } from '../api';
import { buildHash, navigate } from '../router';
import {
  deleteObject,
  downloadObject,
  getTags,
  headObject,
  listObjects,
  putTags,
  uploadFile,
  type ListPage,
  type ObjectEntry,
  type Tag,
  type UploadHandle,
} from '../s3';
import { ConfirmDialog, CopyButton, ErrorBanner, KeyValues, Loading, useAction, useAsync } from '../components/ui';
import { formatBytes, formatTime } from '../format';

// The last segment of a key or prefix below `prefix`, for display.
export function relativeName(full: string, prefix: string): string {
  return full.startsWith(prefix) ? full.slice(prefix.length) : full;
}

export function Breadcrumbs({ bucket, prefix }: { bucket: string; prefix: string }) {
  const parts = prefix.split('/').filter((p, i, all) => p !== '' || i < all.length - 1);
  const crumbs: Array<{ label: string; prefix: string }> = [];
  let acc = '';
  for (const p of parts) {
    acc += p + '/';
    crumbs.push({ label: p === '' ? '(empty)' : p, prefix: acc });
  }
  return (
    <nav class="breadcrumbs" data-testid="breadcrumbs" aria-label="Location">
      <a href={buildHash(['buckets'])}>Buckets</a>
      <span class="sep">/</span>
      <a href={buildHash(['buckets', bucket])} data-testid="breadcrumb">
        {bucket}
      </a>
      {crumbs.map((c) => (
        <Fragment key={c.prefix}>
          <span class="sep">/</span>
          <a href={buildHash(['buckets', bucket], { prefix: c.prefix })} data-testid="breadcrumb">
            {c.label}
          </a>
        </Fragment>
      ))}
    </nav>
  );
}

export function ObjectRow({
  bucket,
  prefix,
  object,
  onDelete,
  onError,
}: {
  bucket: string;
  prefix: string;
  object: ObjectEntry;
  onDelete: (key: string) => void;
  onError: (e: unknown) => void;
}) {
  const [downloading, setDownloading] = useState(false);
  return (
    <tr data-testid="object-row" data-key={object.key}>
      <td>
        <a
          href={buildHash(['buckets', bucket], { prefix, key: object.key })}
          class="object-name"
          data-testid="object-link"
        >
          {relativeName(object.key, prefix)}
        </a>
      </td>
      <td class="num">{formatBytes(object.size)}</td>
      <td>{formatTime(object.lastModified)}</td>
      <td class="actions">
        <button
          type="button"
          class="small"
          data-testid="object-download"
          disabled={downloading}
          onClick={async () => {
            setDownloading(true);
            try {
              await downloadObject(bucket, object.key);
            } catch (e) {
              onError(e);
            } finally {
              setDownloading(false);
            }
          }}
        >
          {downloading ? 'Downloading…' : 'Download'}
        </button>
        <button type="button" class="small danger" data-testid="object-delete" onClick={() => onDelete(object.key)}>
          Delete
        </button>
      </td>
    </tr>
  );
}

interface UploadItem {
  id: number;
  name: string;
  key: string;
  size: number;
  sent: number;
  state: 'uploading' | 'done' | 'failed' | 'cancelled';
  error?: string;
  handle?: UploadHandle;
}

let nextUploadId = 1;

function Uploads({ bucket, prefix, onUploaded }: { bucket: string; prefix: string; onUploaded: () => void }) {
  const [items, setItems] = useState<UploadItem[]>([]);
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  const update = (id: number, change: Partial<UploadItem>) =>
    setItems((all) => all.map((i) => (i.id === id ? { ...i, ...change } : i)));

  const start = (files: FileList | File[]) => {
    for (const file of Array.from(files)) {
      const id = nextUploadId++;
      const key = prefix + file.name;
      let handle: UploadHandle;
      try {
        handle = uploadFile(bucket, key, file, (sent) => update(id, { sent }));
      } catch (e) {
        setItems((all) => [...all, { id, name: file.name, key, size: file.size, sent: 0, state: 'failed', error: messageOf(e) }]);
        continue;
      }
      setItems((all) => [...all, { id, name: file.name, key, size: file.size, sent: 0, state: 'uploading', handle }]);
      handle.promise.then(
        () => {
          update(id, { state: 'done', sent: file.size, handle: undefined });
          onUploaded();
        },
        (e) => {
          const cancelled = e && (e as { code?: string }).code === 'Cancelled';
          update(id, { state: cancelled ? 'cancelled' : 'failed', error: cancelled ? undefined : messageOf(e), handle: undefined });
        },
      );
    }
  };

  return (
    <div class="uploads">
      <div
        class={dragging ? 'dropzone dragging' : 'dropzone'}
        data-testid="upload-dropzone"
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          if (e.dataTransfer?.files?.length) start(e.dataTransfer.files);
        }}
      >
        Drop files here to upload to <code>{prefix || '/'}</code>, or{' '}
        <button type="button" class="link" onClick={() => input.current?.click()}>
          choose files
        </button>
        <input
          ref={input}
          type="file"
          multiple
          class="hidden-input"
          data-testid="upload-input"
          onChange={(e) => {
            const el = e.target as HTMLInputElement;
            if (el.files?.length) start(el.files);
            el.value = '';
          }}
        />
      </div>
      {items.length > 0 && (
        <ul class="upload-list" data-testid="upload-list">
          {items.map((i) => (
            <li key={i.id} data-testid="upload-item" data-state={i.state} data-key={i.key}>
              <span class="upload-name">{i.name}</span>
              <progress max={Math.max(1, i.size)} value={i.sent} data-testid="upload-progress" />
              <span class="muted">
                {i.state === 'uploading'
                  ? `${formatBytes(i.sent)} of ${formatBytes(i.size)}`
                  : i.state === 'done'
                    ? 'done'
                    : i.state === 'cancelled'
                      ? 'cancelled'
                      : 'failed'}
              </span>
              {i.state === 'uploading' && (
                <button type="button" class="small" data-testid="upload-cancel" onClick={() => i.handle?.cancel()}>
                  Cancel
                </button>
              )}
              {i.error && (
                <span class="error-text" data-testid="upload-error">
                  {i.error}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
      {items.some((i) => i.state !== 'uploading') && (
        <button
          type="button"
          class="small"
          onClick={() => setItems((all) => all.filter((i) => i.state === 'uploading'))}
        >
          Clear finished
        </button>
      )}
    </div>
  );
}

const SHARE_CHOICES: Array<[string, number]> = [
  ['1 hour', 3600],
  ['1 day', 86400],
  ['7 days', 7 * 86400],
];

function TagEditor({ bucket, objectKey }: { bucket: string; objectKey: string }) {
  const tags = useAsync(() => getTags(bucket, objectKey), [bucket, objectKey]);
  const [editing, setEditing] = useState<Tag[] | null>(null);
  const [save, saving, saveError] = useAction();
  if (tags.error) return <ErrorBanner error={tags.error} />;
  if (!tags.data) return <Loading />;
  if (editing === null) {
    return (
      <div data-testid="object-tags">
        {tags.data.length === 0 ? (
          <p class="muted">No tags.</p>
        ) : (
          <KeyValues rows={tags.data.map((t) => [t.key, t.value])} />
        )}
        <button type="button" class="small" data-testid="tags-edit" onClick={() => setEditing(tags.data!.map((t) => ({ ...t })))}>
          Edit tags
        </button>
      </div>
    );
  }
  const set = (i: number, change: Partial<Tag>) => setEditing(editing.map((t, j) => (j === i ? { ...t, ...change } : t)));
  return (
    <form
      data-testid="tags-form"
      onSubmit={async (e) => {
        e.preventDefault();
        const clean = editing.filter((t) => t.key.trim() !== '');
        if (await save(() => putTags(bucket, objectKey, clean))) {
          setEditing(null);
          tags.reload();
        }
      }}
    >
      {editing.map((t, i) => (
        <div class="tag-row" key={i}>
          <input
            placeholder="key"
            value={t.key}
            data-testid="tag-key"
            onInput={(e) => set(i, { key: (e.target as HTMLInputElement).value })}
          />
          <input
            placeholder="value"
            value={t.value}
            data-testid="tag-value"
            onInput={(e) => set(i, { value: (e.target as HTMLInputElement).value })}
          />
          <button type="button" class="small" onClick={() => setEditing(editing.filter((_, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <div class="buttons">
        <button type="button" class="small" data-testid="tag-add" onClick={() => setEditing([...editing, { key: '', value: '' }])}>
          Add tag
        </button>
        <button type="button" class="small" onClick={() => setEditing(null)}>
          Cancel
        </button>
        <button type="submit" class="small primary" data-testid="tags-save" disabled={saving}>
          Save tags
        </button>
      </div>
      <ErrorBanner error={saveError} />
    </form>
  );
}

function ShareLink({ bucket, objectKey }: { bucket: string; objectKey: string }) {
  const [seconds, setSeconds] = useState(SHARE_CHOICES[0][1]);
  const [link, setLink] = useState<{ url: string; expires: number } | null>(null);
  const [make, making, error] = useAction();
  useEffect(() => setLink(null), [bucket, objectKey]);
  return (
    <div class="share" data-testid="share">
      <select
        data-testid="share-expiry"
        value={String(seconds)}
        onChange={(e) => setSeconds(Number((e.target as HTMLSelectElement).value))}
      >
        {SHARE_CHOICES.map(([label, s]) => (
          <option value={String(s)} key={s}>
            {label}
          </option>
        ))}
      </select>
      <button
        type="button"
        class="small"
        data-testid="share-create"
        disabled={making}
        onClick={() =>
          make(async () => {
            const r = await presign(bucket, objectKey, seconds);
            setLink({ url: r.url, expires: r['expires-ms'] });
          })
        }
      >
        Create share link
      </button>
      <ErrorBanner error={error} />
      {link && (
        <div class="share-result">
          <input readOnly value={link.url} data-testid="share-url" class="wide" onFocus={(e) => (e.target as HTMLInputElement).select()} />
          <CopyButton text={link.url} testid="share-copy" />
          <p class="muted">Valid until {formatTime(link.expires)}.</p>
        </div>
      )}
    </div>
  );
}

function ObjectDetails({ bucket, objectKey, onClose }: { bucket: string; objectKey: string; onClose: () => void }) {
  const info = useAsync(() => headObject(bucket, objectKey), [bucket, objectKey]);
  return (
    <aside class="details" data-testid="object-details">
      <div class="details-head">
        <h2 class="break">{objectKey}</h2>
        <button type="button" class="small" onClick={onClose} data-testid="object-details-close">
          Close
        </button>
      </div>
      <ErrorBanner error={info.error} />
      {info.data && (
        <KeyValues
          testid="object-info"
          rows={[
            ['Size', `${formatBytes(info.data.size)} (${info.data.size} bytes)`],
            ['ETag', <code>{info.data.etag}</code>],
            ['Content type', info.data.contentType],
            ['Last modified', formatTime(info.data.lastModified)],
          ]}
        />
      )}
      {info.data && info.data.metadata.length > 0 && (
        <>
          <h3>User metadata</h3>
          <KeyValues testid="object-metadata" rows={info.data.metadata.map(([k, v]) => [k, v])} />
        </>
      )}
      <h3>Tags</h3>
      <TagEditor bucket={bucket} objectKey={objectKey} />
      <h3>Share</h3>
      <ShareLink bucket={bucket} objectKey={objectKey} />
    </aside>
  );
}

export function ObjectsPage({ bucket, prefix, selected }: { bucket: string; prefix: string; selected: string | null }) {
  // tokens[i] is the continuation token of page i (null for the first page), for this place only.
  const place = `${bucket}/${prefix}`;
  const [paging, setPaging] = useState<{ place: string; tokens: Array<string | null> }>({ place, tokens: [null] });
  const tokens = paging.place === place ? paging.tokens : [null];
  const setTokens = (next: Array<string | null>) => setPaging({ place, tokens: next });
  const page = tokens.length - 1;
  const token = tokens[page];
  const listing = useAsync<ListPage>(() => listObjects(bucket, prefix, token), [bucket, prefix, token]);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [rowError, setRowError] = useState<unknown>(null);
  const data = listing.data;

  return (
    <section data-testid="page-objects" class={selected ? 'with-details' : ''}>
      <Breadcrumbs bucket={bucket} prefix={prefix} />
      <div class="browser">
        <div class="browser-main">
          <Uploads bucket={bucket} prefix={prefix} onUploaded={listing.reload} />
          <ErrorBanner error={listing.error} />
          <ErrorBanner error={rowError} />
          {listing.loading && !data && <Loading />}
          {data && (
            <>
              <table class="list" data-testid="object-list">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th class="num">Size</th>
                    <th>Last modified</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {data.prefixes.map((p) => (
                    <tr key={'p:' + p} data-testid="folder-row" data-prefix={p}>
                      <td colSpan={4}>
                        <a href={buildHash(['buckets', bucket], { prefix: p })} class="folder" data-testid="folder-link">
                          {relativeName(p, prefix)}
                        </a>
                      </td>
                    </tr>
                  ))}
                  {data.objects.map((o) => (
                    <ObjectRow
                      key={'o:' + o.key}
                      bucket={bucket}
                      prefix={prefix}
                      object={o}
                      onDelete={setDeleting}
                      onError={setRowError}
                    />
                  ))}
                  {data.prefixes.length === 0 && data.objects.length === 0 && (
                    <tr>
                      <td colSpan={4} class="muted">
                        Nothing here.
                      </td>
                    </tr>
                  )}
                </tbody>
              </table>
              <div class="pager" data-testid="pager">
                <button
                  type="button"
                  data-testid="page-prev"
                  disabled={page === 0 || listing.loading}
                  onClick={() => setTokens(tokens.slice(0, -1))}
                >
                  Previous
                </button>
                <span class="muted">Page {page + 1}</span>
                <button
                  type="button"
                  data-testid="page-next"
                  disabled={!data.nextToken || listing.loading}
                  onClick={() => data.nextToken && setTokens([...tokens, data.nextToken])}
                >
                  Next
                </button>
              </div>
            </>
          )}
        </div>
        {selected !== null && (
          <ObjectDetails
            bucket={bucket}
            objectKey={selected}
            onClose={() => navigate(buildHash(['buckets', bucket], { prefix }))}
          />
        )}
      </div>
      {deleting !== null && (
        <ConfirmDialog
          title="Delete object"
          message={
            <>
              Delete <code class="break">{deleting}</code> from {bucket}? This cannot be undone.
            </>
          }
          onConfirm={async () => {
            await deleteObject(bucket, deleting);
            if (selected === deleting) navigate(buildHash(['buckets', bucket], { prefix }));
            listing.reload();
          }}
          onClose={() => setDeleting(null)}
        />
      )}
    </section>
  );
}
