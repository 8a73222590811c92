export { deploy, create, check, pendingSql, readMigrations, type MigratorOptions } from './migrator.js';
export { parseDatabaseUrl } from './pg-adapter.js';
export { isDatabaseUnavailable } from './unavailable.js';
