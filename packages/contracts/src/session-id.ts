// The one session id rule (X-Drael-Session, /v1/sessions/{id}, the sandbox's session field, the
// console's session box): the gateway, the sandbox and the console check ids with isSessionId and
// state the rule as SESSION_ID_RULE. A file of its own, with no zod, so that the console's bundle
// takes it alone (`@drael/contracts/session-id`).
export const SESSION_ID_RULE = '^[A-Za-z0-9_-]{1,64}$';
export const SESSION_ID = new RegExp(SESSION_ID_RULE);

export function isSessionId(id: string): boolean {
  return SESSION_ID.test(id);
}
