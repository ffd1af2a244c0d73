import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// `vite build web` writes web/dist, which `pitcrew server` serves at /.
export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The manifest tells web/scripts/after-build.mjs which chunks the first page loads.
    manifest: true,
    sourcemap: true,
  },
  server: {
    // For UI work with `npx vite web`: the API of a `pitcrew server` running on 8080.
    proxy: { '/api': 'http://localhost:8080', '/downloads': 'http://localhost:8080' },
  },
});
