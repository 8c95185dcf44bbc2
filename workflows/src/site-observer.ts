import {
  CancellationScope,
  makeContinueAsNewFunc,
  defineSignal,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertMemo,
} from '@temporalio/workflow';
import type { ObserverActivities, ObserveSiteInput } from '@fleet/domain';
import { observerMemoKey, observerSettingsSignalName } from '@fleet/domain/workflow-safe';

/** Runs of observeSite per history: at the default hour a run, a day, about 150 events, then continue as new. */
const runsPerHistory = 24;
export const observerSettingsSignal = defineSignal<[ObserveSiteInput]>(observerSettingsSignalName);

/**
 * A site's health observer (docs/day2.md): one long observeSite activity after another, each reading every device
 * each interval for `runForS` and delivering only changes to the hub, so the history grows by a few events per run,
 * never per sample. New settings (a signal) cancel the running activity and start the next with them.
 */
export async function siteObserver(input: ObserveSiteInput): Promise<void> {
  let settings = input;
  let current: CancellationScope | undefined;
  let resetting = false;
  setHandler(observerSettingsSignal, (next) => {
    settings = next;
    upsertMemo({ [observerMemoKey]: next });
    resetting = true;
    current?.cancel();
  });
  for (let run = 0; run < runsPerHistory; run++) {
    const { observeSite } = proxyActivities<ObserverActivities>({
      startToCloseTimeout: `${settings.runForS + settings.intervalS * 3 + 120}s`,
      // A cycle heartbeats each 500 devices and while it waits; a site whose BMCs all hang still beats within this.
      heartbeatTimeout: `${Math.max(60, settings.intervalS * 2)}s`,
      // Unlimited attempts: an observer gives up only when the site cannot observe at all.
      retry: {
        initialInterval: '5s',
        backoffCoefficient: 2,
        maximumInterval: '60s',
        nonRetryableErrorTypes: ['FAILED_PRECONDITION'],
      },
    });
    current = new CancellationScope();
    try {
      await current.run(() => observeSite(settings));
    } catch (err) {
      if (!(resetting && isCancellation(err))) throw err;
    }
    resetting = false;
  }
  // The memo does not carry over by itself: the agent compares it with its config.
  await makeContinueAsNewFunc<typeof siteObserver>({ memo: { [observerMemoKey]: settings } })(settings);
}
