// Running the examples' Python, and the python3 that can: pandas, SQLAlchemy and psycopg2 are
// Debian's python3-pandas python3-sqlalchemy python3-psycopg2 (on /usr/bin/python3), which
// .ci/run installs. A test that needs them fails, saying so, when no interpreter has them.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

/** Runs a command from the repository's root (or `cwd`) with exactly the environment given (`env`), or this one's plus `extraEnv`. */
export function run(cmd: string, args: string[], o: { input?: string; env?: Record<string, string | undefined>; extraEnv?: Record<string, string>; cwd?: string } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const env = o.env ?? { ...process.env, ...o.extraEnv };
    const child = spawn(cmd, args, { cwd: o.cwd ?? ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', (error) => resolve({ code: null, stdout, stderr, error }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(o.input ?? '');
  });
}

const PY_MODULES = 'pandas, sqlalchemy, psycopg2';
export const DEBIAN_PY = 'python3-pandas python3-sqlalchemy python3-psycopg2';

/** $PYTHON, else python3 on PATH, else Debian's /usr/bin/python3: the first that imports pandas, SQLAlchemy and psycopg2. */
export async function pythonWithModules(script: string): Promise<string> {
  const candidates = [...new Set([process.env.PYTHON, 'python3', '/usr/bin/python3'].filter((c): c is string => !!c))];
  for (const py of candidates) {
    if ((await run(py, ['-c', `import ${PY_MODULES}`])).code === 0) return py;
  }
  throw new Error(
    `${script} needs python3 with ${PY_MODULES}; none of ${candidates.join(', ')} can import them. ` +
      `Install Debian's ${DEBIAN_PY} (apt-get install -y --no-install-recommends ${DEBIAN_PY}; .ci/run does), or set PYTHON to an interpreter that has them.`,
  );
}
