import { NatsRpcClient } from '@drael/nats-rpc';
import { sandboxCatalog } from '@drael/contracts';
const c = await NatsRpcClient.connect({ servers: 'nats://127.0.0.1:4222', prefix: 'dbg1' });
try { console.log(JSON.stringify(await c.request(sandboxCatalog.run, { tenant: 't', runtime: process.argv[2], code: process.argv[3], timeout_s: Number(process.argv[4] ?? 10), network: process.argv[5] === 'net' }), null, 1)); } catch (e) { console.log('ERR', e.code, e.message); }
await c.close();
