#!/usr/bin/env node
// The whole test suite: build, lint (type-aware, with the architecture's import boundaries),
// format check (Biome), dead-code check (knip), typecheck, then every package's tests against
// the real services. Ends with one plain line "N passed, N failed" summed over all packages,
// which CI reads (it cannot read vitest's summary). Build, lint, format, dead code and typecheck
// each count as one check; a package whose tests crashed before writing a report counts as one
// failure.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', FORCE_COLOR: '0' };
let passed = 0;
let failed = 0;
const failures = [];
// Each failed test by name, with the first line of why, printed again at the end: CI keeps only
// the tail of the log, and a package's own output scrolls far above it.
const failedTests = [];

function step(name, cmd, args) {
  console.log(`\n=== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  if (r.status === 0) passed++;
  else {
    failed++;
    failures.push(name);
  }
  return r.status === 0;
}

// Run beside the sandbox's suite, one after another: the packages that start no sandbox service
// and no container (packages/test-support boots every app as its pod, the sandbox's too), then
// agent-run, whose few sandbox runs use a sandbox instance of their own. The small packages take
// ~4 min and agent-run ~5, the sandbox's suite ~9: agent-run there took 5 minutes off the second
// phase. Both suites passed side by side with the machine at load 7-11 (twentieth session).
// Not fetch: its Chromium takes a core of its own, and it passed beside the sandbox only once when
// this was measured.
const besideSandbox = (dir) => (dir.startsWith('packages/') && dir !== 'packages/test-support') || ['apps/billing', 'apps/search', 'apps/agent-run'].includes(dir);

const packages = ['apps', 'packages', '.']
  .flatMap((dir) => (dir === '.' ? ['bench'] : readdirSync(join(root, dir)).map((d) => join(dir, d))))
  .filter((dir) => existsSync(join(root, dir, 'package.json')))
  .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) }))
  .filter(({ pkg }) => pkg.scripts?.test);

for (const { dir } of packages) rmSync(join(root, dir, '.reports'), { recursive: true, force: true });

const built = step('build', 'pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only']);
// Type-aware lint (typescript-eslint's project service), one ESLint per package through turbo
// (`pnpm lint` is the same): the root eslint.config.js applies to each. One ESLint over the whole
// tree held every package's TypeScript project at once and outgrew Node's default heap (4.4 GB
// resident at 17 packages, out of memory at 18). Two at a time: this machine has two cores.
step('lint', 'pnpm', ['exec', 'turbo', 'run', 'lint', '--concurrency=2', '--output-logs=errors-only']);
// Formatting is checked with the lint (biome.json; `pnpm format` writes it, `pnpm format:check`
// lists every difference; here the first 20 are enough to see what is wrong).
step('format', 'pnpm', ['exec', 'biome', 'format', '.', '--max-diagnostics=20']);
// Dead code: unused files, exports and dependencies (knip.jsonc).
step('dead code', 'pnpm', ['exec', 'knip', '--no-progress']);
step('typecheck', 'pnpm', ['exec', 'turbo', 'run', 'typecheck', '--output-logs=errors-only']);
if (built) {
  console.log('\n=== tests');
  if (process.env.DRAEL_TEST_FILTER) turboTest(['--filter', process.env.DRAEL_TEST_FILTER]);
  else {
    // Two phases, packages one after another within each. First the sandbox's suite (~9 min, its
    // time mostly dockerd's and waits: idle expiry, run timeouts, heartbeats) beside besideSandbox's
    // packages (~9 min one after another). Then the packages that drive many sandbox runs or a
    // browser (gateway, fetch, console, test-support's pod boots), never beside the sandbox's
    // suite. A package not named in besideSandbox runs in the second phase.
    const lane = (keep) => packages.filter(({ dir }) => keep(dir)).map(({ pkg }) => `--filter=${pkg.name}`);
    await Promise.all([turboTestAsync(lane((dir) => dir === 'apps/sandbox')), turboTestAsync(lane(besideSandbox))]);
    turboTest(lane((dir) => dir !== 'apps/sandbox' && !besideSandbox(dir)));
  }
}

sweepTestContainers();

for (const { dir, pkg } of packages) {
  if (process.env.DRAEL_TEST_FILTER && !pkg.name.includes(process.env.DRAEL_TEST_FILTER.replace(/^@drael\//, ''))) continue;
  const report = join(root, dir, '.reports', 'vitest.json');
  if (!existsSync(report)) {
    failed++;
    failures.push(`${pkg.name} (no test report: the suite crashed or did not run)`);
    continue;
  }
  const r = JSON.parse(readFileSync(report, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  // A file that failed outside its tests counts too: one that failed to load, or whose beforeAll
  // failed (vitest then reports its tests as skipped, none as failed).
  const brokenFiles = (r.testResults ?? []).filter((f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed'));
  failed += brokenFiles.length;
  if (r.numFailedTests > 0 || brokenFiles.length > 0) failures.push(pkg.name);
  for (const file of r.testResults ?? []) {
    const where = `${pkg.name} ${file.name.replace(`${root}${dir}/`, '')}`;
    for (const a of file.assertionResults ?? []) {
      if (a.status === 'failed') failedTests.push(`${where} > ${a.fullName}: ${firstLine(a.failureMessages?.[0])}`);
    }
    if (brokenFiles.includes(file)) failedTests.push(`${where}: ${firstLine(file.message)}`);
  }
}

// Each harness removes its sandbox instance's containers when it stops, but a container whose
// create was still in flight in dockerd when a test SIGKILLed its sandbox lands after that removal
// (seen once after a CI run: one `Created` container of a test instance). Test instances are
// named `test-…` (the harnesses); an installation's own containers are never touched.
function sweepTestContainers() {
  const listed = spawnSync('docker', ['ps', '-a', '--filter', 'label=drael.sandbox.instance', '--format', '{{.ID}} {{.Label "drael.sandbox.instance"}}'], { encoding: 'utf8' });
  if (listed.status !== 0) return;
  const leftovers = listed.stdout
    .split('\n')
    .map((line) => line.split(' '))
    .filter(([id, instance]) => id && instance?.startsWith('test-'))
    .map(([id]) => id);
  if (!leftovers.length) return;
  console.log(`\nremoving ${leftovers.length} container(s) left by test sandboxes`);
  spawnSync('docker', ['rm', '-f', ...leftovers], { stdio: 'ignore' });
}

// `--only`: everything was built above; a second turbo at the same time must not replay builds
// (restoring dist/ under a running suite).
function turboArgs(filters) {
  return ['exec', 'turbo', 'run', 'test', '--only', '--concurrency=1', '--continue', ...filters];
}

// An empty filter list would mean every package: nothing to run then.
function turboTest(filters) {
  if (filters.length) spawnSync('pnpm', turboArgs(filters), { cwd: root, stdio: 'inherit', env });
}

function turboTestAsync(filters) {
  if (!filters.length) return Promise.resolve();
  return new Promise((res) => spawn('pnpm', turboArgs(filters), { cwd: root, stdio: 'inherit', env }).once('close', res));
}

function firstLine(text) {
  return (text ?? 'no message').split('\n')[0].slice(0, 300);
}

if (failedTests.length) console.log(`\nfailed tests:\n${failedTests.map((t) => `  ${t}`).join('\n')}`);
if (failures.length) console.log(`\nfailing: ${failures.join(', ')}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
