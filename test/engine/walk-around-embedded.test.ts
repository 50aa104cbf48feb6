// One bad response stops nothing, on the embedded server (the cases: walk-around.cases.ts).
import { describe } from 'vitest';
import { embeddedWarehouses } from '../helpers/servers.ts';
import { walkAroundRefusals } from './walk-around.cases.ts';

describe('one bad response stops nothing, on the embedded server', () => walkAroundRefusals(embeddedWarehouses));
