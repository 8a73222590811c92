import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { sandboxCatalog } from '@drael/contracts';
import { NatsRpcClient, isAnswerLost, isRpcError } from '@drael/nats-rpc';
import { z } from 'zod';
import { toolError, type AgentToolDefinition, type ToolContext, type ToolOutcome } from './agent-tool.js';

// spec 03: the tool result carries up to 8,000 characters of stdout and 4,000 of stderr.
const MAX_STDOUT_CHARS = 8_000;
const MAX_STDERR_CHARS = 4_000;
// spec 03: executions run with the standard sandbox limits, at most 30 seconds.
const TIMEOUT_S = 30;

const Args = z.object({ runtime: z.enum(['python', 'node']), code: z.string() }).strict();
type Args = z.infer<typeof Args>;

/** sandbox.execute, shown to the model as sandbox_execute with exactly spec 03's schema. */
@Injectable()
export class SandboxExecuteTool implements AgentToolDefinition<Args> {
  readonly registryName = 'sandbox.execute' as const;
  readonly functionName = 'sandbox_execute';
  readonly description = 'Execute Python or Node.js code in an isolated sandbox with no network access, a 30 second limit and capped output. Returns exit code, stdout and stderr.';
  readonly parameters = {
    type: 'object',
    properties: {
      runtime: { type: 'string', enum: ['python', 'node'] },
      code: { type: 'string', description: 'Complete program source. Print results to stdout.' },
    },
    required: ['runtime', 'code'],
    additionalProperties: false,
  };
  readonly args = Args;
  readonly timeoutS = TIMEOUT_S;

  constructor(private readonly rpc: NatsRpcClient) {}

  async execute(args: Args, ctx: ToolContext): Promise<ToolOutcome> {
    // A named sandbox run can be stopped: when the agent run is cancelled (or times out) its
    // container is killed, not left to finish its 30 s.
    const sandboxRunId = `ar_${randomBytes(9).toString('base64url')}`;
    // A broadcast: the sandbox replica running it answers, the others stay silent; nobody waits for it.
    const cancel = () => {
      this.rpc.request(sandboxCatalog.runCancel, { tenant: ctx.accountId, run_id: sandboxRunId }).catch(() => undefined);
    };
    ctx.signal.addEventListener('abort', cancel, { once: true });
    try {
      const r = await this.rpc.request(
        sandboxCatalog.run,
        { tenant: ctx.accountId, runtime: args.runtime, code: args.code, timeout_s: TIMEOUT_S, network: false, run_id: sandboxRunId },
        { signal: ctx.signal },
      );
      const status = r.timed_out ? 'timed_out' : r.ok ? 'ok' : 'error';
      const content = JSON.stringify({
        status,
        exit_code: r.exit_code,
        stdout: r.stdout.slice(0, MAX_STDOUT_CHARS),
        stderr: r.stderr.slice(0, MAX_STDERR_CHARS),
      });
      return {
        content,
        ok: status === 'ok',
        ran: true,
        durationS: r.duration_s,
        usage: { runtime: args.runtime, exit_code: r.exit_code, duration_ms: Math.round(r.duration_s * 1000) },
      };
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      // No answer came (the wait for it ran out, or the replica stopped answering): the execution
      // may still wait for a sandbox slot or run, for nobody (issue F8). Stopped as on a cancel.
      if (isAnswerLost(err)) cancel();
      // The sandbox refused or could not run it: a tool error for the model, and nothing to bill.
      const code = isRpcError(err) ? err.code : 'internal';
      const message = err instanceof Error ? err.message : String(err);
      return { content: toolError(code, message), ok: false, ran: false, durationS: 0, usage: {} };
    } finally {
      ctx.signal.removeEventListener('abort', cancel);
    }
  }
}
