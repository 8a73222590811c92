import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Where a value lives: the ciphertext is bound to it, so a value copied to another row or column does not decrypt. */
export interface FieldRef {
  table: string;
  id: string;
  column: string;
}

export class DecryptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DecryptError';
  }
}

const PREFIX = 'enc1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM for columns encrypted at rest (spec 03: agent instructions, run task input and run
 * output). Each value carries the id of the key that sealed it, so keys rotate: new values use the
 * active key, old values still open with the key they name. The additional data is the row's
 * table, id and column.
 */
export class FieldCipher {
  private readonly keys: ReadonlyMap<string, Buffer>;

  constructor(
    keys: ReadonlyMap<string, Buffer>,
    private readonly activeKeyId: string,
  ) {
    for (const [id, key] of keys) {
      if (key.length !== 32) throw new Error(`data key ${id} is not 32 bytes`);
      if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`data key id ${id} must be letters, digits, _ or -`);
    }
    if (!keys.has(activeKeyId)) throw new Error(`active data key ${activeKeyId} is not among the keys`);
    this.keys = keys;
  }

  /** Parses `id:base64key,id2:base64key`. */
  static fromConfig(keyList: string, activeKeyId: string): FieldCipher {
    const keys = new Map<string, Buffer>();
    for (const part of keyList
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const at = part.indexOf(':');
      if (at <= 0) throw new Error('data keys are written id:base64key, comma separated');
      keys.set(part.slice(0, at), Buffer.from(part.slice(at + 1), 'base64'));
    }
    return new FieldCipher(keys, activeKeyId);
  }

  encrypt(plaintext: string, ref: FieldRef): string {
    const key = this.keys.get(this.activeKeyId)!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad(ref));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}:${this.activeKeyId}:${iv.toString('base64url')}:${body.toString('base64url')}`;
  }

  decrypt(value: string, ref: FieldRef): string {
    const [prefix, keyId, ivText, bodyText, ...rest] = value.split(':');
    if (prefix !== PREFIX || !keyId || ivText === undefined || bodyText === undefined || rest.length > 0) {
      throw new DecryptError(`${ref.table}.${ref.column} of ${ref.id} is not an encrypted value`);
    }
    const key = this.keys.get(keyId);
    if (!key) throw new DecryptError(`data key ${keyId} is not configured`);
    const iv = Buffer.from(ivText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    if (iv.length !== IV_BYTES || body.length < TAG_BYTES) throw new DecryptError('encrypted value is truncated');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(aad(ref));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new DecryptError(`${ref.table}.${ref.column} of ${ref.id} failed authentication (altered, or moved from another row)`);
    }
  }

  /** The key id a stored value was sealed with (for re-encryption after a rotation). */
  static keyIdOf(value: string): string | undefined {
    const [prefix, keyId] = value.split(':');
    return prefix === PREFIX ? keyId : undefined;
  }
}

function aad(ref: FieldRef): Buffer {
  // Length-prefixed so that ("ab","c") and ("a","bc") never give the same bytes.
  return Buffer.from(JSON.stringify([ref.table, ref.id, ref.column]), 'utf8');
}
