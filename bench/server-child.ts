/**
 * A bench server in a child process (`fork` of a bench module with its serve flag): its first IPC message
 * says it listens; `stop` disconnects it (the child exits on disconnect) and kills it if it has not gone
 * after 2 s.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface ServerChild<Ready> {
  readonly child: ChildProcess;
  /** The child's first message. */
  readonly ready: Ready;
  stop(): Promise<void>;
}

/** Forks `file` with `args`; resolves once its first message came, rejects (the child stopped) if it exits first. */
export async function startServerChild<Ready>(
  file: string,
  args: readonly string[],
  nodeFlags: readonly string[] = [],
): Promise<ServerChild<Ready>> {
  const child = fork(file, [...args], {
    cwd: REPO_ROOT,
    execArgv: ['--import', 'tsx', ...nodeFlags],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.connected) child.disconnect();
    const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(timer);
  };
  const ready = new Promise<Ready>((resolve, reject) => {
    child.once('message', (message: Ready) => resolve(message));
    void exited.then(() => reject(new Error(`the bench server ${args.join(' ')} exited before it was ready`)));
  });
  try {
    return { child, ready: await ready, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
