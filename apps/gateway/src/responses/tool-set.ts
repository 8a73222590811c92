import { ApiError } from '../errors/api-error.js';
import type { ChatFunctionTool, ChatToolChoice } from './chat-message.js';
import { FETCH_ENGINE_NAMES, SEARCH_ENGINE_NAMES, normalizeDomain } from './hosted/engines.js';
import { validTimezone } from './hosted/datetime.tool.js';
import { HOSTED_FUNCTION, type HostedKind } from './hosted/tool-names.js';
import { searchableOf, type SearchableTool } from './hosted/tool-search.tool.js';
import type { DatetimeTool, FunctionTool, ResponseTool, ToolChoice, ToolSearchTool, WebFetchTool, WebSearchTool } from './responses.schema.js';

const QUERY_PARAMS = (what: string) => ({
  type: 'object',
  properties: { query: { type: 'string', description: what } },
  required: ['query'],
  additionalProperties: false,
});

/** The hosted tools as the model sees them: ordinary function tools whose arguments it authors. */
const HOSTED_DEFINITIONS: Record<HostedKind, (t: ToolSetDeclarations) => ChatFunctionTool> = {
  web_search: () => ({
    type: 'function',
    function: {
      name: HOSTED_FUNCTION.web_search,
      description: 'Search the web. Returns titles, URLs and snippets of matching pages. Cite the URLs you use.',
      parameters: QUERY_PARAMS('What to search for, in your own words.'),
    },
  }),
  web_fetch: () => ({
    type: 'function',
    function: {
      name: HOSTED_FUNCTION.web_fetch,
      description: 'Open one web page by URL and read it as markdown.',
      parameters: {
        type: 'object',
        properties: { url: { type: 'string', description: 'Absolute http(s) URL of the page.' } },
        required: ['url'],
        additionalProperties: false,
      },
    },
  }),
  tool_search: (t) => ({
    type: 'function',
    function: {
      name: HOSTED_FUNCTION.tool_search,
      description: t.toolSearch?.description ?? 'Find more tools by describing what you need; matching tools become available to call. Use it when no visible tool fits.',
      parameters: QUERY_PARAMS('Keywords describing the tool you need.'),
    },
  }),
  datetime: (t) => ({
    type: 'function',
    function: {
      name: HOSTED_FUNCTION.datetime,
      description: `The current date and time in ${t.datetime?.timezone ?? 'UTC'}.`,
      parameters: { type: 'object', properties: {}, additionalProperties: false },
    },
  }),
};

export interface ToolSetDeclarations {
  webSearch?: WebSearchTool;
  webFetch?: WebFetchTool;
  toolSearch?: ToolSearchTool;
  datetime?: DatetimeTool;
}

/**
 * What one request declared, checked once before anything runs: the hosted tools (at most one of
 * each), the client's functions (visible, or deferred until tool_search finds them) and the
 * allowed domains web_fetch inherits from web_search.
 */
export class ToolSet {
  readonly hosted: ToolSetDeclarations;
  /** Client functions the model sees from the start. */
  readonly functions: ReadonlyMap<string, FunctionTool>;
  /** Client functions marked defer_loading: out of view until tool_search finds them. */
  readonly deferred: ReadonlyMap<string, FunctionTool>;
  readonly allowedDomains: readonly string[];
  private searchableTools?: readonly SearchableTool[];

  private constructor(hosted: ToolSetDeclarations, functions: Map<string, FunctionTool>, deferred: Map<string, FunctionTool>) {
    this.hosted = hosted;
    this.functions = functions;
    this.deferred = deferred;
    this.allowedDomains = (hosted.webSearch?.filters?.allowed_domains ?? []).map(normalizeDomain);
  }

  static from(tools: readonly ResponseTool[] = []): ToolSet {
    const hosted: ToolSetDeclarations = {};
    const functions = new Map<string, FunctionTool>();
    const deferred = new Map<string, FunctionTool>();
    tools.forEach((tool, i) => {
      const param = `tools[${i}]`;
      const once = <K extends keyof ToolSetDeclarations>(key: K, value: NonNullable<ToolSetDeclarations[K]>) => {
        if (hosted[key]) throw new ApiError('invalid_request', `The tool '${tool.type}' is listed twice`, param);
        hosted[key] = value;
      };
      switch (tool.type) {
        case 'web_search':
        case 'web_search_preview':
          if (!SEARCH_ENGINE_NAMES.includes(tool.engine)) {
            throw new ApiError('invalid_request', `web_search engine '${tool.engine}' is not available here; use one of: ${SEARCH_ENGINE_NAMES.join(', ')}`, `${param}.engine`);
          }
          once('webSearch', tool);
          break;
        case 'web_fetch':
          if (!FETCH_ENGINE_NAMES.includes(tool.engine)) {
            throw new ApiError('invalid_request', `web_fetch engine '${tool.engine}' is not available here; use one of: ${FETCH_ENGINE_NAMES.join(', ')}`, `${param}.engine`);
          }
          once('webFetch', tool);
          break;
        case 'tool_search':
          once('toolSearch', tool);
          break;
        case 'datetime':
          if (!validTimezone(tool.timezone)) throw new ApiError('invalid_request', `Unknown IANA timezone '${tool.timezone}'`, `${param}.timezone`);
          once('datetime', tool);
          break;
        case 'function': {
          if (functions.has(tool.name) || deferred.has(tool.name)) {
            throw new ApiError('invalid_request', `The function '${tool.name}' is listed twice`, `${param}.name`);
          }
          (tool.defer_loading === true ? deferred : functions).set(tool.name, tool);
          break;
        }
      }
    });
    // spec 02: a function literally named like a hosted tool is the client's own; a request
    // cannot list both (the model could not tell which one it calls).
    for (const kind of Object.keys(HOSTED_FUNCTION) as HostedKind[]) {
      const name = HOSTED_FUNCTION[kind];
      if (declared(hosted, kind) && (functions.has(name) || deferred.has(name))) {
        throw new ApiError('invalid_request', `The request lists both the hosted '${kind}' tool and a function named '${name}'; rename the function or drop one of them`, 'tools');
      }
    }
    return new ToolSet(hosted, functions, deferred);
  }

