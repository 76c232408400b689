// Building blocks shared by the pages: error banners, async loading, dialogs, copy buttons, tabs.
// Everything the server sends is rendered as JSX text, never as HTML.

import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from '../api';

export function ErrorBanner({ error, testid = 'error-banner' }: { error: unknown; testid?: string }) {
  if (error === null || error === undefined) return null;
  return (
    <div class="error-banner" role="alert" data-testid={testid}>
      {messageOf(error)}
    </div>
  );
}

export function Notice({ children, testid }: { children: ComponentChildren; testid?: string }) {
  return (
    <div class="notice" data-testid={testid}>
      {children}
    </div>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div class="loading" aria-busy="true">
      {label}
    </div>
  );
}

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

// Runs `load` when `deps` change; keeps the last data while reloading; ignores stale answers.
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): AsyncState<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const [generation, setGeneration] = useState(0);
  const current = useRef(0);
  useEffect(() => {
    const run = ++current.current;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => run === current.current && setState({ data, error: null, loading: false }),
      (error) => run === current.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
    // eslint-style exhaustive deps are the caller's list
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}

// Runs an action with busy and error state: const [run, busy, error] = useAction().
export function useAction(): [(action: () => Promise<unknown>) => Promise<boolean>, boolean, unknown, (e: unknown) => void] {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return [run, busy, error, setError];
}

export function Dialog({
  title,
  children,
  onClose,
  testid = 'dialog',
}: {
  title: string;
  children: ComponentChildren;
  onClose: () => void;
  testid?: string;
}) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    <div class="dialog-backdrop">
      <div class="dialog" role="dialog" aria-modal="true" aria-label={title} data-testid={testid}>
        <h2>{title}</h2>
        {children}
      </div>
    </div>
  );
}

// A confirmation for a destructive action; the action's failure shows inside the dialog.
export function ConfirmDialog({
  title,
  message,
  confirmLabel = 'Delete',
  onConfirm,
  onClose,
}: {
  title: string;
  message: ComponentChildren;
  confirmLabel?: string;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
}) {
  const [run, busy, error] = useAction();
  return (
    <Dialog title={title} onClose={onClose} testid="confirm-dialog">
      <p>{message}</p>
      <ErrorBanner error={error} />
      <div class="buttons">
        <button type="button" data-testid="confirm-cancel" onClick={onClose} disabled={busy}>
          Cancel
        </button>
        <button
          type="button"
          class="danger"
          data-testid="confirm-ok"
          disabled={busy}
          onClick={async () => {
            if (await run(onConfirm)) onClose();
          }}
        >
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}

async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  // Plain-HTTP pages have no clipboard API: copy through a selected, off-screen text area.
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'offscreen';
  document.body.appendChild(area);
  area.select();
  try {
    if (!document.execCommand('copy')) throw new Error('copy refused');
  } finally {
    area.remove();
  }
}

export function CopyButton({ text, testid = 'copy-button', label = 'Copy' }: { text: string; testid?: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const t = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(t);
  }, [state]);
  return (
    <button
      type="button"
      class="copy"
      data-testid={testid}
      onClick={() => copyText(text).then(() => setState('copied'), () => setState('failed'))}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy' : label}
    </button>
  );
}

export interface TabSpec {
  id: string;
  label: string;
}

export function Tabs({ tabs, active, onSelect }: { tabs: TabSpec[]; active: string; onSelect: (id: string) => void }) {
  return (
    <nav class="tabs" role="tablist">
      {tabs.map((t) => (
        <button
          type="button"
          role="tab"
          key={t.id}
          aria-selected={t.id === active}
          class={t.id === active ? 'tab active' : 'tab'}
          data-testid={`tab-${t.id}`}
          onClick={() => onSelect(t.id)}
        >
          {t.label}
        </button>
      ))}
    </nav>
  );
}

export function KeyValues({ rows, testid }: { rows: Array<[string, ComponentChildren]>; testid?: string }) {
  return (
    <table class="kv" data-testid={testid}>
      <tbody>
        {rows.map(([k, v]) => (
          <tr key={k}>
            <th scope="row">{k}</th>
            <td>{v}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

// Re-renders every `ms` milliseconds (for ticking clocks).
export function useNow(ms: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}
