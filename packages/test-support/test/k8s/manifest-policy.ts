/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are plain YAML objects probed field by field */
import { execFileSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
// The Prometheus Operator's CRDs (k8s/monitoring), validated against the Operator's own schemas.
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';

export type Manifest = Record<string, any>;

/**
 * The Kubernetes schemas (kubernetes-models, generated from the API's OpenAPI) for every kind the
 * manifests use; a manifest of any other kind fails until its model is added here.
 */
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'apps/v1/DaemonSet': DaemonSet,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'networking.k8s.io/v1/Ingress': Ingress,
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

/** What `kubectl apply -k dir` would apply: kubectl's own kustomize, so no renderer of ours can differ. */
export function render(dir: string): Manifest[] {
  const out = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return parseAllDocuments(out)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`${dir}: ${d.errors[0]!.message}`);
      return d.toJS() as Manifest;
    })
    .filter(Boolean);
}

export function validateSchema(m: Manifest): void {
  const Model = MODELS[`${m.apiVersion}/${m.kind}`];
  if (!Model) throw new Error(`no Kubernetes model for ${m.apiVersion} ${m.kind}`);
  new Model(m).validate();
}

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);
/** The one namespace where privilege is allowed (docs/decisions/0004-sandbox-tier-on-kubernetes.md). */
export const SANDBOX_NAMESPACE = 'drael-sandbox';

const ns = (m: Manifest) => m.metadata?.namespace ?? 'default';
const key = (m: Manifest) => `${m.kind}/${ns(m)}/${m.metadata?.name}`;
const matches = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

function selectorMatches(sel: any, labels: Record<string, string>): boolean {
  if (!sel) return false;
  const ml: Record<string, string> = sel.matchLabels ?? {};
  const exprs: any[] = sel.matchExpressions ?? [];
  if (Object.keys(ml).length === 0 && exprs.length === 0) return false; // empty: the namespace-wide default, not the app's own
  if (!Object.entries(ml).every(([k, v]) => labels[k] === v)) return false;
  return exprs.every((e) => {
    const v = labels[e.key];
    if (e.operator === 'In') return v !== undefined && e.values.includes(v);
    if (e.operator === 'NotIn') return v === undefined || !e.values.includes(v);
    if (e.operator === 'Exists') return v !== undefined;
    return v === undefined;
  });
}

/** Secret names and `name.KEY` pairs documented in k8s/README.md (its Secrets table). */
export function documentedSecrets(readme: string): Set<string> {
  const out = new Set<string>();
  for (const m of readme.matchAll(/`(drael-[a-z0-9-]+)`[^\n]*/g)) {
    out.add(m[1]!);
    for (const k of m[0].matchAll(/`([A-Z][A-Z0-9_]+)`/g)) out.add(`${m[1]}.${k[1]}`);
  }
  return out;
}

/**
 * The deployment policy of issue 17, as a list of violations (empty: the manifests pass).
 * Each rule names the object it found wanting, so a failure says what to fix.
 */
