/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are plain YAML objects probed field by field */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service } from 'kubernetes-models/v1/Service';

const k8sRoot = resolve(new URL('../../../k8s', import.meta.url).pathname);
const APPS = ['gateway', 'sandbox', 'search', 'fetch', 'billing', 'agent-run'];

// The Kubernetes schemas (kubernetes-models, generated from the API's OpenAPI) for every kind the
// manifests use; a manifest of any other kind fails the test until its model is added here.
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
};

type Manifest = Record<string, any>;

function readYaml(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((d) => {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]!.message}`);
    return d.toJS() as Manifest;
  }).filter(Boolean);
}

/** A strategic-merge patch as kustomize applies it: maps merge, lists of named objects merge by name. */
function merge(base: any, patch: any): any {
  if (Array.isArray(base) && Array.isArray(patch)) {
    if (!patch.every((p) => p && typeof p === 'object' && 'name' in p)) return patch;
    const out = [...base];
    for (const p of patch) {
      const i = out.findIndex((b) => b?.name === p.name);
      if (i >= 0) out[i] = merge(out[i], p);
      else out.push(p);
    }
    return out;
  }
  if (base && patch && typeof base === 'object' && typeof patch === 'object' && !Array.isArray(patch)) {
    const out = { ...base };
    for (const [k, v] of Object.entries(patch)) out[k] = k in base ? merge(base[k], v) : v;
    return out;
  }
  return patch;
}

/**
 * Renders a kustomization the way `kustomize build` does for the features Drael's manifests use
 * (resources, namespace, labels, images, strategic-merge patches); throws on anything else, so a
 * new feature cannot slip past this check unvalidated.
 */
function build(dir: string): Manifest[] {
  const k = readYaml(join(dir, 'kustomization.yaml'))[0]!;
  const known = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'labels', 'images', 'patches']);
  for (const key of Object.keys(k)) if (!known.has(key)) throw new Error(`${dir}: kustomization field ${key} is not checked by this test`);
  let out: Manifest[] = [];
  for (const r of k.resources ?? []) {
    const path = resolve(dir, r);
    if (!existsSync(path)) throw new Error(`${dir}: resource ${r} does not exist`);
    out.push(...(statSync(path).isDirectory() ? build(path) : readYaml(path)));
  }
  for (const p of k.patches ?? []) {
    for (const patch of readYaml(resolve(dir, p.path))) {
      const i = out.findIndex((m) => m.kind === patch.kind && m.metadata?.name === patch.metadata?.name);
      if (i < 0) throw new Error(`${dir}: patch ${p.path} targets ${patch.kind}/${patch.metadata?.name}, which does not exist`);
      out[i] = merge(out[i], patch);
    }
  }
  for (const img of k.images ?? []) {
    let used = false;
    for (const m of out) {
      const pod = m.spec?.template?.spec;
      for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
        const [name] = String(c.image).split(':');
        if (name === img.name) {
          c.image = `${img.newName ?? img.name}:${img.newTag ?? 'latest'}`;
          used = true;
        }
      }
    }
    if (!used) throw new Error(`${dir}: image ${img.name} is not used by any container`);
  }
  for (const l of k.labels ?? []) out = out.map((m) => ({ ...m, metadata: { ...m.metadata, labels: { ...m.metadata?.labels, ...l.pairs } } }));
  if (k.namespace) out = out.map((m) => (m.kind === 'Namespace' ? m : { ...m, metadata: { ...m.metadata, namespace: k.namespace } }));
  return out;
}

function validate(m: Manifest): void {
  const Model = MODELS[`${m.apiVersion}/${m.kind}`];
  if (!Model) throw new Error(`no Kubernetes model for ${m.apiVersion} ${m.kind}`);
  new Model(m).validate();
}

const find = (ms: Manifest[], kind: string, name: string) => ms.find((m) => m.kind === kind && m.metadata.name === name);

describe.each([
  ['base', join(k8sRoot, 'base')],
  ['overlays/production', join(k8sRoot, 'overlays', 'production')],
])('k8s/%s', (_name, dir) => {
  const manifests = build(dir);

  it('every manifest is valid against the Kubernetes schemas', () => {
    expect(manifests.length).toBeGreaterThanOrEqual(APPS.length * 2);
    for (const m of manifests) expect(() => validate(m), `${m.kind}/${m.metadata?.name}`).not.toThrow();
  });

  it('has a Deployment and a Service per app, the Service selecting the Deployment pods', () => {
    for (const app of APPS) {
      const dep = find(manifests, 'Deployment', app);
      const svc = find(manifests, 'Service', app);
      expect(dep, app).toBeDefined();
      expect(svc, app).toBeDefined();
      const podLabels = dep!.spec.template.metadata.labels;
      expect(dep!.spec.selector.matchLabels).toEqual(expect.objectContaining(svc!.spec.selector));
      for (const [k, v] of Object.entries(svc!.spec.selector)) expect(podLabels[k]).toBe(v);
    }
  });

  it('probes the gateway on /healthz (liveness) and /readyz (readiness), and every service over NATS', () => {
    const gw = find(manifests, 'Deployment', 'gateway')!.spec.template.spec.containers[0];
    expect(gw.livenessProbe.httpGet.path).toBe('/healthz');
    expect(gw.readinessProbe.httpGet.path).toBe('/readyz');
    const gwSvc = find(manifests, 'Service', 'gateway')!;
    expect(gwSvc.spec.ports[0].targetPort).toBe(gw.ports[0].name);
    for (const app of APPS.filter((a) => a !== 'gateway')) {
      const c = find(manifests, 'Deployment', app)!.spec.template.spec.containers[0];
      expect(c.readinessProbe.exec.command, app).toEqual(['node', 'nats-health.mjs', app]);
    }
  });
});

describe.each([
  ['base', join(k8sRoot, 'base')],
  ['overlays/production', join(k8sRoot, 'overlays', 'production')],
])('schema migrations in k8s/%s', (_name, dir) => {
  const repo = join(k8sRoot, '..');
  // An app owns data when it has Prisma migrations; a fresh cluster must get its schema before the app starts.
  const owners = APPS.filter((a) => existsSync(join(repo, 'apps', a, 'prisma', 'migrations')));

  it('every app that owns data applies its migrations in an init container, from its own image, before it starts', () => {
    expect(owners).toEqual(expect.arrayContaining(['billing', 'agent-run']));
    const ms = build(dir);
    const bin = JSON.parse(readFileSync(join(repo, 'packages', 'db-migrate', 'package.json'), 'utf8')).bin['drael-migrate'];
    const dbUrl = (c: any) => c.env.find((e: any) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef;
    for (const app of owners) {
      const pod = find(ms, 'Deployment', app)!.spec.template.spec;
      const main = pod.containers.find((c: any) => c.name === app);
      const migrate = (pod.initContainers ?? []).find((c: any) => c.name === 'migrate');
      expect(migrate, app).toBeDefined();
      // a plain init container (no restartPolicy: Always, which would make it a sidecar): it runs to the end first
      expect(migrate.restartPolicy, app).toBeUndefined();
      expect(migrate.image, app).toBe(main.image);
      // the app's migrate:deploy (drael-migrate deploy), run from the app's folder (the image's workdir)
      expect(migrate.command, app).toEqual(['node', join('node_modules', '@drael', 'db-migrate', bin), 'deploy']);
      const pkg = JSON.parse(readFileSync(join(repo, 'apps', app, 'package.json'), 'utf8'));
      expect(pkg.dependencies['@drael/db-migrate'], app).toBeDefined();
      expect(pkg.scripts['migrate:deploy'], app).toMatch(/^(drael-migrate|node \.\/node_modules\/@drael\/db-migrate\/dist\/cli\.js) deploy$/);
      expect(dbUrl(migrate), app).toEqual(dbUrl(main));
    }
  });
});

describe('the fetch pod', () => {
  it('runs Tor as a native sidecar whose SOCKS port (infra/tor/torrc) is the one fetch is given', () => {
    const spec = find(build(join(k8sRoot, 'base')), 'Deployment', 'fetch')!.spec.template.spec;
    const tor = spec.initContainers.find((c: any) => c.name === 'tor');
    expect(tor.restartPolicy).toBe('Always');
    const torrc = readFileSync(join(k8sRoot, '..', 'infra', 'tor', 'torrc'), 'utf8');
    const socks = /^SocksPort\s+(\S+)/m.exec(torrc)![1];
    expect(socks).toMatch(/^127\.0\.0\.1:\d+$/);
    const env = spec.containers.find((c: any) => c.name === 'fetch').env;
    expect(env.find((e: any) => e.name === 'TOR_SOCKS_URL').value).toBe(`socks5h://${socks}`);
    expect(tor.volumeMounts.map((v: any) => v.name)).toEqual(expect.arrayContaining(spec.volumes.map((v: any) => v.name).filter((n: string) => n.startsWith('tor'))));
  });
});

