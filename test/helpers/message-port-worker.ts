/** Runs in a worker thread: serves an `echo` tool over the MessagePort passed in `workerData.port`. */
import { workerData, type MessagePort } from 'node:worker_threads';
import { Server } from '../../lib/server/server';
import { MessagePortTransport } from '../../transports/message-port';
import { serverWith, tool } from './fixtures';
import { json } from './content';

const { port } = workerData as { port: MessagePort };
const definition = serverWith([tool('echo', json)]);
new Server(definition).connect(new MessagePortTransport(port));
