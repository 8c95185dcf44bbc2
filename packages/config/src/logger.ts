import { pino, type Logger } from 'pino';

/**
 * Structured JSON logs. Any field that could carry a secret is redacted wherever it
 * appears, so a careless log call cannot leak a credential.
 *
 * Written synchronously to stdout. pino's default destination is asynchronous and flushes on exit, retrying a
 * failed write every 100 ms for as long as it fails: with stdout a closed pipe (the process that read it died)
 * that flush spins forever on EPIPE, and the process never exits. A synchronous destination that meets EPIPE
 * stops writing instead.
 */
export function createLogger(name: string, level: string, destination: pino.DestinationStream = pino.destination({ dest: 1, sync: true })): Logger {
  return pino(
    {
      name,
      level,
      redact: {
        paths: [
          'password',
          '*.password',
          '*.*.password',
          'authorization',
          '*.authorization',
          'req.headers.authorization',
          'headers.authorization',
          'token',
          '*.token',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
export type { Logger };

/** An error's message with its causes (drizzle wraps the Postgres error as `cause`). */
export function errorText(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e && parts.length < 5; e = (e as { cause?: unknown }).cause) {
    parts.push(e instanceof Error ? e.message.split('\n')[0]! : String(e));
  }
  return parts.join(': ');
}
