// Buckets: the list, creating one, deleting an empty one.

import { useState } from 'preact/hooks';
import { buildHash } from '../router';
import { createBucket, deleteBucket, listBuckets } from '../s3';
import { ConfirmDialog, ErrorBanner, Loading, useAction, useAsync } from '../components/ui';
import { formatTime } from '../format';

export function BucketsPage() {
  const buckets = useAsync(listBuckets, []);
  const [name, setName] = useState('');
  const [create, creating, createError] = useAction();
  const [deleting, setDeleting] = useState<string | null>(null);

  return (
    <section data-testid="page-buckets">
      <h1>Buckets</h1>
      <form
        class="inline-form"
        data-testid="bucket-create-form"
        onSubmit={async (e) => {
          e.preventDefault();
          const bucket = name.trim();
          if (!bucket) return;
          if (await create(() => createBucket(bucket))) {
            setName('');
            buckets.reload();
          }
        }}
      >
        <input
          data-testid="bucket-name-input"
          placeholder="new-bucket-name"
          value={name}
          spellcheck={false}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <button type="submit" data-testid="bucket-create" disabled={creating || !name.trim()}>
          Create bucket
        </button>
      </form>
      <ErrorBanner error={createError} />
      <ErrorBanner error={buckets.error} />
      {buckets.loading && !buckets.data && <Loading />}
      {buckets.data && (
        <table class="list" data-testid="bucket-list">
          <thead>
            <tr>
              <th>Name</th>
              <th>Created</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {buckets.data.length === 0 && (
              <tr>
                <td colSpan={3} class="muted">
                  No buckets yet.
                </td>
              </tr>
            )}
            {buckets.data.map((b) => (
              <tr key={b.name} data-testid="bucket-row" data-bucket={b.name}>
                <td>
                  <a href={buildHash(['buckets', b.name])} data-testid="bucket-link">
                    {b.name}
                  </a>
                </td>
                <td>{formatTime(b.creationDate)}</td>
                <td class="actions">
                  <button type="button" class="danger small" data-testid="bucket-delete" onClick={() => setDeleting(b.name)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {deleting !== null && (
        <ConfirmDialog
          title="Delete bucket"
          message={
            <>
              Delete the bucket <strong>{deleting}</strong>? It must be empty.
            </>
          }
          onConfirm={async () => {
            await deleteBucket(deleting);
            buckets.reload();
          }}
          onClose={() => setDeleting(null)}
        />
      )}
    </section>
  );
}
