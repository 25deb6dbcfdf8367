/**
 * `startAuthorizationServer`: a small OAuth 2.1 authorization server on 127.0.0.1 for the auth tests,
 * built on node:http and `jose`. It approves every authorization request at once, logs every request it
 * answers in `events`, and can sign tokens directly for resource-server tests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JSONWebKeySet } from 'jose';
import { handleAuthorize } from './authorize';
import { ClientRegistry, type RegisteredClient } from './clients';
import type { RequestNotes, ServerContext } from './context';
import { GrantBook } from './grants';
import { OAuthError, readJson, sendError, sendJson } from './http-io';
import { SigningKeys } from './keys';
import { metadataDocument, metadataPaths } from './metadata';
import { handleIntrospect, handleRevoke, handleToken } from './token-endpoint';
import type {
  AuthorizationServerEvent,
  AuthorizationServerOptions,
  ClientAuthMethod,
  ClientRegistration,
  Endpoint,
  GrantType,
  IssueTokenOptions,
} from './types';

export interface AuthorizationServer {
  /** `http://127.0.0.1:<port><issuerPath>` */
  readonly issuer: string;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** An endpoint's URL under the issuer: `url('/token')`. */
  url(path: string): string;
  /** The metadata document as served at the RFC 8414 location (whatever `metadataAt` says). */
  readonly metadata: Record<string, unknown>;
  /** The well-known URLs where the metadata is actually served. */
  readonly metadataUrls: readonly string[];
  /** The published public keys. */
  jwks(): JSONWebKeySet;
  /** Every request answered, in order. */
  readonly events: AuthorizationServerEvent[];
  /** Signs an access token as `/token` would, without a client flow. */
  issueToken(options?: IssueTokenOptions): Promise<string>;
  /** Registers a client after start. */
  addClient(registration: ClientRegistration): RegisteredClient;
  /** Revokes a refresh token or an access token (introspection then answers `active: false`). */
  revoke(token: string): void;
  /** A new signing key; the previous one stays published unless `retirePrevious`. */
  rotateKeys(options?: { retirePrevious?: boolean }): Promise<void>;
  /** Stops listening and ends every connection. */
  close(): Promise<void>;
}

const DEFAULT_GRANT_TYPES: readonly GrantType[] = ['authorization_code', 'refresh_token', 'client_credentials'];
const DEFAULT_AUTH_METHODS: readonly ClientAuthMethod[] = ['none', 'client_secret_basic', 'client_secret_post'];

type Handler = (
  context: ServerContext,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  notes: RequestNotes,
) => Promise<void>;
interface Route {
  readonly endpoint: Endpoint;
  readonly method: 'GET' | 'POST';
  readonly handle: Handler;
}

function routesOf(context: ServerContext, issuerPath: string): Map<string, Route> {
  const routes = new Map<string, Route>();
  for (const [path, flavour] of metadataPaths(
    issuerPath,
    context.options.metadataAt ?? ['oauth-authorization-server'],
  )) {
    routes.set(path, {
      endpoint: 'metadata',
      method: 'GET',
      handle: async (_c, _q, response) =>
        sendJson(response, 200, metadataDocument(metadataInput(context, issuerPath), context.options, flavour)),
    });
  }
  routes.set(`${issuerPath}/authorize`, { endpoint: 'authorize', method: 'GET', handle: handleAuthorize });
  routes.set(`${issuerPath}/token`, { endpoint: 'token', method: 'POST', handle: handleToken });
  routes.set(`${issuerPath}/introspect`, { endpoint: 'introspect', method: 'POST', handle: handleIntrospect });
  routes.set(`${issuerPath}/revoke`, { endpoint: 'revoke', method: 'POST', handle: handleRevoke });
  routes.set(`${issuerPath}/jwks`, {
    endpoint: 'jwks',
    method: 'GET',
    handle: async (c, _q, response) => sendJson(response, 200, c.keys.jwks()),
  });
  if (context.options.dynamicRegistration !== false) {
    routes.set(`${issuerPath}/register`, {
      endpoint: 'register',
      method: 'POST',
      handle: async (c, request, response, notes) => {
        const registered = c.registry.register(await readJson(request));
        notes.clientId = registered.client_id as string;
        sendJson(response, 201, registered);
      },
    });
  }
  return routes;
}

