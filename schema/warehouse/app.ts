// The app host mirror (`/api/v1`). Tables are added by the app sync.
import { pgSchema } from 'drizzle-orm/pg-core';

export const appSchema = pgSchema('app');
