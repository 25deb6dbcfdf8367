/**
 * Checks what a server emits on the stateless revision (2026-07-28) against that revision's official schema:
 * each answer against the result type of its method (or `InputRequiredResult`), each error against
 * `JSONRPCErrorResponse` (and the revision's own error shapes where the code has one), each notification
 * against `ServerNotification`.
 */
import type { ValidateFunction } from 'ajv';
import type { ExchangeReply } from '../../lib/core/exchange';
import { tap } from 'rxjs';
import type { Transport } from '../../lib/core/transport';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId } from '../../lib/jsonrpc/types';
import { META } from '../../lib/protocol/modern';
import type { Server } from '../../lib/server/server';
import { createAjv, officialSchema } from './ajv';

const RESULT_TYPES: Readonly<Record<string, string>> = {
  'server/discover': 'DiscoverResult',
  'tools/list': 'ListToolsResult',
  'tools/call': 'CallToolResult',
  'resources/list': 'ListResourcesResult',
  'resources/templates/list': 'ListResourceTemplatesResult',
  'resources/read': 'ReadResourceResult',
  'prompts/list': 'ListPromptsResult',
  'prompts/get': 'GetPromptResult',
  'completion/complete': 'CompleteResult',
  'subscriptions/listen': 'SubscriptionsListenResult',
};

const ERROR_TYPES: Readonly<Record<number, string>> = {
  [-32020]: 'HeaderMismatchError',
  [-32021]: 'MissingRequiredClientCapabilityError',
  [-32022]: 'UnsupportedProtocolVersionError',
};

const SCHEMA_ID = 'mcp-2026-07-28';

export interface ModernWireValidator {
  /** The problems of `message`, sent in answer to (or during) a request of `method`; empty when it is valid. */
  check(method: string, message: JsonRpcResponse | JsonRpcNotification): string[];
}

export function modernWireValidator(): ModernWireValidator {
  const ajv = createAjv('2026-07-28');
  ajv.addSchema(officialSchema('2026-07-28'), SCHEMA_ID);
  const compiled = new Map<string, ValidateFunction>();
  const validatorOf = (type: string) => {
    let validate = compiled.get(type);
    if (!validate) {
      validate = ajv.getSchema(`${SCHEMA_ID}#/$defs/${type}`);
      if (!validate) throw new Error(`The 2026-07-28 schema has no ${type}`);
      compiled.set(type, validate);
    }
    return validate;
  };
  const problems = (type: string, value: unknown, what: string): string[] => {
    const validate = validatorOf(type);
    if (validate(value)) return [];
    return [
      `${what} is not a valid ${type}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value).slice(0, 300)}`,
    ];
  };
  return {
    check(method, message) {
      if ('method' in message) return problems('ServerNotification', message, `a notification during ${method}`);
      if ('error' in message) {
        const specific = ERROR_TYPES[message.error.code];
        return [
          ...problems('JSONRPCErrorResponse', message, `the error answering ${method}`),
          ...(specific ? problems(specific, message, `the error answering ${method}`) : []),
        ];
      }
      const result = message.result as { resultType?: unknown };
      // The tasks extension's results are not in the core schema: a created task is a plain Result there.
      const type =
        result.resultType === 'input_required'
          ? 'InputRequiredResult'
          : result.resultType === 'task'
            ? 'Result'
            : (RESULT_TYPES[method] ?? 'Result');
      return [
        ...problems('JSONRPCResultResponse', message, `the answer to ${method}`),
        ...problems(type, result, `the result of ${method}`),
      ];
    },
  };
}

/**
 * Checks every message of every stateless request `server` serves, whatever way it came: HTTP POSTs
 * (`server.serveModern`) and requests on duplex connections (stdio, in memory: the transports given to
 * `server.connect`, where the messages of requests carrying the 2026-07-28 envelope are checked). The
 * returned list collects the problems (assert it is empty).
 */
export function validateEveryModernExchange(server: Server): string[] {
  const found: string[] = [];
  const validator = modernWireValidator();
  const serve = server.serveModern.bind(server);
  server.serveModern = (request, reply, headers) => {
    const method = request.request.method;
    const checked: ExchangeReply = {
      notify: (message) => {
        found.push(...validator.check(method, message));
        return reply.notify(message);
      },
      answer: (message) => {
        found.push(...validator.check(method, message));
        return reply.answer(message);
      },
      onAbort: (hook) => reply.onAbort(hook),
    };
    serve(request, checked, headers);
  };
  const connect = server.connect.bind(server);
  server.connect = (transport, options) => connect(checkedTransport(transport, validator, found), options);
  return found;
}

/** `transport`, with what goes out for its stateless requests checked (the requests' methods read on their way in). */
function checkedTransport(transport: Transport, validator: ModernWireValidator, found: string[]): Transport {
  const modern = new Map<RequestId, string>();
  const messages = transport.messages.pipe(
    tap((frame) => {
      const request = frame as Partial<JsonRpcRequest>;
      const meta = request.params?._meta as Record<string, unknown> | undefined;
      if (typeof request.method === 'string' && request.id !== undefined && meta?.[META.protocolVersion] !== undefined)
        modern.set(request.id, request.method);
    }),
  );
  const send: Transport['send'] = (message, options) => {
    if (!Array.isArray(message)) {
      const single = message as JsonRpcResponse | JsonRpcNotification;
      const id = 'method' in single ? options?.relatedRequestId : single.id;
      const method = id === undefined ? undefined : modern.get(id);
      if (method !== undefined) {
        found.push(...validator.check(method, single));
        if (!('method' in single)) modern.delete(id!);
      }
    }
    return transport.send(message, options);
  };
  return new Proxy(transport, {
    get(target, key) {
      if (key === 'messages') return messages;
      if (key === 'send') return send;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
