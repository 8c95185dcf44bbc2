// The entry the worker bundles: every workflow type the project runs.
export { devicePower } from './device-power.js';
