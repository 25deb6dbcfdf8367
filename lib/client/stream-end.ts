/**
 * How a client's streams end with its connection. Closed with `close()` (quit kind `local-close`), the owner
 * ended them: they complete. Ended any other way (the server exited, the peer closed, the transport failed,
 * a reconnect policy gave up), the updates stop without anyone asking: they error with a
 * `ConnectionClosedError` whose `quitReason` says why, so a long-running subscriber can tell the two apart
 * and recover. `trace$` is the exception: the death is one of its events (the lifecycle change carries the
 * quit reason), so it completes.
 */
import { Observable } from 'rxjs';
import { ConnectionClosedError, type ClosedConnectionReason } from '../jsonrpc/errors';

/**
 * The error a stream named `what` ends with when its connection ended for `reason`; undefined when the
 * client was closed with `close()` (the stream completes).
 */
export function streamEndError(
  what: string,
  reason: ClosedConnectionReason,
  cause?: unknown,
): ConnectionClosedError | undefined {
  if (reason.kind === 'local-close') return undefined;
  return new ConnectionClosedError(`${what} ended: the connection closed (${reason.message})`, {
    cause: cause ?? (reason as { error?: unknown }).error,
    quitReason: reason,
  });
}

/**
 * `source` (a stream that completes when its connection has closed), ending as `streamEndError` says:
 * `reason` is asked once `source` completes, when the connection's quit reason is known.
 */
export function endingWithConnection<T>(
  source: Observable<T>,
  what: string,
  reason: () => ClosedConnectionReason | undefined,
): Observable<T> {
  // By hand rather than `concat(source, defer(...))`: one hop per value on the hot path of notifications.
  return new Observable<T>((subscriber) =>
    source.subscribe({
      next: (value) => subscriber.next(value),
      error: (error: unknown) => subscriber.error(error),
      complete: () => {
        const ended = reason();
        const error = ended && streamEndError(what, ended);
        if (error) subscriber.error(error);
        else subscriber.complete();
      },
    }),
  );
}
