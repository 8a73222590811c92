import { describe, expect, it } from 'vitest';
import { EngineRefusal, hostAllowed, normalizeDomain, pickFetchEngine, pickSearchEngine, type SearchEngine } from './engines.js';

const open = { allowedDomains: [], toolLevel: 'l4_browser' as const };

describe('fetch engine choice (spec 02: an engine that cannot satisfy a constraint is not used)', () => {
  it('auto under l4_browser uses the service auto mode (browser fallback allowed)', () => {
    expect(pickFetchEngine('auto', open)).toMatchObject({ name: 'auto', render: 'auto' });
  });

  it('auto under l1_http never reaches the browser: plain HTTP', () => {
    expect(pickFetchEngine('auto', { ...open, toolLevel: 'l1_http' })).toMatchObject({ name: 'http', render: 'http' });
    expect(pickFetchEngine('auto', { ...open, toolLevel: 'l3_shell' })).toMatchObject({ name: 'http', render: 'http' });
  });

  it('a named engine the key may not use fails before dispatch instead of running with fewer constraints', () => {
    const refusal = pickFetchEngine('browser', { ...open, toolLevel: 'l1_http' });
    expect(refusal).toBeInstanceOf(EngineRefusal);
    expect((refusal as EngineRefusal).code).toBe('tool_level_insufficient');
  });

  it('tool level none serves no executed tool', () => {
    expect(pickFetchEngine('auto', { ...open, toolLevel: 'none' })).toBeInstanceOf(EngineRefusal);
    expect(pickSearchEngine('auto', { ...open, toolLevel: 'none' })).toBeInstanceOf(EngineRefusal);
  });
});

describe('search engine choice', () => {
  it('auto picks the self-hosted engine, which can filter domains', () => {
    expect(pickSearchEngine('auto', { ...open, allowedDomains: ['example.com'] })).toMatchObject({ name: 'drael' });
  });

  it('an engine that cannot keep results inside allowed_domains is skipped, and with none left the call is refused', () => {
    const engines: SearchEngine[] = [
      { name: 'raw', minLevel: 'l1_http', domainFilter: false },
      { name: 'filtering', minLevel: 'l1_http', domainFilter: true },
    ];
    expect(pickSearchEngine('auto', { ...open, allowedDomains: ['a.com'] }, engines)).toMatchObject({ name: 'filtering' });
    expect(pickSearchEngine('auto', open, engines)).toMatchObject({ name: 'raw' });
    const refused = pickSearchEngine('raw', { ...open, allowedDomains: ['a.com'] }, engines);
    expect((refused as EngineRefusal).code).toBe('engine_cannot_filter_domains');
  });
});

describe('allowed domains', () => {
  it('matches the domain and its subdomains only', () => {
    expect(hostAllowed('example.com', ['example.com'])).toBe(true);
    expect(hostAllowed('docs.example.com', ['example.com'])).toBe(true);
    expect(hostAllowed('badexample.com', ['example.com'])).toBe(false);
    expect(hostAllowed('example.com.evil.net', ['example.com'])).toBe(false);
    expect(hostAllowed('anything.net', [])).toBe(true);
  });

  it('accepts entries written as URLs', () => {
    expect(normalizeDomain('https://Example.com/path')).toBe('example.com');
    expect(normalizeDomain('example.com')).toBe('example.com');
  });
});
