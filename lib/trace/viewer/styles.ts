/** The page's styles (inlined into the page at build time). */
export const VIEWER_CSS = `
:root { color-scheme: light; font: 13px/1.4 system-ui, sans-serif; --lane: 240px; --row: 24px; }
* { box-sizing: border-box; }
body { margin: 0; color: #1b1f24; background: #fff; }
#app { height: 100vh; display: flex; flex-direction: column; }
html.dropping body { outline: 4px dashed #3b6fd8; outline-offset: -4px; }
header { padding: 6px 10px; border-bottom: 1px solid #d0d7de; background: #f6f8fa; }
h1 { font-size: 15px; margin: 0 12px 0 0; display: inline-block; }
.controls { display: inline-flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.controls input[type=number] { width: 80px; }
.controls input[type=search] { width: 180px; }
#summary { margin: 4px 0 0; color: #57606a; }
#latency table { border-collapse: collapse; margin: 4px 16px 4px 0; display: inline-table; vertical-align: top; }
#latency caption { text-align: left; font-weight: 600; }
#latency th, #latency td { border: 1px solid #d0d7de; padding: 1px 6px; text-align: right; }
#latency th[scope=row], #latency thead th:first-child { text-align: left; }
main { flex: 1; display: flex; min-height: 0; }
.rows { flex: 1; overflow: auto; position: relative; outline: none; }
.lanes { position: sticky; top: 0; z-index: 2; display: flex; background: #eaeef2; border-bottom: 1px solid #d0d7de; }
.time-head { width: 110px; flex: none; padding: 4px 8px; color: #57606a; }
.lane-head { width: var(--lane); flex: none; padding: 4px 8px; font-weight: 600; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; border-left: 3px solid #8c959f; }
.lane-head.client { border-left-color: #3b6fd8; }
.lane-head.server { border-left-color: #1a7f37; }
.lane-head.upstream { border-left-color: #8250df; }
.spacer { position: relative; }
.row { position: absolute; left: 0; right: 0; height: var(--row); white-space: nowrap; cursor: pointer;
  background-image: repeating-linear-gradient(to right, transparent 0, transparent calc(var(--lane) - 1px),
    #eaeef2 calc(var(--lane) - 1px), #eaeef2 var(--lane));
  background-position: 110px 0; }
.row:hover { background-color: #f6f8fa; }
.row.selected { background-color: #ddf4ff; }
.row.related { background-color: #fff8c5; }
.time { position: absolute; left: 0; width: 110px; padding: 3px 8px; color: #57606a; font-variant-numeric: tabular-nums; }
.cell { position: absolute; top: 2px; max-width: calc(var(--lane) * 2 - 16px); overflow: hidden; text-overflow: ellipsis;
  padding: 1px 6px; border-radius: 3px; border: 1px solid #d0d7de; background: #fff; }
.cell.out { border-left: 4px solid currentColor; }
.cell.in { border-right: 4px solid currentColor; }
.request .cell { color: #0a3069; }
.result .cell { color: #116329; }
.notification .cell { color: #6e7781; }
.s2c .cell { color: #8250df; }
.lifecycle .cell { color: #953800; background: #fff8f0; border-style: dashed; }
.ignored .cell, .invalid .cell { color: #9a6700; }
.error .cell, .row.error .cell { color: #a40e26; }
.cancelled .cell { text-decoration: line-through; }
.error-mark { font-weight: 600; color: #a40e26; }
.cause-link { position: absolute; top: 11px; height: 0; border-top: 2px dashed #8250df; z-index: 1; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
#detail { width: 380px; flex: none; overflow: auto; border-left: 1px solid #d0d7de; padding: 8px 12px; background: #fbfcfd; }
#detail h2 { font-size: 14px; margin: 0 0 8px; word-break: break-word; }
#detail dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 0 0 8px; }
#detail dt { color: #57606a; }
#detail dd { margin: 0; word-break: break-word; }
#detail pre { background: #f6f8fa; padding: 8px; border: 1px solid #d0d7de; overflow: auto; font-size: 12px; }
.hint { color: #57606a; }
.waterfall { margin: 0 0 8px; }
#detail h3 { font-size: 13px; margin: 8px 0 4px; }
.wf-scale { margin: 0 0 4px; color: #57606a; font-variant-numeric: tabular-nums; }
.wf-bars { list-style: none; margin: 0; padding: 0; }
.wf-item { margin: 0 0 6px; }
.wf-item > :not(.wf-track) { margin-left: calc(var(--depth, 0) * 12px); }
.wf-item .wf-name { font: inherit; text-align: left; word-break: break-word; }
button.wf-name, .wf-parent { padding: 0 4px; border: 1px solid #d0d7de; border-radius: 3px; background: #fff; cursor: pointer; }
.wf-parent { margin: 0 0 4px; font: inherit; }
.wf-error { margin: 2px 0; color: #a40e26; font-weight: 600; }
.wf-track { position: relative; height: 12px; margin: 2px 0; background: #f0f3f6; border-radius: 2px; }
.wf-bar { position: absolute; top: 2px; height: 8px; min-width: 2px; background: #3b6fd8; border-radius: 2px; }
.wf-item.error .wf-bar { background: #cf222e; }
.wf-item.cancelled .wf-bar, .wf-item.timed-out .wf-bar { background: #9a6700; }
.wf-bar.open { background: repeating-linear-gradient(to right, #8c959f 0, #8c959f 6px, transparent 6px, transparent 9px);
  border-radius: 2px 0 0 2px; }
.wf-tick { position: absolute; top: 0; width: 2px; height: 12px; margin-left: -1px; background: #1a7f37; }
.wf-tick.cancelled, .wf-tick.timed-out { width: 4px; margin-left: -2px; background: #a40e26; }
.wf-marks { list-style: none; margin: 0; padding: 0 0 0 4px; color: #57606a; font-variant-numeric: tabular-nums; }
.wf-mark-text.cancelled, .wf-mark-text.timed-out { color: #a40e26; }
`;
