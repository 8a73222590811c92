import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The local searx and its fixture corpora (idempotent: provision.d/40-searx.sh usually started them). */
export default function setup(): void {
  const script = fileURLToPath(new URL('../../../infra/searx/start-local.sh', import.meta.url));
  execFileSync('bash', [script], { stdio: 'inherit', timeout: 60_000 });
}
