/** Runs in a worker thread: serves an `echo` tool over the MessagePort passed in `workerData.port`. */
import { workerData, type MessagePort } from 'node:worker_threads';
import { Server } from '../../lib/server/server';
import { MessagePortTransport } from '../../transports/message-port';
import { serverWith, tool } from './fixtures';

const { port } = workerData as { port: MessagePort };
const definition = serverWith([tool('echo', (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }))]);
new Server(definition).connect(new MessagePortTransport(port));
