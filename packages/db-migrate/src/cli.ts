#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { check, create, deploy } from './migrator.js';

const USAGE = `usage: drael-migrate <deploy|create NAME|check> [--schema prisma/schema.prisma] [--migrations prisma/migrations]
DATABASE_URL (with optional ?schema=NAME) says where. Runs Prisma's schema engine as wasm: the native
engine binary cannot be downloaded here, and the folder stays compatible with \`prisma migrate\`.`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { schema: { type: 'string', default: 'prisma/schema.prisma' }, migrations: { type: 'string', default: 'prisma/migrations' } },
});
const [command, name] = positionals;
const databaseUrl = process.env.DATABASE_URL;
if (!command || !databaseUrl) {
  process.stderr.write(`${USAGE}\n${databaseUrl ? '' : 'DATABASE_URL is not set\n'}`);
  process.exit(2);
}
const options = { databaseUrl, schemaPath: values.schema, migrationsDir: values.migrations };

try {
  if (command === 'deploy') {
    const applied = await deploy(options);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'no pending migrations\n');
  } else if (command === 'create') {
    if (!name) throw new Error('create needs a NAME');
    const dir = await create(options, name);
    process.stdout.write(dir ? `created ${dir}\n` : 'schema.prisma matches the migrations: nothing to create\n');
  } else if (command === 'check') {
    const res = await check(options);
    if (!res.ok) {
      process.stderr.write(`schema.prisma changed without a migration. Run: drael-migrate create <name>\nMissing SQL:\n${res.missingSql}\n`);
      process.exit(1);
    }
    process.stdout.write('migrations match schema.prisma\n');
  } else {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
} catch (err) {
  process.stderr.write(`drael-migrate ${command} failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
