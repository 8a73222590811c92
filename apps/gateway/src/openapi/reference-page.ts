import type { OpenApiDocument } from './openapi.document.js';

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/** `code` spans of the descriptions, the only markup they use. */
const inline = (s: string) => escape(s).replace(/`([^`]+)`/g, '<code>$1</code>');
const pretty = (v: unknown) => `<pre>${escape(JSON.stringify(v, null, 2))}</pre>`;

interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  'x-drael-access': string;
  parameters?: { name: string; in: string; required: boolean; description?: string; schema: unknown }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { $ref?: string; description?: string; content?: Record<string, { schema: unknown }> }>;
}

/**
 * The document as one readable page: static HTML with its own small stylesheet and no script, so
 * it renders offline and under the console's strict CSP. Generated from the same document the
 * gateway serves (GET /docs), checked in as docs/http-api.html.
 */
export function referencePage(doc: OpenApiDocument): string {
  const info = doc.info as { title: string; version: string; description: string };
  const byTag = new Map<string, { method: string; path: string; op: Operation }[]>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, Operation>)) {
      const tag = op.tags[0] ?? 'other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push({ method: method.toUpperCase(), path, op });
    }
  }
  const out: string[] = [];
  out.push(
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escape(info.title)} HTTP API ${escape(info.version)}</title>`,
    '<style>body{font:15px/1.5 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}',
    'code,pre{font:13px/1.4 ui-monospace,monospace}pre{background:#f5f5f5;padding:.6rem;overflow:auto;max-height:24rem}',
    'h3{margin-top:2rem;border-top:1px solid #ddd;padding-top:1rem}.m{display:inline-block;min-width:4.2rem;font-weight:700}',
    '.a{font-size:12px;background:#eef;padding:0 .4rem;border-radius:3px}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}</style>',
    '</head><body>',
    `<h1>${escape(info.title)} HTTP API <small>${escape(info.version)}</small></h1>`,
    ...info.description.split('\n\n').map((p) => `<p>${inline(p)}</p>`),
    '<p>Machine-readable: <a href="/openapi.json"><code>/openapi.json</code></a> (OpenAPI 3.1). Generated from the code: do not edit.</p>',
    '<nav><ul>',
  );
  for (const [tag, ops] of byTag) {
    out.push(`<li>${escape(tag)}: ${ops.map(({ method, path, op }) => `<a href="#${escape(op.operationId)}">${method} ${escape(path)}</a>`).join(', ')}</li>`);
  }
  out.push('</ul></nav>');
  for (const [tag, ops] of byTag) {
    out.push(`<h2>${escape(tag)}</h2>`);
    for (const { method, path, op } of ops) {
      out.push(
        `<h3 id="${escape(op.operationId)}"><span class="m">${method}</span> <code>${escape(path)}</code> <span class="a">${escape(op['x-drael-access'])}</span></h3>`,
        `<p>${inline(op.summary)}</p>`,
      );
      if (op.parameters?.length) {
        out.push('<table><tr><th>parameter</th><th>in</th><th>required</th><th>schema / description</th></tr>');
        for (const p of op.parameters) {
          out.push(
            `<tr><td><code>${escape(p.name)}</code></td><td>${p.in}</td><td>${p.required ? 'yes' : 'no'}</td><td>${p.description ? inline(p.description) : ''} <code>${escape(JSON.stringify(p.schema))}</code></td></tr>`,
          );
        }
        out.push('</table>');
      }
      if (op.requestBody) {
        for (const [type, { schema }] of Object.entries(op.requestBody.content)) out.push(`<details><summary>Request body (${escape(type)})</summary>${pretty(schema)}</details>`);
      }
      const errors: string[] = [];
      for (const [status, r] of Object.entries(op.responses)) {
        if (r.$ref) {
          errors.push(status);
          continue;
        }
        const types = Object.entries(r.content ?? {});
        if (types.length === 0) out.push(`<p><b>${status}</b> ${inline(r.description ?? '')}</p>`);
        for (const [type, { schema }] of types) out.push(`<details><summary><b>${status}</b> ${escape(type)}: ${inline(r.description ?? '')}</summary>${pretty(schema)}</details>`);
      }
      out.push(`<p>Errors, in the envelope: ${errors.join(', ')}</p>`);
    }
  }
  const envelope = (doc.components as { responses: { Error: { content: Record<string, { schema: unknown }> } } }).responses.Error.content['application/json']!.schema;
  out.push('<h2 id="error">The error envelope</h2>', pretty(envelope), '</body></html>', '');
  return out.join('\n');
}
