/**
 * `serve … --trace-ui <port> [--trace-ui-host <host>]`: starts the trace UI's listener with the live viewer
 * page and says where it is on stderr (stdout may carry the protocol). Off loopback, a token is generated and
 * is part of the printed URL.
 */
import type { TraceUiSettings } from '../trace-args';
import { withLive } from '../../trace/viewer/page';
import { CliFailure } from '../errors';
import type { CliIo } from '../io';
import { urlHost } from '../http-listener';
import { isLoopbackHost, newToken } from './guard';
import { TraceUiServer, type TraceUiLimits } from './server';
import { emptyViewerPage } from '../viewer-page';

/** The listener `settings` ask for (none: undefined), its URL printed as `Trace UI: <url>` on stderr. */
export async function openTraceUi(
  settings: TraceUiSettings | undefined,
  io: CliIo,
  limits: Partial<TraceUiLimits> = {},
): Promise<TraceUiServer | undefined> {
  if (!settings) return undefined;
  const { port, host } = settings;
  const token = tokenFor(host);
  const page = withLive(await emptyViewerPage(), 'events');
  const server = await TraceUiServer.listen({ port, host, page, ...(token && { token }) }, limits).catch(
    (error: Error) => {
      throw new CliFailure(`The trace UI: ${error.message}`, [], { cause: error });
    },
  );
  io.err(`Trace UI: ${traceUiUrl(host, server.port, token)}`);
  return server;
}

/** The token a listener on `host` requires: none on loopback (the Host check guards it), a fresh one elsewhere. */
export function tokenFor(host: string): string | undefined {
  return isLoopbackHost(host) ? undefined : newToken();
}

/** The URL printed for a listener on `host`:`port` (an IPv6 address in brackets), with its token when it has one. */
export function traceUiUrl(host: string, port: number, token: string | undefined): string {
  return `http://${urlHost(host)}:${port}/${token ? `?token=${token}` : ''}`;
}
