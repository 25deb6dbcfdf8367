/** `--trace-ui <port>` and `--trace-ui-host <host>` as `serve` reads them (parseTraceUi), and their usage errors. */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../lib/cli/errors';
import { parseOptions } from '../../lib/cli/parse-options';
import { parseTraceUi, TRACE_UI_OPTIONS } from '../../lib/cli/trace-args';
import { tokenFor, traceUiUrl } from '../../lib/cli/trace-ui/open';

const parsed = (...args: string[]) => parseTraceUi(parseOptions('serve', args, TRACE_UI_OPTIONS).values);

describe('--trace-ui', () => {
  it('listens on loopback by default, on --trace-ui-host when given; absent, no trace UI', () => {
    expect(parsed('--trace-ui', '0')).toEqual({ port: 0, host: '127.0.0.1' });
    expect(parsed('--trace-ui', '8123', '--trace-ui-host', '0.0.0.0')).toEqual({ port: 8123, host: '0.0.0.0' });
    expect(parsed()).toBeUndefined();
  });

  it.each([
    [['--trace-ui', '65536'], '--trace-ui needs a port number from 0 to 65535 (0 picks a free one), got "65536"'],
    [['--trace-ui', '-1'], '--trace-ui needs a port number from 0 to 65535 (0 picks a free one), got "-1"'],
    [['--trace-ui', '80x'], '--trace-ui needs a port number from 0 to 65535 (0 picks a free one), got "80x"'],
    [['--trace-ui', ''], '--trace-ui needs a port number from 0 to 65535 (0 picks a free one), got ""'],
    [['--trace-ui-host', '0.0.0.0'], '--trace-ui-host only applies with --trace-ui <port>'],
    [['--trace-ui', '0', '--trace-ui-host', ''], '--trace-ui-host needs a host name or address to listen on'],
  ])('%j is a usage error: %s', (args, message) => {
    expect(() => parsed(...args)).toThrow(new UsageError(message));
  });
});

describe('the trace UI token and URL', () => {
  it('needs no token on loopback (the Host check guards it), a fresh 192-bit one anywhere else', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(tokenFor(host)).toBeUndefined();
    const tokens = ['0.0.0.0', '192.0.2.1', '::', 'trace.example'].map((host) => tokenFor(host)!);
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('prints the URL with its token, an IPv6 address in brackets', () => {
    expect(traceUiUrl('127.0.0.1', 8123, undefined)).toBe('http://127.0.0.1:8123/');
    expect(traceUiUrl('0.0.0.0', 8123, 'abc')).toBe('http://0.0.0.0:8123/?token=abc');
    expect(traceUiUrl('::', 8123, 'abc')).toBe('http://[::]:8123/?token=abc');
    expect(traceUiUrl('[::1]', 8123, undefined)).toBe('http://[::1]:8123/');
  });
});
