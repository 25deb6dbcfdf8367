/**
 * Opens a URL in the user's browser, as well as the platform allows: `open` on macOS, the URL protocol
 * handler on Windows (rundll32, which takes the URL as one argument: `cmd /c start` would read its `&` as
 * command separators), `xdg-open` elsewhere. Best effort: the URL is printed anyway, so a missing opener, a
 * headless machine or an opener that fails is not an error. Only `http:` and `https:` URLs are opened: the
 * openers also run files and programs (`file:`, custom schemes), which an authorization server must never
 * reach through us (CVE-2025-6514).
 */
import { spawn } from 'node:child_process';

/** The command that opens `url` on `platform`. */
export function browserCommand(url: string, platform: NodeJS.Platform = process.platform): readonly string[] {
  if (platform === 'darwin') return ['open', url];
  if (platform === 'win32') return ['rundll32', 'url.dll,FileProtocolHandler', url];
  return ['xdg-open', url];
}

/**
 * Starts the opener and leaves it: detached, its output ignored, any failure (even to start) swallowed.
 * False, and no opener started, when `url` is not an `http:` or `https:` URL.
 */
export function openBrowser(url: string): boolean {
  if (!isWebUrl(url)) return false;
  const [command, ...args] = browserCommand(url);
  try {
    const opener = spawn(command!, args, { detached: true, stdio: 'ignore', windowsHide: true });
    opener.once('error', () => undefined); // no such command: the printed URL is the way
    opener.unref();
  } catch {
    // spawn throws synchronously for some bad environments: the printed URL is the way
  }
  return true;
}

function isWebUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}
