import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's root directory, wherever this code runs from: the TypeScript sources (`src/`,
 * through tsx or vitest) or the build (`dist/src/`, `npm start`). Files that are not compiled
 * (`web/`, the corpus) are found from here.
 */
export const PROJECT_ROOT = join(
  dirname(fileURLToPath(import.meta.url)),
  ...(import.meta.url.endsWith('.js') ? ['..', '..'] : ['..']),
);
