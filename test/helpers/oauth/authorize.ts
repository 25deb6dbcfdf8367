/**
 * The authorization endpoint: validates the request and approves it at once (there is no user), answering
 * 302 to the redirect URI with the code, the state and, per `issParameter`, the `iss` parameter (RFC 9207).
 * Errors about the client or the redirect URI are answered here (400), never redirected (RFC 6749 §4.1.2.1).
 */
import type http from 'node:http';
import { redirectUriAllowed } from './clients';
import type { RequestNotes, ServerContext } from './context';
import { resourceOf } from './grants';
import { OAuthError, redirect } from './http-io';

function issValue(context: ServerContext): string | undefined {
  switch (context.options.issParameter ?? 'sent') {
    case 'sent':
      return context.issuer;
    case 'omitted':
      return undefined;
    case 'wrong':
      return `${new URL(context.issuer).origin}/another-issuer`;
    case 'trailing-slash':
      return `${context.issuer}/`;
  }
}

function authorizationResponse(
  context: ServerContext,
  redirectUri: string,
  state: string | null,
  parameters: Record<string, string>,
): URL {
  const location = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters)) location.searchParams.set(name, value);
  if (state !== null) location.searchParams.set('state', state);
  const iss = issValue(context);
  if (iss !== undefined) location.searchParams.set('iss', iss);
  return location;
}

/** The checks that, failing, go back to the client through the redirect URI. */
function approve(
  context: ServerContext,
  query: URLSearchParams,
  clientId: string,
  clientScope: string | undefined,
  notes: RequestNotes,
): Record<string, string> {
  if (query.get('response_type') !== 'code')
    throw new OAuthError('unsupported_response_type', 'only response_type=code');
  if (!context.grantTypes.includes('authorization_code'))
    throw new OAuthError('unauthorized_client', 'the authorization_code grant is off');
  const codeChallenge = query.get('code_challenge');
  if (!codeChallenge) throw new OAuthError('invalid_request', 'code_challenge is required (PKCE)');
  if (query.get('code_challenge_method') !== 'S256')
    throw new OAuthError('invalid_request', 'code_challenge_method must be S256');
  notes.resource = resourceOf(query);
  const scope = context.grants.checkScope(query.get('scope'), clientScope);
  notes.scope = scope;
  if (context.options.denyAuthorization) throw new OAuthError('access_denied', 'the user refused');
  const code = context.grants.createCode({
    clientId,
    subject: context.subject,
    scope,
    resource: notes.resource,
    redirectUri: query.get('redirect_uri')!,
    codeChallenge,
  });
  return { code };
}

export async function handleAuthorize(
  context: ServerContext,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  notes: RequestNotes,
): Promise<void> {
  const query = new URL(request.url!, context.issuer).searchParams;
  const clientId = query.get('client_id');
  notes.clientId = clientId ?? undefined;
  const client = clientId ? await context.registry.find(clientId) : undefined;
  if (!client) throw new OAuthError('invalid_client', 'unknown client_id');
  const redirectUri = query.get('redirect_uri');
  if (!redirectUri || !redirectUriAllowed(client, redirectUri))
    throw new OAuthError('invalid_request', 'redirect_uri is not registered for this client');
  let parameters: Record<string, string>;
  try {
    parameters = approve(context, query, client.clientId, client.scope, notes);
  } catch (failure) {
    if (!(failure instanceof OAuthError)) throw failure;
    parameters = { error: failure.error, error_description: failure.description };
  }
  if (parameters.error) notes.error = parameters.error;
  redirect(response, authorizationResponse(context, redirectUri, query.get('state'), parameters));
}