export function policyViolations(ms: Manifest[], readme: string): string[] {
  const v: string[] = [];
  const docs = documentedSecrets(readme);
  const byKind = (kind: string) => ms.filter((m) => m.kind === kind);
  const configMaps = new Map(byKind('ConfigMap').map((c) => [`${ns(c)}/${c.metadata.name}`, c]));
  const serviceAccounts = new Map(byKind('ServiceAccount').map((s) => [`${ns(s)}/${s.metadata.name}`, s]));
  const saUsers = new Map<string, string[]>();

  for (const m of ms) {
    try {
      validateSchema(m);
    } catch (err) {
      v.push(`${key(m)}: ${(err as Error).message.split('\n')[0]}`);
    }
  }

  for (const n of byKind('Namespace')) {
    const level = n.metadata.labels?.['pod-security.kubernetes.io/enforce'];
    if (!level) v.push(`${key(n)}: no pod-security.kubernetes.io/enforce label`);
    else if (level !== 'restricted' && n.metadata.name !== SANDBOX_NAMESPACE) v.push(`${key(n)}: Pod Security ${level}, only ${SANDBOX_NAMESPACE} may be less than restricted`);
  }

  const podOwners = [...ms.filter((m) => WORKLOADS.has(m.kind)), ...byKind('Job')];
  for (const w of podOwners) {
    const id = key(w);
    const pod = w.spec.template.spec;
    const labels: Record<string, string> = w.spec.template.metadata?.labels ?? {};
    const sandboxTier = ns(w) === SANDBOX_NAMESPACE;
    const isWorkload = WORKLOADS.has(w.kind);
    const mains: any[] = pod.containers ?? [];
    const sidecars: any[] = (pod.initContainers ?? []).filter((c: any) => c.restartPolicy === 'Always');
    const all: any[] = [...(pod.initContainers ?? []), ...mains];

    // identity: its own ServiceAccount, no token
    const saName = pod.serviceAccountName;
    if (!saName || saName === 'default') v.push(`${id}: runs as the default ServiceAccount`);
    else if (!serviceAccounts.has(`${ns(w)}/${saName}`)) v.push(`${id}: ServiceAccount ${saName} is not in the manifests`);
    else saUsers.set(`${ns(w)}/${saName}`, [...(saUsers.get(`${ns(w)}/${saName}`) ?? []), labels['app.kubernetes.io/name'] ?? id]);
    const sa = serviceAccounts.get(`${ns(w)}/${saName}`);
    if (pod.automountServiceAccountToken !== false && sa?.automountServiceAccountToken !== false) v.push(`${id}: the ServiceAccount token is mounted`);

    // host access and privilege: only in the sandbox tier
    if (!sandboxTier) {
      if (pod.hostNetwork || pod.hostPID || pod.hostIPC) v.push(`${id}: host namespaces outside the sandbox tier`);
      if ((pod.volumes ?? []).some((vol: any) => vol.hostPath)) v.push(`${id}: hostPath volume outside the sandbox tier`);
      const podSec = pod.securityContext ?? {};
      for (const c of all) {
        const s = { ...c.securityContext };
        const cid = `${id} container ${c.name}`;
        if (s.privileged) v.push(`${cid}: privileged outside the sandbox tier`);
        if (!(s.runAsNonRoot ?? podSec.runAsNonRoot)) v.push(`${cid}: not runAsNonRoot`);
        if ((s.runAsUser ?? podSec.runAsUser) === 0) v.push(`${cid}: runs as root`);
        if (s.allowPrivilegeEscalation !== false) v.push(`${cid}: allowPrivilegeEscalation is not false`);
        if (s.readOnlyRootFilesystem !== true) v.push(`${cid}: root filesystem is writable`);
        if (!(s.capabilities?.drop ?? []).includes('ALL')) v.push(`${cid}: capabilities not dropped`);
        if ((s.capabilities?.add ?? []).length > 0) v.push(`${cid}: adds capabilities`);
        if ((s.seccompProfile?.type ?? podSec.seccompProfile?.type) !== 'RuntimeDefault') v.push(`${cid}: seccomp profile is not RuntimeDefault`);
      }
    } else if (pod.securityContext?.seccompProfile?.type !== 'RuntimeDefault') {
      v.push(`${id}: the sandbox pod's default seccomp profile is not RuntimeDefault`);
    }

    for (const c of all) {
      const cid = `${id} container ${c.name}`;
      // resources
      if (!c.resources?.requests?.cpu || !c.resources?.requests?.memory) v.push(`${cid}: no cpu and memory requests`);
      if (!c.resources?.limits?.memory) v.push(`${cid}: no memory limit`);
      // images: a tag or a digest, never latest
      const image = String(c.image ?? '');
      const tagged = /@sha256:[0-9a-f]{64}$/.test(image) || /:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(image.split('/').pop() ?? '');
      if (!tagged || /:latest$/.test(image)) v.push(`${cid}: image ${image} has no tag or digest`);
      // Secrets and ConfigMaps: every reference documented / existing
      for (const e of c.env ?? []) {
        const sk = e.valueFrom?.secretKeyRef;
        if (sk && !docs.has(`${sk.name}.${sk.key}`)) v.push(`${cid}: Secret key ${sk.name}.${sk.key} is not documented in k8s/README.md`);
        const ck = e.valueFrom?.configMapKeyRef;
        if (ck && configMaps.get(`${ns(w)}/${ck.name}`)?.data?.[ck.key] === undefined) v.push(`${cid}: ConfigMap key ${ck.name}.${ck.key} does not exist`);
      }
      for (const ef of c.envFrom ?? []) {
        if (ef.secretRef && !docs.has(ef.secretRef.name)) v.push(`${cid}: Secret ${ef.secretRef.name} is not documented in k8s/README.md`);
        if (ef.configMapRef && !configMaps.has(`${ns(w)}/${ef.configMapRef.name}`)) v.push(`${cid}: ConfigMap ${ef.configMapRef.name} does not exist`);
      }
    }
    for (const vol of pod.volumes ?? []) {
      if (vol.secret && !docs.has(vol.secret.secretName)) v.push(`${id}: Secret volume ${vol.secret.secretName} is not documented in k8s/README.md`);
      if (vol.configMap && !configMaps.has(`${ns(w)}/${vol.configMap.name}`)) v.push(`${id}: ConfigMap volume ${vol.configMap.name} does not exist`);
    }
    if (!isWorkload) continue;

    // probes: every long-running container
    for (const c of mains) {
      if (!c.readinessProbe) v.push(`${id} container ${c.name}: no readiness probe`);
      if (!c.livenessProbe) v.push(`${id} container ${c.name}: no liveness probe`);
    }
    for (const c of sidecars) if (!c.readinessProbe && !c.startupProbe) v.push(`${id} sidecar ${c.name}: no startup or readiness probe`);

    // a PDB and a NetworkPolicy of its own
    const sameNs = (m: Manifest) => ns(m) === ns(w);
    if (!byKind('PodDisruptionBudget').some((p) => sameNs(p) && selectorMatches(p.spec.selector, labels))) v.push(`${id}: no PodDisruptionBudget`);
    if (!byKind('NetworkPolicy').some((p) => sameNs(p) && selectorMatches(p.spec.podSelector, labels))) v.push(`${id}: no NetworkPolicy of its own`);
    // (checked where the rendering holds the namespace itself: k8s/deps alone relies on base's)
    if (
      byKind('Namespace').some((n) => n.metadata.name === ns(w)) &&
      !byKind('NetworkPolicy').some(
        (p) => sameNs(p) && Object.keys(p.spec.podSelector ?? {}).length === 0 && p.spec.policyTypes?.includes('Egress') && !p.spec.egress && !p.spec.ingress,
      )
    )
      v.push(`${id}: its namespace has no default-deny NetworkPolicy`);

    // replicas > 1 (or an autoscaler that may make it so): spread over nodes
    const hpa = byKind('HorizontalPodAutoscaler').find((h) => sameNs(h) && h.spec.scaleTargetRef.name === w.metadata.name && h.spec.scaleTargetRef.kind === w.kind);
    const many = (w.spec.replicas ?? 1) > 1 || (hpa?.spec.maxReplicas ?? 1) > 1;
    if (many && !(pod.topologySpreadConstraints ?? []).some((t: any) => t.topologyKey === 'kubernetes.io/hostname' && matches(t.labelSelector?.matchLabels, labels)))
      v.push(`${id}: several replicas but no topology spread over nodes`);
    if (hpa && w.spec.replicas !== undefined) v.push(`${id}: replicas set in the Deployment and by a HorizontalPodAutoscaler`);
  }

  for (const ing of byKind('Ingress'))
    for (const t of ing.spec.tls ?? []) if (t.secretName && !docs.has(t.secretName)) v.push(`${key(ing)}: TLS Secret ${t.secretName} is not documented in k8s/README.md`);

  for (const [sa, users] of saUsers) if (new Set(users).size > 1) v.push(`ServiceAccount ${sa}: shared by ${[...new Set(users)].join(', ')}`);

  // ConfigMaps referenced by workloads are generated with a content hash (a change rolls the pods)
  for (const [name, c] of configMaps) {
    const used = podOwners.some((w) => JSON.stringify(w.spec.template.spec).includes(`"${c.metadata.name}"`));
    if (used && !/-[a-z0-9]{10}$/.test(c.metadata.name)) v.push(`ConfigMap ${name}: no content hash in its name (a change would not roll the pods)`);
  }
  return v;
}

