import { randomBytes, timingSafeEqual } from 'node:crypto';

export interface Session {
  id: string;
  token: string;
  userName: string;
  createdAt: string;
  lastUsedMs: number;
}

/** Redfish sessions of one BMC (DSP0266 §13.3). Idle sessions expire after `timeoutS`, checked lazily. */
export class SessionStore {
  readonly byId = new Map<string, Session>();
  timeoutS = 1800;

  constructor(readonly limit: number) {}

  get size(): number {
    this.expire();
    return this.byId.size;
  }

  create(userName: string): Session {
    const session: Session = {
      id: randomBytes(6).toString('hex'),
      token: randomBytes(24).toString('base64url'),
      userName,
      createdAt: new Date().toISOString(),
      lastUsedMs: Date.now(),
    };
    this.byId.set(session.id, session);
    return session;
  }

  /** The session owning `token`, refreshed; undefined if unknown or expired. */
  touch(token: string): Session | undefined {
    this.expire();
    const wanted = Buffer.from(token);
    for (const s of this.byId.values()) {
      const have = Buffer.from(s.token);
      if (have.length === wanted.length && timingSafeEqual(have, wanted)) {
        s.lastUsedMs = Date.now();
        return s;
      }
    }
    return undefined;
  }

  private expire(): void {
    const cutoff = Date.now() - this.timeoutS * 1000;
    for (const [id, s] of this.byId) if (s.lastUsedMs < cutoff) this.byId.delete(id);
  }
}
