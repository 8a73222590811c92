import type { WorkspaceScope } from '@drael/contracts';
import type { Caller } from '../auth/identity.js';
import { randomId } from '../ids.js';

/** The sandbox fields that name a workspace (run and file subjects). */
export interface WorkspaceFields {
  tenant: string;
  session: string;
  scope: WorkspaceScope;
}

/**
 * Where the files of one request live (spec 01: "Files live under the session named by
 * X-Drael-Session. A request with no session header gets a workspace for that request alone").
 *
 * - With the header: the client's session, scoped to the key's account; it outlives the request.
 * - Without: a workspace of this request, shared by every run_code of the request (every turn,
 *   and its sub-agents: spec 04 has a child bill "as a continuation of the parent turn", and the
 *   session header reaches children too, so the request's workspace does as well). Its id is
 *   random and lives in the sandbox's `request` scope, which no client session id can name, so
 *   no other request or account can reach it. The sandbox creates it at the first use; the turn
 *   loop deletes it when the request ends, however it ends.
 */
export class Workspace {
  /** Named at its first use: most requests never run code, and need no id (issue 20). */
  private fields: WorkspaceFields | undefined;

  private constructor(
    private readonly tenant: string,
    private readonly session: string | undefined,
  ) {}

  static of(caller: Caller, session: string | undefined): Workspace {
    return new Workspace(caller.account_id, session);
  }

  /** The fields naming it for a run or a file call; marks it used (the sandbox creates it on first use). */
  use(): WorkspaceFields {
    this.fields ??=
      this.session !== undefined
        ? { tenant: this.tenant, session: this.session, scope: 'session' }
        : // 128 random bits in the session id alphabet ([A-Za-z0-9_-]).
          { tenant: this.tenant, session: `req_${randomId()}`, scope: 'request' };
    return this.fields;
  }

  /** The client's session id, when the request named one (files there are the client's to fetch). */
  get clientSession(): string | undefined {
    return this.session;
  }

  /** A request's own workspace that something created (used, so named): delete it when the request ends. */
  get needsDiscard(): boolean {
    return this.fields?.scope === 'request';
  }

  /** For discarding only: the fields of a used workspace (needsDiscard), without marking it used. */
  get ref(): WorkspaceFields {
    if (!this.fields) throw new Error('a workspace never used has nothing to discard');
    return this.fields;
  }
}
