/** Where mcp-switchboard keeps its configuration (and the file token store its records), per platform. */
import { describe, expect, it } from 'vitest';
import { CONFIG_DIR_ENV, resolveConfigDir } from '../../lib/auth/node/config-dir';

describe('resolveConfigDir', () => {
  it('uses $XDG_CONFIG_HOME on Linux', () => {
    const dir = resolveConfigDir({ platform: 'linux', env: { XDG_CONFIG_HOME: '/xdg' }, homedir: '/home/ada' });
    expect(dir).toBe('/xdg/mcp-switchboard');
  });

  it('uses ~/.config on Linux without XDG_CONFIG_HOME', () => {
    expect(resolveConfigDir({ platform: 'linux', env: {}, homedir: '/home/ada' })).toBe(
      '/home/ada/.config/mcp-switchboard',
    );
  });

  it('ignores a relative XDG_CONFIG_HOME, as the XDG specification says', () => {
    const dir = resolveConfigDir({ platform: 'linux', env: { XDG_CONFIG_HOME: 'relative' }, homedir: '/home/ada' });
    expect(dir).toBe('/home/ada/.config/mcp-switchboard');
  });

  it('uses $XDG_CONFIG_HOME on a BSD', () => {
    const dir = resolveConfigDir({ platform: 'freebsd', env: { XDG_CONFIG_HOME: '/xdg' }, homedir: '/home/ada' });
    expect(dir).toBe('/xdg/mcp-switchboard');
  });

  it('uses ~/Library/Application Support on macOS', () => {
    const dir = resolveConfigDir({ platform: 'darwin', env: { XDG_CONFIG_HOME: '/xdg' }, homedir: '/Users/ada' });
    expect(dir).toBe('/Users/ada/Library/Application Support/mcp-switchboard');
  });

  it('uses %APPDATA% on Windows', () => {
    const env = { APPDATA: 'C:\\Users\\ada\\AppData\\Roaming' };
    expect(resolveConfigDir({ platform: 'win32', env, homedir: 'C:\\Users\\ada' })).toBe(
      'C:\\Users\\ada\\AppData\\Roaming\\mcp-switchboard',
    );
  });

  it('falls back to <home>\\AppData\\Roaming on Windows without APPDATA', () => {
    expect(resolveConfigDir({ platform: 'win32', env: {}, homedir: 'C:\\Users\\ada' })).toBe(
      'C:\\Users\\ada\\AppData\\Roaming\\mcp-switchboard',
    );
  });

  it.each(['linux', 'darwin', 'win32'] as const)('lets MCP_SWITCHBOARD_CONFIG_DIR win on %s', (platform) => {
    const env = { [CONFIG_DIR_ENV]: '/tmp/elsewhere', XDG_CONFIG_HOME: '/xdg', APPDATA: 'C:\\AppData' };
    expect(resolveConfigDir({ platform, env, homedir: '/home/ada' })).toBe('/tmp/elsewhere');
  });

  it('ignores an empty MCP_SWITCHBOARD_CONFIG_DIR', () => {
    const dir = resolveConfigDir({ platform: 'linux', env: { [CONFIG_DIR_ENV]: '' }, homedir: '/home/ada' });
    expect(dir).toBe('/home/ada/.config/mcp-switchboard');
  });
});
