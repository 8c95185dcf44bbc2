import type { ComponentResult, ComponentVersion, FirmwareStep } from '@fleet/domain';

/** One step with the components it still has to change on this device. */
export interface StepPlan {
  index: number;
  step: FirmwareStep;
  components: { id: string; from: string | null; to: string }[];
}

/** Steps whose components differ from the installed ones (all of them when forced), in manifest order. */
export function stepsToRun(
  steps: FirmwareStep[],
  installed: ComponentVersion[],
  force: boolean,
): { run: StepPlan[]; compliant: ComponentResult[] } {
  const have = new Map(installed.map((c) => [c.id, c.version]));
  const run: StepPlan[] = [];
  const compliant: ComponentResult[] = [];
  steps.forEach((step, index) => {
    const components = step.components.map((c) => ({ id: c.id, from: have.get(c.id) ?? null, to: c.version }));
    const outdated = components.filter((c) => c.from !== c.to);
    if (force || outdated.length > 0) run.push({ index, step, components });
    else
      for (const c of components)
        compliant.push({ ...c, installed: c.from, status: 'skipped', code: 'SKIPPED_COMPLIANT' });
  });
  return { run, compliant };
}

/** Expected-inventory check (RMS): component ids the device must report before anything is pushed. */
export function missingComponents(expected: string[], installed: ComponentVersion[]): string[] {
  const have = new Set(installed.map((c) => c.id));
  return expected.filter((id) => !have.has(id));
}

/** After activation: each pushed component is updated only if the device now reports the target version. */
export function verifyComponents(plans: StepPlan[], installed: ComponentVersion[]): ComponentResult[] {
  const have = new Map(installed.map((c) => [c.id, c.version]));
  return plans.flatMap((p) =>
    p.components.map((c): ComponentResult => {
      const now = have.get(c.id) ?? null;
      return now === c.to
        ? { ...c, installed: now, status: 'updated', code: 'SUCCESS' }
        : {
            ...c,
            installed: now,
            status: 'failed',
            code: 'VERIFICATION_FAILED',
            message: `reports ${now ?? 'nothing'} after activation, expected ${c.to}`,
          };
    }),
  );
}
