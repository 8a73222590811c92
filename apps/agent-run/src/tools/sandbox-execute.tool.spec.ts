import { describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { rpcFailingOn } from '@drael/test-support';
import { RpcError } from '@drael/nats-rpc';
import { SandboxExecuteTool } from './sandbox-execute.tool.js';

/** The sandbox's side of NATS as this tool sees it: sandbox.run.v1 fails with `failure`; every request is recorded. */
const sandboxFailingWith = (failure: RpcError) => rpcFailingOn(sandboxCatalog.run, failure, (payload) => ({ run_id: payload.run_id, cancelled: true }));

const ctx = () => ({ accountId: 'acct-b', runId: 'run-1', signal: new AbortController().signal });

describe('sandbox.execute', () => {
  it('cancels its sandbox run when the request gets no answer in time (issue F8: the queued run would run for nobody)', async () => {
    const { rpc, sent } = sandboxFailingWith(new RpcError('timeout', 'sandbox: no reply within 60000 ms', true));
    expect(await new SandboxExecuteTool(rpc).execute({ runtime: 'python', code: 'print(1)' }, ctx())).toMatchObject({ ok: false, ran: false });
    const run = sent.find((m) => m.subject === sandboxCatalog.run.subject);
    expect(sent.filter((m) => m.subject === sandboxCatalog.runCancel.subject)).toEqual([
      { subject: sandboxCatalog.runCancel.subject, payload: { tenant: 'acct-b', run_id: run?.payload.run_id } },
    ]);
  });

  it('sends no cancel for a run the sandbox refused: it never existed', async () => {
    const { rpc, sent } = sandboxFailingWith(new RpcError('sandbox_busy', "this tenant's share of the sandbox is taken", true));
    expect(await new SandboxExecuteTool(rpc).execute({ runtime: 'python', code: 'print(1)' }, ctx())).toMatchObject({ ok: false, ran: false });
    expect(sent.map((m) => m.subject)).toEqual([sandboxCatalog.run.subject]);
  });
});
