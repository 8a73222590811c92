/**
 * Who the console speaks as: an API key (the account's pages) or the admin token (the operator's).
 * Kept in this tab's sessionStorage only (issue 23): never localStorage, a cookie, a URL or a log;
 * closing the tab forgets it.
 */
export type Credential = { kind: 'key' | 'admin'; secret: string };

const SLOT = 'drael.console.credential';

export function loadCredential(): Credential | undefined {
  try {
    const raw = sessionStorage.getItem(SLOT);
    if (!raw) return undefined;
    const c = JSON.parse(raw) as Partial<Credential>;
    return (c.kind === 'key' || c.kind === 'admin') && typeof c.secret === 'string' && c.secret ? { kind: c.kind, secret: c.secret } : undefined;
  } catch {
    return undefined;
  }
}

export function saveCredential(c: Credential): void {
  sessionStorage.setItem(SLOT, JSON.stringify(c));
}

export function forgetCredential(): void {
  sessionStorage.removeItem(SLOT);
}