const DIGEST = /@sha256:[0-9a-f]{64}$/;

/**
 * The image recipes' policy (issue 17, item 6): every base an image is built FROM is pinned by
 * digest (directly, or as the default of the build arg it names; a build arg may replace it, e.g.
 * an offline stand-in, but the release's default is pinned), all of them the same base image, and
 * the app image's Node is the build provisioning installs on the machines (same version, same
 * checksum), so images, CI and developers run one Node.
 * `dockerfiles` maps each Dockerfile's path to its text; `toolchain` is infra/provision.d/00-toolchain.sh.
 */
export function imageRecipeViolations(dockerfiles: Record<string, string>, toolchain: string, appDockerfile = 'infra/docker/Dockerfile'): string[] {
  const v: string[] = [];
  const bases = new Set<string>();
  for (const [path, text] of Object.entries(dockerfiles)) {
    const args = new Map<string, string>();
    const stages = new Set<string>();
    for (const line of text.split('\n')) {
      const arg = /^ARG\s+([A-Za-z_][A-Za-z0-9_]*)(?:=(\S+))?/.exec(line);
      if (arg) {
        if (arg[2] !== undefined && !args.has(arg[1]!)) args.set(arg[1]!, arg[2]);
        continue;
      }
      const from = /^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
      if (!from) continue;
      const ref = from[1]!;
      if (from[2]) stages.add(from[2]);
      if (stages.has(ref) && ref !== from[2]) continue; // a previous stage of this file
      const named = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(ref);
      const image = named ? args.get(named[1]!) : ref;
      if (image === undefined) v.push(`${path}: FROM ${ref} has no default`);
      else if (!DIGEST.test(image)) v.push(`${path}: FROM ${image} is not pinned by digest`);
      else bases.add(image.replace(/^[^@]*@/, ''));
    }
  }
  if (bases.size > 1) v.push(`the images are built from ${bases.size} different bases (${[...bases].join(', ')}), not one`);

  const app = dockerfiles[appDockerfile];
  const pin = (text: string, name: string) => new RegExp(`^(?:ARG\\s+)?${name}='?([^'\\s]+)'?$`, 'm').exec(text ?? '')?.[1];
  for (const [image, machine] of [
    ['NODE_VERSION', 'DRAEL_NODE_VERSION'],
    ['NODE_INTEGRITY', 'DRAEL_NODE_INTEGRITY'],
  ] as const) {
    const a = pin(app ?? '', image);
    const b = pin(toolchain, machine);
    if (!a || !b || a !== b) v.push(`${appDockerfile} ${image}=${a} differs from provisioning's ${machine}=${b}`);
  }
  return v;
}
