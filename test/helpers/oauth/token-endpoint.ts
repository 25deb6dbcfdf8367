/**
 * The token endpoint (authorization_code with PKCE S256, refresh_token, client_credentials, jwt-bearer), the
 * introspection endpoint (RFC 7662) and the revocation endpoint (RFC 7009), all behind client authentication.
 */
import { createHash } from 'node:crypto';
import type http from 'node:http';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { isCompactJws } from '../../../lib/auth/server/authorization-header';
import { verifyDpopProof } from '../../../lib/auth/server/dpop-proof';
import { authenticateClient } from './client-auth';
import type { RegisteredClient } from './clients';
import type { RequestNotes, ServerContext } from './context';
import { resourceOf, scopesOf, type TokenResponse } from './grants';
import { OAuthError, readForm, sendJson } from './http-io';
import { DPOP_ALGORITHMS, JWT_BEARER_GRANT, type GrantType } from './types';

interface GrantRequest {
  readonly context: ServerContext;
  readonly form: URLSearchParams;
  readonly client: RegisteredClient;
  readonly notes: RequestNotes;
  /** The key a DPoP proof came with (the tokens are bound to it), when the server takes DPoP. */
  readonly jkt: string | undefined;
}

function codeChallengeOf(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

async function authorizationCodeGrant({ context, form, client, notes, jkt }: GrantRequest): Promise<TokenResponse> {
  const pending = context.grants.redeemCode(form.get('code'), client.clientId);
  notes.scope = pending.scope;
  if (form.get('redirect_uri') !== pending.redirectUri)
    throw new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request');
  const verifier = form.get('code_verifier');
  notes.pkce =
    verifier === null ? 'missing' : codeChallengeOf(verifier) === pending.codeChallenge ? 'matched' : 'mismatched';
  if (notes.pkce !== 'matched') throw new OAuthError('invalid_grant', `code_verifier ${notes.pkce}`);
  notes.resource = resourceOf(form);
  if (notes.resource !== pending.resource)
    throw new OAuthError('invalid_target', 'resource differs from the authorization request');
  return context.grants.respond({ ...pending, jkt }, true, pending.issued);
}

async function refreshTokenGrant({ context, form, client, notes, jkt }: GrantRequest): Promise<TokenResponse> {
  const rotate = context.options.rotateRefreshTokens ?? true;
  const grant = context.grants.redeemRefreshToken(form.get('refresh_token'), client.clientId, rotate);
  const resource = resourceOf(form);
  notes.resource = resource ?? grant.resource;
  if (resource !== undefined && resource !== grant.resource)
    throw new OAuthError('invalid_target', 'resource differs from the original grant');
  const asked = form.get('scope');
  const granted = scopesOf(grant.scope);
  const beyond = scopesOf(asked).filter((scope) => !granted.includes(scope));
  if (beyond.length > 0) throw new OAuthError('invalid_scope', `beyond the original grant: ${beyond.join(' ')}`);
  notes.scope = asked === null ? grant.scope : scopesOf(asked).join(' ');
  return context.grants.respond({ ...grant, scope: notes.scope, jkt }, rotate);
}

async function clientCredentialsGrant({ context, form, client, notes, jkt }: GrantRequest): Promise<TokenResponse> {
  if (client.authMethod === 'none')
    throw new OAuthError('unauthorized_client', 'client_credentials needs a confidential client');
  notes.resource = resourceOf(form);
  notes.scope = context.grants.checkScope(form.get('scope'), client.scope);
  return context.grants.respond(
    { clientId: client.clientId, subject: client.clientId, scope: notes.scope, resource: notes.resource, jkt },
    false,
  );
}

/** RFC 7523 §2.1: a JWT from a trusted issuer stands for its `sub`. */
async function jwtBearerGrant({ context, form, client, notes, jkt }: GrantRequest): Promise<TokenResponse> {
  const assertion = form.get('assertion');
  if (!assertion) throw new OAuthError('invalid_request', 'assertion is required');
  let subject: string;
  try {
    const issuer = decodeJwt(assertion).iss;
    const keys = issuer === undefined ? undefined : context.options.trustedAssertionIssuers?.[issuer];
    if (!keys) throw new Error('untrusted issuer');
    const { payload } = await jwtVerify(assertion, createLocalJWKSet(keys), {
      issuer,
      audience: [context.issuer, `${context.issuer}/token`],
      requiredClaims: ['exp', 'sub'],
      currentDate: new Date(context.clientAuth.now()),
    });
    subject = payload.sub!;
  } catch (failure) {
    throw new OAuthError('invalid_grant', `assertion refused: ${(failure as Error).message}`);
  }
  notes.resource = resourceOf(form);
  notes.scope = context.grants.checkScope(form.get('scope'), client.scope);
  return context.grants.respond(
    { clientId: client.clientId, subject, scope: notes.scope, resource: notes.resource, jkt },
    false,
  );
}

const GRANTS: Record<GrantType, (request: GrantRequest) => Promise<TokenResponse>> = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
  client_credentials: clientCredentialsGrant,
  [JWT_BEARER_GRANT]: jwtBearerGrant,
};

