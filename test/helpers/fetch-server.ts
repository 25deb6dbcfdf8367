/** A fetch-style MCP handler (the SDK v2 `createMcpHandler`) served by node:http on 127.0.0.1. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { cleanups } from './cleanups';

export interface FetchHandler {
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
}

/** What a request to the served handler was, as it arrived. */
export interface ArrivedRequest {
  readonly method: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** Serves `handler` until the test ends; resolves with its URL (`/mcp`). `arrived` hears every request. */
export async function serveFetchHandler(
  handler: FetchHandler,
  arrived?: (request: ArrivedRequest) => void,
): Promise<string> {
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    arrived?.({ method: request.method!, headers: request.headers, body: body.toString('utf8') });
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    const answer = await handler.fetch(
      new Request(`http://${request.headers.host}${request.url}`, {
        method: request.method,
        headers,
        ...(body.length > 0 && { body }),
      }),
    );
    const answerHeaders: Record<string, string> = {};
    answer.headers.forEach((value, name) => (answerHeaders[name] = value));
    response.writeHead(answer.status, answerHeaders);
    // Streamed: an SSE answer (a listen stream) stays open until its client goes.
    if (answer.body) Readable.fromWeb(answer.body as WebReadableStream).pipe(response);
    else response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    await handler.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}
