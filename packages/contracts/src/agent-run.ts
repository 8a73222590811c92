import { z } from 'zod';
import { COMMON_ERROR_CODES, subjectErrors } from './wire-error.js';
import { defineEntry } from './rpc-entry.js';
import { healthEntry } from './health.js';
import { AccountIdSchema, levelAtLeast, MAX_INT4, ReceiptKeySetSchema, ReceiptSchema, RunEndSchema, StepKindSchema, ToolLevelSchema, type ToolLevel } from './billing.js';
import { storedText } from './stored-text.js';
import { IdempotencyKeySchema } from './idempotency.js';
import { ListPageQueryShape } from './list-page.js';

export const AGENT_RUN_ERROR_CODES = [
  ...COMMON_ERROR_CODES,
  'agent_not_found',
  'run_not_found',
  'invalid_task',
  // The key's tool level does not allow a tool of the agent (spec 04): 403.
  'tool_not_allowed',
  // The same Idempotency-Key with another request (another task or another agent): 409.
  'idempotency_key_reused',
  // Cancelling a run that has already ended: 409.
  'run_already_finished',
  // The account has AGENT_RUN_ACCOUNT_MAX_QUEUED runs waiting already: 429, nothing queued.
  'too_many_queued_runs',
  // The account has AGENT_RUN_ACCOUNT_MAX_AGENTS live agents already: 429, nothing created; delete some.
  'quota_exceeded',
  // The account's available balance (billing's wallet) cannot pay the least first step of a run:
  // 429, nothing stored; retry after a top-up. The same code billing ends a run with mid-way.
  'insufficient_balance',
] as const;
export type AgentRunErrorCode = (typeof AGENT_RUN_ERROR_CODES)[number];

// spec 03: a run starts from a task of 1–50,000 characters.
export const MIN_TASK_CHARS = 1;
export const MAX_TASK_CHARS = 50_000;

/** Why a task cannot start a run (spec 03: 1–50,000 characters, counted as code points), or null. */
export function taskProblem(task: string): string | null {
  // Counting code points of a string of millions of characters is wasted work: anything longer
  // than two UTF-16 units per allowed character is too long whatever it holds.
  const length = task.length > 2 * MAX_TASK_CHARS ? task.length : [...task].length;
  if (length >= MIN_TASK_CHARS && length <= MAX_TASK_CHARS) return null;
  return `task must be ${MIN_TASK_CHARS}–${MAX_TASK_CHARS.toLocaleString('en-US')} characters, got ${length}`;
}

/** Tools an agent may be given, by registry name (spec 03: sandbox.execute is shown to the model as sandbox_execute). */
export const AGENT_TOOLS = ['sandbox.execute'] as const;
export const AgentToolSchema = z.enum(AGENT_TOOLS);
export type AgentTool = z.infer<typeof AgentToolSchema>;

/**
 * The tool level a key needs for each agent tool (spec 04: the level is a property of the key;
 * `none` disables every executed tool). sandbox.execute runs code as run_code does, so it needs
 * what run_code needs in the gateway's catalogue (apps/gateway/src/tools/tool-levels.ts, whose
 * test holds the two together).
 */
export const AGENT_TOOL_LEVEL: Readonly<Record<AgentTool, ToolLevel>> = { 'sandbox.execute': 'l3_shell' };

/** The agent tools a key of `level` may not use, in the order given. */
export function toolsBeyondLevel(level: ToolLevel, tools: readonly string[]): string[] {
  return tools.filter((t) => {
    const min = AGENT_TOOL_LEVEL[t as AgentTool] as ToolLevel | undefined;
    return !min || !levelAtLeast(level, min);
  });
}

/**
 * `cancelling`: cancel was asked while the run was executing; its operation in flight is being
 * stopped and it ends `cancelled` (a queued run is cancelled at once).
 */
export const RUN_STATUSES = ['queued', 'running', 'cancelling', 'succeeded', 'failed', 'budget_exceeded', 'step_limit_reached', 'timed_out', 'cancelled'] as const;
export const RunStatusSchema = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatusSchema>;
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = RUN_STATUSES.filter((s) => s !== 'queued' && s !== 'running' && s !== 'cancelling');

/**
 * A step is one operation of a run: one model call, or one tool call the model asked for (executed
 * or refused). `step_count` is how many steps a run has taken, the entries of its steps list;
 * `step_limit` caps it: a run never takes more steps than its limit and ends
 * `step_limit_reached` when the next step would pass it.
 */
