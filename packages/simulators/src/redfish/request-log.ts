export interface LoggedRequest {
  at: string;
  method: string;
  path: string;
  /** HTTP status sent; 0 when the simulator dropped or reset the connection instead of answering. */
  status: number;
  body?: unknown;
}

/**
 * The last `capacity` requests of one BMC. A ring buffer, allocated on first use, so ten
 * thousand idle BMCs cost nothing and busy ones stay bounded.
 */
export class RequestLog {
  private items: LoggedRequest[] = [];
  private next = 0;

  constructor(private readonly capacity: number) {}

  push(entry: LoggedRequest): void {
    if (this.items.length < this.capacity) this.items.push(entry);
    else this.items[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
  }

  /** Oldest first. */
  toArray(): LoggedRequest[] {
    if (this.items.length < this.capacity) return [...this.items];
    return [...this.items.slice(this.next), ...this.items.slice(0, this.next)];
  }

  clear(): void {
    this.items = [];
    this.next = 0;
  }
}