describe('SearXNG in the cluster (k8s/base/searxng)', () => {
  const ms = build(join(k8sRoot, 'base'));
  const pod = () => find(ms, 'Deployment', 'searxng')!.spec.template.spec;

  it('runs the official image pinned by tag, with infra/searx/settings.production.yml as its settings', () => {
    const images = [...pod().initContainers, ...pod().containers].map((c: any) => String(c.image)).filter((i: string) => i.startsWith('searxng/'));
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) expect(image).toMatch(/^searxng\/searxng:\d{4}\.\d+\.\d+-[0-9a-f]+$/);
    const settings = find(ms, 'ConfigMap', 'searxng-settings')!.data['settings.yml'];
    expect(settings).toBe(readFileSync(join(k8sRoot, '..', 'infra', 'searx', 'settings.production.yml'), 'utf8'));
    expect(pod().volumes.find((v: any) => v.name === 'settings').configMap.name).toBe('searxng-settings');
  });

  it('is what the search service is pointed at, with the onion engines its settings define', () => {
    const svc = find(ms, 'Service', 'searxng')!;
    const container = pod().containers.find((c: any) => c.name === 'searxng');
    const port = svc.spec.ports[0];
    expect(container.ports.find((p: any) => p.name === port.targetPort)).toBeDefined();
    for (const [k, v] of Object.entries(svc.spec.selector)) expect(find(ms, 'Deployment', 'searxng')!.spec.template.metadata.labels[k]).toBe(v);
    const env = find(ms, 'Deployment', 'search')!.spec.template.spec.containers[0].env;
    expect(env.find((e: any) => e.name === 'SEARXNG_URL').value).toBe(`http://searxng:${port.port}`);
    const settings = parseAllDocuments(find(ms, 'ConfigMap', 'searxng-settings')!.data['settings.yml'])[0]!.toJS();
    const onion = env.find((e: any) => e.name === 'SEARCH_ONION_ENGINES').value.split(',');
    const engines = settings.engines.filter((e: any) => e.categories === 'hidden').map((e: any) => e.name);
    expect(onion.sort()).toEqual(engines.sort());
  });

  it('gives the onion engines the Tor sidecar on the SOCKS port of infra/tor/torrc', () => {
    const tor = pod().initContainers.find((c: any) => c.name === 'tor');
    expect(tor.restartPolicy).toBe('Always');
    const socks = /^SocksPort\s+(\S+)/m.exec(readFileSync(join(k8sRoot, '..', 'infra', 'tor', 'torrc'), 'utf8'))![1];
    const settings = parseAllDocuments(find(ms, 'ConfigMap', 'searxng-settings')!.data['settings.yml'])[0]!.toJS();
    for (const e of settings.engines.filter((x: any) => x.categories === 'hidden')) expect(e.proxies['all://'], e.name).toBe(`socks5h://${socks}`);
  });
});

