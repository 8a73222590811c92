// The load generator, in a process of its own so that its CPU is nobody's under test:
// autocannon (pinned in bench/package.json) driven over IPC. Each message
// { id, url, method, headers, body, amount | duration, connections, rate? } runs one load and answers
// { id, requests, non2xx, errors, timeouts, durationS, rps, p50Ms, p99Ms, statuses }.
import autocannon from 'autocannon';

process.on('message', async (m) => {
  const started = process.hrtime.bigint();
  const result = await autocannon({
    url: m.url,
    method: m.method ?? 'POST',
    headers: m.headers,
    body: m.body,
    // A number of requests, or (without one) a duration in seconds.
    ...(m.amount !== undefined ? { amount: m.amount } : { duration: m.duration }),
    connections: m.connections,
    pipelining: 1,
    timeout: 30,
    // autocannon hands its result over on its sampling tick (1 s by default): a load of a second
    // or so would read as taking 1 or 2 s, and req/s would show that, not the target's speed.
    sampleInt: 100,
    // A fixed pace (requests per second over all connections) instead of as fast as answered.
    ...(m.rate ? { overallRate: m.rate } : {}),
  });
  const durationS = Number(process.hrtime.bigint() - started) / 1e9;
  process.send({
    id: m.id,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS,
    rps: result.requests.total / durationS,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    // Which statuses came, so a failed load names them (a 502 from a dropped upstream socket and a
    // 429 from a rate limit are different faults).
    statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count])),
  });
});
process.send({ ready: true });
