// Runs once before the test files: fail fast, with a clear message, when a required
// service is missing, instead of letting every file time out.
import postgres from 'postgres';

export default async function setup(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return; // testcontainers will start one, or the suite says why it cannot.
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    await sql`select 1`;
  } catch (err) {
    throw new Error(`TEST_DATABASE_URL is set but Postgres cannot be reached: ${(err as Error).message}`);
  } finally {
    await sql.end({ timeout: 1 });
  }
}
