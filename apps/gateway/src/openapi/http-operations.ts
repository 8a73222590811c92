import { z } from 'zod';
import {
  AgentCreateBodySchema,
  AgentSchema,
  AgentUpdateBodySchema,
  agentRunCatalog,
  billingCatalog,
  FetchPageReplySchema,
  FetchToolHttpRequestSchema,
  PlanSchema,
  RunSchema,
  RunStepSchema,
  UsageDaySchema,
  sandboxCatalog,
  SESSION_ID_RULE,
} from '@drael/contracts';
import { AgentLimitsBody, CreateAccountBody, CreateKeyBody, ExtraUsageBody, ListAccountsQuery, WalletCreditBody } from '../admin/admin.controller.js';
import { AgentListQuerySchema, RunCreateBodySchema } from '../agents/agents.controller.js';
import type { RouteAccess } from '../auth/route-access.js';
import { DailyQuery } from '../billing-api/billing-api.controller.js';
import { ChatCompletionRequestSchema } from '../openai/chat-completion.schema.js';
import { EmbeddingsRequestSchema, EmbeddingsResponseSchema } from '../openai/embeddings.schema.js';
import { ListQuerySchema } from '../openai/list-query.js';
import { CreateResponseSchema, RetrieveResponseQuerySchema } from '../responses/responses.schema.js';
import { SearchToolRequestSchema, SearchToolResponseSchema } from '../tools-api/search/search-tool.schema.js';
import {
  ChatCompletionSchema,
  DeletedSchema,
  FileListingSchema,
  HealthzSchema,
  InputItemResourceSchema,
  listOf,
  ModelObjectSchema,
  NotReadySchema,
  plainListOf,
  ReadyzSchema,
  ResponseObjectSchema,
  SessionListSchema,
} from './http-replies.schema.js';

/** What one status of an operation answers: a JSON body (its zod schema), a stream, bytes, a page, or nothing. */
export type Body =
  | { kind: 'json'; schema: z.ZodType; description: string }
  | { kind: 'sse'; description: string }
  | { kind: 'bytes'; description: string }
  | { kind: 'static'; description: string }
  | { kind: 'empty'; description: string };

/**
 * One HTTP operation of the gateway, as its controller serves it. `route` is Fastify's spelling
 * (`/v1/models/*`, `:id`), which a test compares with the routes Fastify actually registered, so
 * an operation cannot be missing here or left here after its route is gone; `path` is OpenAPI's.
 */
export interface HttpOperation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  route: string;
  operationId: string;
  tag: string;
  summary: string;
  access: RouteAccess;
  /** The request body as validated by the route (the same zod schema). */
  body?: { schema: z.ZodType } | { bytes: true };
  query?: z.ZodObject;
  headers?: readonly { name: string; description: string }[];
  /** Success (and other non-error) statuses; every operation also answers the error statuses in the envelope. */
  responses: Record<number, Body>;
}

const json = (schema: z.ZodType, description: string): Body => ({ kind: 'json', schema, description });
const withObject = <T extends z.ZodObject>(object: string, schema: T) => schema.extend({ object: z.literal(object) });

const IDEMPOTENCY_KEY = { name: 'Idempotency-Key', description: 'The same key with the same request answers the first result; with another request 409 idempotency_key_reused.' };
const SESSION = { name: 'X-Drael-Session', description: `The sandbox session whose files run_code sees (${SESSION_ID_RULE}); without it a throwaway workspace.` };
const SERVER_TOOLS = { name: 'X-Drael-Server-Tools', description: '`0`/`false`/`off`: a plain proxied completion without the catalogue; `1` (default): the server-side tools.' };

const Agent = withObject('agent', AgentSchema);
const Run = withObject('run', RunSchema);

