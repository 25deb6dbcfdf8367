/**
 * The viewer's entry (bundled into the page): the app on `#app`, with the trace embedded in `#trace-data`, or
 * live from the server named in `#live-config` (the page `switchboard serve … --trace-ui` serves).
 */
import { ViewerApp } from './app';
import { startLive } from './live';

const app = new ViewerApp(document.getElementById('app')!);
const embedded = document.getElementById('trace-data');
const live = document.getElementById('live-config');
if (live?.textContent) startLive(app, (JSON.parse(live.textContent) as { events: string }).events, location);
else if (embedded?.textContent?.trim()) app.load(embedded.textContent, embedded.dataset.source ?? 'trace');
(window as unknown as { switchboardViewer: ViewerApp }).switchboardViewer = app;
