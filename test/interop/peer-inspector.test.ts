/**
 * Our server driven by a real client: the official inspector CLI (`@modelcontextprotocol/inspector-cli`,
 * `mcp-inspector-cli --cli`) spawns `test/fixtures/inspector-server.ts` over stdio, runs one method and
 * prints the result as JSON on stdout.
 *
 * Peer quirks this works around:
 * - inspector-cli 1.0.3 picks its own package.json with `fs.existsSync('../package.json')` (relative to
 *   the cwd) but imports it relative to its module, so it only starts when the cwd is its `build` folder.
 * - `--tool-arg` and `--prompt-args` are variadic: the target must come after `--method`, and the
 *   server's own flags after `--`.
 */
import { execFile, type ChildProcess, type ExecFileOptionsWithStringEncoding } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/wait';
import { fixturePath } from '../helpers/paths';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fixturePath('inspector-server.ts');
const inspectorBin = `${root}node_modules/.bin/mcp-inspector-cli`;
const inspectorCwd = `${root}node_modules/@modelcontextprotocol/inspector-cli/build`;
const RUN_TIMEOUT_MS = 15_000;

const running = new Set<ChildProcess>();

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ESRCH');
    return false;
  }
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the inspector CLI in its own process group against our fixture; the group is gone when this resolves. */
async function inspect(options: readonly string[]): Promise<Run> {
  const args = ['--cli', ...options, 'node', '--', '--import', 'tsx', fixture];
  let child!: ChildProcess;
  const run = await new Promise<Run>((resolve) => {
    // execFile passes `detached` through to spawn (its type omits it): a group we can check and kill whole.
    const options: ExecFileOptionsWithStringEncoding & { detached: boolean } = {
      cwd: inspectorCwd,
      encoding: 'utf8',
      timeout: RUN_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      detached: true,
      maxBuffer: 4 * 1024 * 1024,
    };
    child = execFile(inspectorBin, args, options, (error, stdout, stderr) => {
      const code = error ? error.code : 0;
      resolve({ code: typeof code === 'number' ? code : null, stdout, stderr });
    });
    running.add(child);
  });
  // The inspector exits; the fixture it spawned ends when its stdin closes. Nothing of the group may remain.
  // A grandchild's end announces itself to its own parent only: from here, the group is polled.
  await eventually(() => !groupAlive(child.pid!), 'the inspector process group to end');
  running.delete(child);
  return run;
}

function json(run: Run): any {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

afterEach(() => {
  for (const child of running) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
});

describe('inspector CLI against our stdio server', { timeout: 25_000 }, () => {
  it('lists tools', async () => {
    const result = json(await inspect(['--method', 'tools/list']));
    expect(result).toEqual({
      tools: [
        {
          name: 'add',
          title: 'Add',
          description: 'Adds two numbers.',
          inputSchema: {
            type: 'object',
            properties: { a: { type: 'number' }, b: { type: 'number' } },
            required: ['a', 'b'],
          },
          outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
        },
      ],
    });
  });

  it('calls add with arguments (parsed as JSON numbers)', async () => {
    const result = json(await inspect(['--tool-name', 'add', '--tool-arg', 'a=2', 'b=40', '--method', 'tools/call']));
    expect(result).toEqual({
      content: [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }],
      structuredContent: { sum: 42 },
    });
  });

  it('gets a tool error result for arguments that fail the input schema', async () => {
    const result = json(await inspect(['--tool-name', 'add', '--tool-arg', 'a=two', 'b=1', '--method', 'tools/call']));
    expect(result.isError).toBe(true);
    expect(result.content[0].type).toBe('text');
  });

  it('reads docs://readme', async () => {
    const result = json(await inspect(['--uri', 'docs://readme', '--method', 'resources/read']));
    expect(result).toEqual({
      contents: [
        { uri: 'docs://readme', mimeType: 'text/markdown', text: '# Inspector fixture\n\nHello from switchboard.' },
      ],
    });
  });

  it('lists resources', async () => {
    const resources = json(await inspect(['--method', 'resources/list']));
    expect(resources).toEqual({
      resources: [{ uri: 'docs://readme', name: 'readme', title: 'README', mimeType: 'text/markdown' }],
    });
  });

  it('lists prompts', async () => {
    const prompts = json(await inspect(['--method', 'prompts/list']));
    expect(prompts).toEqual({
      prompts: [
        {
          name: 'greet',
          description: 'Greets someone by name.',
          arguments: [{ name: 'name', description: 'Who to greet', required: true }],
        },
      ],
    });
  });

  it('gets the greet prompt with an argument', async () => {
    const result = json(
      await inspect(['--prompt-name', 'greet', '--prompt-args', 'name=Ada', '--method', 'prompts/get']),
    );
    expect(result).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'Please greet Ada warmly.' } }],
    });
  });

  it('fails cleanly for an unknown prompt', async () => {
    const run = await inspect(['--prompt-name', 'nope', '--method', 'prompts/get']);
    expect(run.code).not.toBe(0);
    expect(run.stderr + run.stdout).toMatch(/nope|-32602|Invalid/i);
  });
});
