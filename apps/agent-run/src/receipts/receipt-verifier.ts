import { ReceiptSchema, RunEndSchema, type VerifyResult } from '@drael/contracts';
import { canonicalBytes, extendHead, hashPayload, publishedKey, verifySignature, ZERO_HEAD, type PublishedReceiptKey } from '@drael/receipts';

export interface ReceiptBundle {
  run_id: string;
  receipts: unknown[];
  run_end: unknown;
}

/**
 * Checks a run's receipts against the platform's published keys. Each receipt must be well formed,
 * carry a valid signature over its own payload by the key its `key_id` names, hash to what it
 * claims, belong to the run, sit at its sequence number and link to the hash before it; the signed
 * run end must match the count and the head recomputed from the receipts, which catches a cut-off
 * tail. Every problem is listed.
 */
export function verifyReceipts(bundle: ReceiptBundle, keys: readonly PublishedReceiptKey[]): VerifyResult {
  const problems: string[] = [];
  let head = ZERO_HEAD;
  let previous: string | null = null;

  bundle.receipts.forEach((raw, index) => {
    const parsed = ReceiptSchema.safeParse(raw);
    if (!parsed.success) {
      problems.push(`receipt ${index}: malformed (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message})`);
      previous = null;
      return;
    }
    const { payload, hash, signature } = parsed.data;
    const actual = hashPayload(payload);
    if (actual !== hash) problems.push(`receipt ${index}: hash does not match its payload`);
    const signedBy = signatureProblem(keys, parsed.data.key_id, payload, signature);
    if (signedBy) problems.push(`receipt ${index}: ${signedBy}`);
    if (payload.run.id !== bundle.run_id) problems.push(`receipt ${index}: belongs to run ${payload.run.id}`);
    if (payload.run.sequence !== index) problems.push(`receipt ${index}: carries sequence ${payload.run.sequence}`);
    if (payload.run.previous_receipt_hash !== previous) problems.push(`receipt ${index}: previous_receipt_hash does not link to receipt ${index - 1}`);
    previous = actual;
    head = extendHead(head, actual);
  });

  const end = RunEndSchema.safeParse(bundle.run_end);
  if (bundle.run_end === null || bundle.run_end === undefined) {
    problems.push('run end is missing: the run is not finished, or its tail was cut');
  } else if (!end.success) {
    problems.push('run end: malformed');
  } else {
    const { payload, signature } = end.data;
    const signedBy = signatureProblem(keys, end.data.key_id, payload, signature);
    if (signedBy) problems.push(`run end: ${signedBy}`);
    if (payload.run_id !== bundle.run_id) problems.push(`run end: belongs to run ${payload.run_id}`);
    if (payload.receipt_count !== bundle.receipts.length) {
      problems.push(`run end: signed for ${payload.receipt_count} receipts, ${bundle.receipts.length} present`);
    }
    if (payload.receipt_head !== head) problems.push('run end: signed receipt head does not match the receipts');
  }
  return { valid: problems.length === 0, receipt_count: bundle.receipts.length, receipt_head: head, problems };
}

/** What is wrong with a signature, or undefined: checked only under the key its own key_id names. */
function signatureProblem(keys: readonly PublishedReceiptKey[], keyId: string, payload: unknown, signature: string): string | undefined {
  const publicKey = publishedKey(keys, keyId);
  if (publicKey === undefined) return `signed with key ${JSON.stringify(keyId.slice(0, 64))}, which billing does not publish`;
  return verifySignature(publicKey, canonicalBytes(payload), signature) ? undefined : 'signature is not valid';
}
