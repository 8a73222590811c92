import { z } from 'zod';

/** The console's part of the gateway's environment. */
export const consoleConfigShape = {
  // The built console (apps/console/dist). Unset: the one next to this app in the repository or
  // image. A folder without index.html: /console answers 404 (the console is not installed).
  DRAEL_CONSOLE_DIR: z.string().min(1).optional(),
};
