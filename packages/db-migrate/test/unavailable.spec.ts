import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../src/unavailable.js';

describe('isDatabaseUnavailable: an outage to retry, or a failure of the query', () => {
  it('knows the database away through Prisma, the driver adapter and node-postgres, through causes', () => {
    const outages = [
      Object.assign(new Error("Can't reach database server at 127.0.0.1:1"), { code: 'P1001' }),
      Object.assign(new Error('Server has closed the connection.'), { code: 'P1017' }),
      Object.assign(new Error('Transaction API error: Unable to start a transaction in the given time.'), { code: 'P2028' }),
      Object.assign(new Error('driver error'), { meta: { driverAdapterError: { cause: { kind: 'ConnectionClosed' } } } }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      new Error('Query read timeout'),
      new Error('Connection terminated due to connection timeout', { cause: new Error('Connection terminated unexpectedly') }),
      new Error('wrapped', { cause: Object.assign(new Error('too many clients'), { code: '53300' }) }),
    ];
    for (const err of outages) expect(isDatabaseUnavailable(err), err.message).toBe(true);
  });

  it("leaves the query's own failures to be what they are", () => {
    const own = [
      Object.assign(new Error('Unique constraint failed'), { code: 'P2002' }),
      Object.assign(new Error('syntax error at or near'), { code: '42601' }),
      Object.assign(new Error('null value in column'), { code: '23502' }),
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      'a string',
      undefined,
    ];
    for (const err of own) expect(isDatabaseUnavailable(err)).toBe(false);
  });
});
