// The application shell: the session (read from GET session on load, so a reload keeps the user
// signed in without the page ever holding a secret), the navigation, and routing to the pages.

import { useEffect, useState } from 'preact/hooks';
import { loadSession, onSignedOut, signOut, type Session } from './api';
import { useRoute, type Route } from './router';
import { ErrorBanner, Loading } from './components/ui';
import { SignInPage } from './pages/signin';
import { OverviewPage } from './pages/overview';
import { BucketsPage } from './pages/buckets';
import { ObjectsPage } from './pages/objects';
import { NamespacePage, splitNamespace, WarehousesPage } from './pages/warehouses';
import { TablePage } from './pages/table';
import { ViewPage } from './pages/view';
import { MaintenancePage } from './pages/maintenance';
import { AccessPage } from './pages/access';

const NAV: Array<{ id: string; label: string; hash: string }> = [
  { id: 'overview', label: 'Overview', hash: '#/' },
  { id: 'buckets', label: 'Buckets', hash: '#/buckets' },
  { id: 'warehouses', label: 'Warehouses', hash: '#/warehouses' },
  { id: 'maintenance', label: 'Maintenance', hash: '#/maintenance' },
  { id: 'access', label: 'Access', hash: '#/access' },
];

function Page({ route }: { route: Route }) {
  const [first, second, third, fourth, fifth] = route.segments;
  const q = route.query;
  switch (first) {
    case undefined:
    case 'overview':
      return <OverviewPage />;
    case 'buckets':
      if (second === undefined) return <BucketsPage />;
      return <ObjectsPage key={second} bucket={second} prefix={q.prefix ?? ''} selected={q.key ?? null} />;
    case 'warehouses':
      if (second === undefined) return <WarehousesPage />;
      if (third === 'tables' && fourth !== undefined && fifth !== undefined) {
        // Keyed by the table: another table is another page, with none of this one's state (a
        // snapshot chosen in Rows names a snapshot of this table only).
        return (
          <TablePage
            key={`${second}/${fourth}/${fifth}`}
            warehouse={second}
            namespace={splitNamespace(fourth)}
            table={fifth}
            tab={q.tab ?? 'schema'}
          />
        );
      }
      if (third === 'views' && fourth !== undefined && fifth !== undefined) {
        return <ViewPage key={`${second}/${fourth}/${fifth}`} warehouse={second} namespace={splitNamespace(fourth)} view={fifth} />;
      }
      return <NamespacePage warehouse={second} namespace={splitNamespace(q.ns)} />;
    case 'maintenance':
      return <MaintenancePage warehouse={q.warehouse} />;
    case 'access':
      return <AccessPage tab={q.tab} policy={q.policy} />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            Nothing here. <a href="#/">Go to the overview.</a>
          </p>
        </section>
      );
  }
}

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const route = useRoute();

  useEffect(() => {
    onSignedOut(() => {
      setSession(null);
      setNotice('Your session ended. Sign in again.');
    });
    loadSession().then(setSession, (e) => {
      setLoadError(e);
      setSession(null);
    });
    return () => onSignedOut(null);
  }, []);

  if (session === undefined) return <Loading />;
  if (session === null) {
    return (
      <>
        {loadError !== null && <ErrorBanner error={loadError} />}
        <SignInPage
          notice={notice}
          onSignedIn={(s) => {
            setNotice(null);
            setLoadError(null);
            setSession(s);
          }}
        />
      </>
    );
  }

  const section = route.segments[0] ?? 'overview';
  return (
    <div class="shell">
      <header class="top">
        <a class="brand" href="#/">
          serac
        </a>
        <span class="spacer" />
        <span class="user" data-testid="header-user">
          {session.user}
          {session.root ? ' (root)' : ''}
        </span>
        <button
          type="button"
          class="small"
          data-testid="sign-out"
          onClick={async () => {
            try {
              await signOut();
            } catch {
              // the cookie is cleared by the server or expires by itself
            }
            setNotice('Signed out.');
            setSession(null);
          }}
        >
          Sign out
        </button>
      </header>
      <nav class="side" aria-label="Sections">
        {NAV.map((n) => (
          <a
            key={n.id}
            href={n.hash}
            class={section === n.id ? 'active' : ''}
            aria-current={section === n.id ? 'page' : undefined}
            data-testid={`nav-${n.id}`}
          >
            {n.label}
          </a>
        ))}
      </nav>
      <main class="content">
        <Page route={route} />
      </main>
    </div>
  );
}