export const HTTP_OPERATIONS: readonly HttpOperation[] = [
  // OpenAI surface
  {
    method: 'POST',
    route: '/v1/chat/completions',
    operationId: 'createChatCompletion',
    tag: 'chat',
    summary: 'A chat completion. Without client tools the gateway runs its tool catalogue (at most 6 turns); with `tools`/`functions` it proxies to the upstream.',
    access: 'key',
    body: { schema: ChatCompletionRequestSchema },
    headers: [SESSION, SERVER_TOOLS],
    responses: {
      200: { kind: 'json', schema: ChatCompletionSchema, description: 'The completion (`stream: false`); `x-drael-upstream` names the deployment that served it.' },
      // Documented beside the JSON answer: `stream: true` gets text/event-stream under the same status.
    },
  },
  {
    method: 'POST',
    route: '/v1/embeddings',
    operationId: 'createEmbedding',
    tag: 'embeddings',
    summary: 'Embeddings of one or more inputs (text or token arrays), from a deployment of the model alias (proxied: routing, retries and cooldowns as for chat).',
    access: 'key',
    body: { schema: EmbeddingsRequestSchema },
    responses: { 200: { kind: 'json', schema: EmbeddingsResponseSchema, description: 'The embeddings, as the deployment answered; `x-drael-upstream` names it.' } },
  },
  {
    method: 'GET',
    route: '/v1/models',
    operationId: 'listModels',
    tag: 'models',
    summary: 'The configured model aliases.',
    access: 'key',
    responses: { 200: json(plainListOf(ModelObjectSchema), 'Every alias.') },
  },
  {
    method: 'GET',
    route: '/v1/models/*',
    operationId: 'retrieveModel',
    tag: 'models',
    summary: 'One model alias (it may hold a slash); 404 model_not_found when unknown.',
    access: 'key',
    responses: { 200: json(ModelObjectSchema, 'The model object.') },
  },
  {
    method: 'POST',
    route: '/v1/responses',
    operationId: 'createResponse',
    tag: 'responses',
    summary: 'A Responses API call with hosted tools (web_search, web_fetch, tool_search, datetime) and client function tools.',
    access: 'key',
    body: { schema: CreateResponseSchema },
    headers: [SESSION],
    responses: { 200: json(ResponseObjectSchema, 'The response object (`stream: false`); `stream: true` gets text/event-stream.') },
  },
  {
    method: 'GET',
    route: '/v1/responses/:id',
    operationId: 'getResponse',
    tag: 'responses',
    summary: 'A stored response of the caller’s account. `stream=true` is a 400: there is no background response to replay.',
    access: 'key',
    query: RetrieveResponseQuerySchema,
    responses: { 200: json(ResponseObjectSchema, 'The response object.') },
  },
  {
    method: 'GET',
    route: '/v1/responses/:id/input_items',
    operationId: 'listResponseInputItems',
    tag: 'responses',
    summary: 'The input items the response was made from, paginated as OpenAI lists.',
    access: 'key',
    query: ListQuerySchema,
    responses: { 200: json(listOf(InputItemResourceSchema), 'One page.') },
  },
  {
    method: 'POST',
    route: '/v1/responses/:id/cancel',
    operationId: 'cancelResponse',
    tag: 'responses',
    summary: 'As OpenAI answers it for a foreground response: 400 "Cannot cancel a synchronous response." (404 for an unknown id).',
    access: 'key',
    responses: {},
  },
  {
    method: 'DELETE',
    route: '/v1/responses/:id',
    operationId: 'deleteResponse',
    tag: 'responses',
    summary: 'Deletes a stored response.',
    access: 'key',
    responses: { 200: json(DeletedSchema('response'), 'Deleted.') },
  },
  // Tools
  {
    method: 'POST',
    route: '/v1/tools/search',
    operationId: 'searchTool',
    tag: 'tools',
    summary: 'Web search (SearXNG behind the search service).',
    access: 'key',
    body: { schema: SearchToolRequestSchema },
    responses: { 200: json(SearchToolResponseSchema, 'The results; `found: false` with a note when nothing matched.') },
  },
  {
    method: 'POST',
    route: '/v1/tools/fetch',
    operationId: 'fetchTool',
    tag: 'tools',
    summary: 'Fetches a public page as readable text.',
    access: 'key',
    body: { schema: FetchToolHttpRequestSchema },
    responses: { 200: json(FetchPageReplySchema, 'The page.') },
  },
  // Sessions
  {
    method: 'GET',
    route: '/v1/sessions',
    operationId: 'listSessions',
    tag: 'sessions',
    summary: 'The account’s sandbox sessions, paginated.',
    access: 'key',
    query: ListQuerySchema,
    responses: { 200: json(SessionListSchema, 'One page, and what the account holds and may hold.') },
  },
  {
    method: 'GET',
    route: '/v1/sessions/:id/files',
    operationId: 'listSessionFiles',
    tag: 'sessions',
    summary: 'A session’s files and its quota.',
    access: 'key',
    responses: { 200: json(FileListingSchema, 'The files.') },
  },
  {
    method: 'GET',
    route: '/v1/sessions/:id/files/*',
    operationId: 'readSessionFile',
    tag: 'sessions',
    summary: 'One file’s bytes (the path after /files/ may hold slashes).',
    access: 'key',
    responses: { 200: { kind: 'bytes', description: 'The whole file; `x-drael-file-size` gives its size.' } },
  },
  {
    method: 'PUT',
    route: '/v1/sessions/:id/files/*',
    operationId: 'writeSessionFile',
    tag: 'sessions',
    summary: 'Stores the body’s raw bytes as the file, whatever its Content-Type.',
    access: 'key',
    body: { bytes: true },
    responses: { 200: json(sandboxCatalog.filesWrite.reply, 'Written.') },
  },
  {
    method: 'DELETE',
    route: '/v1/sessions/:id',
    operationId: 'deleteSession',
    tag: 'sessions',
    summary: 'Deletes the session with all its files.',
    access: 'key',
    responses: { 200: json(DeletedSchema('session'), 'Deleted.') },
  },
  {
    method: 'DELETE',
    route: '/v1/sessions/:id/files/*',
    operationId: 'deleteSessionFile',
    tag: 'sessions',
    summary: 'Deletes one file.',
    access: 'key',
    responses: { 200: json(sandboxCatalog.filesDelete.reply, 'Deleted (or `deleted: false` when it was not there).') },
  },
  // Agents
  {
    method: 'POST',
    route: '/v1/agents',
    operationId: 'createAgent',
    tag: 'agents',
    summary:
      'Creates a hosted agent; its tools must be allowed by the key’s tool level (403 tool_not_allowed); 429 quota_exceeded when the account already has AGENT_RUN_ACCOUNT_MAX_AGENTS agents.',
    access: 'key',
    body: { schema: AgentCreateBodySchema },
    responses: { 201: json(Agent, 'The agent.') },
  },
  {
    method: 'GET',
    route: '/v1/agents',
    operationId: 'listAgents',
    tag: 'agents',
    summary: 'The account’s agents, paginated; a page of large agents holds fewer than `limit` (what fits in one reply) with has_more true.',
    access: 'key',
    query: AgentListQuerySchema,
    responses: { 200: json(listOf(Agent), 'One page.') },
  },
  { method: 'GET', route: '/v1/agents/:agent_id', operationId: 'getAgent', tag: 'agents', summary: 'One agent.', access: 'key', responses: { 200: json(Agent, 'The agent.') } },
  {
    method: 'PATCH',
    route: '/v1/agents/:agent_id',
    operationId: 'updateAgent',
    tag: 'agents',
    summary: 'Changes an agent; the key must be allowed every tool it has and will have (403 tool_not_allowed).',
    access: 'key',
    body: { schema: AgentUpdateBodySchema },
    responses: { 200: json(Agent, 'The agent.') },
  },
  {
    method: 'DELETE',
    route: '/v1/agents/:agent_id',
    operationId: 'deleteAgent',
    tag: 'agents',
    summary: 'Deletes an agent; the key must be allowed every tool it has, as for a change (403 tool_not_allowed).',
    access: 'key',
    responses: { 200: json(withObject('agent.deleted', agentRunCatalog.deleteAgent.reply), 'Deleted.') },
  },
  {
    method: 'POST',
    route: '/v1/agents/:agent_id/runs',
    operationId: 'createRun',
    tag: 'agents',
    summary:
      'Queues a run of the agent; 429 too_many_queued_runs when the account already has AGENT_RUN_ACCOUNT_MAX_QUEUED runs queued, 429 insufficient_balance when its available balance cannot pay the least model call.',
    access: 'key',
    body: { schema: RunCreateBodySchema },
    headers: [IDEMPOTENCY_KEY],
    responses: { 202: json(Run, 'The run, queued.') },
  },
  {
    method: 'GET',
    route: '/v1/runs',
    operationId: 'listRuns',
    tag: 'agents',
    summary: 'The account’s runs, paginated (optionally of one agent); a page of large runs holds fewer than `limit` (what fits in one reply) with has_more true.',
    access: 'key',
    query: AgentListQuerySchema,
    responses: { 200: json(listOf(Run), 'One page.') },
  },
  { method: 'GET', route: '/v1/runs/:run_id', operationId: 'getRun', tag: 'agents', summary: 'One run.', access: 'key', responses: { 200: json(Run, 'The run.') } },
  {
    method: 'GET',
    route: '/v1/runs/:run_id/steps',
    operationId: 'listRunSteps',
    tag: 'agents',
    summary: 'A run’s steps (what happened and what it cost, never the content).',
    access: 'key',
    responses: { 200: json(plainListOf(withObject('run.step', RunStepSchema)), 'Every step.') },
  },
  {
    method: 'GET',
    route: '/v1/runs/:run_id/receipts',
    operationId: 'listRunReceipts',
    tag: 'agents',
    summary: 'The run’s receipt chain, its signed run end and the public key (the input of `drael-receipts verify`).',
    access: 'key',
    responses: { 200: json(agentRunCatalog.listReceipts.reply, 'The receipts.') },
  },
  {
    method: 'GET',
    route: '/v1/runs/:run_id/verify',
    operationId: 'verifyRun',
    tag: 'agents',
    summary: 'Verifies the run’s receipt chain server-side.',
    access: 'key',
    responses: { 200: json(agentRunCatalog.verifyRun.reply, 'The verdict.') },
  },
  {
    method: 'POST',
    route: '/v1/runs/:run_id/cancel',
    operationId: 'cancelRun',
    tag: 'agents',
    summary: 'Cancels a run (any key of the account): `cancelled` at once when queued, `cancelling` when running; 409 run_already_finished when it has ended.',
    access: 'key',
    responses: { 200: json(Run, 'The run.') },
  },
  {
    method: 'GET',
    route: '/v1/runs/:run_id/events',
    operationId: 'streamRunEvents',
    tag: 'agents',
    summary:
      'Server-sent events of a run (`run.status`, `run.step`, `run.done`); `Last-Event-ID` resumes; 429 too_many_event_streams past RUN_EVENT_STREAMS_PER_ACCOUNT open on one gateway replica.',
    access: 'key',
    headers: [{ name: 'Last-Event-ID', description: 'The last event id received: only later events are sent.' }],
    responses: { 200: { kind: 'sse', description: '`id: <seq>`, `event: <type>`, `data: <json>` per event; the stream ends after `run.done`.' } },
  },
  {
    method: 'GET',
    route: '/v1/receipts/public-key',
    operationId: 'getReceiptPublicKey',
    tag: 'agents',
    summary: 'Billing’s receipt keys (ed25519): the signing key, and in `keys` every key a receipt may carry.',
    access: 'key',
    responses: { 200: json(billingCatalog.receiptKey.reply, 'The published keys.') },
  },
  // Billing, as the caller sees it
  {
    method: 'GET',
    route: '/api/billing/plans',
    operationId: 'listPlans',
    tag: 'billing',
    summary: 'The plans and their weekly figures (public); ETag / If-None-Match.',
    access: 'public',
    headers: [{ name: 'If-None-Match', description: 'The ETag of a previous answer: 304 while no figure changed.' }],
    responses: { 200: json(plainListOf(PlanSchema), 'The plans.'), 304: { kind: 'empty', description: 'Not modified.' } },
  },
  {
    method: 'GET',
    route: '/api/billing/usage',
    operationId: 'getUsage',
    tag: 'billing',
    summary: 'The caller’s own account’s week: allowances, used, held, extra usage.',
    access: 'key',
    query: z.object({ account_id: z.string().optional().describe('Only the caller’s own account (another one is 404).') }),
    responses: { 200: json(billingCatalog.usage.reply, 'The usage.') },
  },
  {
    method: 'GET',
    route: '/api/billing/usage/daily',
    operationId: 'getDailyUsage',
    tag: 'billing',
    summary: 'The caller’s billed operations per UTC day.',
    access: 'key',
    query: DailyQuery,
    responses: { 200: json(plainListOf(UsageDaySchema), 'One entry per day.') },
  },
  // Operator
  {
    method: 'POST',
    route: '/admin/accounts',
    operationId: 'adminCreateAccount',
    tag: 'admin',
    summary: 'Creates an account.',
    access: 'admin',
    body: { schema: CreateAccountBody },
    responses: { 201: json(billingCatalog.createAccount.reply, 'The account.') },
  },
  {
    method: 'GET',
    route: '/admin/accounts',
    operationId: 'adminListAccounts',
    tag: 'admin',
    summary: 'Accounts, newest first; `before` = the last account_id of the previous page.',
    access: 'admin',
    query: ListAccountsQuery,
    responses: { 200: json(billingCatalog.listAccounts.reply, 'One page.') },
  },
  {
    method: 'GET',
    route: '/admin/accounts/:account/keys',
    operationId: 'adminListKeys',
    tag: 'admin',
    summary: 'The account’s keys (hint, level, limits, revoked or not); never a key itself.',
    access: 'admin',
    responses: { 200: json(billingCatalog.listKeys.reply, 'The keys.') },
  },
  {
    method: 'POST',
    route: '/admin/accounts/:account/keys',
    operationId: 'adminCreateKey',
    tag: 'admin',
    summary: 'Creates a key; the secret is in this answer only. `rate_limit.per_hour` is at least 60 × `per_minute` (derived when omitted).',
    access: 'admin',
    body: { schema: CreateKeyBody },
    responses: { 201: json(billingCatalog.createKey.reply, 'The key, once.') },
  },
  {
    method: 'DELETE',
    route: '/admin/accounts/:account/keys/:key',
    operationId: 'adminRevokeKey',
    tag: 'admin',
    summary: 'Revokes a key (refused everywhere within seconds).',
    access: 'admin',
    responses: { 200: json(billingCatalog.revokeKey.reply, 'Revoked.') },
  },
  {
    method: 'PUT',
    route: '/admin/accounts/:account/extra-usage',
    operationId: 'adminSetExtraUsage',
    tag: 'admin',
    summary: 'Turns extra usage on or off and sets its daily ceiling.',
    access: 'admin',
    body: { schema: ExtraUsageBody },
    responses: { 200: json(billingCatalog.setExtraUsage.reply, 'The setting.') },
  },
  {
    method: 'GET',
    route: '/admin/accounts/:account/usage',
    operationId: 'adminGetUsage',
    tag: 'admin',
    summary: 'Any account’s week.',
    access: 'admin',
    responses: { 200: json(billingCatalog.usage.reply, 'The usage.') },
  },
  {
    method: 'GET',
    route: '/admin/accounts/:account/wallet',
    operationId: 'adminGetWallet',
    tag: 'admin',
    summary: 'The wallet agent steps are billed to.',
    access: 'admin',
    responses: { 200: json(billingCatalog.wallet.reply, 'The wallet.') },
  },
  {
    method: 'POST',
    route: '/admin/accounts/:account/wallet/credit',
    operationId: 'adminCreditWallet',
    tag: 'admin',
    summary: 'Tops the wallet up.',
    access: 'admin',
    body: { schema: WalletCreditBody },
    headers: [IDEMPOTENCY_KEY],
    responses: { 200: json(billingCatalog.creditWallet.reply, 'The wallet.') },
  },
  {
    method: 'PUT',
    route: '/admin/accounts/:account/wallet/limits',
    operationId: 'adminSetAgentLimits',
    tag: 'admin',
    summary: 'The monthly budget and step rate of agent runs.',
    access: 'admin',
    body: { schema: AgentLimitsBody },
    responses: { 200: json(billingCatalog.setAgentLimits.reply, 'The wallet.') },
  },
  // Probes and documents
  {
    method: 'GET',
    route: '/healthz',
    operationId: 'healthz',
    tag: 'operations',
    summary: 'Liveness: the process serves HTTP.',
    access: 'public',
    responses: { 200: json(HealthzSchema, 'Alive.') },
  },
  {
    method: 'GET',
    route: '/readyz',
    operationId: 'readyz',
    tag: 'operations',
    summary: 'Readiness: NATS and key verification answer; other backends down only degrade. Lists each model deployment’s state.',
    access: 'public',
    responses: { 200: json(ReadyzSchema, 'Ready or degraded.'), 503: json(NotReadySchema, 'Not ready: the envelope, naming what stops it, with the same detail.') },
  },
  {
    method: 'GET',
    route: '/openapi.json',
    operationId: 'getOpenApiDocument',
    tag: 'operations',
    summary: 'This document.',
    access: 'public',
    responses: { 200: json(z.looseObject({ openapi: z.literal('3.1.0') }), 'The OpenAPI 3.1 document.') },
  },
  {
    method: 'GET',
    route: '/docs',
    operationId: 'getApiReference',
    tag: 'operations',
    summary: 'This document as a readable page (static HTML, no scripts).',
    access: 'public',
    responses: { 200: { kind: 'static', description: 'text/html' } },
  },
  {
    method: 'GET',
    route: '/console',
    operationId: 'getConsole',
    tag: 'console',
    summary: 'The console’s page (a 308 to /console/ without the slash).',
    access: 'public',
    responses: { 200: { kind: 'static', description: 'text/html' }, 304: { kind: 'empty', description: 'Not modified.' }, 308: { kind: 'empty', description: 'To /console/.' } },
  },
  {
    method: 'GET',
    route: '/console/*',
    operationId: 'getConsoleFile',
    tag: 'console',
    summary: 'The console’s static files; a path that names no file gets index.html (the app’s own routes).',
    access: 'public',
    responses: { 200: { kind: 'static', description: 'The file' }, 304: { kind: 'empty', description: 'Not modified.' } },
  },
];
