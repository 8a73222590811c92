export {
  ZERO_HEAD,
  canonicalBytes,
  chainHead,
  extendHead,
  fingerprint,
  hashPayload,
  keccak256Hex,
  signBytes,
  verifySignature,
} from './receipt-crypto.js';
export { ReceiptSigner } from './receipt-signer.js';
export { publishedKey, type PublishedReceiptKey } from './receipt-chain.js';
