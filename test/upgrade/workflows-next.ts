// Version N+1 of the workflows, done right: the campaign's change is behind patched(), so campaigns that version N
// started replay their old path and finish; campaigns started on N+1 take the new one.
import { patched } from '@temporalio/workflow';
import { campaignWithTimer } from './campaign-change.js';
import { upgradePatchId } from './patch-id.js';

export * from '@fleet/workflows';
export const firmwareCampaign = campaignWithTimer(() => patched(upgradePatchId));
