import { lookup } from 'node:dns/promises';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Name resolution behind one small interface, so tests can stand in a resolver whose answers change. */
export interface Resolver {
  resolve(hostname: string): Promise<ResolvedAddress[]>;
}

export const systemResolver: Resolver = {
  async resolve(hostname) {
    const answers = await lookup(hostname, { all: true, verbatim: true });
    return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  },
};
