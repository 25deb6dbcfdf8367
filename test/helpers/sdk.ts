/** Scaffolding shared by the interop tests against the official SDK (our client's side: ./interop-our-client.ts). */
import type { Server, ServerConnection } from '../../lib/server/server';
import { fromSdkTransport, type SdkAdapterOptions, type SdkTransportLike } from '../../transports/sdk-adapter';
import { cleanups } from './cleanups';
import { validateEmitted } from './pair';

export { cleanups } from './cleanups';

/**
 * Our server over one end of an SDK transport pair, everything it emits schema-checked; `sent` records what
 * it sent, `received` what it was sent.
 */
export function serveOverSdkTransport(
  server: Server,
  ourSide: SdkTransportLike,
  adapter?: SdkAdapterOptions,
): { connection: ServerConnection; sent: Record<string, any>[]; received: Record<string, any>[] } {
  const connection = server.connect(fromSdkTransport(ourSide, adapter));
  validateEmitted(connection);
  const sent: Record<string, any>[] = [];
  const received: Record<string, any>[] = [];
  connection.trace$.subscribe((event) => {
    if (event.message === undefined || event.kind === 'ignored') return;
    (event.direction === 'out' ? sent : received).push(event.message as Record<string, any>);
  });
  return { connection, sent, received };
}

/** An SDK client of either major version, as far as `watchSdkClient` needs it. */
interface WatchedSdkClient {
  onerror?: ((error: Error) => void) | undefined;
  close(): Promise<void>;
}

/** Collects what an SDK client reports through `onerror`; the client and `server` are closed after the test. */
export function watchSdkClient(sdkClient: WatchedSdkClient, server: Server): Error[] {
  const errors: Error[] = [];
  sdkClient.onerror = (error) => errors.push(error);
  cleanups.push(
    () => server.close(),
    () => sdkClient.close(),
  );
  return errors;
}
