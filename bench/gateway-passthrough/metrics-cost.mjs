// The CPU the metrics recording calls of one proxied completion cost (issue 18), with metrics on and off:
// the series and label sets the gateway records per request, on packages/metrics (build it first).
// Run: node bench/gateway-passthrough/metrics-cost.mjs
import { Metrics, setMetricsEnabled } from '../../packages/metrics/dist/index.js';
const m = new Metrics();
const h = m.histogram({ name: 'x_seconds', help: 'h', labels: { route: 80, method: ['GET', 'POST'], status_class: ['2xx', '5xx'], mode: ['proxy', 'none'] } });
const c = m.counter({ name: 'y_total', help: 'h', labels: { alias: 100, deployment: 200 } });
const u = m.histogram({ name: 'z_seconds', help: 'h', labels: { alias: 100, deployment: 200 } });
const g = m.gauge({ name: 'g', help: 'h', labels: { mode: ['proxy'] } });
// One proxied request records: the HTTP histogram, one attempt, first byte, duration, stream open/close.
const perRequest = () => {
  h.observe({ route: '/v1/chat/completions', method: 'POST', status_class: '2xx', mode: 'proxy' }, 0.01);
  c.inc({ alias: 'bench', deployment: 'bench' });
  u.observe({ alias: 'bench', deployment: 'bench' }, 0.002);
  u.observe({ alias: 'bench', deployment: 'bench' }, 0.004);
  g.inc({ mode: 'proxy' });
  g.dec({ mode: 'proxy' });
};
for (const on of [true, false]) {
  setMetricsEnabled(on);
  for (let i = 0; i < 1e5; i++) perRequest();
  const N = 1e6;
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) perRequest();
  const d = process.cpuUsage(t0);
  console.log(`metrics ${on ? 'on ' : 'off'}: ${(((d.user + d.system) / N) * 1000).toFixed(0)} ns CPU per proxied request's recording calls`);
}
