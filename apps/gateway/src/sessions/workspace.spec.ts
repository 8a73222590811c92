import { describe, expect, it } from 'vitest';
import { SessionIdSchema } from '@drael/contracts';
import { Workspace } from './workspace.js';

const caller = { account_id: 'acct_1', tool_level: 'l3_shell' as const, plan: 'pro' };

describe('Workspace', () => {
  it("with X-Drael-Session: the client's session under the key's account, never discarded", () => {
    const ws = Workspace.of(caller, 'my-session');
    expect(ws.use()).toEqual({ tenant: 'acct_1', session: 'my-session', scope: 'session' });
    expect(ws.clientSession).toBe('my-session');
    expect(ws.needsDiscard).toBe(false);
  });

  it('without: a request-scoped workspace with a fresh unguessable id, discarded only once something used it', () => {
    const a = Workspace.of(caller, undefined);
    const b = Workspace.of(caller, undefined);
    expect(a.ref.scope).toBe('request');
    expect(a.ref.tenant).toBe('acct_1');
    expect(a.ref.session).not.toBe(b.ref.session);
    expect(a.ref.session).toMatch(/^req_[0-9a-f]{32}$/);
    expect(SessionIdSchema.safeParse(a.ref.session).success).toBe(true);
    expect(a.clientSession).toBeUndefined();
    // Nothing created it: nothing to delete.
    expect(a.needsDiscard).toBe(false);
    a.use();
    expect(a.needsDiscard).toBe(true);
  });
});
