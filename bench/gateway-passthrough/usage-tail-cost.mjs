// The CPU proxy mode spends reading an answer's token usage (issue 18), in-process: usageFromTail
// over a non-streamed body of 1 KiB and of 256 KiB, and over a stream's last three chunks, against
// the same calls on answers that report no usage. The read looks at the last 4 KiB only, so the
// figure must not grow with the body. Per-chunk work in a stream is three reference moves
// (chat-proxy.service.ts), not measured here.
// Run: pnpm --filter @drael/gateway build && node bench/gateway-passthrough/usage-tail-cost.mjs
import { usageFromTail } from '../../apps/gateway/dist/chat/usage-tail.js';

const usage = { prompt_tokens: 1234, completion_tokens: 567, total_tokens: 1801, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } };
const body = (bytes) =>
  Buffer.from(
    JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(bytes) }, finish_reason: 'stop' }],
      usage,
      system_fingerprint: 'fp',
    }),
  );
const event = (o) => Buffer.from(`data: ${JSON.stringify(o)}\n\n`);
const streamTail = [
  event({ id: 'c', choices: [{ index: 0, delta: { content: 'token ' }, finish_reason: null }], usage: null }),
  event({ id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null }),
  Buffer.concat([event({ id: 'c', choices: [], usage }), Buffer.from('data: [DONE]\n\n')]),
];
const noUsageTail = [streamTail[0], streamTail[1], Buffer.from('data: [DONE]\n\n')];

const cases = [
  ['non-streamed, 1 KiB body', [body(1024)]],
  ['non-streamed, 256 KiB body', [body(256 * 1024)]],
  ['stream, last 3 chunks with the usage event', streamTail],
  ['stream, no usage event (include_usage not asked)', noUsageTail],
];

for (const [name, parts] of cases) {
  const expected = name.includes('no usage') ? undefined : 1234;
  if (usageFromTail(parts)?.prompt_tokens !== expected) throw new Error(`${name}: usage not read as expected`);
  for (let i = 0; i < 20_000; i++) usageFromTail(parts);
  const N = 200_000;
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) usageFromTail(parts);
  const d = process.cpuUsage(t0);
  console.log(`${name}: ${(((d.user + d.system) / N) * 1000).toFixed(0)} ns CPU per request`);
}
