/**
 * The resource server's DPoP nonce (RFC 9449 §9): a random value proofs must carry once the server asks for
 * one, which bounds a proof's life by the server's clock instead of the client's. It changes every
 * `rotationMs`; the previous value stays accepted, so a client that learnt it just before a change is not
 * refused at once.
 */
import { base64url } from 'jose';

export const DPOP_NONCE_ROTATION_MS = 5 * 60_000;

export class DpopNonces {
  private currentValue = randomNonce();
  private previous: string | undefined;
  private madeAt: number;

  constructor(
    private readonly now: () => number,
    private readonly rotationMs: number = DPOP_NONCE_ROTATION_MS,
  ) {
    this.madeAt = now();
  }

  /** The nonce to hand out (`DPoP-Nonce`). */
  current(): string {
    this.rotate();
    return this.currentValue;
  }

  /** Whether a proof's `nonce` is the current or the previous one. */
  accepts(nonce: string | undefined): boolean {
    this.rotate();
    return nonce !== undefined && (nonce === this.currentValue || nonce === this.previous);
  }

  private rotate(): void {
    const now = this.now();
    if (now - this.madeAt < this.rotationMs) return;
    // Two rotations or more since the last use: the previous value is too old to keep.
    this.previous = now - this.madeAt < 2 * this.rotationMs ? this.currentValue : undefined;
    this.currentValue = randomNonce();
    this.madeAt = now;
  }
}

function randomNonce(): string {
  return base64url.encode(crypto.getRandomValues(new Uint8Array(16)));
}
