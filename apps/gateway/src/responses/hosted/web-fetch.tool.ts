import { MAX_PAGE_BYTES } from '@drael/contracts';
import type { WebFetchTool } from '../responses.schema.js';
import { EngineRefusal, hostAllowed, pickFetchEngine } from './engines.js';
import { cutText } from '../../tools/tool-result.js';
import { failedOutcome, failedOutcomeOf, type HostedCallContext, type ToolOutcome } from './tool-outcome.js';
import type { WebToolsPort } from './web-tools.port.js';

/**
 * One web_fetch call (spec 02): the model's URL, checked against the allowed domains inherited
 * from web_search before anything is dispatched; the page comes back as markdown bounded at 1 MiB.
 */
export async function runWebFetch(rawUrl: string, declaration: WebFetchTool, ctx: HostedCallContext, web: WebToolsPort): Promise<ToolOutcome> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return failedOutcome('invalid_arguments', `'${rawUrl.slice(0, 200)}' is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return failedOutcome('invalid_arguments', 'only http and https URLs can be opened');
  if (!hostAllowed(url.hostname, ctx.allowedDomains)) {
    return failedOutcome('domain_not_allowed', `${url.hostname} is outside the allowed domains (${ctx.allowedDomains.join(', ')})`);
  }
  const engine = pickFetchEngine(declaration.engine, { allowedDomains: ctx.allowedDomains, toolLevel: ctx.toolLevel });
  if (engine instanceof EngineRefusal) return failedOutcome(engine.code, engine.message);

  let page;
  try {
    // spec 02: 1 MiB per returned page.
    page = await web.fetch({ url: url.href, max_chars: MAX_PAGE_BYTES, render: engine.render, tenant: ctx.accountId }, ctx);
  } catch (err) {
    return failedOutcomeOf(err);
  }
  // The service follows redirects; a page that ended outside the allowed domains never reaches the model.
  if (!hostAllowed(hostOf(page.final_url), ctx.allowedDomains)) {
    return failedOutcome('domain_not_allowed', `${url.hostname} redirected to ${hostOf(page.final_url)}, outside the allowed domains`);
  }
  // The page bound (spec 02: 1 MiB per page), stated with the same cut note as every field's.
  const { text: content, cut } = cutText(page.content, MAX_PAGE_BYTES);
  return {
    forModel: {
      ok: true,
      url: page.url,
      final_url: page.final_url,
      title: page.title,
      content,
      truncated: page.truncated || cut,
    },
    sources: [{ url: page.final_url, title: page.title }],
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
