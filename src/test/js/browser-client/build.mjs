// Bundles the page into dist/: page.js (esbuild, ES module, code-split so that the SDK's dynamic
// imports of wa-sqlite become chunks beside it), index.html, and the wa-sqlite WASM files, which the
// wa-sqlite loaders fetch with new URL('<name>.wasm', import.meta.url), i.e. beside the chunk.
// Usage: node build.mjs
import { build } from 'esbuild';
import { copyFileSync, cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'dist');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await build({
  absWorkingDir: here,
  entryPoints: ['page.js'],
  outdir: out,
  bundle: true,
  format: 'esm',
  splitting: true,
  platform: 'browser',
  target: 'es2022',
  sourcemap: true,
  logLevel: 'warning'
});

copyFileSync(join(here, 'index.html'), join(out, 'index.html'));
const wasm = join(here, 'node_modules', '@journeyapps', 'wa-sqlite', 'dist');
for (const name of readdirSync(wasm).filter((n) => n.endsWith('.wasm') && !n.includes('jspi') && !n.includes('dynamic'))) {
  copyFileSync(join(wasm, name), join(out, name));
}
// The SDK's prebuilt worker (database and shared sync worker in one script, with its own wa-sqlite
// chunks and assets/), beside the bundle, where new URL('./worker.js', import.meta.url) finds it.
cpSync(join(here, 'node_modules', '@powersync', 'web', 'dist', 'worker'), out, {
  recursive: true,
  filter: (source) => !source.endsWith('.map')
});
console.error(`built ${out}: ${readdirSync(out).length} files`);
