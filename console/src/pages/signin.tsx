// The sign-in page: an access key and its secret, sent once; the secret is not kept anywhere.

import { useEffect, useState } from 'preact/hooks';
import { ApiError, signIn, type Session } from '../api';
import { ErrorBanner } from '../components/ui';

export function SignInPage({ onSignedIn, notice }: { onSignedIn: (s: Session) => void; notice?: string | null }) {
  const [accessKey, setAccessKey] = useState('');
  const [secretKey, setSecretKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [retryAt, setRetryAt] = useState<number | null>(null);
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    if (retryAt === null) return;
    const t = setInterval(() => {
      const n = Date.now();
      setNow(n);
      if (n >= retryAt) setRetryAt(null);
    }, 500);
    return () => clearInterval(t);
  }, [retryAt]);

  const waitSeconds = retryAt === null ? 0 : Math.max(0, Math.ceil((retryAt - now) / 1000));

  const submit = async (e: Event) => {
    e.preventDefault();
    if (busy || waitSeconds > 0) return;
    setBusy(true);
    setError(null);
    try {
      const session = await signIn(accessKey.trim(), secretKey);
      setSecretKey('');
      onSignedIn(session);
    } catch (err) {
      setSecretKey('');
      if (err instanceof ApiError && err.status === 429) {
        const seconds = err.retryAfterSeconds ?? 30;
        const t = Date.now();
        setNow(t);
        setRetryAt(t + seconds * 1000);
        setError(null);
      } else if (err instanceof ApiError && err.code === 'InvalidCredentials') {
        setError(new Error('The access key or secret key is not right.'));
      } else {
        setError(err);
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="signin">
      <form class="signin-form" onSubmit={submit} data-testid="signin-form">
        <h1>serac</h1>
        <p class="muted">Sign in with an access key.</p>
        {notice && <div class="notice">{notice}</div>}
        <label>
          Access key
          <input
            data-testid="signin-access-key"
            name="access-key"
            autocomplete="username"
            spellcheck={false}
            value={accessKey}
            onInput={(e) => setAccessKey((e.target as HTMLInputElement).value)}
            required
          />
        </label>
        <label>
          Secret key
          <input
            data-testid="signin-secret-key"
            name="secret-key"
            type="password"
            autocomplete="current-password"
            value={secretKey}
            onInput={(e) => setSecretKey((e.target as HTMLInputElement).value)}
            required
          />
        </label>
        <ErrorBanner error={error} testid="signin-error" />
        {waitSeconds > 0 && (
          <div class="error-banner" role="alert" data-testid="signin-slow-down">
            Too many failed sign-ins. Try again in {waitSeconds} s.
          </div>
        )}
        <button type="submit" class="primary" data-testid="signin-submit" disabled={busy || waitSeconds > 0}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
