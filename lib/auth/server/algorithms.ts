/**
 * The asymmetric JWS algorithms jose verifies: the only ones an access token or a DPoP proof may be signed
 * with by default (never `none`, never an HMAC, whose key a verifier would have to share).
 */
export const ASYMMETRIC_ALGORITHMS: readonly string[] = [
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
];