export const AgentLimitsSchema = z.object({
  step_limit: z.number().int().min(1).max(200).default(20),
  // USD the run may spend in total; held in integer micro-dollars inside agent-run.
  budget_usd: z.number().positive().max(1000).default(1),
});
export type AgentLimits = z.infer<typeof AgentLimitsSchema>;

const AgentFields = {
  name: storedText(1, 200),
  model: storedText(1, 200),
  instructions: z.string().max(100_000),
  tools: z.array(AgentToolSchema).max(AGENT_TOOLS.length),
};

export const AgentSchema = z.object({
  id: z.string(),
  account_id: AccountIdSchema,
  ...AgentFields,
  limits: AgentLimitsSchema,
  created_at: z.string(),
  updated_at: z.string(),
});
export type Agent = z.infer<typeof AgentSchema>;

export const AgentCreateBodySchema = z
  .object({
    name: AgentFields.name.default('agent'),
    model: AgentFields.model,
    instructions: AgentFields.instructions.default(''),
    tools: AgentFields.tools.default([]),
    limits: AgentLimitsSchema.default({ step_limit: 20, budget_usd: 1 }),
  })
  .strict();
export const AgentUpdateBodySchema = z
  .object({
    name: AgentFields.name.optional(),
    model: AgentFields.model.optional(),
    instructions: AgentFields.instructions.optional(),
    tools: AgentFields.tools.optional(),
    limits: z.object({ step_limit: AgentLimitsSchema.shape.step_limit.optional(), budget_usd: AgentLimitsSchema.shape.budget_usd.optional() }).strict().optional(),
  })
  .strict();

export const RunErrorSchema = z.object({ code: z.string(), message: z.string() });

