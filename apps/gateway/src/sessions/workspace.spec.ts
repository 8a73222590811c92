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

  it('without: a request-scoped workspace with a fresh unguessable id, named at its first use and discarded only once used', () => {
    const a = Workspace.of(caller, undefined);
    const b = Workspace.of(caller, undefined);
    // Nothing used it: nothing to delete, and nothing to name it by.
    expect(a.needsDiscard).toBe(false);
    expect(() => a.ref).toThrow();
    const fields = a.use();
    expect(fields.scope).toBe('request');
    expect(fields.tenant).toBe('acct_1');
    expect(fields.session).toMatch(/^req_[0-9a-f]{32}$/);
    expect(SessionIdSchema.safeParse(fields.session).success).toBe(true);
    // Every later use (each run_code of the request, its sub-agents) names the same workspace.
    expect(a.use()).toBe(fields);
    expect(a.ref).toBe(fields);
    expect(b.use().session).not.toBe(fields.session);
    expect(a.clientSession).toBeUndefined();
    expect(a.needsDiscard).toBe(true);
  });
});
