/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers and axe results read by the assertions */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, MODEL, startConsoleStack, type ConsoleStack } from './console-stack.js';

// The console in Debian's Chromium against the real stack (gateway serving the built console,
// billing, sandbox, agent-run) with the scripted upstream standing in for the model.
const ARTIFACTS = resolve(import.meta.dirname, '..', 'test-artifacts');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/lib/chromium/chromium';

let stack: ConsoleStack;
let browser: Browser;
let page: Page;
const requests: string[] = [];
const consoleLines: string[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  stack = await startConsoleStack();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(60_000);
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => consoleLines.push(m.text()));
}, 300_000);

// A failing step leaves a picture of what the page showed.
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: resolve(ARTIFACTS, `failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`), fullPage: true });
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
}, 120_000);

/** axe-core on the page as it stands: no serious or critical violation. */
async function checkA11y(name: string): Promise<void> {
  // Evaluated through the DevTools protocol, which the page's CSP (script-src 'self') does not govern.
  await page.evaluate(AXE_SOURCE);
  const result: any = await page.evaluate(() => (window as any).axe.run(document, { resultTypes: ['violations'] }));
  const serious = result.violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v: any) => `${name}: ${v.id} (${v.nodes.map((n: any) => n.target.join(' ')).join(', ')})`)).toEqual([]);
}

const shot = (name: string) => page.screenshot({ path: resolve(ARTIFACTS, `${name}.png`), fullPage: true });

