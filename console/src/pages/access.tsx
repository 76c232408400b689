// Access: users, access keys, policies, and "What may this user do?" (the server's simulation).

import { useMemo, useState } from 'preact/hooks';
import {
  ACTION_SETS,
  attachPolicy,
  createAccessKey,
  createUser,
  deleteAccessKey,
  deletePolicy,
  deleteUser,
  detachPolicy,
  getPolicy,
  listAccessKeys,
  listPolicies,
  listUsers,
  POLICY_TEMPLATE,
  putPolicy,
  s3BucketArn,
  s3ObjectArn,
  setAccessKeyEnabled,
  setUserEnabled,
  simulate,
  tablesTableArn,
  tablesViewArn,
  tablesWarehouseArn,
  validatePolicy,
  type AccessKey,
  type PolicySummary,
  type SimulationResult,
} from '../admin';
import { loadTable, loadView } from '../catalog';
import { buildHash, navigate } from '../router';
import { ConfirmDialog, CopyButton, Dialog, ErrorBanner, Loading, Tabs, useAction, useAsync } from '../components/ui';
import { formatTime } from '../format';

type Confirm = { title: string; message: string; label: string; action: () => Promise<void> } | null;

function UsersTab() {
  const users = useAsync(listUsers, []);
  const policies = useAsync(listPolicies, []);
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [run, busy, error] = useAction();
  const [confirm, setConfirm] = useState<Confirm>(null);
  const [attachChoice, setAttachChoice] = useState<Record<string, string>>({});
  const policyNames = (policies.data ?? []).map((p) => p.name);

  return (
    <div data-testid="users">
      <form
        class="card"
        data-testid="user-create-form"
        onSubmit={async (e) => {
          e.preventDefault();
          const n = name.trim();
          if (n && (await run(() => createUser(n, chosen)))) {
            setName('');
            setChosen([]);
            users.reload();
          }
        }}
      >
        <h3>New user</h3>
        <label>
          Name
          <input value={name} spellcheck={false} data-testid="user-name-input" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <fieldset class="checks">
          <legend>Policies</legend>
          {policyNames.map((p) => (
            <label class="check" key={p}>
              <input
                type="checkbox"
                checked={chosen.includes(p)}
                data-testid="user-create-policy"
                data-policy={p}
                onChange={(e) =>
                  setChosen((e.target as HTMLInputElement).checked ? [...chosen, p] : chosen.filter((c) => c !== p))
                }
              />{' '}
              {p}
            </label>
          ))}
        </fieldset>
        <button type="submit" class="primary small" disabled={busy || !name.trim()} data-testid="user-create">
          Create user
        </button>
      </form>
      <ErrorBanner error={error} />
      <ErrorBanner error={users.error} />
      {users.loading && !users.data && <Loading />}
      {users.data && (
        <table class="list" data-testid="user-list">
          <thead>
            <tr>
              <th>User</th>
              <th>State</th>
              <th>Created</th>
              <th>Policies</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {users.data.length === 0 && (
              <tr>
                <td colSpan={5} class="muted">
                  No users.
                </td>
              </tr>
            )}
            {users.data.map((u) => (
              <tr key={u.name} data-testid="user-row" data-user={u.name}>
                <td>{u.name}</td>
                <td>{u.enabled ? 'enabled' : <span class="warn">disabled</span>}</td>
                <td>{formatTime(u['created-ms'])}</td>
                <td>
                  {u.policies.map((p) => (
                    <span class="badge" key={p}>
                      {p}{' '}
                      <button
                        type="button"
                        class="link"
                        title={`Detach ${p}`}
                        aria-label={`Detach ${p}`}
                        data-testid="user-detach-policy"
                        data-policy={p}
                        onClick={() => run(async () => {
                          await detachPolicy(u.name, p);
                          users.reload();
                        })}
                      >
                        ×
                      </button>
                    </span>
                  ))}
                  <span class="attach">
                    <select
                      data-testid="user-attach-select"
                      value={attachChoice[u.name] ?? ''}
                      onChange={(e) => setAttachChoice({ ...attachChoice, [u.name]: (e.target as HTMLSelectElement).value })}
                    >
                      <option value="">attach…</option>
                      {policyNames
                        .filter((p) => !u.policies.includes(p))
                        .map((p) => (
                          <option key={p} value={p}>
                            {p}
                          </option>
                        ))}
                    </select>
                    <button
                      type="button"
                      class="small"
                      data-testid="user-attach"
                      disabled={!attachChoice[u.name]}
                      onClick={() =>
                        run(async () => {
                          await attachPolicy(u.name, attachChoice[u.name]);
                          setAttachChoice({ ...attachChoice, [u.name]: '' });
                          users.reload();
                        })
                      }
                    >
                      Attach
                    </button>
                  </span>
                </td>
                <td class="actions">
                  <button
                    type="button"
                    class="small"
                    data-testid="user-toggle"
                    onClick={() =>
                      run(async () => {
                        await setUserEnabled(u.name, !u.enabled);
                        users.reload();
                      })
                    }
                  >
                    {u.enabled ? 'Disable' : 'Enable'}
                  </button>
                  <button
                    type="button"
                    class="small danger"
                    data-testid="user-delete"
                    onClick={() =>
                      setConfirm({
                        title: 'Delete user',
                        message: `Delete the user ${u.name} and all of its access keys?`,
                        label: 'Delete',
                        action: async () => {
                          await deleteUser(u.name);
                          users.reload();
                        },
                      })
                    }
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {confirm && (
        <ConfirmDialog
          title={confirm.title}
          message={confirm.message}
          confirmLabel={confirm.label}
          onConfirm={confirm.action}
          onClose={() => setConfirm(null)}
        />
      )}
    </div>
  );
}

function NewSecretDialog({ created, onClose }: { created: AccessKey; onClose: () => void }) {
  return (
    <Dialog title="New access key" onClose={onClose} testid="secret-dialog">
      <p>
        The secret key is shown <strong>only now</strong>. Copy it somewhere safe; it cannot be shown again.
      </p>
      <label>
        Access key
        <div class="copy-row">
          <input readOnly value={created['access-key']} data-testid="new-access-key" class="wide" />
          <CopyButton text={created['access-key']} testid="new-access-key-copy" />
        </div>
      </label>
      <label>
        Secret key
        <div class="copy-row">
          <input readOnly value={created['secret-key'] ?? ''} data-testid="new-secret-key" class="wide" />
          <CopyButton text={created['secret-key'] ?? ''} testid="new-secret-key-copy" />
        </div>
      </label>
      <div class="buttons">
        <button type="button" class="primary" onClick={onClose} data-testid="secret-dialog-close">
          Done
        </button>
      </div>
    </Dialog>
  );
}

function KeysTab() {
  const keys = useAsync(() => listAccessKeys(), []);
  const users = useAsync(listUsers, []);
  const [user, setUser] = useState('');
  const [description, setDescription] = useState('');
  const [created, setCreated] = useState<AccessKey | null>(null);
  const [run, busy, error] = useAction();
  const [confirm, setConfirm] = useState<Confirm>(null);
  return (
    <div data-testid="keys">
      <form
        class="card"
        data-testid="key-create-form"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!user) return;
          await run(async () => {
            const key = await createAccessKey(user, description.trim());
            setCreated(key);
            setDescription('');
            keys.reload();
          });
        }}
      >
        <h3>New access key</h3>
        <label>
          User
          <select value={user} data-testid="key-user-select" onChange={(e) => setUser((e.target as HTMLSelectElement).value)}>
            <option value="">choose…</option>
            {(users.data ?? []).map((u) => (
              <option key={u.name} value={u.name}>
                {u.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Description
          <input value={description} data-testid="key-description" onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" class="primary small" disabled={busy || !user} data-testid="key-create">
          Create access key
        </button>
      </form>
      <ErrorBanner error={error} />
      <ErrorBanner error={users.error} />
      <ErrorBanner error={keys.error} />
      {keys.loading && !keys.data && <Loading />}
      {keys.data && (
        <table class="list" data-testid="key-list">
          <thead>
            <tr>
              <th>Access key</th>
              <th>User</th>
              <th>State</th>
              <th>Created</th>
              <th>Description</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {keys.data.length === 0 && (
              <tr>
                <td colSpan={6} class="muted">
                  No access keys.
                </td>
              </tr>
            )}
            {keys.data.map((k) => (
              <tr key={k['access-key']} data-testid="key-row" data-key={k['access-key']}>
                <td>
                  <code>{k['access-key']}</code>
                </td>
                <td>{k.user}</td>
                <td>{k.enabled ? 'enabled' : <span class="warn">disabled</span>}</td>
                <td>{formatTime(k['created-ms'])}</td>
                <td>{k.description}</td>
                <td class="actions">
                  <button
                    type="button"
                    class="small"
                    data-testid="key-toggle"
                    onClick={() =>
                      run(async () => {
                        await setAccessKeyEnabled(k['access-key'], !k.enabled);
                        keys.reload();
                      })
                    }
                  >
                    {k.enabled ? 'Disable' : 'Enable'}
                  </button>
                  <button
                    type="button"
                    class="small danger"
                    data-testid="key-delete"
                    onClick={() =>
                      setConfirm({
                        title: 'Delete access key',
                        message: `Delete the access key ${k['access-key']} of ${k.user}? Clients using it stop working.`,
                        label: 'Delete',
                        action: async () => {
                          await deleteAccessKey(k['access-key']);
                          keys.reload();
                        },
                      })
                    }
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {created && <NewSecretDialog created={created} onClose={() => setCreated(null)} />}
      {confirm && (
        <ConfirmDialog
          title={confirm.title}
          message={confirm.message}
          confirmLabel={confirm.label}
          onConfirm={confirm.action}
          onClose={() => setConfirm(null)}
        />
      )}
    </div>
  );
}

function PolicyEditor({
  summary,
  isNew,
  onSaved,
  onDeleted,
}: {
  summary: PolicySummary | null;
  isNew: boolean;
  onSaved: (name: string) => void;
  onDeleted: () => void;
}) {
  const detail = useAsync(
    () => (summary && !isNew ? getPolicy(summary.name) : Promise.resolve(null)),
    [summary?.name ?? '', isNew],
  );
  const [name, setName] = useState('');
  const [text, setText] = useState<string | null>(null);
  const [run, busy, error] = useAction();
  const [confirm, setConfirm] = useState(false);
  const loadedText = detail.data ? JSON.stringify(detail.data.document, null, 2) : isNew ? POLICY_TEMPLATE : '';
  const current = text ?? loadedText;
  const check = useMemo(() => validatePolicy(current), [current]);
  const builtin = !isNew && (summary?.builtin ?? false);
  const targetName = isNew ? name.trim() : (summary?.name ?? '');

  if (!isNew && detail.error) return <ErrorBanner error={detail.error} />;
  if (!isNew && !detail.data) return <Loading />;
  return (
    <form
      class="policy-editor"
      data-testid="policy-form"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!check.ok || !targetName || builtin) return;
        if (await run(() => putPolicy(targetName, current))) {
          setText(null);
          onSaved(targetName);
        }
      }}
    >
      {isNew ? (
        <label>
          Name
          <input value={name} spellcheck={false} data-testid="policy-name-input" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
      ) : (
        <h3>
          {summary?.name} {builtin && <span class="badge">built-in, read-only</span>}
        </h3>
      )}
      <textarea
        class="code"
        rows={18}
        spellcheck={false}
        readOnly={builtin}
        value={current}
        data-testid="policy-document"
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
      />
      {!builtin && (
        <div data-testid="policy-validation" class={check.ok ? 'ok' : 'error-text'}>
          {check.ok ? 'The document is well formed.' : (
            <ul>
              {check.errors.map((m, i) => (
                <li key={i}>{m}</li>
              ))}
            </ul>
          )}
        </div>
      )}
      <ErrorBanner error={error} />
      {!builtin && (
        <div class="buttons">
          <button type="submit" class="primary small" disabled={busy || !check.ok || !targetName} data-testid="policy-save">
            Save policy
          </button>
          {!isNew && (
            <button type="button" class="danger small" data-testid="policy-delete" onClick={() => setConfirm(true)}>
              Delete policy
            </button>
          )}
        </div>
      )}
      {confirm && summary && (
        <ConfirmDialog
          title="Delete policy"
          message={`Delete the policy ${summary.name}? A policy still attached to a user cannot be deleted.`}
          onConfirm={async () => {
            await deletePolicy(summary.name);
            onDeleted();
          }}
          onClose={() => setConfirm(false)}
        />
      )}
    </form>
  );
}

function PoliciesTab({ selected }: { selected: string | undefined }) {
  const policies = useAsync(listPolicies, []);
  const isNew = selected === '';
  const summary = policies.data?.find((p) => p.name === selected) ?? null;
  const select = (name: string | undefined) => navigate(buildHash(['access'], { tab: 'policies', policy: name }));
  return (
    <div class="split" data-testid="policies">
      <div class="split-list">
        <button type="button" class="small primary" data-testid="policy-new" onClick={() => navigate('#/access?tab=policies&policy=')}>
          New policy
        </button>
        <ErrorBanner error={policies.error} />
        {policies.data && (
          <ul class="entity-list" data-testid="policy-list">
            {policies.data.map((p) => (
              <li key={p.name} data-testid="policy-row" data-policy={p.name} class={p.name === selected ? 'selected' : ''}>
                <a href={buildHash(['access'], { tab: 'policies', policy: p.name })}>{p.name}</a>
                {p.builtin && <span class="badge">built-in</span>}
              </li>
            ))}
          </ul>
        )}
      </div>
      <div class="split-main">
        {(isNew || summary) && (
          <PolicyEditor
            key={isNew ? '(new)' : summary!.name}
            summary={summary}
            isNew={isNew}
            onSaved={(name) => {
              policies.reload();
              select(name);
            }}
            onDeleted={() => {
              policies.reload();
              select(undefined);
            }}
          />
        )}
        {!isNew && !summary && <p class="muted">Choose a policy, or make a new one.</p>}
      </div>
    </div>
  );
}

type ResourceKind = 'bucket' | 'object' | 'warehouse' | 'table' | 'view' | 'arn';

const KIND_LABELS: Record<ResourceKind, string> = {
  bucket: 'Bucket',
  object: 'Object',
  warehouse: 'Warehouse',
  table: 'Table',
  view: 'View',
  arn: 'Any ARN',
};

// The ARN a form describes; tables and views are named by their UUID, so look it up.
async function resourceArn(kind: ResourceKind, f: Record<string, string>): Promise<string> {
  const namespace = (f.namespace ?? '').split('.').filter((l) => l !== '');
  switch (kind) {
    case 'bucket':
      return s3BucketArn(f.bucket ?? '');
    case 'object':
      return s3ObjectArn(f.bucket ?? '', f.key ?? '');
    case 'warehouse':
      return tablesWarehouseArn(f.warehouse ?? '');
    case 'table': {
      const t = await loadTable(f.warehouse ?? '', namespace, f.name ?? '');
      return tablesTableArn(f.warehouse ?? '', t.metadata['table-uuid']);
    }
    case 'view': {
      const v = await loadView(f.warehouse ?? '', namespace, f.name ?? '');
      return tablesViewArn(f.warehouse ?? '', v.metadata['view-uuid']);
    }
    case 'arn':
      return (f.arn ?? '').trim();
  }
}

const KIND_FIELDS: Record<ResourceKind, Array<[string, string]>> = {
  bucket: [['bucket', 'Bucket']],
  object: [
    ['bucket', 'Bucket'],
    ['key', 'Key'],
  ],
  warehouse: [['warehouse', 'Warehouse']],
  table: [
    ['warehouse', 'Warehouse'],
    ['namespace', 'Namespace (a.b)'],
    ['name', 'Table'],
  ],
  view: [
    ['warehouse', 'Warehouse'],
    ['namespace', 'Namespace (a.b)'],
    ['name', 'View'],
  ],
  arn: [['arn', 'ARN']],
};

function SimulateTab() {
  const users = useAsync(listUsers, []);
  const [user, setUser] = useState('');
  const [kind, setKind] = useState<ResourceKind>('object');
  const [fields, setFields] = useState<Record<string, string>>({});
  const [actions, setActions] = useState<string[]>(ACTION_SETS.object);
  const [extra, setExtra] = useState('');
  const [results, setResults] = useState<{ arn: string; results: SimulationResult[] } | null>(null);
  const [run, busy, error] = useAction();
  const offered = kind === 'arn' ? [] : ACTION_SETS[kind];
  const chooseKind = (k: ResourceKind) => {
    setKind(k);
    setActions(k === 'arn' ? [] : ACTION_SETS[k]);
    setResults(null);
  };
  return (
    <div data-testid="simulate">
      <form
        class="card"
        data-testid="simulate-form"
        onSubmit={async (e) => {
          e.preventDefault();
          const all = [...actions, ...extra.split(/[\s,]+/).filter((a) => a !== '')];
          await run(async () => {
            const arn = await resourceArn(kind, fields);
            setResults({ arn, results: await simulate(user.trim(), arn, all) });
          });
        }}
      >
        <p class="muted">What do this user's policies allow on a resource? The server evaluates them as they are now.</p>
        <label>
          User
          <input
            list="simulate-users"
            value={user}
            spellcheck={false}
            data-testid="simulate-user"
            onInput={(e) => setUser((e.target as HTMLInputElement).value)}
          />
          <datalist id="simulate-users">
            {(users.data ?? []).map((u) => (
              <option key={u.name} value={u.name} />
            ))}
          </datalist>
        </label>
        <div class="segmented" role="group" aria-label="Resource kind">
          {(Object.keys(KIND_LABELS) as ResourceKind[]).map((k) => (
            <button
              type="button"
              key={k}
              class={k === kind ? 'active' : ''}
              data-testid={`simulate-kind-${k}`}
              onClick={() => chooseKind(k)}
            >
              {KIND_LABELS[k]}
            </button>
          ))}
        </div>
        {KIND_FIELDS[kind].map(([field, label]) => (
          <label key={field}>
            {label}
            <input
              value={fields[field] ?? ''}
              spellcheck={false}
              data-testid={`simulate-${field}`}
              onInput={(e) => setFields({ ...fields, [field]: (e.target as HTMLInputElement).value })}
            />
          </label>
        ))}
        {offered.length > 0 && (
          <fieldset class="checks">
            <legend>Actions</legend>
            {offered.map((a) => (
              <label class="check" key={a}>
                <input
                  type="checkbox"
                  checked={actions.includes(a)}
                  data-testid="simulate-action"
                  data-action={a}
                  onChange={(e) => setActions((e.target as HTMLInputElement).checked ? [...actions, a] : actions.filter((x) => x !== a))}
                />{' '}
                {a}
              </label>
            ))}
          </fieldset>
        )}
        <label>
          Other actions (comma-separated)
          <input value={extra} spellcheck={false} data-testid="simulate-extra-actions" onInput={(e) => setExtra((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" class="primary small" disabled={busy || !user.trim()} data-testid="simulate-submit">
          Evaluate
        </button>
      </form>
      <ErrorBanner error={error} />
      {results && (
        <div data-testid="simulate-results">
          <p>
            On <code class="break">{results.arn}</code>:
          </p>
          <table class="list">
            <thead>
              <tr>
                <th>Action</th>
                <th>Decision</th>
                <th>Why</th>
              </tr>
            </thead>
            <tbody>
              {results.results.map((r) => (
                <tr key={r.action} data-testid="simulate-result" data-action={r.action} data-allowed={String(r.allowed)}>
                  <td>{r.action}</td>
                  <td class={r.allowed ? 'ok' : 'error-text'}>{r.allowed ? 'allowed' : 'denied'}</td>
                  <td>
                    {r.reason === 'allowed'
                      ? 'a policy allows it'
                      : r.reason === 'explicit-deny'
                        ? 'a policy denies it'
                        : 'no policy allows it'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

const ACCESS_TABS = [
  { id: 'users', label: 'Users' },
  { id: 'keys', label: 'Access keys' },
  { id: 'policies', label: 'Policies' },
  { id: 'simulate', label: 'What may this user do?' },
];

export function AccessPage({ tab, policy }: { tab: string | undefined; policy: string | undefined }) {
  const active = ACCESS_TABS.some((t) => t.id === tab) ? tab! : 'users';
  return (
    <section data-testid="page-access">
      <h1>Access</h1>
      <Tabs tabs={ACCESS_TABS} active={active} onSelect={(id) => navigate(buildHash(['access'], { tab: id }))} />
      <div class="tab-body">
        {active === 'users' && <UsersTab />}
        {active === 'keys' && <KeysTab />}
        {active === 'policies' && <PoliciesTab selected={policy} />}
        {active === 'simulate' && <SimulateTab />}
      </div>
    </section>
  );
}
