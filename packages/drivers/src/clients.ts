import { RedfishClient, type RedfishClientOptions } from '@fleet/redfish';
import type { DriverContext } from './types.js';

/**
 * The Redfish clients of one driver, built on first use. Actions go through a client
 * that retries as the site's transport says; probes through a single-attempt one, as a
 * 503 from a rebooting BMC (Retry-After: minutes) means "not back yet", not "wait here".
 * Callers await one driver call before the next, so a BMC still sees one request at a time.
 */
export class DriverClients {
  private actions: RedfishClient | undefined;
  private probes: RedfishClient | undefined;

  constructor(private readonly ctx: DriverContext) {}

  main(): RedfishClient {
    return (this.actions ??= this.build({}, true));
  }

  /** Not sharing the process's discovery: it probes a controller right after its reset, while it still answers. */
  probe(): RedfishClient {
    return (this.probes ??= this.build({ maxAttempts: 1 }, false));
  }

  /** After a controller reset every discovered link may be stale. */
  invalidate(): void {
    this.actions?.invalidate();
    this.probes?.invalidate();
  }

  async close(): Promise<void> {
    await Promise.all([this.actions?.close(), this.probes?.close()]);
  }

  private build(overrides: Partial<RedfishClientOptions>, sharedDiscovery: boolean): RedfishClient {
    const { pinsByHost, discovery, ...transport } = this.ctx.redfish ?? {};
    const pin = pinsByHost?.[new URL(this.ctx.target.bmcUrl).host];
    return new RedfishClient({
      baseUrl: this.ctx.target.bmcUrl,
      credentials: this.ctx.credentials,
      device: this.ctx.target.deviceId,
      ...transport,
      ...(sharedDiscovery && discovery ? { discovery } : {}),
      ...(pin ? { tls: { ...transport.tls, pinnedSha256: pin } } : {}),
      ...overrides,
      ...(this.ctx.signal ? { signal: this.ctx.signal } : {}),
    });
  }
}