function metadataInput(context: ServerContext, issuerPath: string) {
  return {
    issuer: context.issuer,
    issuerPath,
    grantTypes: context.grantTypes,
    authMethods: context.clientAuth.supportedMethods,
    signingAlgorithm: context.keys.algorithm,
  };
}

function normalisedIssuerPath(path: string | undefined): string {
  if (!path || path === '/') return '';
  return `/${path.replace(/^\/+|\/+$/g, '')}`;
}

export async function startAuthorizationServer(options: AuthorizationServerOptions = {}): Promise<AuthorizationServer> {
  const issuerPath = normalisedIssuerPath(options.issuerPath);
  const keys = await SigningKeys.create(options.signingAlgorithm ?? 'ES256');
  const events: AuthorizationServerEvent[] = [];
  let context: ServerContext | undefined;
  let routes = new Map<string, Route>();

  const server = http.createServer((request, response) => {
    const path = new URL(request.url!, 'http://127.0.0.1').pathname;
    const route = routes.get(path);
    const notes: RequestNotes = {};
    let error: string | undefined;
    const answer = async () => {
      if (!route) throw new OAuthError('not_found', `no endpoint at ${path}`, 404);
      if (request.method !== route.method)
        throw new OAuthError('invalid_request', `${route.endpoint} takes ${route.method}`, 405);
      await route.handle(context!, request, response, notes);
    };
    answer()
      .catch((failure: unknown) => {
        const oauthError =
          failure instanceof OAuthError ? failure : new OAuthError('server_error', String(failure), 500);
        error = oauthError.error;
        if (!response.headersSent) sendError(response, oauthError);
      })
      .finally(() => {
        events.push(
          clean({
            endpoint: route?.endpoint ?? 'unknown',
            method: request.method!,
            path: request.url!,
            status: response.statusCode,
            ...notes,
            error: error ?? notes.error,
          }),
        );
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${origin}${issuerPath}`;
  const now = options.now ?? Date.now;
  const grantTypes = options.grantTypes ?? DEFAULT_GRANT_TYPES;
  const authMethods = options.tokenEndpointAuthMethods ?? DEFAULT_AUTH_METHODS;
  const registry = new ClientRegistry(options, authMethods);
  const grants = new GrantBook({
    issuer,
    keys,
    now,
    accessTokenTtlSec: options.accessTokenTtlSec ?? 3600,
    codeTtlSec: options.codeTtlSec ?? 60,
    scopesSupported: options.scopesSupported,
    refreshTokens: options.refreshTokens ?? 'offline_access',
    refreshGrantEnabled: grantTypes.includes('refresh_token'),
  });
  context = {
    options,
    issuer,
    subject: options.subject ?? 'user-1',
    grantTypes,
    keys,
    registry,
    grants,
    clientAuth: {
      registry,
      supportedMethods: authMethods,
      assertionAudiences: [issuer, `${issuer}/token`, `${issuer}/introspect`],
      now,
      usedAssertionIds: new Set(),
    },
  };
  routes = routesOf(context, issuerPath);
  const served = context;

  return {
    issuer,
    origin,
    url: (path) => `${issuer}${path}`,
    metadata: metadataDocument(metadataInput(served, issuerPath), options, 'oauth'),
    metadataUrls: [...metadataPaths(issuerPath, options.metadataAt ?? ['oauth-authorization-server']).keys()].map(
      (path) => `${origin}${path}`,
    ),
    jwks: () => keys.jwks(),
    events,
    issueToken: (token = {}) => grants.signAccessToken({ ...token, subject: token.subject ?? served.subject }),
    addClient: (registration) => registry.add(registration),
    revoke: (token) => grants.revoke(token),
    rotateKeys: (rotation = {}) => keys.rotate(rotation.retirePrevious ?? false),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The event without its undefined members, so tests can compare it with `toEqual`/`toMatchObject`. */
function clean(event: AuthorizationServerEvent): AuthorizationServerEvent {
  return Object.fromEntries(
    Object.entries(event).filter(([, value]) => value !== undefined),
  ) as unknown as AuthorizationServerEvent;
}
