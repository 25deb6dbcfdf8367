/**
 * The official SDK client as the interop cases drive it: one set of calls, in SDK v2's shapes, for the SDK
 * v1 client (`@modelcontextprotocol/sdk`, handshake era only) and the SDK v2 client (`@modelcontextprotocol/
 * client`, both eras). Only what differs between the two is adapted: v1's `callTool` takes a result schema
 * before its options, and v1 registers handlers by schema where v2 names the method.
 */
import {
  Client as SdkV2Client,
  ProtocolError as SdkV2ProtocolError,
  UrlElicitationRequiredError as SdkV2UrlElicitationRequiredError,
  type CallToolResult,
  type CompleteResult,
  type GetPromptResult,
  type Implementation,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ListToolsResult,
  type ReadResourceResult,
  type ServerCapabilities,
} from '@modelcontextprotocol/client';
import type { Client as SdkV1Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError as SdkV1McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  UrlElicitationRequiredError as SdkV1UrlElicitationRequiredError,
} from '@modelcontextprotocol/sdk/types.js';

/** Which official SDK plays the peer. */
export type SdkMajor = 'v1' | 'v2';

/** The notifications a case listens for on the SDK client. */
export type PeerNotification = keyof typeof V1_NOTIFICATIONS;
/** The requests our server sends the SDK client (in the stateless era, as input_required rounds). */
export type PeerRequest = keyof typeof V1_REQUESTS;

const V1_NOTIFICATIONS = {
  'notifications/tools/list_changed': ToolListChangedNotificationSchema,
  'notifications/resources/list_changed': ResourceListChangedNotificationSchema,
  'notifications/prompts/list_changed': PromptListChangedNotificationSchema,
  'notifications/resources/updated': ResourceUpdatedNotificationSchema,
  'notifications/message': LoggingMessageNotificationSchema,
  'notifications/elicitation/complete': ElicitationCompleteNotificationSchema,
};

const V1_REQUESTS = {
  'roots/list': ListRootsRequestSchema,
  'sampling/createMessage': CreateMessageRequestSchema,
  'elicitation/create': ElicitRequestSchema,
};

type Params = Record<string, any>;
type Progress = { progress: number; total?: number; message?: string };

export interface PeerCallOptions {
  readonly onprogress?: (progress: Progress) => void;
  readonly signal?: AbortSignal;
}

/** The SDK client of one interop run; `raw` is the SDK's own object, for what only one SDK has. */
export interface SdkClientPeer {
  readonly major: SdkMajor;
  readonly raw: SdkV1Client | SdkV2Client;
  /** The SDK's error class for a JSON-RPC error answer (v1 `McpError`, v2 `ProtocolError`). */
  readonly ProtocolError: abstract new (...args: any[]) => Error & { code: number; data?: unknown };
  /** The SDK's error for a -32042 answer, with its `elicitations`. */
  readonly UrlElicitationRequiredError: abstract new (...args: any[]) => Error & { elicitations: unknown[] };
  listTools(params?: { cursor?: string }): Promise<ListToolsResult>;
  callTool(params: Params, options?: PeerCallOptions): Promise<CallToolResult>;
  listResources(): Promise<ListResourcesResult>;
  listResourceTemplates(): Promise<ListResourceTemplatesResult>;
  readResource(params: { uri: string }): Promise<ReadResourceResult>;
  subscribeResource(params: { uri: string }): Promise<unknown>;
  unsubscribeResource(params: { uri: string }): Promise<unknown>;
  listPrompts(): Promise<ListPromptsResult>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<GetPromptResult>;
  complete(params: Params): Promise<CompleteResult>;
  setLoggingLevel(level: 'debug' | 'info' | 'warning' | 'error'): Promise<unknown>;
  ping(): Promise<unknown>;
  sendRootsListChanged(): Promise<void>;
  getServerCapabilities(): ServerCapabilities | undefined;
  getServerVersion(): Implementation | undefined;
  getInstructions(): string | undefined;
  /** Replaces the handler of `method`'s notifications; the handler gets their params. */
  onNotification(method: PeerNotification, handler: (params: any) => void): void;
  /** Answers `method` from the server with `handler(params)`. */
  onRequest(method: PeerRequest, handler: (params: any) => unknown): void;
  onClose(handler: () => void): void;
  close(): Promise<void>;
}

