import { describe, expect, it } from 'vitest';
import { parseWorkspacePath } from './safe-path.js';

describe('parseWorkspacePath', () => {
  it('keeps plain relative paths', () => {
    expect(parseWorkspacePath('a.txt')).toBe('a.txt');
    expect(parseWorkspacePath('./dir/b.txt')).toBe('dir/b.txt');
  });

  it.each(['', '/etc/passwd', '../x', 'a/../b', 'a/./b', 'a//b', 'a/', '.', '..', 'a\0b', `${'x'.repeat(256)}`, Array(33).fill('d').join('/')])('refuses %j', (p) => {
    expect(() => parseWorkspacePath(p)).toThrow(expect.objectContaining({ code: 'invalid_path' }));
  });
});
