/**
 * The loopback redirect receiver as a browser meets it: real requests to 127.0.0.1, the page it answers, the
 * URL it hands over, and its port closed on every way out.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  startLoopbackRedirect,
  type LoopbackRedirect,
  type LoopbackRedirectOptions,
} from '../../lib/auth/node/loopback-redirect';
import { cleanups } from '../helpers/cleanups';
import { eventually, within } from '../helpers/wait';

async function start(options: LoopbackRedirectOptions = {}): Promise<LoopbackRedirect> {
  const redirect = await startLoopbackRedirect(options);
  cleanups.push(() => redirect.close());
  return redirect;
}

const portOf = (redirect: LoopbackRedirect) => Number(new URL(redirect.redirectUri).port);

/** Whether a TCP connection to `host:port` is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A GET to `url` with a fresh connection, as a browser would send it. */
async function get(url: string): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(url, { headers: { connection: 'close' } });
  return { status: response.status, body: await response.text(), headers: response.headers };
}

/** Whether `promise` has settled by the time the event loop has turned a few times. */
async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('startLoopbackRedirect', () => {
  it('offers a redirect URI on 127.0.0.1 with the default /callback path', async () => {
    const redirect = await start();
    expect(redirect.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  });

  it('uses the path it is given', async () => {
    const redirect = await start({ path: '/oauth/done' });
    expect(new URL(redirect.redirectUri).pathname).toBe('/oauth/done');
  });

  it('resolves with the full callback URL when the browser comes back with a code', async () => {
    const redirect = await start();
    const callback = `${redirect.redirectUri}?code=abc123&state=xyz&iss=https%3A%2F%2Fauth.example.com`;
    await get(callback);
    expect((await within(redirect.result, 'the callback URL')).href).toBe(callback);
  });

  it('tells the browser the sign-in succeeded', async () => {
    const redirect = await start();
    const { status, body } = await get(`${redirect.redirectUri}?code=abc123&state=xyz`);
    expect([status, body]).toEqual([200, expect.stringContaining('Signed in')]);
  });

  it('never shows the authorization code on the page', async () => {
    const redirect = await start();
    const { body } = await get(`${redirect.redirectUri}?code=code-not-for-the-page&state=xyz`);
    expect(body).not.toContain('code-not-for-the-page');
  });

  it('sends no referrer from the page (the code is in its URL)', async () => {
    const redirect = await start();
    const { headers } = await get(`${redirect.redirectUri}?code=abc123`);
    expect(headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('resolves with the URL of an error response too: the caller decides', async () => {
    const redirect = await start();
    const callback = `${redirect.redirectUri}?error=access_denied&state=xyz`;
    await get(callback);
    expect((await within(redirect.result, 'the callback URL')).searchParams.get('error')).toBe('access_denied');
  });

  it('shows the error and its description on the page, HTML-escaped', async () => {
    const redirect = await start();
    const description = encodeURIComponent('<script>alert("x")</script> & more');
    const { body } = await get(
      `${redirect.redirectUri}?error=%3Cb%3Edenied%3C%2Fb%3E&error_description=${description}`,
    );
    expect(body).toContain('&lt;b&gt;denied&lt;/b&gt;: &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more');
  });

  it('puts no markup from the error on the page', async () => {
    const redirect = await start();
    const { body } = await get(`${redirect.redirectUri}?error=%3Cscript%3Ealert(1)%3C%2Fscript%3E`);
    expect(body).not.toContain('<script');
  });

  it('answers 404 to another path', async () => {
    const redirect = await start();
    expect((await get(`${new URL(redirect.redirectUri).origin}/favicon.ico`)).status).toBe(404);
  });

  it('does not resolve on a request to another path', async () => {
    const redirect = await start();
    await get(`${new URL(redirect.redirectUri).origin}/elsewhere?code=abc123`);
    expect(await hasSettled(redirect.result)).toBe(false);
  });

  it('answers 404 to a POST on the callback path, and does not resolve', async () => {
    const redirect = await start();
    const response = await fetch(`${redirect.redirectUri}?code=abc123`, { method: 'POST', body: 'x' });
    await response.text();
    expect([response.status, await hasSettled(redirect.result)]).toEqual([404, false]);
  });

  it('answers 400 to the callback path without a code or an error, and does not resolve', async () => {
    const redirect = await start();
    const { status } = await get(`${redirect.redirectUri}?state=xyz`);
    expect([status, await hasSettled(redirect.result)]).toEqual([400, false]);
  });

  it('turns away a request whose Host is not 127.0.0.1 (a rebound name)', async () => {
    const redirect = await start();
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const outgoing = request(
        `${redirect.redirectUri}?code=abc123`,
        { headers: { host: 'evil.example:80' } },
        (response) => {
          response.resume();
          resolve(response.statusCode);
        },
      );
      outgoing.once('error', reject);
      outgoing.end();
    });
    expect([status, await hasSettled(redirect.result)]).toEqual([404, false]);
  });

  it('keeps the first callback when a second one arrives', async () => {
    const redirect = await start();
    await get(`${redirect.redirectUri}?code=first`);
    await get(`${redirect.redirectUri}?code=second`);
    expect((await redirect.result).searchParams.get('code')).toBe('first');
  });

  it('tells a second callback that it is already done', async () => {
    const redirect = await start();
    await get(`${redirect.redirectUri}?code=first`);
    expect((await get(`${redirect.redirectUri}?code=second`)).body).toContain('Already done');
  });

  it('rejects with a clear error after its timeout', async () => {
    const redirect = await start({ timeoutMs: 50 });
    await expect(redirect.result).rejects.toThrow(
      /No OAuth redirect arrived at http:\/\/127\.0\.0\.1:\d+\/callback within 50 ms/,
    );
  });

  it('has closed its port when the timeout rejects', async () => {
    const redirect = await start({ timeoutMs: 50 });
    await redirect.result.catch(() => undefined);
    expect(await accepts('127.0.0.1', portOf(redirect))).toBe(false);
  });

  it('raises no unhandled rejection when it times out and nobody awaits the result', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    cleanups.push(() => void process.off('unhandledRejection', onUnhandled));
    const redirect = await start({ timeoutMs: 20 }); // its result is never touched
    await eventually(async () => !(await accepts('127.0.0.1', portOf(redirect))), 'the port to close');
    await new Promise((resolve) => setTimeout(resolve, 50)); // Node reports an unhandled rejection after a turn
    expect(unhandled).toEqual([]);
  });

  it('rejects when its signal is aborted', async () => {
    const controller = new AbortController();
    const redirect = await start({ signal: controller.signal });
    controller.abort(new Error('user pressed Ctrl-C'));
    await expect(redirect.result).rejects.toThrow(/aborted/);
  });

  it('has closed its port when the abort rejects', async () => {
    const controller = new AbortController();
    const redirect = await start({ signal: controller.signal });
    controller.abort();
    await redirect.result.catch(() => undefined);
    expect(await accepts('127.0.0.1', portOf(redirect))).toBe(false);
  });

  it('does not start when its signal is already aborted', async () => {
    await expect(startLoopbackRedirect({ signal: AbortSignal.abort() })).rejects.toThrow(/aborted/);
  });

  it('rejects a pending result when closed', async () => {
    const redirect = await start();
    await redirect.close();
    await expect(redirect.result).rejects.toThrow(/closed before the browser came back/);
  });

  it('closes its port on close()', async () => {
    const redirect = await start();
    await redirect.close();
    expect(await accepts('127.0.0.1', portOf(redirect))).toBe(false);
  });

  it('closes on close() while a connection is in the middle of a request', async () => {
    const redirect = await start();
    const socket = connect({ host: '127.0.0.1', port: portOf(redirect) });
    cleanups.push(() => void socket.destroy());
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) =>
      socket.write('GET /callback?code=abc HTTP/1.1\r\nHost: 127.0.0.1\r\n', () => resolve()),
    );
    await within(redirect.close(), 'close() with a half-sent request open', 2000);
    expect(await accepts('127.0.0.1', portOf(redirect))).toBe(false);
  });

  it('can be closed twice', async () => {
    const redirect = await start();
    await redirect.close();
    await expect(redirect.close()).resolves.toBeUndefined();
  });

  it('listens on 127.0.0.1 only: another loopback address is refused', async () => {
    const redirect = await start();
    expect(await accepts('127.0.0.2', portOf(redirect))).toBe(false);
  });

  it('listens on the port it is given', async () => {
    const probe = await start();
    const port = portOf(probe);
    await probe.close();
    const redirect = await start({ port });
    expect(redirect.redirectUri).toBe(`http://127.0.0.1:${port}/callback`);
  });
});