/** The calls both SDK clients make the same way. */
function sharedCalls(raw: any) {
  return {
    raw,
    listTools: (params?: { cursor?: string }) => raw.listTools(params),
    listResources: () => raw.listResources(),
    listResourceTemplates: () => raw.listResourceTemplates(),
    readResource: (params: { uri: string }) => raw.readResource(params),
    subscribeResource: (params: { uri: string }) => raw.subscribeResource(params),
    unsubscribeResource: (params: { uri: string }) => raw.unsubscribeResource(params),
    listPrompts: () => raw.listPrompts(),
    getPrompt: (params: { name: string; arguments?: Record<string, string> }) => raw.getPrompt(params),
    complete: (params: Params) => raw.complete(params),
    setLoggingLevel: (level: string) => raw.setLoggingLevel(level),
    ping: () => raw.ping(),
    sendRootsListChanged: () => raw.sendRootsListChanged(),
    getServerCapabilities: () => raw.getServerCapabilities(),
    getServerVersion: () => raw.getServerVersion(),
    getInstructions: () => raw.getInstructions(),
    onClose: (handler: () => void) => (raw.onclose = handler),
    close: () => raw.close(),
  };
}

export function sdkV1Peer(raw: SdkV1Client): SdkClientPeer {
  return {
    ...sharedCalls(raw),
    major: 'v1',
    ProtocolError: SdkV1McpError,
    UrlElicitationRequiredError: SdkV1UrlElicitationRequiredError,
    callTool: (params, options) => raw.callTool(params as any, undefined, options) as Promise<CallToolResult>,
    onNotification: (method, handler) =>
      raw.setNotificationHandler(V1_NOTIFICATIONS[method], (notification: any) => handler(notification.params)),
    onRequest: (method, handler) =>
      raw.setRequestHandler(V1_REQUESTS[method], (request: any) => handler(request.params) as any),
  };
}

/** Where a 2026-07-28 server names itself in every result's `_meta`. */
export const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';

/**
 * `result` without the server identity the stateless revision stamps on every result, so results compare the
 * same in both eras (the stateless cases check the stamp itself on `raw`).
 */
function unstamped<T>(result: T): T {
  const { _meta, ...rest } = result as { _meta?: Record<string, unknown> };
  if (_meta === undefined || !(SERVER_INFO_KEY in _meta)) return result;
  const { [SERVER_INFO_KEY]: _stamp, ...meta } = _meta;
  return (Object.keys(meta).length === 0 ? rest : { ...rest, _meta: meta }) as T;
}

export function sdkV2Peer(raw: SdkV2Client): SdkClientPeer {
  const shared = sharedCalls(raw);
  return {
    ...shared,
    major: 'v2',
    ProtocolError: SdkV2ProtocolError,
    UrlElicitationRequiredError: SdkV2UrlElicitationRequiredError,
    listTools: (params) => raw.listTools(params).then(unstamped),
    listResources: () => raw.listResources().then(unstamped),
    listResourceTemplates: () => raw.listResourceTemplates().then(unstamped),
    readResource: (params) => raw.readResource(params).then(unstamped),
    listPrompts: () => raw.listPrompts().then(unstamped),
    getPrompt: (params) => raw.getPrompt(params).then(unstamped),
    complete: (params) => raw.complete(params as any).then(unstamped),
    callTool: (params, options) => raw.callTool(params as any, options).then(unstamped) as Promise<CallToolResult>,
    onNotification: (method, handler) =>
      raw.setNotificationHandler(method, (notification: any) => handler(notification.params)),
    onRequest: (method, handler) => raw.setRequestHandler(method, (request: any) => handler(request.params) as any),
  };
}