export const RunSchema = z.object({
  id: z.string(),
  account_id: AccountIdSchema,
  agent_id: z.string(),
  status: RunStatusSchema,
  task: z.string(),
  output: z.string().nullable(),
  error: RunErrorSchema.nullable(),
  budget_usd: z.number(),
  spent_usd: z.number(),
  step_count: z.number().int(),
  receipt_count: z.number().int(),
  receipt_head: z.string().nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
export type Run = z.infer<typeof RunSchema>;

/** A step as the public API shows it: what happened and what it cost, never the content. */
export const RunStepSchema = z.object({
  run_id: z.string(),
  sequence: z.number().int().nonnegative(),
  kind: StepKindSchema,
  status: z.enum(['ok', 'error']),
  cost_usd: z.number(),
  detail: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});
export type RunStep = z.infer<typeof RunStepSchema>;

const Hex32 = z.string().regex(/^[0-9a-f]{64}$/);

export const RunReceiptsSchema = z.object({
  run_id: z.string(),
  receipts: z.array(ReceiptSchema),
  run_end: RunEndSchema.nullable(),
  /** The key that signs now (kept for verifiers of one key); `keys` is the whole published set. */
  public_key: Hex32,
  key_id: z.string(),
  keys: ReceiptKeySetSchema.shape.keys,
});
export type RunReceipts = z.infer<typeof RunReceiptsSchema>;

export const VerifyResultSchema = z.object({
  valid: z.boolean(),
  receipt_count: z.number().int(),
  receipt_head: Hex32,
  problems: z.array(z.string()),
});
export type VerifyResult = z.infer<typeof VerifyResultSchema>;

export const RunEventSchema = z.object({
  seq: z.number().int().positive(),
  type: z.enum(['run.status', 'run.step', 'run.done']),
  data: z.record(z.string(), z.unknown()),
});
export type RunEvent = z.infer<typeof RunEventSchema>;

const Scope = { account_id: AccountIdSchema };
export const AgentIdSchema = storedText(1, 64);
export const RunIdSchema = storedText(1, 64);
const AgentRef = { ...Scope, agent_id: AgentIdSchema };
const RunRef = { ...Scope, run_id: RunIdSchema };
// The tool level of the key that asks (spec 04): agent-run holds an agent's tools and every run to it.
const Caller = { tool_level: ToolLevelSchema };

/**
 * OpenAI's list paging (list-page.ts: limit, order, ordered by creation time then id), kept by
 * keyset in the database: `after`/`before` name an object of the list (its id) and ask for what
 * follows or precedes it in that order. `has_more` says whether anything lies beyond the page.
 * A page holds at most `limit` objects and fewer when they would not fit in one NATS reply (large
 * instructions or tasks): then `has_more` is true and the page's last id continues it.
 */
export const CursorPageSchema = z.object({
  limit: ListPageQueryShape.limit,
  order: ListPageQueryShape.order,
  after: storedText(1, 64).optional(),
  before: storedText(1, 64).optional(),
});
export type CursorPage = z.output<typeof CursorPageSchema>;
const CursorPageShape = CursorPageSchema.shape;

/** One agent-run subject's codes: the common ones and those its handler can throw. */
const errors = subjectErrors<AgentRunErrorCode>();
const entry = <Req extends z.ZodType, Res extends z.ZodType, Code extends string>(subject: string, request: Req, reply: Res, codes: readonly Code[], timeoutMs = 5_000) =>
  defineEntry({ subject, service: 'agent-run', request, reply, errors: codes, timeoutMs });

export const agentRunCatalog = {
  health: healthEntry('agent-run'),
  createAgent: entry('agent-run.agents.create.v1', z.object({ ...Scope, ...Caller, agent: AgentCreateBodySchema }), AgentSchema, errors('tool_not_allowed', 'quota_exceeded')),
  getAgent: entry('agent-run.agents.get.v1', z.object(AgentRef), AgentSchema, errors('agent_not_found')),
  listAgents: entry('agent-run.agents.list.v1', z.object({ ...Scope, ...CursorPageShape }), z.object({ agents: z.array(AgentSchema), has_more: z.boolean() }), errors()),
  updateAgent: entry('agent-run.agents.update.v1', z.object({ ...AgentRef, ...Caller, patch: AgentUpdateBodySchema }), AgentSchema, errors('agent_not_found', 'tool_not_allowed')),
  // The key that deletes an agent must be allowed its tools, as for an update (tool_not_allowed).
  deleteAgent: entry(
    'agent-run.agents.delete.v1',
    z.object({ ...AgentRef, ...Caller }),
    z.object({ id: z.string(), deleted: z.boolean() }),
    errors('agent_not_found', 'tool_not_allowed'),
  ),
  createRun: entry(
    'agent-run.runs.create.v1',
    // The task length is checked by the service so that it answers `invalid_task`, not a generic bad_request.
    z.object({ ...AgentRef, ...Caller, task: z.string(), idempotency_key: IdempotencyKeySchema.optional() }),
    RunSchema,
    errors('agent_not_found', 'idempotency_key_reused', 'invalid_task', 'tool_not_allowed', 'too_many_queued_runs', 'insufficient_balance'),
  ),
  getRun: entry('agent-run.runs.get.v1', z.object(RunRef), RunSchema, errors('run_not_found')),
  listRuns: entry(
    'agent-run.runs.list.v1',
    z.object({ ...Scope, ...CursorPageShape, agent_id: AgentIdSchema.optional() }),
    z.object({ runs: z.array(RunSchema), has_more: z.boolean() }),
    errors(),
  ),
  listSteps: entry('agent-run.runs.steps.v1', z.object(RunRef), z.object({ steps: z.array(RunStepSchema) }), errors('run_not_found')),
  listReceipts: entry('agent-run.runs.receipts.v1', z.object(RunRef), RunReceiptsSchema, errors('run_not_found')),
  // Answers at once: a queued run `cancelled`, a running one `cancelling` (its operation in flight
  // is stopped, the run ends `cancelled`); an ended run is `run_already_finished`.
  cancelRun: entry('agent-run.runs.cancel.v1', z.object(RunRef), RunSchema, errors('run_not_found', 'run_already_finished')),
  verifyRun: entry('agent-run.runs.verify.v1', z.object(RunRef), VerifyResultSchema, errors('run_not_found')),
  // Long poll: answers as soon as there are events after `after`, or empty after `wait_ms`.
  runEvents: entry(
    'agent-run.runs.events.v1',
    z.object({ ...RunRef, after: z.number().int().nonnegative().max(MAX_INT4).default(0), wait_ms: z.number().int().min(0).max(20_000).default(10_000) }),
    z.object({ events: z.array(RunEventSchema), done: z.boolean() }),
    errors('run_not_found'),
    25_000,
  ),
  // billing signs receipts; this answers billing's public key (kept for callers of this subject).
  publicKey: entry('agent-run.receipts.key.v1', z.object({}).strict(), ReceiptKeySetSchema, errors()),
} as const;
