import { loadCredential } from './credential.js';

/** A failed request, read from the OpenAI error envelope the gateway answers every error with. */
export class ApiFailure extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
    readonly type: string | null,
    readonly param: string | null,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

interface Envelope {
  error?: { message?: unknown; type?: unknown; code?: unknown; param?: unknown };
}

const str = (v: unknown) => (typeof v === 'string' ? v : null);

/** The envelope of a failed response, or a plain description when the body is not one. */
export async function failureOf(res: Response): Promise<ApiFailure> {
  let body: Envelope | undefined;
  try {
    body = (await res.json()) as Envelope;
  } catch {
    body = undefined;
  }
  return failureFromEnvelope(body, res.status);
}

export function failureFromEnvelope(body: Envelope | undefined, status: number): ApiFailure {
  const e = body?.error;
  if (e && typeof e === 'object') return new ApiFailure(str(e.message) ?? `HTTP ${status}`, status, str(e.code), str(e.type), str(e.param));
  return new ApiFailure(`HTTP ${status}: the answer was not an OpenAI error envelope`, status, null, null, null);
}

export interface RequestOptions {
  method?: string;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** A request to this origin with the signed-in credential; the answer's status checked. */
export async function request(path: string, options: RequestOptions = {}): Promise<Response> {
  const cred = loadCredential();
  const headers: Record<string, string> = { ...options.headers };
  if (cred) headers.authorization = `Bearer ${cred.secret}`;
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  let res: Response;
  try {
    res = await fetch(path, { method: options.method ?? 'GET', headers, body, signal: options.signal, credentials: 'omit', cache: 'no-store' });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiFailure('The gateway could not be reached.', 0, 'network_error', null, null);
  }
  if (!res.ok) throw await failureOf(res);
  return res;
}

export async function getJson<T>(path: string, options: RequestOptions = {}): Promise<T> {
  return (await request(path, options)).json() as Promise<T>;
}

export const sendJson = <T>(method: string, path: string, json?: unknown, headers?: Record<string, string>): Promise<T> =>
  getJson<T>(path, { method, ...(json === undefined ? {} : { json }), ...(headers ? { headers } : {}) });
