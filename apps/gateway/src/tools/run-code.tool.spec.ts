import { describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { rpcFailingOn } from '@drael/test-support';
import { RpcError } from '@drael/nats-rpc';
import type { Caller } from '../auth/identity.js';
import { Workspace } from '../sessions/workspace.js';
import { RunCodeTool } from './run-code.tool.js';
import type { ServiceHealth } from './service-health.js';
import type { ToolContext } from './server-tool.js';

/** The sandbox's side of NATS as this tool sees it: sandbox.run.v1 fails with `failure`; every request is recorded. */
const sandboxFailingWith = (failure: RpcError) => rpcFailingOn(sandboxCatalog.run, failure, (payload) => ({ run_id: payload.run_id, cancelled: true }));

function contextOf(signal = new AbortController().signal): ToolContext {
  const caller = { account_id: 'acct-b', tool_level: 'l3_shell', plan: 'pro' } as unknown as Caller;
  return { caller, workspace: Workspace.of(caller, undefined), requestId: 'req-1', signal, callId: 'call-1', ordinal: 1 };
}

describe('run_code', () => {
  it('cancels its run when the request to the sandbox gets no answer in time (issue F8: the queued run would run for nobody)', async () => {
    const { rpc, sent } = sandboxFailingWith(new RpcError('timeout', 'sandbox: no reply within 31000 ms', true));
    const result = await new RunCodeTool(rpc, {} as ServiceHealth).run({ runtime: 'bash', code: 'sleep 20', timeout_s: 1 }, contextOf());
    expect(result).toMatchObject({ ok: false });
    const run = sent.find((m) => m.subject === sandboxCatalog.run.subject);
    expect(sent.filter((m) => m.subject === sandboxCatalog.runCancel.subject)).toEqual([
      { subject: sandboxCatalog.runCancel.subject, payload: { tenant: 'acct-b', run_id: run?.payload.run_id } },
    ]);
  });

  it('sends no cancel for a run the sandbox refused: it never existed', async () => {
    const { rpc, sent } = sandboxFailingWith(new RpcError('sandbox_busy', "this tenant's share of the sandbox is taken", true));
    expect(await new RunCodeTool(rpc, {} as ServiceHealth).run({ runtime: 'bash', code: 'echo hi' }, contextOf())).toMatchObject({ ok: false });
    expect(sent.map((m) => m.subject)).toEqual([sandboxCatalog.run.subject]);
  });
});
