import { describe, expect, it } from 'vitest';
import { parseNewFilePath, parseWorkspacePath } from './safe-path.js';

describe('parseWorkspacePath', () => {
  it('keeps plain relative paths', () => {
    expect(parseWorkspacePath('a.txt')).toBe('a.txt');
    expect(parseWorkspacePath('./dir/b.txt')).toBe('dir/b.txt');
  });

  it.each(['', '/etc/passwd', '../x', 'a/../b', 'a/./b', 'a//b', 'a/', '.', '..', 'a\0b', `${'x'.repeat(256)}`, Array(33).fill('d').join('/')])('refuses %j', (p) => {
    expect(() => parseWorkspacePath(p)).toThrow(expect.objectContaining({ code: 'invalid_path' }));
  });

  // Attack pass 4, F7: a name that displays as another (invoice<RLO>fdp.exe shows as "invoiceexe.pdf"), or forges listing lines.
  it.each(['invoice\u202efdp.exe', 'a\u2066b', 'x\u200fy', 'dir/line\nbreak.txt', 'tab\there', 'del\u007f', 'c1\u0085'])(
    'refuses %j as a new file, still reads it by that name',
    (p) => {
      expect(() => parseNewFilePath(p)).toThrow(expect.objectContaining({ code: 'invalid_path' }));
      expect(parseWorkspacePath(p)).toBe(p);
    },
  );

  // F5: uploads in progress are staged there (workspace/upload-staging.ts), out of every path's reach.
  it.each(['.drael-uploads', '.drael-uploads/abc', './.drael-uploads/x/y'])('refuses %j (the staging directory)', (p) => {
    expect(() => parseWorkspacePath(p)).toThrow(expect.objectContaining({ code: 'invalid_path' }));
  });

  it.each(['café.txt', 'cafe\u0301.txt', 'family\u200d.txt', '报告.pdf', 'a b.txt'])('writes %j as it is', (p) => {
    expect(parseNewFilePath(p)).toBe(p);
  });
});
