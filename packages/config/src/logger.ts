import { pino, type Logger } from 'pino';

/**
 * Structured JSON logs. Any field that could carry a secret is redacted wherever it
 * appears, so a careless log call cannot leak a credential.
 */
export function createLogger(name: string, level: string, destination?: pino.DestinationStream): Logger {
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
