import { SandboxError } from '../sandbox-error.js';
import { isStagingPath, UPLOAD_STAGING_DIR } from '../workspace/upload-staging.js';

/**
 * Characters no file the file API writes may have in its name: control characters (C0, DEL, C1: a
 * line break in a name forges lines in any listing) and the bidirectional controls (U+061C,
 * U+200E-F, U+202A-E, U+2066-9), which make `invoice<U+202E>fdp.exe` show as "invoiceexe.pdf".
 * Other invisible characters stay allowed: the zero-width joiner is part of emoji sequences.
 */
const SPOOFING = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * A workspace-relative path: components of 1–255 bytes, no `.`/`..`, no NUL, no leading `/`,
 * at most 32 deep, not in the uploads' staging directory. Anything else is refused before it is joined to a host path. Names are not
 * normalised (NFC): a file the code wrote under another spelling stays reachable by its own name.
 */
export function parseWorkspacePath(input: string): string {
  const parts = input.replace(/^\.\//, '').split('/');
  const bad = (why: string) => new SandboxError('invalid_path', `path ${JSON.stringify(input.slice(0, 200))}: ${why}`, false, { param: 'path' });
  if (input.startsWith('/')) throw bad('must be relative to the workspace');
  if (parts.length > 32) throw bad('more than 32 components');
  for (const p of parts) {
    if (p === '') throw bad('empty component');
    if (p === '.' || p === '..') throw bad('`.` and `..` are not allowed');
    if (p.includes('\0')) throw bad('NUL byte');
    if (Buffer.byteLength(p) > 255) throw bad('component longer than 255 bytes');
  }
  const rel = parts.join('/');
  // Uploads in progress are staged there: no file call reads, writes or deletes them by path.
  if (isStagingPath(rel)) throw bad(`${UPLOAD_STAGING_DIR} is reserved for uploads in progress`);
  return rel;
}

/**
 * The path of a file the file API is to write: a workspace path whose name holds no control or
 * bidirectional character (SPOOFING). Only writes are held to it: a file code wrote under such a
 * name stays readable and deletable through the API.
 */
export function parseNewFilePath(input: string): string {
  const rel = parseWorkspacePath(input);
  if (SPOOFING.test(rel)) {
    throw new SandboxError('invalid_path', `path ${JSON.stringify(input.slice(0, 200))}: a control or bidirectional-text character`, false, { param: 'path' });
  }
  return rel;
}
