/** The viewer's entry (bundled into the page): the app on `#app`, with the trace embedded in `#trace-data`. */
import { ViewerApp } from './app';

const app = new ViewerApp(document.getElementById('app')!);
const embedded = document.getElementById('trace-data');
if (embedded?.textContent?.trim()) app.load(embedded.textContent, embedded.dataset.source ?? 'trace');
(window as unknown as { switchboardViewer: ViewerApp }).switchboardViewer = app;
