/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are plain YAML objects probed field by field */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { imageRecipeViolations, policyViolations, render, SANDBOX_NAMESPACE, type Manifest } from './manifest-policy.js';

// Issue 17's manifest test: every kustomization is rendered by kubectl's own kustomize (what
// `kubectl apply -k` applies), validated against the Kubernetes schemas, and held to the
// deployment policy in manifest-policy.ts.

const repo = resolve(new URL('../../../..', import.meta.url).pathname);
const k8s = join(repo, 'k8s');
const readme = readFileSync(join(k8s, 'README.md'), 'utf8');
const KUSTOMIZATIONS = ['base', 'sandbox', 'deps', 'migrations', 'monitoring', 'overlays/trial', 'overlays/trial/migrate', 'overlays/production', 'overlays/production/migrate'];
const APPS = ['gateway', 'search', 'fetch', 'billing', 'agent-run'];
const rendered = new Map(KUSTOMIZATIONS.map((k) => [k, render(join(k8s, k))]));
const find = (ms: Manifest[], kind: string, name: string) => ms.find((m) => m.kind === kind && m.metadata.name === name);
const podOf = (ms: Manifest[], name: string) => find(ms, 'Deployment', name)!.spec.template.spec;
const configOf = (ms: Manifest[], prefix: string) => ms.find((m) => m.kind === 'ConfigMap' && m.metadata.name.startsWith(`${prefix}-`))!.data;

describe.each(KUSTOMIZATIONS)('k8s/%s', (name) => {
  it('renders with kubectl kustomize, every object valid against the Kubernetes schemas, and passes the policy', () => {
    const ms = rendered.get(name)!;
    expect(ms.length).toBeGreaterThan(0);
    expect(policyViolations(ms, readme)).toEqual([]);
  });
});

