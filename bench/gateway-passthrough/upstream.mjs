// The scripted OpenAI upstream of @drael/test-support in its own process, answering every request
// with the same turn: 16 content chunks (streamed) or one chat.completion object.
import { startScriptedUpstream } from '../../packages/test-support/dist/index.js';

const content = Array.from({ length: 16 }, (_, i) => `token${i} `);
const upstream = await startScriptedUpstream({ turns: [{ type: 'text', content }], whenExhausted: 'repeat', port: Number(process.argv[2] ?? 0) });
// The recorder keeps every request; a benchmark would grow it without bound.
setInterval(() => upstream.requests.splice(0), 1000).unref();
setInterval(() => upstream.aborted.splice(0), 1000).unref();
process.send?.({ port: upstream.port });
process.on('SIGTERM', () => process.exit(0));
