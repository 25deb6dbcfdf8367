/**
 * One DPoP proof (RFC 9449 §4.3) checked against the request it came with: a JWS of type `dpop+jwt`, signed
 * with an asymmetric algorithm by the public key its header carries, naming the request's method (`htm`) and
 * URL (`htu`), issued within a window around now, with a `jti`, and, for a request to a resource server, the
 * hash of the access token it goes with (`ath`). Replay (`jti`), the server's nonce and the key the token is
 * bound to are the caller's checks: they need state this function does not keep.
 */
import {
  calculateJwkThumbprint,
  EmbeddedJWK,
  jwtVerify,
  type CryptoKey,
  type FlattenedJWSInput,
  type JWK,
  type JWSHeaderParameters,
} from 'jose';
import { tokenKey } from './token-cache';
import { SwitchboardError, type LocalErrorCode } from '../../jsonrpc/errors';

/** The proof algorithms accepted by default (and named in challenges and the metadata document). */
export const DEFAULT_DPOP_ALGORITHMS: readonly string[] = ['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256'];

/** A proof may be this old (its `iat`), and no older. */
export const DEFAULT_DPOP_MAX_AGE_S = 60;
/** A proof may be issued this far in the future (the client's clock ahead of ours). */
export const DEFAULT_DPOP_MAX_FUTURE_S = 5;
/** Longer `jti` values are refused: the replay cache keeps each one. */
const MAX_JTI_LENGTH = 256;
/** Proof keys kept imported, with their thumbprints: a client signs every proof with one key. */
const KEPT_PROOF_KEYS = 1_000;

/** A proof was refused. The message says why (for `error_description`); it never quotes the token. */
export class DpopProofError extends SwitchboardError {
  override readonly name = 'DpopProofError';
  readonly code: LocalErrorCode = 'INVALID_DPOP_PROOF';
}

export interface ProofExpectations {
  /** The request's method. */
  readonly method: string;
  /** The request's URL; compared without query and fragment, both sides normalised. */
  readonly url: string;
  /** The access token the request carries (checked against `ath`); undefined at a token endpoint. */
  readonly accessToken?: string;
  readonly algorithms: readonly string[];
  /** Now, in milliseconds since the epoch. */
  readonly now: number;
  readonly maxAgeS: number;
  readonly maxFutureS: number;
}

export interface CheckedProof {
  /** The JWK SHA-256 thumbprint (RFC 7638) of the proof's key: what a bound token's `cnf.jkt` names. */
  readonly jkt: string;
  readonly jti: string;
  /** Seconds since the epoch. */
  readonly iat: number;
  readonly nonce?: string;
}

/** Checks `proof` against the request; rejects with `DpopProofError` saying why it is refused. */
export async function verifyDpopProof(proof: string, expected: ProofExpectations): Promise<CheckedProof> {
  let payload: Record<string, unknown>;
  let jwk: JWK;
  try {
    const verified = await jwtVerify(proof, embeddedKey, {
      typ: 'dpop+jwt',
      algorithms: [...expected.algorithms],
      currentDate: new Date(expected.now),
    });
    payload = verified.payload;
    jwk = verified.protectedHeader.jwk!;
  } catch (error) {
    throw new DpopProofError(`the DPoP proof is invalid: ${(error as Error).message}`);
  }
  const { htm, htu, iat, jti, ath, nonce } = payload;
  if (htm !== expected.method) throw new DpopProofError('the DPoP proof is for another method (htm)');
  const url = comparableUrl(expected.url);
  if (typeof htu !== 'string' || url === '' || comparableUrl(htu) !== url)
    throw new DpopProofError('the DPoP proof is for another URL (htu)');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new DpopProofError('the DPoP proof has no iat');
  const nowS = expected.now / 1000;
  if (iat < nowS - expected.maxAgeS) throw new DpopProofError('the DPoP proof is too old (iat)');
  if (iat > nowS + expected.maxFutureS) throw new DpopProofError('the DPoP proof is issued in the future (iat)');
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH)
    throw new DpopProofError('the DPoP proof has no usable jti');
  if (nonce !== undefined && typeof nonce !== 'string') throw new DpopProofError('the DPoP proof nonce is no string');
  // `ath` is base64url(SHA-256(the access token)): the verdict cache's key of the token.
  if (expected.accessToken !== undefined && ath !== (await tokenKey(expected.accessToken)))
    throw new DpopProofError('the DPoP proof is for another access token (ath)');
  return { jkt: await thumbprintOf(jwk), jti, iat, ...(nonce !== undefined && { nonce }) };
}

/**
 * Proof keys as imported, with their thumbprints, by the header's `jwk` as sent: importing a key and hashing
 * its thumbprint cost more than verifying the signature (WebCrypto: about 180 and 80 µs of CPU here), and a
 * client signs every proof with one key. Only keys `EmbeddedJWK` accepted (public ones) are kept; a header
 * that differs in any member (a private `d` added) is another entry, checked afresh. Bounded: the oldest
 * goes first.
 */
const proofKeys = new Map<string, { readonly key: CryptoKey | Uint8Array; readonly jkt: Promise<string> }>();

/** jose's `EmbeddedJWK` (the header's public key), imported once per key. */
async function embeddedKey(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey | Uint8Array> {
  const id = JSON.stringify(header.jwk);
  const known = proofKeys.get(id);
  if (known !== undefined) return known.key;
  const key = await EmbeddedJWK(header, token);
  if (proofKeys.size >= KEPT_PROOF_KEYS) proofKeys.delete(proofKeys.keys().next().value!);
  proofKeys.set(id, { key, jkt: calculateJwkThumbprint(header.jwk!, 'sha256') });
  return key;
}

/** The JWK SHA-256 thumbprint of a proof's key (kept beside it once imported). */
function thumbprintOf(jwk: JWK): Promise<string> {
  return proofKeys.get(JSON.stringify(jwk))?.jkt ?? calculateJwkThumbprint(jwk, 'sha256');
}

/**
 * A URL as `htu` is compared (RFC 9449 §4.3): scheme, host, port and path, normalised (case, default port,
 * dot segments), without query and fragment; '' for what is no absolute URL.
 */
export function comparableUrl(url: string): string {
  if (!URL.canParse(url)) return '';
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}
