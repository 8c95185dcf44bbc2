import type { FastifyBaseLogger } from 'fastify';
import { listenOn, tokenRevokedChannel, type ChannelListener, type Db } from '@fleet/db';

const RETRY_MS = 2_000;

/**
 * Token revocations as every hub process learns them: NOTIFYs on tokenRevokedChannel (one LISTEN connection per
 * process). `forget(id)` drops one token from the caller's cache, `forget()` all of it: when the connection is lost
 * (revocations may be missed until it is back) and when it is (re)established.
 */
export class RevocationWatch {
  /** Bumped by every revocation and connection change; a lookup caches its answer only if it did not move. */
  generation = 0;
  listening = false;
  private listener: ChannelListener | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly forget: (tokenId?: string) => void,
  ) {}

  /** Tries once now (the hub starts either way), then again every RETRY_MS until it listens. */
  async start(): Promise<void> {
    try {
      this.listener = await listenOn(
        this.db,
        tokenRevokedChannel,
        (id) => this.revoked(id),
        (err) => this.lost(err),
      );
      if (this.stopped) return void (await this.listener.close());
      this.changed();
      this.listening = true;
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'token revocation listener down; tokens are not cached');
      this.schedule();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    this.listening = false;
    await this.listener?.close();
  }

  revoked(tokenId: string): void {
    this.generation += 1;
    this.forget(tokenId);
  }

  private lost(err: Error): void {
    this.listening = false;
    this.changed();
    this.log.warn({ err: err.message }, 'token revocation listener lost; tokens are not cached until it is back');
    this.schedule();
  }

  private changed(): void {
    this.generation += 1;
    this.forget();
  }

  private schedule(): void {
    if (!this.stopped) this.retry = setTimeout(() => void this.start(), RETRY_MS).unref();
  }
}
