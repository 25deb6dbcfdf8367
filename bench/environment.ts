/** Where and with what the figures were taken: recorded next to them, since absolute numbers vary by machine. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';

function installedVersion(packageName: string): string {
  const manifest = new URL(`../node_modules/${packageName}/package.json`, import.meta.url);
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/** The commit measured, and runtime files that differed from it (the figures describe the working tree). */
function runtimeSource(): { commit: string; uncommitted: string[] } {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: new URL('..', import.meta.url), encoding: 'utf8' }).trim();
  try {
    const changed = git('status', '--porcelain', '--', 'lib', 'machines', 'transports');
    return { commit: git('rev-parse', 'HEAD'), uncommitted: changed ? changed.split('\n') : [] };
  } catch {
    return { commit: 'unknown (not a git checkout)', uncommitted: [] };
  }
}

export interface Environment {
  readonly node: string;
  readonly platform: string;
  readonly cpus: number;
  readonly cpuModel: string;
  readonly loadAverage: readonly number[];
  readonly sdkVersion: string;
  readonly zodVersion: string;
  readonly source: { readonly commit: string; readonly uncommitted: readonly string[] };
}

export function describeEnvironment(): Environment {
  const cpus = os.cpus();
  return {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    loadAverage: os.loadavg().map((load) => Number(load.toFixed(2))),
    sdkVersion: installedVersion('@modelcontextprotocol/sdk'),
    zodVersion: installedVersion('zod'),
    source: runtimeSource(),
  };
}
