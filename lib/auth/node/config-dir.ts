/**
 * The user's configuration directory for mcp-switchboard (where the file token store keeps its records):
 * the platform's convention, or `MCP_SWITCHBOARD_CONFIG_DIR` when set (tests, or a user who wants it elsewhere).
 */
import { homedir } from 'node:os';
import { posix, win32 } from 'node:path';

/** The environment variable that overrides the directory on every platform. */
export const CONFIG_DIR_ENV = 'MCP_SWITCHBOARD_CONFIG_DIR';

const APP_DIR = 'mcp-switchboard';

/** What the directory depends on: nothing else, so it can be decided for any platform from anywhere. */
export interface ConfigDirContext {
  readonly platform: NodeJS.Platform;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homedir: string;
}

/**
 * - `MCP_SWITCHBOARD_CONFIG_DIR`, when set and not empty, wins;
 * - Windows: `%APPDATA%\mcp-switchboard` (`<home>\AppData\Roaming\mcp-switchboard` without APPDATA);
 * - macOS: `~/Library/Application Support/mcp-switchboard`;
 * - everywhere else: `$XDG_CONFIG_HOME/mcp-switchboard`, or `~/.config/mcp-switchboard` when XDG_CONFIG_HOME is
 *   unset or relative (the XDG base directory specification says to ignore a relative one).
 */
export function resolveConfigDir({ platform, env, homedir: home }: ConfigDirContext): string {
  const override = env[CONFIG_DIR_ENV];
  if (override) return override;
  if (platform === 'win32') {
    const appData = env['APPDATA'] || win32.join(home, 'AppData', 'Roaming');
    return win32.join(appData, APP_DIR);
  }
  if (platform === 'darwin') return posix.join(home, 'Library', 'Application Support', APP_DIR);
  const xdg = env['XDG_CONFIG_HOME'];
  if (xdg && posix.isAbsolute(xdg)) return posix.join(xdg, APP_DIR);
  return posix.join(home, '.config', APP_DIR);
}

/** The directory for this process: its platform, environment and home directory. */
export function defaultConfigDir(): string {
  return resolveConfigDir({ platform: process.platform, env: process.env, homedir: homedir() });
}
