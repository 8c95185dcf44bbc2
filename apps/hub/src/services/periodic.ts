import type { FastifyBaseLogger } from 'fastify';

/**
 * Runs `run` every `everyMs` in this hub process until closed: a run that outlasts the interval is not doubled, a
 * failed one is logged (`<what>: run failed`) and the next goes ahead. The timer does not hold the process open.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly what: string,
    private readonly everyMs: number,
    private readonly run: () => Promise<unknown>,
    private readonly log: FastifyBaseLogger,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.running ??= this.run()
        .then(() => undefined)
        .catch((err: unknown) => this.log.error({ err }, `${this.what}: run failed`))
        .finally(() => (this.running = undefined));
    }, this.everyMs).unref();
  }

  /** Stops the timer and waits for a run under way. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