async function signIn(kind: 'key' | 'admin', secret: string): Promise<void> {
  await page.goto(`${stack.url}/console/`);
  await page.getByLabel(kind === 'key' ? /An API key/ : /The admin token/).check();
  await page.getByLabel(kind === 'key' ? 'API key' : 'Admin token', { exact: true }).fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe('the Drael console in a browser', () => {
  it('is served at /console with its own CSP, cacheable assets, and a 404 envelope for a missing asset', async () => {
    const redirect = await fetch(`${stack.url}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('/console/');
    const index = await fetch(`${stack.url}/console/`, { headers: { 'accept-encoding': 'gzip' } });
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/text\/html/);
    expect(index.headers.get('content-security-policy')).toMatch(/default-src 'self'.*connect-src 'self'/);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const js = await fetch(`${stack.url}${asset}`);
    expect(js.headers.get('cache-control')).toMatch(/immutable/);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    // A page route of the app gets index.html; a missing asset does not.
    expect((await fetch(`${stack.url}/console/usage`)).headers.get('content-type')).toMatch(/text\/html/);
    const missing = await fetch(`${stack.url}/console/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('not_found');
    expect((await fetch(`${stack.url}/console/../readyz`)).status).not.toBe(500);
  });

  it('refuses a wrong key with the envelope, signs in with a good one kept in sessionStorage only, and shows plan, allowances and the 30-day chart', async () => {
    await signIn('key', 'drael_not-a-real-key');
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/invalid_api_key/);
    await checkA11y('sign-in');
    await shot('01-sign-in-error');

    // By keyboard: the secret typed and the form sent with Enter; then Tab reaches the skip link first.
    await page.goto(`${stack.url}/console/`);
    await page.getByLabel('API key', { exact: true }).focus();
    await page.keyboard.type(stack.key.api_key);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await expect.poll(() => page.getByTestId('plan').textContent()).toMatch(/pro/i);
    const meters = page.getByRole('meter');
    await expect.poll(() => meters.count()).toBeGreaterThanOrEqual(2);
    expect(await page.getByTestId('reset').textContent()).toMatch(/Resets .*Monday 00:00 UTC/);
    expect(await page.getByTestId('balance').textContent()).toBe('$5.00');
    // The account's sandbox sessions against their cap, and its saved files against its budget (GET /v1/sessions).
    await page.getByRole('meter', { name: 'Sessions' }).waitFor();
    await page.getByRole('meter', { name: 'Saved files' }).waitFor();
    expect(await page.getByRole('meter', { name: 'Saved files' }).getAttribute('aria-valuemax')).toBe('1024');
    await page.getByText(/Last 30 days/).waitFor();

    const storage = await page.evaluate(() => ({ local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage), url: location.href, cookie: document.cookie }));
    expect(storage.local).toBe('{}');
    expect(storage.session).toContain(stack.key.api_key);
    expect(storage.url).not.toContain(stack.key.api_key);
    expect(storage.cookie).toBe('');
    await checkA11y('usage');
    await shot('02-usage');
  });

  it('playground: a streamed chat whose model calls run_code and spawn_agent shows both cards with their results, the turns and the usage', async () => {
    stack.upstream.setTurns([
      {
        type: 'tool_calls',
        calls: [
          { id: 'rc1', name: 'run_code', arguments: JSON.stringify({ runtime: 'python', code: 'print(6 * 7)' }) },
          { id: 'sa1', name: 'spawn_agent', arguments: JSON.stringify({ role: 'researcher', task: 'find the answer' }) },
        ],
      },
      { type: 'text', content: 'The child found 42.' },
      { type: 'text', content: 'Six times seven is 42.' },
    ]);
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByLabel('Message').fill('What is 6 * 7?');
    await page.getByRole('button', { name: 'Send' }).click();
    const runCode = page.locator('[data-testid="tool-card"][data-tool="run_code"]');
    await runCode.getByText('ok', { exact: true }).waitFor({ timeout: 90_000 });
    expect(await runCode.getByTestId('tool-result').textContent()).toMatch(/42/);
    const sub = page.getByTestId('subagent-card');
    await sub.getByTestId('subagent-preview').waitFor();
    expect(await sub.textContent()).toMatch(/researcher.*find the answer/s);
    expect(await sub.getByTestId('subagent-preview').textContent()).toContain('The child found 42.');
    await page.getByText('Six times seven is 42.').waitFor();
    expect(await page.getByTestId('turns').textContent()).toBe('2 turn(s)');
    // Three model calls of 10 + 5 tokens (the scripted upstream's default usage), the child's included.
    expect(await page.getByTestId('usage').textContent()).toContain('30 prompt + 15 completion = 45 tokens');
    await checkA11y('playground');
    await shot('03-playground-cards');
  });

  it('playground: uploads, lists, downloads and deletes a session file', async () => {
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByLabel('Session (optional)').fill('console-e2e');
    await page.getByRole('heading', { name: /Files of session/ }).waitFor();
    await page.getByLabel('Upload a file').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello from the console\n') });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByTestId('session-files').getByText('notes.txt').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download notes.txt' }).click()]);
    const path = await download.path();
    expect(readFileSync(path, 'utf8')).toBe('hello from the console\n');
    expect(download.suggestedFilename()).toBe('notes.txt');
    await checkA11y('session-files');
    await shot('04-session-files');
    await page.getByRole('button', { name: 'Delete notes.txt' }).click();
    await page.getByText('No files yet.').waitFor();
  });

  it('agents: creates an agent, starts a run, watches it finish live, shows the steps with costs, and verifies the receipts in the browser', async () => {
    stack.upstream.setTurns([
      { type: 'tool_calls', calls: [{ id: 'x1', name: 'sandbox_execute', arguments: JSON.stringify({ runtime: 'python', code: 'print(2 + 2)' }) }] },
      { type: 'text', content: 'The sum is 4.' },
    ]);
    await page.getByRole('link', { name: 'Agents and runs' }).click();
    await page.getByRole('heading', { name: 'Create an agent' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('adder');
    await page.getByLabel('Instructions').fill('Add numbers with code.');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Edit adder' }).waitFor();
    await page.getByLabel('Step limit').fill('5');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await checkA11y('agents');
    await shot('05-agents');

    await page.getByLabel('Task').fill('What is 2 + 2?');
    await page.getByRole('button', { name: 'Start a run' }).click();
    await page.getByRole('heading', { name: /^Run run_/ }).waitFor();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 120_000, interval: 500 }).toBe('succeeded');
    expect(await page.getByTestId('run-output').textContent()).toBe('The sum is 4.');
    await expect.poll(() => page.getByTestId('steps').locator('li').count()).toBe(3);
    expect(await page.getByTestId('steps').textContent()).toMatch(/inference\.chat.*sandbox\.execute.*inference\.chat/s);
    await expect.poll(() => page.getByTestId('events').textContent()).toContain('run.done');
    await expect.poll(() => page.getByTestId('receipts-verdict').textContent()).toMatch(/Chain verified: 3 receipt\(s\), signed run end/);
    await checkA11y('run');
    await shot('06-run-verified');

    // One receipt altered on its way to the browser: the check names the first broken link.
    await page.route('**/v1/runs/*/receipts', async (route) => {
      const res = await route.fetch();
      const body: any = await res.json();
      body.receipts[1].payload.cost_micros += 1;
      await route.fulfill({ response: res, json: body });
    });
    await page.getByRole('button', { name: 'Verify again' }).click();
    await expect.poll(() => page.getByTestId('first-broken').textContent()).toBe('Receipt 1: its hash does not match its payload; its signature is not valid');
    await shot('07-run-broken-receipt');
    await page.unroute('**/v1/runs/*/receipts');
  });

  it('operator: lists accounts, creates a key that works, revokes it and the revoked key is refused; credits a wallet; shows service health', async () => {
    // The agent run above is on the account's 30-day chart (GET /api/billing/usage/daily).
    await page.getByRole('link', { name: 'Usage' }).click();
    await expect.poll(() => page.getByText(/^Spend \(USD\):/).textContent()).toMatch(/^Spend \(USD\): \$0\.0001\d+ in total/);
    expect(await page.getByText(/^Billed requests:/).textContent()).toBe('Billed requests: 3 in total, at most 3 a day');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn('admin', ADMIN_TOKEN);
    await page.getByRole('heading', { name: 'Accounts and keys', level: 1 }).waitFor();
    await page.locator(`button[data-account="${stack.key.account_id}"]`).click();
    const detail = page.getByTestId('account-detail');
    await detail.getByTestId('keys').locator(`tr[data-key-id="${stack.key.key_id}"]`).waitFor();

    await detail.getByLabel('Key name').fill('from-console');
    await detail.getByLabel('Tool level').selectOption('l1_http');
    await detail.getByRole('button', { name: 'Create key' }).click();
    const newKey = (await detail.getByTestId('new-key').textContent())!;
    expect(newKey).toMatch(/^drael_/);
    const models = (k: string) => fetch(`${stack.url}/v1/models`, { headers: { authorization: `Bearer ${k}` } });
    expect((await models(newKey)).status).toBe(200);
    const row = detail.getByTestId('keys').locator('tr', { hasText: 'from-console' });
    await row.getByRole('button', { name: /Revoke key/ }).click();
    await row.getByText(/revoked/).waitFor();
    await expect.poll(async () => (await models(newKey)).status, { timeout: 10_000, interval: 200 }).toBe(401);
    expect((await (await models(newKey)).json()).error.code).toBe('invalid_api_key');

    const balance = async () => Number((await detail.getByTestId('wallet-balance').textContent())!.replace('$', ''));
    const before = await balance();
    await detail.getByLabel('Credit (USD)').fill('2.5');
    await detail.getByRole('button', { name: 'Credit wallet' }).click();
    await expect.poll(balance).toBeCloseTo(before + 2.5, 5);
    await checkA11y('operator');
    await shot('08-operator');

    await page.getByRole('link', { name: 'Service health' }).click();
    await expect.poll(() => page.getByTestId('readiness').textContent()).toBe('Gateway: ready');
    // Each model deployment with its state (issue 24); the single-upstream alias is one deployment named after it.
    const deployment = page.getByTestId('deployments').getByRole('row', { name: /gpt-test/ });
    await expect.poll(() => deployment.textContent()).toContain('healthy');
    await checkA11y('health');
    await shot('09-health');
  });

  it('made no request to any other origin, and never logged a key', () => {
    const origin = new URL(stack.url).origin;
    expect(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:'))).toEqual([]);
    expect(consoleLines.filter((l) => l.includes('drael_') || l.includes(ADMIN_TOKEN))).toEqual([]);
    expect(MODEL).toBe('gpt-test');
  });
});
