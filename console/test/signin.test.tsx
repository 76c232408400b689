// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { SignInPage } from '../src/pages/signin';

let container: HTMLElement;
let respond: () => Response;

beforeEach(() => {
  container = document.createElement('div');
  document.body.appendChild(container);
  vi.stubGlobal('fetch', async () => respond());
});

afterEach(() => {
  render(null, container);
  container.remove();
  vi.unstubAllGlobals();
});

function type(testid: string, value: string) {
  const input = container.querySelector(`[data-testid="${testid}"]`) as HTMLInputElement;
  input.value = value;
  input.dispatchEvent(new Event('input', { bubbles: true }));
}

async function submit() {
  await act(async () => {
    (container.querySelector('[data-testid="signin-form"]') as HTMLFormElement).dispatchEvent(
      new Event('submit', { bubbles: true, cancelable: true }),
    );
  });
  await act(async () => {
    await new Promise((r) => setTimeout(r, 0));
  });
}

describe('sign-in page', () => {
  it('shows wrong credentials, and forgets the secret', async () => {
    respond = () =>
      new Response(JSON.stringify({ error: { code: 'InvalidCredentials', message: 'invalid' } }), {
        status: 401,
        headers: { 'Content-Type': 'application/json' },
      });
    const signedIn = vi.fn();
    await act(async () => render(<SignInPage onSignedIn={signedIn} />, container));
    type('signin-access-key', 'AK');
    type('signin-secret-key', 'wrong');
    await submit();
    expect(container.querySelector('[data-testid="signin-error"]')!.textContent).toContain('not right');
    expect((container.querySelector('[data-testid="signin-secret-key"]') as HTMLInputElement).value).toBe('');
    expect(signedIn).not.toHaveBeenCalled();
  });

  it('slows down with the server-given wait, and the button stays off meanwhile', async () => {
    respond = () =>
      new Response(JSON.stringify({ error: { code: 'SlowDown', message: 'slow down' } }), {
        status: 429,
        headers: { 'Content-Type': 'application/json', 'Retry-After': '42' },
      });
    await act(async () => render(<SignInPage onSignedIn={() => {}} />, container));
    type('signin-access-key', 'AK');
    type('signin-secret-key', 'x');
    await submit();
    expect(container.querySelector('[data-testid="signin-slow-down"]')!.textContent).toContain('Try again in 42 s');
    expect((container.querySelector('[data-testid="signin-submit"]') as HTMLButtonElement).disabled).toBe(true);
  });

  it('signs in', async () => {
    const session = { user: 'alice', 'access-key': 'AK', root: false, csrf: 'c', 'expires-ms': 1 };
    respond = () => new Response(JSON.stringify(session), { status: 200, headers: { 'Content-Type': 'application/json' } });
    const signedIn = vi.fn();
    await act(async () => render(<SignInPage onSignedIn={signedIn} />, container));
    type('signin-access-key', ' AK ');
    type('signin-secret-key', 'secret');
    await submit();
    expect(signedIn).toHaveBeenCalledWith(session);
  });
});