describe('the apps (overlays/trial and overlays/production)', () => {
  it.each(['overlays/trial', 'overlays/production'])('%s: each app has its Deployment, Service, ServiceAccount, PDB and NetworkPolicy, in namespace drael', (o) => {
    const ms = rendered.get(o)!;
    for (const app of APPS) {
      for (const kind of ['Deployment', 'Service', 'ServiceAccount', 'PodDisruptionBudget', 'NetworkPolicy', 'HorizontalPodAutoscaler']) {
        expect(find(ms, kind, app)?.metadata.namespace, `${kind}/${app}`).toBe('drael');
      }
    }
    expect(find(ms, 'Deployment', 'sandbox')!.metadata.namespace).toBe(SANDBOX_NAMESPACE);
    expect(find(ms, 'Namespace', 'drael')!.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('the services are probed over HTTP on HEALTH_PORT (/healthz liveness, /readyz readiness); the gateway on its own port', () => {
    const ms = rendered.get('overlays/trial')!;
    const port = Number(configOf(ms, 'drael-config').HEALTH_PORT);
    for (const app of ['search', 'fetch', 'billing', 'agent-run']) {
      const c = podOf(ms, app).containers[0];
      expect(c.ports.find((p: any) => p.name === 'health').containerPort, app).toBe(port);
      expect(c.livenessProbe.httpGet, app).toEqual({ path: '/healthz', port: 'health' });
      expect(c.readinessProbe.httpGet, app).toEqual({ path: '/readyz', port: 'health' });
    }
    const gw = podOf(ms, 'gateway').containers[0];
    expect(gw.readinessProbe.httpGet.path).toBe('/readyz');
    expect(gw.livenessProbe.httpGet.path).toBe('/healthz');
  });

  it('the gateway pauses before SIGTERM so endpoints drain, and its grace period covers the pause and its own shutdown grace', () => {
    const pod = podOf(rendered.get('overlays/production')!, 'gateway');
    const c = pod.containers[0];
    const pause = Number(c.lifecycle.preStop.exec.command[1]);
    expect(pause).toBeGreaterThanOrEqual(5);
    const grace = Number(c.env.find((e: any) => e.name === 'SHUTDOWN_GRACE_MS').value) / 1000;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(pause + grace);
  });

  it('a change of drael-config rolls the pods: its name carries the content hash, and the pods name it', () => {
    const a = rendered.get('overlays/trial')!;
    const b = rendered.get('overlays/production')!;
    const nameA = a.find((m) => m.kind === 'ConfigMap' && m.metadata.name.startsWith('drael-config-'))!.metadata.name;
    const nameB = b.find((m) => m.kind === 'ConfigMap' && m.metadata.name.startsWith('drael-config-'))!.metadata.name;
    expect(nameA).not.toBe(nameB); // production changes NATS_URL: another name, so a rollout
    expect(podOf(a, 'billing').containers[0].envFrom[0].configMapRef.name).toBe(nameA);
    expect(podOf(b, 'billing').containers[0].envFrom[0].configMapRef.name).toBe(nameB);
  });

  it('production pins the registry images by tag, talks to NATS over TLS, and has the streaming Ingress', () => {
    const ms = rendered.get('overlays/production')!;
    expect(podOf(ms, 'gateway').containers[0].image).toBe('registry.example.com/drael/gateway:0.1.0');
    expect(configOf(ms, 'drael-config').NATS_URL).toMatch(/^tls:\/\//);
    const ing = find(ms, 'Ingress', 'gateway')!;
    const a = ing.metadata.annotations;
    expect(a['nginx.ingress.kubernetes.io/proxy-buffering']).toBe('off');
    expect(Number(a['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(3600);
    expect(ing.spec.rules[0].http.paths[0].backend.service.name).toBe('gateway');
    const mig = rendered.get('overlays/production/migrate')!;
    expect(find(mig, 'Job', 'migrate-billing')!.spec.template.spec.containers[0].image).toBe('registry.example.com/drael/billing:0.1.0');
  });

  it('migrations are Jobs run from each data-owning app image with credentials of their own, not the runtime ones', () => {
    const jobs = rendered.get('overlays/trial/migrate')!;
    const apps = rendered.get('overlays/trial')!;
    expect(apps.some((m) => m.kind === 'Deployment' && (m.spec.template.spec.initContainers ?? []).some((c: any) => c.name === 'migrate'))).toBe(false);
    for (const app of ['billing', 'agent-run']) {
      const c = find(jobs, 'Job', `migrate-${app}`)!.spec.template.spec.containers[0];
      expect(c.image).toBe(podOf(apps, app).containers[0].image);
      expect(c.command).toEqual(['node', 'node_modules/@drael/db-migrate/dist/cli.js', 'deploy']);
      const ref = c.env.find((e: any) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef;
      const runtime = podOf(apps, app).containers[0].env.find((e: any) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef;
      expect(ref.name).toBe('drael-migrate');
      expect(runtime.name).toBe('drael-database');
    }
  });
});

describe('the sandbox tier (k8s/sandbox)', () => {
  const ms = rendered.get('overlays/trial')!;
  const pod = () => podOf(ms, 'sandbox');
  const config = () => configOf(ms, 'drael-sandbox-config');

  it('runs its own engine as a native sidecar that shares the state directory at the identical path', () => {
    const dind = pod().initContainers.find((c: any) => c.name === 'dind');
    expect(dind.restartPolicy).toBe('Always');
    const sandbox = pod().containers.find((c: any) => c.name === 'sandbox');
    const stateDir = config().SANDBOX_STATE_DIR;
    const at = (c: any) => c.volumeMounts.find((v: any) => v.name === 'state');
    expect(at(sandbox).mountPath).toBe(stateDir);
    expect(at(dind).mountPath).toBe(stateDir);
    expect(at(sandbox).mountPropagation).toBe('Bidirectional');
    expect(config().DOCKER_SOCKET).toBe(`${dind.volumeMounts.find((v: any) => v.name === 'dind-socket').mountPath}/docker.sock`);
  });

  it('each pod is its own instance, the run image reaches the engine at start, and the grace period exceeds the longest run plus cleanup', () => {
    const sandbox = pod().containers.find((c: any) => c.name === 'sandbox');
    expect(sandbox.env.find((e: any) => e.name === 'SANDBOX_INSTANCE').valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    const load = pod().initContainers.find((c: any) => c.name === 'load-run-image');
    expect(load.restartPolicy).toBeUndefined();
    expect(load.command.join(' ')).toContain('docker pull "$SANDBOX_IMAGE"');
    // spec 01: a run lasts at most 300 s; the service drains 30 s past it; then containers and volumes go
    expect(pod().terminationGracePeriodSeconds).toBeGreaterThan(300 + 30 + 30);
  });

  it('runs several replicas (sessions are placed and saved in JetStream, so any pod may go), at most one down at a time; production replicates the buckets', () => {
    for (const o of ['overlays/trial', 'overlays/production']) {
      const all = rendered.get(o)!;
      expect(find(all, 'Deployment', 'sandbox')!.spec.replicas).toBeGreaterThanOrEqual(2);
      expect(find(all, 'PodDisruptionBudget', 'sandbox')!.spec).toMatchObject({ maxUnavailable: 1 });
      // A heartbeat TTL: a dead pod's sessions move to the others within it.
      expect(Number(configOf(all, 'drael-sandbox-config').SANDBOX_REPLICA_TTL_S)).toBeGreaterThan(0);
    }
    expect(configOf(rendered.get('overlays/production')!, 'drael-sandbox-config').SANDBOX_STORE_REPLICAS).toBe('3');
  });

  it('lands only on the dedicated, tainted sandbox nodes', () => {
    expect(pod().nodeSelector).toEqual({ 'drael.dev/sandbox-node': 'true' });
    expect(pod().tolerations).toContainEqual({ key: 'drael.dev/sandbox', operator: 'Equal', value: 'true', effect: 'NoSchedule' });
  });
});

describe('SearXNG and Tor', () => {
  const ms = rendered.get('overlays/trial')!;
  const torrc = readFileSync(join(repo, 'infra', 'tor', 'torrc'), 'utf8');
  const socks = /^SocksPort\s+(\S+)/m.exec(torrc)![1];

  it('SearXNG gets infra/searx/settings.production.yml byte for byte, and the search service its URL and onion engines', () => {
    const settings = configOf(ms, 'searxng-settings')['settings.yml'];
    expect(settings).toBe(readFileSync(join(repo, 'infra', 'searx', 'settings.production.yml'), 'utf8'));
    const env = podOf(ms, 'search').containers[0].env;
    const svc = find(ms, 'Service', 'searxng')!;
    expect(env.find((e: any) => e.name === 'SEARXNG_URL').value).toBe(`http://searxng:${svc.spec.ports[0].port}`);
    const parsed = parseAllDocuments(settings)[0]!.toJS();
    const hidden = parsed.engines.filter((e: any) => e.categories === 'hidden');
    expect(
      env
        .find((e: any) => e.name === 'SEARCH_ONION_ENGINES')
        .value.split(',')
        .sort(),
    ).toEqual(hidden.map((e: any) => e.name).sort());
    for (const e of hidden) expect(e.proxies['all://']).toBe(`socks5h://${socks}`);
  });

  it('fetch runs Tor as a native sidecar on the SOCKS port of infra/tor/torrc', () => {
    const spec = podOf(ms, 'fetch');
    expect(spec.initContainers.find((c: any) => c.name === 'tor').restartPolicy).toBe('Always');
    expect(spec.containers[0].env.find((e: any) => e.name === 'TOR_SOCKS_URL').value).toBe(`socks5h://${socks}`);
  });
});

describe('the image recipes (Dockerfiles)', () => {
  const DOCKERFILES = ['infra/docker/Dockerfile', 'infra/tor/Dockerfile', 'infra/sandbox-image/Dockerfile'];
  const dockerfiles = () => Object.fromEntries(DOCKERFILES.map((f) => [f, readFileSync(join(repo, f), 'utf8')]));
  const toolchain = readFileSync(join(repo, 'infra', 'provision.d', '00-toolchain.sh'), 'utf8');

  it('every image is built FROM one base pinned by digest, and the app image runs the Node that provisioning installs (same version and sha512)', () => {
    expect(imageRecipeViolations(dockerfiles(), toolchain)).toEqual([]);
  });

  it.each([
    [
      'a base pinned by tag only',
      (d: Record<string, string>) => (d['infra/tor/Dockerfile'] = d['infra/tor/Dockerfile']!.replace(/@sha256:[0-9a-f]{64}/, '')),
      /infra\/tor\/Dockerfile: FROM debian:bookworm-slim is not pinned by digest/,
    ],
    ['a literal unpinned FROM', (d: Record<string, string>) => (d['infra/sandbox-image/Dockerfile'] += '\nFROM debian:bookworm\n'), /FROM debian:bookworm is not pinned/],
    [
      'a second base',
      (d: Record<string, string>) => (d['infra/tor/Dockerfile'] = d['infra/tor/Dockerfile']!.replace(/@sha256:[0-9a-f]{64}/, `@sha256:${'0'.repeat(64)}`)),
      /2 different bases/,
    ],
    [
      "another Node than provisioning's",
      (d: Record<string, string>) => (d['infra/docker/Dockerfile'] = d['infra/docker/Dockerfile']!.replace(/^ARG NODE_VERSION=.*$/m, 'ARG NODE_VERSION=24.21.0')),
      /NODE_VERSION=24\.21\.0 differs/,
    ],
    [
      'another Node checksum',
      (d: Record<string, string>) => (d['infra/docker/Dockerfile'] = d['infra/docker/Dockerfile']!.replace(/^ARG NODE_INTEGRITY=sha512-./m, 'ARG NODE_INTEGRITY=sha512-X')),
      /NODE_INTEGRITY=sha512-X.* differs/,
    ],
  ])('finds %s', (_what, mutate, expected) => {
    const d = dockerfiles();
    mutate(d);
    expect(imageRecipeViolations(d, toolchain).join('\n')).toMatch(expected);
  });
});

describe('the policy itself', () => {
  const base = () => structuredClone(rendered.get('overlays/trial')!);
  const gateway = (ms: Manifest[]) => podOf(ms, 'gateway');

  it.each([
    ['a container without a memory limit', (ms: Manifest[]) => delete gateway(ms).containers[0].resources.limits, /gateway container gateway: no memory limit/],
    [
      'a hostPath volume outside the sandbox tier',
      (ms: Manifest[]) => gateway(ms).volumes.push({ name: 'h', hostPath: { path: '/' } }),
      /hostPath volume outside the sandbox tier/,
    ],
    ['a privileged container outside the sandbox tier', (ms: Manifest[]) => (gateway(ms).containers[0].securityContext.privileged = true), /privileged outside the sandbox tier/],
    ['host networking', (ms: Manifest[]) => (gateway(ms).hostNetwork = true), /host namespaces/],
    ['an image without a tag', (ms: Manifest[]) => (gateway(ms).containers[0].image = 'drael/gateway'), /has no tag or digest/],
    ['an image tagged latest', (ms: Manifest[]) => (gateway(ms).containers[0].image = 'drael/gateway:latest'), /has no tag or digest/],
    [
      'an undocumented Secret key',
      (ms: Manifest[]) => gateway(ms).containers[0].env.push({ name: 'X', valueFrom: { secretKeyRef: { name: 'drael-models', key: 'NOT_DOCUMENTED' } } }),
      /drael-models\.NOT_DOCUMENTED is not documented/,
    ],
    [
      'a mounted ServiceAccount token',
      (ms: Manifest[]) => (gateway(ms).automountServiceAccountToken = true) && (find(ms, 'ServiceAccount', 'gateway')!.automountServiceAccountToken = true),
      /token is mounted/,
    ],
    [
      'an undocumented Ingress TLS Secret',
      (ms: Manifest[]) =>
        ms.push({ ...structuredClone(find(rendered.get('overlays/production')!, 'Ingress', 'gateway')!), spec: { tls: [{ secretName: 'drael-undocumented-tls' }], rules: [] } }),
      /TLS Secret drael-undocumented-tls is not documented/,
    ],
    ['the default ServiceAccount', (ms: Manifest[]) => delete gateway(ms).serviceAccountName, /default ServiceAccount/],
    ['no readiness probe', (ms: Manifest[]) => delete gateway(ms).containers[0].readinessProbe, /no readiness probe/],
    [
      'no seccomp profile',
      (ms: Manifest[]) => delete gateway(ms).securityContext.seccompProfile && delete gateway(ms).containers[0].securityContext.seccompProfile,
      /seccomp profile is not RuntimeDefault/,
    ],
    ['a writable root filesystem', (ms: Manifest[]) => (gateway(ms).containers[0].securityContext.readOnlyRootFilesystem = false), /root filesystem is writable/],
    ['no PodDisruptionBudget', (ms: Manifest[]) => ms.splice(ms.indexOf(find(ms, 'PodDisruptionBudget', 'gateway')!), 1), /gateway: no PodDisruptionBudget/],
    ['no NetworkPolicy of its own', (ms: Manifest[]) => ms.splice(ms.indexOf(find(ms, 'NetworkPolicy', 'gateway')!), 1), /gateway: no NetworkPolicy of its own/],
    ['several replicas without spread', (ms: Manifest[]) => delete gateway(ms).topologySpreadConstraints, /no topology spread/],
    [
      'a restricted namespace made baseline',
      (ms: Manifest[]) => (find(ms, 'Namespace', 'drael')!.metadata.labels['pod-security.kubernetes.io/enforce'] = 'baseline'),
      /only drael-sandbox may be less than restricted/,
    ],
    ['a schema error', (ms: Manifest[]) => (gateway(ms).containers[0].ports[0].containerPort = 'eighty'), /containerPort/],
    ['a kind without a model', (ms: Manifest[]) => ms.push({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } }), /no Kubernetes model for v1 Pod/],
  ])('finds %s', (_what, mutate, expected) => {
    const ms = base();
    mutate(ms);
    expect(policyViolations(ms, readme).join('\n')).toMatch(expected);
  });
});

describe('monitoring (k8s/monitoring, in the production overlay)', () => {
  const ms = rendered.get('overlays/production')!;

  it('every app is scraped: the gateway on its metrics port (never the public one), each service on its health port', () => {
    const sm = find(ms, 'ServiceMonitor', 'gateway')!;
    const svc = find(ms, 'Service', 'gateway')!;
    const endpointPort = sm.spec.endpoints[0].port;
    expect(endpointPort).toBe('metrics');
    expect(svc.spec.ports.map((p: any) => p.name)).toContain(endpointPort);
    const gw = podOf(ms, 'gateway').containers[0];
    const metricsPort = gw.ports.find((p: any) => p.name === 'metrics').containerPort;
    expect(Number(gw.env.find((e: any) => e.name === 'METRICS_PORT').value)).toBe(metricsPort);
    expect(metricsPort).not.toBe(gw.ports.find((p: any) => p.name === 'http').containerPort);
    expect(find(ms, 'Ingress', 'gateway')!.spec.rules[0].http.paths.every((p: any) => p.backend.service.port.name !== 'metrics')).toBe(true);
    for (const app of [...APPS.filter((a) => a !== 'gateway'), 'sandbox']) {
      const pm = find(ms, 'PodMonitor', app)!;
      expect(pm, app).toBeDefined();
      const pod = podOf(ms, app);
      const c = pod.containers.find((x: any) => x.name === app);
      expect(
        c.ports.map((p: any) => p.name),
        app,
      ).toContain(pm.spec.podMetricsEndpoints[0].port);
      expect(pm.metadata.namespace, app).toBe(find(ms, 'Deployment', app)!.metadata.namespace);
    }
  });

  it('the alerts carry a runbook and a severity, and the dashboard is a ConfigMap for Grafana', () => {
    const rules = find(ms, 'PrometheusRule', 'drael')!
      .spec.groups.flatMap((g: any) => g.rules)
      .filter((r: any) => r.alert);
    expect(rules.length).toBeGreaterThanOrEqual(10);
    for (const r of rules) {
      expect(String(r.annotations.runbook).length, r.alert).toBeGreaterThan(80); // says what to look at and what to do
      expect(['page', 'ticket'], r.alert).toContain(r.labels.severity);
    }
    const dash = find(ms, 'ConfigMap', 'drael-grafana-dashboard')!;
    expect(dash.metadata.labels.grafana_dashboard).toBe('1');
    expect(JSON.parse(dash.data['drael.json']).panels.length).toBeGreaterThan(20);
  });
});
