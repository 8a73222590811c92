import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { httpConfigShape } from './http.config.js';

const parse = (value: string | undefined) => z.object(httpConfigShape).safeParse(value === undefined ? {} : { CORS_ALLOWED_ORIGINS: value });

describe('CORS_ALLOWED_ORIGINS', () => {
  it('unset or empty: no origin (CORS off)', () => {
    expect(parse(undefined).data?.CORS_ALLOWED_ORIGINS.size).toBe(0);
    expect(parse(' ').data?.CORS_ALLOWED_ORIGINS.size).toBe(0);
  });

  it('exact origins, comma separated, spaces trimmed', () => {
    expect([...parse('https://app.example.com, http://localhost:3000').data!.CORS_ALLOWED_ORIGINS]).toEqual(['https://app.example.com', 'http://localhost:3000']);
  });

  it('a wildcard, a path, a trailing slash, another scheme or a default port written out stop the boot', () => {
    for (const bad of ['*', 'https://app.example.com/', 'https://app.example.com/x', 'app.example.com', 'ftp://a.example', 'https://a.example:443', 'https://App.example.com']) {
      expect(parse(bad).success, bad).toBe(false);
    }
  });
});
