// Version N+1 of the workflows, done wrong: the same change without patched(). A campaign that version N started
// cannot replay its history on it (nondeterminism), which the replay tests exist to catch before a release.
import { campaignWithTimer } from './campaign-change.js';

export * from '@fleet/workflows';
export const firmwareCampaign = campaignWithTimer(() => true);
