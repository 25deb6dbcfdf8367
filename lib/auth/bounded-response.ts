/**
 * Answers read from servers we do not control (authorization servers, metadata, key sets, introspection),
 * bounded in size: what reads the body fails with a clear error instead of buffering whatever a hostile or
 * broken server sends. Used by the OAuth client and the resource server alike.
 */

/**
 * `response` whose body fails with `tooLarge()` once more than `limit` bytes arrive (or at once when its
 * `Content-Length` says so).
 */
export function boundedResponse(response: Response, limit: number, tooLarge: () => Error): Response {
  const declared = Number(response.headers.get('content-length'));
  if (declared > limit) {
    void response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const body = response.body;
  if (body === null) return response;
  let received = 0;
  const limited = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        received += chunk.byteLength;
        if (received > limit) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
  const copy = new Response(limited, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  // oauth4webapi reads the URL a response came from in some checks; a Response made here has none.
  Object.defineProperty(copy, 'url', { value: response.url });
  return copy;
}
