import { sleep } from '@temporalio/workflow';
import { firmwareCampaign as firmwareCampaignN } from '@fleet/workflows';

/**
 * Version N+1's change to the campaign: a short timer before everything version N did, a new first command that a
 * campaign started on version N has not recorded. `takeNewPath` decides per run: `patched(upgradePatchId)` in the
 * correct upgrade, always in the broken one.
 */
export function campaignWithTimer(takeNewPath: () => boolean): typeof firmwareCampaignN {
  return async (input) => {
    if (takeNewPath()) await sleep('1 second');
    return firmwareCampaignN(input);
  };
}
