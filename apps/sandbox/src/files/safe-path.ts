import { SandboxError } from '../sandbox-error.js';

/**
 * A workspace-relative path: components of 1–255 bytes, no `.`/`..`, no NUL, no leading `/`,
 * at most 32 deep. Anything else is refused before it is joined to a host path.
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
  return parts.join('/');
}
