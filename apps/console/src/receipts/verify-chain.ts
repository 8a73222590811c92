import { canonicalBytes, extendHead, hashPayload, publishedKey, ZERO_HEAD, type PublishedReceiptKey } from '@drael/receipts/chain';
import type { Receipt, RunEnd } from '@drael/contracts';

/** What GET /v1/runs/{id}/receipts answers. */
export interface ReceiptBundle {
  run_id: string;
  receipts: Receipt[];
  run_end: RunEnd | null;
}

export interface LinkCheck {
  /** The receipt's place; -1 for the run end. */
  index: number;
  ok: boolean;
  problems: string[];
}

export interface ChainVerdict {
  valid: boolean;
  links: LinkCheck[];
  /** The head recomputed here from the receipts' own payloads. */
  head: string;
  /** The first link that fails, named for the user; undefined when the chain holds. */
  firstBroken?: string;
}

const hexBytes = (hex: string): Uint8Array<ArrayBuffer> => {
  if (!/^(?:[0-9a-f]{2})*$/.test(hex)) throw new Error('not hex');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
};

/** Ed25519 (RFC 8032) by the browser's own WebCrypto: no library, and no answer from the server. */
export async function verifyEd25519(publicKeyHex: string, message: Uint8Array, signatureHex: string): Promise<boolean> {
  try {
    const key = await crypto.subtle.importKey('raw', hexBytes(publicKeyHex), { name: 'Ed25519' }, false, ['verify']);
    return await crypto.subtle.verify({ name: 'Ed25519' }, key, hexBytes(signatureHex), new Uint8Array(message));
  } catch {
    return false;
  }
}

/** What is wrong with a signature, or undefined: checked only under the key its own key_id names. */
async function signatureProblem(keys: readonly PublishedReceiptKey[], keyId: string, message: Uint8Array, signatureHex: string): Promise<string | undefined> {
  const publicKeyHex = publishedKey(keys, keyId);
  if (publicKeyHex === undefined) return `it is signed with key ${JSON.stringify(String(keyId).slice(0, 64))}, which billing does not publish`;
  return (await verifyEd25519(publicKeyHex, message, signatureHex)) ? undefined : 'its signature is not valid';
}

/**
 * Checks a run's receipt chain in the browser against the keys the caller fetched from
 * /v1/receipts/public-key (its `keys`; each signature under the key its key_id names): each
 * receipt hashes (keccak256 of its JCS bytes) to what it claims, is signed, sits at its sequence
 * and links to the hash before it; the signed run end covers the count and the head recomputed
 * here. The same rules as agent-run's verifier, so the two agree.
 */
export async function verifyChain(bundle: ReceiptBundle, keys: readonly PublishedReceiptKey[]): Promise<ChainVerdict> {
  const links: LinkCheck[] = [];
  let head = ZERO_HEAD;
  let previous: string | null = null;
  for (const [index, r] of bundle.receipts.entries()) {
    const problems: string[] = [];
    let actual: string;
    try {
      actual = hashPayload(r.payload);
    } catch {
      actual = '';
      problems.push('its payload cannot be canonicalized');
    }
    if (actual && actual !== r.hash) problems.push('its hash does not match its payload');
    const signedBy = actual ? await signatureProblem(keys, r.key_id, canonicalBytes(r.payload), r.signature) : undefined;
    if (signedBy) problems.push(signedBy);
    if (r.payload?.run?.id !== bundle.run_id) problems.push(`it belongs to run ${String(r.payload?.run?.id)}`);
    if (r.payload?.run?.sequence !== index) problems.push(`it carries sequence ${String(r.payload?.run?.sequence)}`);
    if ((r.payload?.run?.previous_receipt_hash ?? null) !== previous)
      problems.push(index === 0 ? 'it links to a receipt before the first' : `it does not link to receipt ${index - 1}`);
    links.push({ index, ok: problems.length === 0, problems });
    previous = actual || r.hash;
    head = extendHead(head, previous);
  }
  const endProblems: string[] = [];
  const end = bundle.run_end;
  if (!end) endProblems.push('the run end is missing: the run is not finished, or its tail was cut');
  else {
    const signedBy = await signatureProblem(keys, end.key_id, canonicalBytes(end.payload), end.signature);
    if (signedBy) endProblems.push(signedBy);
    if (end.payload.run_id !== bundle.run_id) endProblems.push(`it belongs to run ${end.payload.run_id}`);
    if (end.payload.receipt_count !== bundle.receipts.length) endProblems.push(`it was signed for ${end.payload.receipt_count} receipts, ${bundle.receipts.length} are present`);
    if (end.payload.receipt_head !== head) endProblems.push('its signed head does not match the head recomputed from the receipts');
  }
  links.push({ index: -1, ok: endProblems.length === 0, problems: endProblems });
  const broken = links.find((l) => !l.ok);
  const verdict: ChainVerdict = { valid: !broken, links, head };
  if (broken) verdict.firstBroken = `${broken.index === -1 ? 'Run end' : `Receipt ${broken.index}`}: ${broken.problems.join('; ')}`;
  return verdict;
}
