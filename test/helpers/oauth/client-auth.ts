/**
 * Client authentication at the token and introspection endpoints: finds which method the request used
 * (exactly one), refuses a method the server does not accept or the client did not register, and checks
 * the secret or the signed assertion (`private_key_jwt`, RFC 7523 §2.2, each assertion usable once).
 */
import type http from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { ClientRegistry, RegisteredClient } from './clients';
import { OAuthError } from './http-io';
import { JWT_CLIENT_ASSERTION_TYPE, type ClientAuthMethod } from './types';

export interface ClientAuthContext {
  readonly registry: ClientRegistry;
  readonly supportedMethods: readonly ClientAuthMethod[];
  /** What an assertion's `aud` may name: the issuer or the endpoint's URL. */
  readonly assertionAudiences: readonly string[];
  readonly now: () => number;
  /** The `jti`s of the assertions already used. */
  readonly usedAssertionIds: Set<string>;
}

interface PresentedCredentials {
  readonly method: ClientAuthMethod;
  readonly clientId: string | undefined;
  readonly secret?: string;
  readonly assertion?: string;
}

/** `application/x-www-form-urlencoded` decoding of one Basic credential half (RFC 6749 §2.3.1). */
function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

function presentedCredentials(request: http.IncomingMessage, form: URLSearchParams): PresentedCredentials {
  const used: PresentedCredentials[] = [];
  const authorization = request.headers.authorization;
  if (authorization?.toLowerCase().startsWith('basic ')) {
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'malformed Basic credentials', 401, 'Basic');
    used.push({
      method: 'client_secret_basic',
      clientId: formDecode(decoded.slice(0, colon)),
      secret: formDecode(decoded.slice(colon + 1)),
    });
  }
  if (form.has('client_secret')) {
    used.push({
      method: 'client_secret_post',
      clientId: form.get('client_id') ?? undefined,
      secret: form.get('client_secret')!,
    });
  }
  if (form.has('client_assertion')) {
    if (form.get('client_assertion_type') !== JWT_CLIENT_ASSERTION_TYPE) {
      throw new OAuthError('invalid_client', 'unsupported client_assertion_type', 401);
    }
    used.push({
      method: 'private_key_jwt',
      clientId: form.get('client_id') ?? undefined,
      assertion: form.get('client_assertion')!,
    });
  }
  if (used.length > 1) throw new OAuthError('invalid_request', 'more than one client authentication method used');
  return used[0] ?? { method: 'none', clientId: form.get('client_id') ?? undefined };
}

function sameSecret(expected: string | undefined, presented: string | undefined): boolean {
  if (expected === undefined || presented === undefined) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function verifyAssertion(context: ClientAuthContext, client: RegisteredClient, assertion: string): Promise<void> {
  if (!client.jwks) throw new OAuthError('invalid_client', 'the client has no keys', 401);
  let jti: string | undefined;
  try {
    const { payload } = await jwtVerify(assertion, createLocalJWKSet(client.jwks), {
      issuer: client.clientId,
      subject: client.clientId,
      audience: [...context.assertionAudiences],
      requiredClaims: ['exp', 'jti'],
      currentDate: new Date(context.now()),
    });
    jti = payload.jti;
  } catch (failure) {
    throw new OAuthError('invalid_client', `client assertion refused: ${(failure as Error).message}`, 401);
  }
  if (context.usedAssertionIds.has(jti!)) throw new OAuthError('invalid_client', 'client assertion replayed', 401);
  context.usedAssertionIds.add(jti!);
}

/**
 * The client a request authenticated as and the method it used. `onIdentified` sees the client id and method
 * as soon as they are known, so a refused request is logged with them.
 */
export async function authenticateClient(
  context: ClientAuthContext,
  request: http.IncomingMessage,
  form: URLSearchParams,
  onIdentified: (clientId: string | undefined, method: ClientAuthMethod) => void,
): Promise<{ client: RegisteredClient; method: ClientAuthMethod }> {
  const presented = presentedCredentials(request, form);
  onIdentified(presented.clientId, presented.method);
  const challenge = presented.method === 'client_secret_basic' ? 'Basic' : undefined;
  const refuse = (description: string) => new OAuthError('invalid_client', description, 401, challenge);
  if (!presented.clientId) throw refuse('no client_id');
  const bodyClientId = form.get('client_id');
  if (bodyClientId !== null && bodyClientId !== presented.clientId)
    throw refuse('client_id differs from the credentials');
  if (!context.supportedMethods.includes(presented.method)) throw refuse(`${presented.method} is not accepted here`);
  const client = await context.registry.find(presented.clientId);
  if (!client) throw refuse('unknown client');
  if (client.authMethod !== presented.method) throw refuse(`the client is registered for ${client.authMethod}`);
  if (presented.method === 'private_key_jwt') await verifyAssertion(context, client, presented.assertion!);
  else if (presented.method !== 'none' && !sameSecret(client.clientSecret, presented.secret))
    throw refuse('wrong client secret');
  return { client, method: presented.method };
}
