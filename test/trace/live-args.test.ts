/** `--trace-ui <port>` and `--trace-ui-host <host>` as `serve` reads them (parseTraceUi), and their usage errors. */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../lib/cli/errors';
import { parseOptions } from '../../lib/cli/parse-options';
import { parseTraceUi, TRACE_UI_OPTIONS } from '../../lib/cli/trace-args';

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