  /** The deferred functions as tool_search matches them, split into words at the first search and kept for the request's every search. */
  searchable(): readonly SearchableTool[] {
    this.searchableTools ??= searchableOf(this.deferred);
    return this.searchableTools;
  }

  /** Which hosted tool, if any, a model-side function name stands for. */
  hostedKindOf(name: string): HostedKind | undefined {
    const kind = (Object.keys(HOSTED_FUNCTION) as HostedKind[]).find((k) => HOSTED_FUNCTION[k] === name);
    return kind && declared(this.hosted, kind) ? kind : undefined;
  }

  /**
   * The function tools the upstream sees this turn. `loaded` are the definitions tool_search
   * brought into view; `withHosted` false on the last turn of the loop.
   */
  visibleTools(loaded: ReadonlyMap<string, FunctionTool>, withHosted: boolean): ChatFunctionTool[] {
    const out: ChatFunctionTool[] = [];
    if (withHosted) {
      for (const kind of Object.keys(HOSTED_FUNCTION) as HostedKind[]) {
        if (declared(this.hosted, kind)) out.push(HOSTED_DEFINITIONS[kind](this.hosted));
      }
    }
    for (const fn of [...this.functions.values(), ...loaded.values()]) out.push(chatFunctionOf(fn));
    return out;
  }

  /**
   * A forced tool_choice (`required`, a named function or hosted tool) needs tools to choose from,
   * as OpenAI answers it; with none declared it would be dropped unseen and the model would answer
   * without the tool the client forced. Checked with the rest of the request, before any model call.
   */
  checkChoice(choice: ToolChoice | undefined): void {
    if (choice === undefined || choice === 'auto' || choice === 'none') return;
    if (this.functions.size > 0 || this.deferred.size > 0 || Object.keys(this.hosted).length > 0) return;
    throw new ApiError('invalid_request', `tool_choice ${JSON.stringify(choice)} needs tools to choose from, and the request declares none`, 'tool_choice');
  }

  /** The upstream's tool_choice for this turn; a forced choice only constrains the first turn. */
  toolChoiceFor(choice: ToolChoice | undefined, turn: number, tools: readonly ChatFunctionTool[]): ChatToolChoice | undefined {
    if (tools.length === 0 || choice === undefined) return undefined;
    if (choice === 'none') return 'none';
    if (turn > 0) return 'auto';
    if (choice === 'auto' || choice === 'required') return choice;
    const name = choice.type === 'function' ? (choice as { name: string }).name : HOSTED_FUNCTION[hostedKindOfType(choice.type)];
    if (!tools.some((t) => t.function.name === name)) {
      throw new ApiError('invalid_request', `tool_choice names '${name}', which is not among the request's tools`, 'tool_choice');
    }
    return { type: 'function', function: { name } };
  }
}

function hostedKindOfType(type: string): HostedKind {
  return type === 'web_search_preview' ? 'web_search' : (type as HostedKind);
}

function declared(hosted: ToolSetDeclarations, kind: HostedKind): boolean {
  switch (kind) {
    case 'web_search':
      return hosted.webSearch !== undefined;
    case 'web_fetch':
      return hosted.webFetch !== undefined;
    case 'tool_search':
      return hosted.toolSearch !== undefined;
    case 'datetime':
      return hosted.datetime !== undefined;
  }
}

export function chatFunctionOf(fn: FunctionTool): ChatFunctionTool {
  return {
    type: 'function',
    function: {
      name: fn.name,
      ...(fn.description ? { description: fn.description } : {}),
      parameters: fn.parameters ?? { type: 'object', properties: {} },
      ...(typeof fn.strict === 'boolean' ? { strict: fn.strict } : {}),
    },
  };
}
