import { describe, expect, it } from 'vitest';
import { cutFields, cutText, elideInlineData, failed, MAX_FIELD_BYTES, notFound, renderResult } from './tool-result.js';
import { shapeRun } from './run-code.tool.js';
import { shapeSearch } from './web-search.tool.js';
import { shapeFetch } from './web-fetch.tool.js';
import { allowedTools, lowerLevel } from './tool-levels.js';

const fetchReply = {
  url: 'u',
  final_url: 'https://e.test/',
  title: 'T',
  byline: null,
  description: null,
  canonical: null,
  lang: null,
  content_type: 'text/html',
  content: '',
  chars: 0,
  truncated: false,
  took_ms: 1,
  cached: false,
};

describe('inline data in page content', () => {
  it('a base64 image in fetched markdown becomes its type and size, the omission stated; the text around it stays', () => {
    const png = Buffer.alloc(30_000, 7).toString('base64');
    const page = `# Title\n\n![logo](data:image/png;base64,${png}) and text after.\n\n![x](data:image/svg+xml;charset=utf-8;base64,${png})`;
    const out = elideInlineData(page);
    expect(out).toBe(
      '# Title\n\n![logo](data:image/png;base64,[30000 bytes of inline data omitted]) and text after.\n\n![x](data:image/svg+xml;base64,[30000 bytes of inline data omitted])',
    );
    const shaped = shapeFetch({ ...fetchReply, content: page });
    expect(shaped.content).toBe(out);
  });

  // The attack: text whose every `data:` the pattern searched on through all the parameters after
  // it (this megabyte took two minutes). Each `data:` found, in one pass.
  it('text made of data: URIs that never reach their base64 is read in one pass, and a real one among them still elided', () => {
    const hostile = 'data:a/a;b='.repeat(96_000);
    const png = Buffer.alloc(300, 7).toString('base64');
    const out = elideInlineData(`${hostile} ![x](data:image/png;base64,${png})`);
    expect(out).toBe(`${hostile} ![x](data:image/png;base64,[300 bytes of inline data omitted])`);
  });

  it('leaves short data URIs and ordinary text alone', () => {
    const text = 'a tiny dot data:image/gif;base64,R0lGODlhAQABAAAAACw= and base64,AAAA in prose';
    expect(elideInlineData(text)).toBe(text);
  });
});

describe('8 KiB cuts', () => {
  it('leaves a short field alone', () => {
    expect(cutText('hello')).toEqual({ text: 'hello', cut: false });
  });

  it('cuts a long field to at most 8 KiB and says so in the text', () => {
    const long = 'x'.repeat(20_000);
    const { text, cut } = cutText(long);
    expect(cut).toBe(true);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_FIELD_BYTES);
    expect(text).toMatch(/\[cut: the first 8192 of 20000 bytes are shown; the rest was dropped\]$/);
    expect(text.startsWith('xxxx')).toBe(true);
  });

  it('never splits a multi-byte character', () => {
    const { text } = cutText('é'.repeat(10_000));
    expect(text).not.toContain('\uFFFD');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_FIELD_BYTES);
  });

  it('cuts every string field of a result, deeply', () => {
    const r = cutFields({ a: 'y'.repeat(9000), list: [{ b: 'z'.repeat(9000) }], n: 3 });
    expect(r.a).toContain('[cut:');
    expect(r.list[0]!.b).toContain('[cut:');
    expect(r.n).toBe(3);
    expect(JSON.parse(renderResult({ a: 'q'.repeat(50_000) })).a.length).toBeLessThanOrEqual(MAX_FIELD_BYTES);
  });
});

describe('result shapes', () => {
  it('empty and failed never share a shape', () => {
    expect(notFound('queried, nothing')).toEqual({ ok: true, found: false, note: 'queried, nothing' });
    expect(failed('x', 'because')).toEqual({ ok: false, error: 'x', why: 'because' });
  });

  it('run_code: the spec fields, 8 KiB of each stream, both cuts in truncated, why on failure', () => {
    const r = shapeRun({
      ok: false,
      exit_code: 2,
      stdout: 'o'.repeat(10_000),
      stderr: 'err',
      truncated: { stdout: false, stderr: true },
      timed_out: false,
      oom_killed: false,
      duration_s: 0.4,
    });
    expect(Object.keys(r).sort()).toEqual(['duration_s', 'exit_code', 'ok', 'stderr', 'stdout', 'timed_out', 'truncated', 'why']);
    expect(r.truncated).toEqual({ stdout: true, stderr: true });
    expect(Buffer.byteLength(r.stdout as string)).toBeLessThanOrEqual(MAX_FIELD_BYTES);
    expect(r.why).toMatch(/exited with code 2/);
  });

  it("run_code: a run whose session's files could not be saved says so beside its output", () => {
    const message = 'the session workspace holds more than a save keeps (32768 names); its files stay unsaved until some are deleted';
    const r = shapeRun({
      ok: true,
      exit_code: 0,
      stdout: 'made',
      stderr: '',
      truncated: { stdout: false, stderr: false },
      timed_out: false,
      oom_killed: false,
      duration_s: 0.4,
      unsaved: { code: 'quota_exceeded', message, retryable: false, details: { limit: 'workspace_entries', max: 32_768 } },
    });
    expect(r).toMatchObject({ ok: true, stdout: 'made', files_not_saved: message });
  });

  it('web_search: found:false with the service note; ok:false with the reason', () => {
    const base = { degraded: [], sources_tried: ['a', 'b'], took_ms: 1 };
    expect(shapeSearch({ ok: true, found: false, note: 'all 2 engines answered; nothing', results: [], coverage: 1, intent: 'general', cached: false, ...base })).toEqual({
      ok: true,
      found: false,
      note: 'all 2 engines answered; nothing',
    });
    expect(shapeSearch({ ok: false, code: 'all_engines_failed', reason: 'every engine failed', ...base })).toEqual({
      ok: false,
      error: 'all_engines_failed',
      why: 'every engine failed',
    });
  });

  it('web_fetch: a page without text is found:false, not an empty success', () => {
    const page = {
      url: 'u',
      final_url: 'https://e.test/',
      title: 'T',
      byline: null,
      description: null,
      canonical: null,
      lang: null,
      content_type: 'text/html',
      chars: 0,
      truncated: false,
      took_ms: 1,
      cached: false,
    };
    expect(shapeFetch({ ...page, content: '  ' })).toMatchObject({ ok: true, found: false });
    expect(shapeFetch({ ...page, content: '# Hi' })).toEqual({ ok: true, url: 'https://e.test/', title: 'T', content: '# Hi' });
  });
});

describe('tool levels', () => {
  it('none serves nothing; l1_http no run_code; l3_shell and up run_code', () => {
    expect(allowedTools('none').size).toBe(0);
    expect(allowedTools('l1_http').has('run_code')).toBe(false);
    expect(allowedTools('l1_http').has('web_search')).toBe(true);
    expect(allowedTools('l3_shell').has('run_code')).toBe(true);
    expect(lowerLevel('l4_browser', 'l1_http')).toBe('l1_http');
  });
});
