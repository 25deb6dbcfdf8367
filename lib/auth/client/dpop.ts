/**
 * Proof of possession (RFC 9449, the MCP DPoP extension): one key pair per client, a proof with each token
 * request (oauth4webapi's DPoP handle, which also keeps the authorization server's nonces) and with each
 * request to the MCP server (`DPoP` header: the method, the URL without query, the token's hash, a fresh
 * `jti`, and the server's nonce once it asked for one). The key lives in memory only: a DPoP-bound token
 * from an earlier process cannot be used, and the grant runs again.
 */
import * as jose from 'jose';
import * as oauth from 'oauth4webapi';

/** The algorithms we can sign proofs with, preferred first. */
const ALGORITHMS = ['ES256', 'EdDSA', 'RS256'] as const;

/** The first algorithm both we and the authorization server support; undefined when it offers none of ours. */
export function dpopAlgorithmFor(as: oauth.AuthorizationServer): string | undefined {
  const offered = as.dpop_signing_alg_values_supported;
  if (!Array.isArray(offered)) return undefined;
  return ALGORITHMS.find((alg) => offered.includes(alg));
}

export class DpopKey {
  /** The resource server's last nonce per origin (RFC 9449 §9). */
  private readonly nonces = new Map<string, string>();
  private handle: oauth.DPoPHandle | undefined;

  private constructor(
    readonly algorithm: string,
    private readonly pair: CryptoKeyPair,
    private readonly publicJwk: jose.JWK,
  ) {}

  static async generate(algorithm: string): Promise<DpopKey> {
    const pair = (await jose.generateKeyPair(algorithm)) as CryptoKeyPair;
    const publicJwk = await jose.exportJWK(pair.publicKey);
    return new DpopKey(algorithm, pair, publicJwk);
  }

  /** The handle token requests carry (it remembers the authorization server's nonces). */
  tokenRequests(client: oauth.Client): oauth.DPoPHandle {
    return (this.handle ??= oauth.DPoP(client, this.pair));
  }

  /** A proof for one request to the resource server, bound to `accessToken`. */
  async proof(method: string, url: URL, accessToken: string): Promise<string> {
    const htu = `${url.origin}${url.pathname}`;
    const ath = jose.base64url.encode(
      new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(accessToken))),
    );
    const nonce = this.nonces.get(url.origin);
    return new jose.SignJWT({ htm: method, htu, ath, ...(nonce !== undefined && { nonce }) })
      .setProtectedHeader({ alg: this.algorithm, typ: 'dpop+jwt', jwk: this.publicJwk })
      .setIssuedAt()
      .setJti(crypto.randomUUID())
      .sign(this.pair.privateKey);
  }

  /** The resource server asked for a nonce (`DPoP-Nonce`): proofs to it carry it from now on. */
  rememberNonce(url: URL, nonce: string): void {
    this.nonces.set(url.origin, nonce);
  }
}

/** Runs a token request; once more when the authorization server answered `use_dpop_nonce` (the handle kept its nonce). */
export async function retryingDpopNonce<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    if (oauth.isDPoPNonceError(error)) return attempt();
    throw error;
  }
}
