import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The pages are served by the gateway under PUBLIC_URL's root: assets under /assets/ with
// hashed names (cached for a year), index.html for every page path.
export default defineConfig({
  plugins: [react()],
  // Relative asset addresses: the pages work under a PUBLIC_URL with a path too.
  base: "./",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // No inline script or style may run under the pages' Content-Security-Policy.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
