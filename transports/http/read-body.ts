/** Reading POST bodies on the server side, bounded in size. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode } from '../../lib/jsonrpc/errors';
import { refuseRequest } from './request-guard';

/** The body as text, or 'too-large' as soon as it exceeds `maxBytes` (the rest is drained unread). */
export function readBody(request: IncomingMessage, maxBytes: number): Promise<string | 'too-large'> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    request.resume();
    return Promise.resolve('too-large');
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let overflowed = false;
    request.on('data', (chunk: Buffer) => {
      if (overflowed) return;
      size += chunk.length;
      if (size > maxBytes) {
        overflowed = true;
        chunks.length = 0;
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (overflowed) return;
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    });
    request.on('error', reject);
  });
}

/**
 * The body parsed as JSON; undefined once the request was refused for it (413 over `maxBytes`, 400 with a
 * JSON-RPC parse error when it is not JSON).
 */
export async function readJsonBody(
  request: IncomingMessage,
  response: ServerResponse,
  maxBytes: number,
): Promise<unknown> {
  const text = await readBody(request, maxBytes);
  if (text === 'too-large') return refuseRequest(response, 413, `Payload Too Large: the limit is ${maxBytes} bytes`);
  try {
    return JSON.parse(text);
  } catch (error) {
    return refuseRequest(response, 400, `Parse error: ${(error as Error).message}`, ErrorCode.ParseError);
  }
}
