// The gateway mirror (`/v1`). Tables are added by the gateway sync.
import { pgSchema } from 'drizzle-orm/pg-core';

export const gatewaySchema = pgSchema('gateway');
