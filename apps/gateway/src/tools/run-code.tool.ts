import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { MAX_TIMEOUT_S, sandboxCatalog, type SandboxRunReply } from '@drael/contracts';
import { NatsRpcClient, isAnswerLost } from '@drael/nats-rpc';
import { ServiceHealth } from './service-health.js';
import { parseArguments } from './tool-arguments.js';
import { cutText, failureOf, type ToolResult } from './tool-result.js';
import type { FunctionToolDefinition, ServerTool, ToolContext } from './server-tool.js';
import { randomId } from '../ids.js';

const ArgsSchema = z.object({
  runtime: z.enum(['python', 'bash']),
  code: z.string().min(1),
  // spec 01: 30 s unless asked for longer, never more than 5 minutes (the sandbox enforces it too).
  timeout_s: z.number().int().min(1).max(MAX_TIMEOUT_S).optional(),
  network: z.boolean().optional(),
});

/**
 * run_code → sandbox.run.v1, in the request's workspace: the X-Drael-Session session under the
 * caller's account, or without the header the request's own (shared by its runs, deleted when
 * the request ends). The result carries at most 8 KiB of each stream (spec 01), and `truncated`
 * reports both cuts: the sandbox's 64 KiB one and ours.
 */
@Injectable()
export class RunCodeTool implements ServerTool {
  readonly name = 'run_code' as const;

  constructor(
    private readonly rpc: NatsRpcClient,
    private readonly health: ServiceHealth,
  ) {}

  definition(): FunctionToolDefinition {
    return {
      type: 'function',
      function: {
        name: this.name,
        description: 'Run a Python or bash program in a fresh sandbox. Session files are in the working directory. No network unless network is true.',
        parameters: {
          type: 'object',
          properties: {
            runtime: { type: 'string', enum: ['python', 'bash'] },
            code: { type: 'string', description: 'Program source; print results' },
            timeout_s: { type: 'integer', description: 'Default 30, max 300' },
            network: { type: 'boolean' },
          },
          required: ['runtime', 'code'],
        },
      },
    };
  }

  isWired(): boolean | Promise<boolean> {
    return this.health.isUp('sandbox');
  }

  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const parsed = parseArguments(ArgsSchema, args);
    if (!parsed.ok) return parsed.result;
    // A named run can be stopped: when the client goes away mid-loop its container is killed.
    const runId = `run_${randomId()}`;
    const workspace = ctx.workspace.use();
    // A broadcast: the replica running it answers, the others stay silent; nobody waits for it.
    const cancel = () => {
      this.rpc.request(sandboxCatalog.runCancel, { tenant: workspace.tenant, run_id: runId }, { requestId: ctx.requestId }).catch(() => undefined);
    };
    ctx.signal.addEventListener('abort', cancel, { once: true });
    let reply: SandboxRunReply;
    try {
      reply = await this.rpc.request(sandboxCatalog.run, { ...workspace, ...parsed.value, run_id: runId }, { signal: ctx.signal, requestId: ctx.requestId });
    } catch (err) {
      // No answer came (the wait for it ran out, or the replica stopped answering): the run may
      // still wait for a slot or run, for nobody (issue F8). Stopped as on a hang-up.
      if (!ctx.signal.aborted && isAnswerLost(err)) cancel();
      return failureOf(err, 'sandbox_failed');
    } finally {
      ctx.signal.removeEventListener('abort', cancel);
    }
    return shapeRun(reply);
  }
}

/** The sandbox's reply as the model reads it. */
export function shapeRun(reply: SandboxRunReply): ToolResult {
  const stdout = cutText(reply.stdout);
  const stderr = cutText(reply.stderr);
  const result: ToolResult = {
    ok: reply.ok,
    exit_code: reply.exit_code,
    stdout: stdout.text,
    stderr: stderr.text,
    truncated: { stdout: reply.truncated.stdout || stdout.cut, stderr: reply.truncated.stderr || stderr.cut },
    timed_out: reply.timed_out,
    duration_s: reply.duration_s,
  };
  if (!reply.ok) {
    result.why = reply.timed_out
      ? 'the program ran past its time limit and was stopped'
      : reply.oom_killed
        ? 'the program ran out of memory and was stopped'
        : `the program exited with code ${String(reply.exit_code)}`;
  }
  // The run happened, but its session's files could not be kept (the workspace holds more names or
  // path bytes than a save keeps): the model is told, so it can delete what it made and go on.
  if (reply.unsaved) result.files_not_saved = reply.unsaved.message;
  return result;
}
