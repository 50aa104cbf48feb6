// One bad response stops nothing, on Postgres (the cases: walk-around.cases.ts).
import { describe } from 'vitest';
import { postgresWarehouses } from '../helpers/servers.ts';
import { walkAroundRefusals } from './walk-around.cases.ts';

describe('one bad response stops nothing, on Postgres', () => walkAroundRefusals(postgresWarehouses));
