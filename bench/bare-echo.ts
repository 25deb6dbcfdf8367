/**
 * The floor of the HTTP rows: a node:http listener that parses a JSON-RPC `tools/call` of `echo` and answers
 * `{ jsonrpc, id, result }` with the text, no MCP at all. Served in a child by bench/http.ts and over an
 * in-memory socket pair by bench/cost-split.ts.
 */
import type http from 'node:http';

export const bareEchoListener: http.RequestListener = (request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: message.id,
      result: { content: [{ type: 'text', text: message.params.arguments.text }] },
    });
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
};
