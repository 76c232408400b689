// The console is built into static files that the serac binary serves under /_serac/console/.
// The server's Content-Security-Policy allows only same-origin scripts and styles, so nothing may
// be inlined: no module-preload polyfill (an inline script), no data: URIs for assets, and CSS is
// emitted as files.
import { defineConfig } from 'vitest/config';

declare const process: { env: Record<string, string | undefined> };

export default defineConfig({
  base: './',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: process.env.SERAC_CONSOLE_OUT_DIR || 'dist',
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    sourcemap: false,
    target: 'es2020',
    rollupOptions: {
      output: {
        entryFileNames: 'assets/[name]-[hash].js',
        chunkFileNames: 'assets/[name]-[hash].js',
        assetFileNames: 'assets/[name]-[hash][extname]',
      },
    },
  },
  server: {
    // `npm run dev` against a running server: SERAC_URL=http://127.0.0.1:9000 npm run dev
    proxy: process.env.SERAC_URL ? { '/_serac/console/api': process.env.SERAC_URL } : undefined,
  },
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    environment: 'node',
  },
});
