import type { TwoPersonRule } from '../config.js';
import type { Runner } from './approvals.service.js';
import { powerBatch, type PowerBatchInput } from './power-batch.service.js';
import { rackSequence, type RackSequenceInput } from './rack-power.service.js';
import { releaseDevice, type ReleaseInput } from './remediation.service.js';
import { factoryResetSwitch, type FactoryResetInput } from './switch.service.js';

/**
 * The service each single-request two-person rule holds, run again with the approval's input on approval. The input is
 * what the service itself stored when it held the request. (campaign.approve holds nothing: it is a check.)
 */
export const gatedActions: Record<Exclude<TwoPersonRule, 'campaign.approve'>, Runner> = {
  'switch.factory_reset': (db, caller, gate, input) =>
    factoryResetSwitch(db, caller, gate, input as unknown as FactoryResetInput),
  'rack.power_off': (db, caller, gate, input) => rackSequence(db, caller, gate, input as unknown as RackSequenceInput),
  'rack.cold_reboot': (db, caller, gate, input) =>
    rackSequence(db, caller, gate, input as unknown as RackSequenceInput),
  'batch.power_off': (db, caller, gate, input) => powerBatch(db, caller, gate, input as unknown as PowerBatchInput),
  'device.release': (db, caller, gate, input) => releaseDevice(db, caller, gate, input as unknown as ReleaseInput),
};
