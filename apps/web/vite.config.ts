import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The hub serves dist/ at `/` (same origin as the API), so the dev server proxies the API paths to a local hub.
const hub = process.env['FLEET_HUB_URL'] ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, target: 'es2022' },
  server: { proxy: { '/v1': hub, '/openapi.json': hub } },
});
