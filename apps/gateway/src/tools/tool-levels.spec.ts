import { describe, expect, it } from 'vitest';
import { AGENT_TOOL_LEVEL, TOOL_LEVELS, toolsBeyondLevel } from '@drael/contracts';
import { allowedTools, levelAtLeast } from './tool-levels.js';

describe('tool levels bind hosted agents as they bind the catalogue', () => {
  it('sandbox.execute needs exactly the level run_code needs: both execute code', () => {
    for (const level of TOOL_LEVELS) {
      expect(levelAtLeast(level, AGENT_TOOL_LEVEL['sandbox.execute']), level).toBe(allowedTools(level).has('run_code'));
      expect(toolsBeyondLevel(level, ['sandbox.execute']).length === 0, level).toBe(allowedTools(level).has('run_code'));
    }
  });

  it('none allows no executed tool, and an unknown tool is never allowed', () => {
    expect(toolsBeyondLevel('none', ['sandbox.execute'])).toEqual(['sandbox.execute']);
    expect(toolsBeyondLevel('l4_browser', ['rm_rf'])).toEqual(['rm_rf']);
  });
});
