// One pino root logger. Secrets are removed twice over: known header/field paths are
// redacted structurally, and every serialized line is scrubbed of each secret value, so a
// key that slipped into a URL or an error message is still never written.
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

const CENSOR = '[REDACTED]';

const REDACT_PATHS = [
  'authorization',
  'Authorization',
  'headers.authorization',
  'headers.Authorization',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers.Authorization',
  '*.headers["x-api-key"]',
  'apiKey',
  '*.apiKey',
  'password',
  '*.password',
];

/** Every form in which a secret could appear in a serialized line. */
function secretForms(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
  return [...forms].filter((f) => f.length >= 4);
}

/** Replaces every occurrence of each secret (raw, URL-encoded, JSON-escaped) with a marker. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    for (const form of secretForms(secret)) out = out.split(form).join(CENSOR);
  }
  // Bearer tokens we were not told about are still credentials.
  return out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{4,}/gi, `$1${CENSOR}`);
}

export interface LoggerSettings {
  level: string;
  secrets: readonly string[];
  /** Where lines go; stderr by default so stdout stays for command output. */
  destination?: DestinationStream;
  base?: Record<string, unknown>;
}

export function createLogger(settings: LoggerSettings): Logger {
  const secrets = [...settings.secrets];
  const debug = settings.level === 'debug' || settings.level === 'trace';
  const options: LoggerOptions = {
    level: settings.level,
    base: settings.base ?? { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: CENSOR },
    hooks: { streamWrite: (line) => scrub(line, secrets) },
    // Stack traces are for developers: only at debug and below.
    serializers: { err: debug ? pino.stdSerializers.err : withoutStack },
  };
  return pino(options, settings.destination ?? pino.destination({ fd: 2, sync: true }));
}

function withoutStack(err: Error): Record<string, unknown> {
  const { stack: _stack, ...rest } = pino.stdSerializers.err(err);
  return rest;
}