function noteClient(notes: RequestNotes) {
  return (clientId: string | undefined, method: RequestNotes['authMethod']) => {
    notes.clientId = clientId;
    notes.authMethod = method;
  };
}

export async function handleToken(
  context: ServerContext,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  notes: RequestNotes,
): Promise<void> {
  const form = await readForm(request);
  const grantType = form.get('grant_type');
  notes.grantType = grantType ?? undefined;
  const { client } = await authenticateClient(context.clientAuth, request, form, noteClient(notes));
  if (!grantType || !context.grantTypes.includes(grantType as GrantType)) {
    throw new OAuthError('unsupported_grant_type', `grant_type ${grantType ?? '(none)'} is not supported`);
  }
  const jkt = await dpopKeyOf(context, request);
  const tokens = await GRANTS[grantType as GrantType]({ context, form, client, notes, jkt });
  sendJson(response, 200, tokens);
}

/**
 * The thumbprint of the key a token request's DPoP proof (RFC 9449 §5) was signed with, when the server
 * takes DPoP and the request carries a proof; a bad proof is refused `invalid_dpop_proof`.
 */
async function dpopKeyOf(context: ServerContext, request: http.IncomingMessage): Promise<string | undefined> {
  const proofs = request.headersDistinct.dpop;
  if (!context.options.dpop || proofs === undefined) return undefined;
  if (proofs.length > 1 || !isCompactJws(proofs[0]!))
    throw new OAuthError('invalid_dpop_proof', 'one DPoP header, a signed JWT');
  try {
    const proof = await verifyDpopProof(proofs[0]!, {
      method: 'POST',
      url: `${context.issuer}/token`,
      algorithms: DPOP_ALGORITHMS,
      now: context.clientAuth.now(),
      maxAgeS: 60,
      maxFutureS: 5,
    });
    return proof.jkt;
  } catch (failure) {
    throw new OAuthError('invalid_dpop_proof', (failure as Error).message);
  }
}

/** RFC 7662: only an authenticated confidential client may ask. */
export async function handleIntrospect(
  context: ServerContext,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  notes: RequestNotes,
): Promise<void> {
  const form = await readForm(request);
  const { method } = await authenticateClient(context.clientAuth, request, form, noteClient(notes));
  if (method === 'none') throw new OAuthError('invalid_client', 'introspection needs client authentication', 401);
  const token = form.get('token');
  if (!token) throw new OAuthError('invalid_request', 'token is required');
  sendJson(response, 200, await context.grants.introspect(token));
}

/** RFC 7009: a client revokes a token (a public client too); an unknown token is answered 200 all the same. */
export async function handleRevoke(
  context: ServerContext,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  notes: RequestNotes,
): Promise<void> {
  const form = await readForm(request);
  await authenticateClient(context.clientAuth, request, form, noteClient(notes));
  const token = form.get('token');
  if (!token) throw new OAuthError('invalid_request', 'token is required');
  context.grants.revoke(token);
  response.writeHead(200, { 'cache-control': 'no-store' });
  response.end();
}