describe('the overlay', () => {
  it('pins registry images and scales the gateway', () => {
    const ms = build(join(k8sRoot, 'overlays', 'production'));
    const gw = find(ms, 'Deployment', 'gateway')!;
    expect(gw.spec.replicas).toBe(3);
    expect(gw.metadata.namespace).toBe('drael');
    expect(gw.spec.template.spec.containers[0].image).toBe('registry.example.com/drael/gateway:0.1.0');
    // the patch merged into the container by name; the probes from the base are still there
    expect(gw.spec.template.spec.containers[0].readinessProbe.httpGet.path).toBe('/readyz');
    const fetchPod = find(ms, 'Deployment', 'fetch')!.spec.template.spec;
    expect(fetchPod.initContainers[0].image).toBe('registry.example.com/drael/tor:0.1.0');
  });
});

describe('the validator itself', () => {
  it('rejects a manifest that breaks the schema', () => {
    const dep = structuredClone(find(build(join(k8sRoot, 'base')), 'Deployment', 'gateway')!);
    dep.spec.template.spec.containers[0].ports[0].containerPort = 'eighty';
    expect(() => validate(dep)).toThrow(/containerPort/);
    expect(() => validate({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } })).toThrow(/no Kubernetes model/);
  });

  it('merges named list items by name, and rejects a patch aimed at a resource that does not exist', () => {
    expect(merge({ a: [{ name: 'x', v: 1, w: 1 }] }, { a: [{ name: 'x', v: 2 }] })).toEqual({ a: [{ name: 'x', v: 2, w: 1 }] });
    const dir = mkdtempSync(join(tmpdir(), 'k8s-'));
    writeFileSync(join(dir, 'kustomization.yaml'), `resources: [${JSON.stringify(join(k8sRoot, 'base'))}]\npatches: [{ path: p.yaml }]\n`);
    writeFileSync(join(dir, 'p.yaml'), 'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: no-such-app }\nspec: { replicas: 2 }\n');
    expect(() => build(dir)).toThrow(/no-such-app, which does not exist/);
  });
});
