import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export interface ConsoleFile {
  readonly body: Buffer;
  readonly gzip: Buffer | undefined;
  readonly type: string;
  readonly etag: string;
  /** Vite's hashed assets never change under their name; index.html must be asked for each time. */
  readonly immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** apps/gateway/dist/console/ → apps/console/dist/ (the repository's and the image's layout). */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../../console/dist/', import.meta.url));

/**
 * The console's files, read once at boot into memory (the whole bundle is a few hundred kB).
 * Serving only names found here means no request path ever reaches the file system, so there is
 * no traversal to guard against; a file type not in TYPES is left out.
 */
export function loadConsoleFiles(dir: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  if (!existsSync(join(dir, 'index.html'))) return files;
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else {
        const type = TYPES[extname(name).toLowerCase()];
        if (!type) continue;
        const body = readFileSync(full);
        const path = relative(dir, full).split(sep).join('/');
        const gz = body.length > 1024 && !/^(image\/png|font\/)/.test(type) ? gzipSync(body, { level: 9 }) : undefined;
        files.set(path, {
          body,
          gzip: gz && gz.length < body.length ? gz : undefined,
          type,
          etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
          immutable: path.startsWith('assets/'),
        });
      }
    }
  };
  walk(dir);
  return files;
}

/** The console's files in memory, built once at boot. */
export const CONSOLE_FILES = Symbol('CONSOLE_FILES');
