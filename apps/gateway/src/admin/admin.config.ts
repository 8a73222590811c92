import { z } from 'zod';

/** The admin API's part of the gateway's environment. */
export const adminConfigShape = {
  // Bearer token of the admin API (/admin/*). Unset: the admin API answers 404 (it is off).
  DRAEL_ADMIN_TOKEN: z.string().min(24, 'use at least 24 characters').optional(),
};
