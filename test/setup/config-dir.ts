/**
 * Vitest global setup: every test process gets a config dir of its own (`MCP_SWITCHBOARD_CONFIG_DIR`), so
 * nothing the tests run (`switchboard call` remembers eras, `login` stores tokens) writes to the home of
 * whoever runs them. Removed at the end of the run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-test-config-'));
  process.env['MCP_SWITCHBOARD_CONFIG_DIR'] = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
