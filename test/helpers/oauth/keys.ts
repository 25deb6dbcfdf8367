/**
 * The authorization server's signing keys: one current key signs, every published key verifies. Rotation
 * makes a new current key and keeps the previous one published unless it is retired.
 */
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  jwtVerify,
  SignJWT,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
} from 'jose';

interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly publicJwk: JWK;
}

async function createKey(algorithm: 'ES256' | 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(algorithm, { extractable: true });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { kid, privateKey, publicKey, publicJwk: { ...jwk, kid, alg: algorithm, use: 'sig' } };
}

export class SigningKeys {
  private constructor(
    readonly algorithm: 'ES256' | 'RS256',
    private published: SigningKey[],
  ) {}

  static async create(algorithm: 'ES256' | 'RS256'): Promise<SigningKeys> {
    return new SigningKeys(algorithm, [await createKey(algorithm)]);
  }

  private get current(): SigningKey {
    return this.published[0]!;
  }

  /** The public keys, current first, as served at the JWKS endpoint. */
  jwks(): JSONWebKeySet {
    return { keys: this.published.map((key) => ({ ...key.publicJwk })) };
  }

  async rotate(retirePrevious: boolean): Promise<void> {
    const next = await createKey(this.algorithm);
    this.published = retirePrevious ? [next] : [next, ...this.published];
  }

  sign(payload: JWTPayload, typ: string): Promise<string> {
    return new SignJWT(payload)
      .setProtectedHeader({ alg: this.algorithm, kid: this.current.kid, typ })
      .sign(this.current.privateKey);
  }

  /** The payload of a JWT one of the published keys signed and not expired at `now`, or undefined. */
  async verify(token: string, now: Date): Promise<JWTPayload | undefined> {
    try {
      const { payload } = await jwtVerify(
        token,
        async (header) => {
          const key = this.published.find((candidate) => candidate.kid === header.kid);
          if (!key) throw new Error('unknown kid');
          return key.publicKey;
        },
        { algorithms: [this.algorithm], currentDate: now },
      );
      return payload;
    } catch {
      return undefined;
    }
  }
}
