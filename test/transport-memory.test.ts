import { createMemoryPair } from '../transports/memory';
import { runTransportSuite } from './helpers/transport-suite';

runTransportSuite('memory, by reference', {
  connect: async () => {
    const [left, right] = createMemoryPair();
    return { left, right };
  },
});

runTransportSuite('memory, json copies with a frame limit', {
  connect: async () => {
    const [left, right] = createMemoryPair({ codec: 'json', maxMessageBytes: 4 * 1024 * 1024 });
    return { left, right };
  },
  maxMessageBytes: 4 * 1024 * 1024,
  oversize: 'frame-error',
});
