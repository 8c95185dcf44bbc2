/**
 * A bench's settle-wait argument: the satellite's redfish.settleWaitFraction to run with (0: poll a settling device
 * from the reset on), or its default when absent. `stack` goes into the Stack's options, `figure` into the printed
 * figures (null: the default).
 */
export function settleWaitArg(arg: string | undefined): {
  stack: { redfish?: { settleWaitFraction: number } };
  figure: number | null;
} {
  if (arg === undefined) return { stack: {}, figure: null };
  const settleWaitFraction = Number(arg);
  return { stack: { redfish: { settleWaitFraction } }, figure: settleWaitFraction };
}
