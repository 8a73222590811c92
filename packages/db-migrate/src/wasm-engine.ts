import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { SchemaEngine } from '@prisma/schema-engine-wasm';

export type { SchemaEngine };

type EngineModule = typeof import('@prisma/schema-engine-wasm') & { __wbg_set_wasm(wasm: unknown): void };

let loaded: Promise<EngineModule> | undefined;
let lastPanic: string | undefined;

/** The message of the engine's last Rust panic (the wasm glue reports it through a global registry). */
export function takePanicMessage(): string | undefined {
  const m = lastPanic;
  lastPanic = undefined;
  return m;
}

/**
 * Loads Prisma's schema engine compiled to wasm. The package's own entry does
 * `import * as wasm from "./schema_engine_bg.wasm"`, which Node 20 cannot import without a flag,
 * so the module is instantiated here by hand with the wasm-bindgen glue (`__wbg_set_wasm`): that
 * glue is internal, which is why the package version is pinned exactly.
 */
export function loadSchemaEngine(): Promise<EngineModule> {
  loaded ??= (async () => {
    (globalThis as unknown as { PRISMA_WASM_PANIC_REGISTRY: unknown }).PRISMA_WASM_PANIC_REGISTRY = {
      set_message: (message: string) => (lastPanic = message),
    };
    const require = createRequire(import.meta.url);
    // The package exports no ./package.json; the glue module sits beside the .wasm file.
    const pkgDir = dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
    const glue = (await import('@prisma/schema-engine-wasm/schema_engine_bg')) as unknown as EngineModule;
    const bytes = await readFile(join(pkgDir, 'schema_engine_bg.wasm'));
    // Node's global WebAssembly (the ES2023 lib has no typings for it).
    const wasmApi = (globalThis as unknown as { WebAssembly: { instantiate(b: Uint8Array, i: object): Promise<{ instance: { exports: Record<string, unknown> } }> } }).WebAssembly;
    const { instance } = await wasmApi.instantiate(bytes, { './schema_engine_bg.js': glue });
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as (() => void) | undefined)?.();
    return glue;
  })();
  return loaded;
}
