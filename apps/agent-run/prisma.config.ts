import { defineConfig } from 'prisma/config';

// process.env with a fallback, not env(): env() throws when unset and would break `prisma generate`.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/drael?schema=agent_run' },
});
