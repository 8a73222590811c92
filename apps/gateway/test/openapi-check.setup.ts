import { afterAll, afterEach } from 'vitest';
import { installOpenApiFetchCheck, takeOpenApiViolations } from '@drael/test-support';

/**
 * Issue 22: every HTTP answer the gateway's tests receive from a gateway they started is checked
 * against the OpenAPI document it serves (/openapi.json): status, content type, JSON body, the
 * error envelope too. Installed before any test module runs, so OpenAI SDK clients made at module
 * level use the checked fetch as well. A test whose requests got an undocumented answer fails.
 */
installOpenApiFetchCheck();

const fail = () => {
  const violations = takeOpenApiViolations();
  if (violations.length > 0) throw new Error(`answers that disagree with /openapi.json (fix the code or http-operations.ts):\n${violations.join('\n')}`);
};
afterEach(fail);
afterAll(fail);
