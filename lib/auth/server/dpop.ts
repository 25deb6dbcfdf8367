/**
 * DPoP (RFC 9449) at a resource server: the `dpop` option, which tokens are bound to a key, and the checks of
 * a request that presents a token with the `DPoP` scheme: one well-formed proof, valid for this request
 * (dpop-proof.ts), signed by the key the token is bound to, carrying the server's nonce when it asks for one
 * (dpop-nonce.ts), and never seen before (dpop-replay.ts).
 */
import { isCompactJws } from './authorization-header';
import { DpopNonces } from './dpop-nonce';
import { checkedNumber } from './option-check';
import { ASYMMETRIC_ALGORITHMS } from './algorithms';
import {
  DEFAULT_DPOP_ALGORITHMS,
  DEFAULT_DPOP_MAX_AGE_S,
  DEFAULT_DPOP_MAX_FUTURE_S,
  DpopProofError,
  verifyDpopProof,
} from './dpop-proof';
import { DEFAULT_DPOP_REPLAY_ENTRIES, ProofReplayCache } from './dpop-replay';
import type { Principal } from './principal';

/** The `dpop` option of `ResourceServerOptions`. */
export interface DpopOptions {
  /** Refuse Bearer tokens altogether: only DPoP-bound tokens with their proof (default false). */
  readonly required?: boolean;
  /** The proof signing algorithms accepted, asymmetric only (default `DEFAULT_DPOP_ALGORITHMS`). */
  readonly algorithms?: readonly string[];
  /** Proofs must carry the server's current nonce (`DPoP-Nonce`, RFC 9449 §9); default false. */
  readonly nonce?: boolean;
  /** How old a proof (its `iat`) may be, in seconds (default `DEFAULT_DPOP_MAX_AGE_S`, 60). */
  readonly maxProofAgeS?: number;
  /** How far in the future a proof's `iat` may be, in seconds (default `DEFAULT_DPOP_MAX_FUTURE_S`, 5). */
  readonly maxProofFutureS?: number;
  /** Proof `jti`s remembered against replay (default `DEFAULT_DPOP_REPLAY_ENTRIES`, 10,000). */
  readonly replayCacheEntries?: number;
}

/** Why a DPoP request is refused: the OAuth error, its status, and a description that never quotes the token. */
export interface DpopFailure {
  readonly status: 400 | 401;
  readonly error: 'invalid_request' | 'invalid_dpop_proof' | 'use_dpop_nonce' | 'invalid_token';
  readonly description: string;
}

/** The key a token is bound to (`cnf.jkt`, RFC 9449 §6), from its claims or its introspection answer. */
export function boundKeyOf(principal: Principal): string | undefined {
  const cnf = principal.claims.cnf;
  if (typeof cnf !== 'object' || cnf === null) return undefined;
  const jkt = (cnf as { jkt?: unknown }).jkt;
  return typeof jkt === 'string' ? jkt : undefined;
}

/** What a DPoP request carries besides its token. */
export interface DpopRequest {
  /** Every `DPoP` header of the request. */
  readonly proofs: readonly string[] | undefined;
  readonly method: string;
  /** The request's path, without the query. */
  readonly path: string;
}

export class DpopGuard {
  readonly required: boolean;
  readonly algorithms: readonly string[];
  private readonly maxAgeS: number;
  private readonly maxFutureS: number;
  private readonly replay: ProofReplayCache;
  private readonly nonces: DpopNonces | undefined;

  constructor(
    options: DpopOptions,
    /** The resource's URL: `htu` is its origin with the request's path (the request may have come through a proxy). */
    private readonly resource: URL,
    private readonly now: () => number,
  ) {
    this.required = options.required ?? false;
    this.algorithms = checkedAlgorithms(options.algorithms ?? DEFAULT_DPOP_ALGORITHMS);
    this.maxAgeS = checkedNumber('dpop.maxProofAgeS', options.maxProofAgeS ?? DEFAULT_DPOP_MAX_AGE_S, 0, false);
    this.maxFutureS = checkedNumber(
      'dpop.maxProofFutureS',
      options.maxProofFutureS ?? DEFAULT_DPOP_MAX_FUTURE_S,
      0,
      false,
    );
    const entries = options.replayCacheEntries ?? DEFAULT_DPOP_REPLAY_ENTRIES;
    this.replay = new ProofReplayCache(
      checkedNumber('dpop.replayCacheEntries', entries, 1),
      this.maxAgeS + this.maxFutureS,
    );
    this.nonces = options.nonce ? new DpopNonces(now) : undefined;
  }

  /** The nonce proofs must carry now, when the server asks for one. */
  currentNonce(): string | undefined {
    return this.nonces?.current();
  }

  /** The request's one proof, or why it has none worth checking (before the token is looked at). */
  proofOf(request: DpopRequest): string | DpopFailure {
    const proofs = request.proofs;
    if (proofs === undefined || proofs.length === 0)
      return { status: 401, error: 'invalid_dpop_proof', description: 'a DPoP-bound token needs a DPoP proof' };
    if (proofs.length > 1) return { status: 400, error: 'invalid_request', description: 'send one DPoP header' };
    if (!isCompactJws(proofs[0]!))
      return { status: 401, error: 'invalid_dpop_proof', description: 'the DPoP header is not a signed JWT' };
    return proofs[0]!;
  }

  /** Checks `proof` for this request and the token `principal` stands for; undefined when it is good. */
  async check(
    proof: string,
    token: string,
    principal: Principal,
    request: DpopRequest,
  ): Promise<DpopFailure | undefined> {
    const jkt = boundKeyOf(principal);
    if (jkt === undefined)
      return { status: 401, error: 'invalid_token', description: 'the token is not bound to a DPoP key' };
    const now = this.now();
    let checked;
    try {
      checked = await verifyDpopProof(proof, {
        method: request.method,
        url: `${this.resource.origin}${request.path}`,
        accessToken: token,
        algorithms: this.algorithms,
        now,
        maxAgeS: this.maxAgeS,
        maxFutureS: this.maxFutureS,
      });
    } catch (error) {
      if (!(error instanceof DpopProofError)) throw error;
      return { status: 401, error: 'invalid_dpop_proof', description: error.message };
    }
    if (checked.jkt !== jkt)
      return { status: 401, error: 'invalid_dpop_proof', description: 'the DPoP proof is signed by another key' };
    if (this.nonces && !this.nonces.accepts(checked.nonce))
      return { status: 401, error: 'use_dpop_nonce', description: 'the DPoP proof must carry the server nonce' };
    switch (this.replay.remember(checked.jti, checked.iat, now / 1000)) {
      case 'replayed':
        return { status: 401, error: 'invalid_dpop_proof', description: 'the DPoP proof was used before (jti)' };
      case 'below-floor':
        return { status: 401, error: 'invalid_dpop_proof', description: 'the DPoP proof is too old; make a new one' };
      default:
        return undefined;
    }
  }
}

function checkedAlgorithms(algorithms: readonly string[]): readonly string[] {
  if (algorithms.length === 0) throw new TypeError('auth: dpop.algorithms must not be empty');
  for (const algorithm of algorithms) {
    if (!ASYMMETRIC_ALGORITHMS.includes(algorithm))
      throw new TypeError(`auth: dpop.algorithms: ${algorithm} is not an asymmetric JWS algorithm`);
  }
  return Object.freeze([...algorithms]);
}
