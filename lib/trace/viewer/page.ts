/**
 * The viewer page as one HTML string: its script and styles inlined, nothing fetched (its Content Security
 * Policy forbids it), and a trace embedded as NDJSON in a non-executed script element. Pure strings, no Node:
 * the build (scripts/build-viewer.ts) and `trace view` (lib/cli/trace-view.ts) share it.
 */

/** Where `withTrace` puts the trace: an empty page (no trace yet) keeps this marker. */
const TRACE_SLOT = '<script type="application/x-ndjson" id="trace-data"></script>';

/** The page fetches nothing: everything is inline. A live page may also read its server's event stream. */
const POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";
/** The policy of a live page (`withLive`), for the HTTP header that serves it too. */
export const LIVE_PAGE_POLICY = `${POLICY}; connect-src 'self'`;

/** The page around the bundled viewer `script` and `css`; `withTrace` adds a trace to it. */
export function viewerPage(script: string, css: string): string {
  if (/<\/script/i.test(script) || /<\/style/i.test(css)) throw new Error('The viewer bundle closes its own element');
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${POLICY}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>switchboard trace</title>',
    `<style>${css}</style>`,
    '</head>',
    '<body>',
    '<div id="app"></div>',
    TRACE_SLOT,
    `<script>${script}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/**
 * `page` with `ndjson` embedded, named `source` in the page. Every `<` becomes `\u003c` (JSON reads it back
 * as the same character), so no trace text can close the element or open markup.
 */
export function withTrace(page: string, ndjson: string, source: string): string {
  const at = page.indexOf(TRACE_SLOT);
  if (at === -1) throw new Error('The viewer page has no slot for a trace');
  const element =
    `<script type="application/x-ndjson" id="trace-data" data-source="${escapeAttribute(source)}">\n` +
    `${ndjson.replace(/</g, '\\u003c')}\n</script>`;
  return page.slice(0, at) + element + page.slice(at + TRACE_SLOT.length);
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * `page` as the live view: it reads its trace from the Server-Sent Events at `eventsPath` (relative to the
 * page, the page's own `?token=` added by the page), and its policy lets it connect to its own origin only.
 */
export function withLive(page: string, eventsPath: string): string {
  const at = page.indexOf(TRACE_SLOT);
  const policy = `content="${POLICY}"`;
  if (at === -1 || !page.includes(policy)) throw new Error('The viewer page has no slot for a live trace');
  const config = JSON.stringify({ events: eventsPath }).replace(/</g, '\\u003c');
  const element = `<script type="application/json" id="live-config">${config}</script>\n`;
  return (page.slice(0, at) + element + page.slice(at)).replace(policy, `content="${LIVE_PAGE_POLICY}"`);
}
